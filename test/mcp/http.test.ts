import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { KEYS, connect, jsonOf, startHarness, textOf, type Harness } from './support.js';

let h: Harness;
let acme: Client;
let globex: Client;

beforeAll(async () => {
  h = await startHarness();
  acme = await connect(h.endpoint('acme'), KEYS.acmeAdmin);
  globex = await connect(h.endpoint('globex'), KEYS.globexAdmin);
}, 180_000);

afterAll(async () => {
  await acme?.close();
  await globex?.close();
  await h?.close();
});

async function toolLogs(key: string): Promise<any[]> {
  const res = await fetch(`${h.baseUrl}/api/v1/org/tool/mcp/logs/list/`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}',
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as any).data.logs;
}

describe('the hosted MCP endpoint with the SDK client', () => {
  it('initializes and lists the seven tools with schemas and descriptions', async () => {
    expect(acme.getServerVersion()?.name).toBe('oql');
    const { tools } = await acme.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['count_query', 'describe_object', 'execute_query', 'filter_records', 'lint_query', 'list_changes', 'list_objects']);
    const exec = tools.find((t) => t.name === 'execute_query')!;
    expect(exec.inputSchema.required).toEqual(['query', 'slug']);
    // The dialect's rules travel with the tool.
    for (const rule of ['LIMIT', 'AT TIME ZONE', 'EXISTS', 'ARRAY[NULL]', 'FILTER', 'JOIN', 'epoch milliseconds', 'date_trunc']) {
      expect(exec.description).toContain(rule);
    }
    expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
  });

  it('list_objects and describe_object give what a query needs', async () => {
    const list = jsonOf(await acme.callTool({ name: 'list_objects', arguments: {} }));
    expect(list.objects.map((o: any) => o.slug).sort()).toEqual(['account', 'contact', 'lead', 'opportunity', 'user']);
    const account = jsonOf(await acme.callTool({ name: 'describe_object', arguments: { slug: 'account' } }));
    const byName = new Map<string, any>(account.fields.map((f: any) => [f.name, f]));
    expect(byName.get('contacts').relation).toMatchObject({ kind: 'one-to-many', object: 'contact', child_column: 'account' });
    expect(byName.get('owner').relation).toMatchObject({ kind: 'to-one', object: 'user' });
    expect(byName.get('industry').options).toEqual(['software', 'retail', 'finance', 'healthcare', 'manufacturing']);
    expect(byName.get('tags').type).toBe('multiselect');
    expect(byName.get('created_at').type).toBe('datetime');
    const unknown = await acme.callTool({ name: 'describe_object', arguments: { slug: 'acount' } });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain('account');
  });

  it('execute_query returns the organization\'s rows, and the other workspace sees only its own', async () => {
    const q = { query: 'SELECT name, account.name AS account_name FROM opportunity ORDER BY name LIMIT 10', slug: 'opportunity' };
    expect(jsonOf(await acme.callTool({ name: 'execute_query', arguments: q })).records).toEqual([
      { name: 'Acme big deal', account_name: 'Acme Retail' },
      { name: 'Acme small deal', account_name: 'Acme Soft' },
    ]);
    expect(jsonOf(await globex.callTool({ name: 'execute_query', arguments: q })).records).toEqual([
      { name: 'Globex deal', account_name: 'Globex Retail' },
    ]);
    // A soft-deleted account is not there; EXISTS over a one-to-many relation works.
    const exists = {
      query: "SELECT name FROM account WHERE EXISTS (SELECT 1 FROM contact WHERE contact.account = account.id AND contact.status = 'bounced') LIMIT 10",
      slug: 'account',
    };
    expect(jsonOf(await acme.callTool({ name: 'execute_query', arguments: exists })).records).toEqual([{ name: 'Acme Retail' }]);
    expect(jsonOf(await globex.callTool({ name: 'execute_query', arguments: exists })).records).toEqual([]);
  });

  it('count_query, lint_query and filter_records', async () => {
    const count = jsonOf(await acme.callTool({ name: 'count_query', arguments: { query: "SELECT id FROM account WHERE city = 'Pune' LIMIT 100", slug: 'account' } }));
    expect(count).toEqual({ count: 1 });
    const gcount = jsonOf(await globex.callTool({ name: 'count_query', arguments: { query: "SELECT id FROM account WHERE city = 'Pune' LIMIT 100", slug: 'account' } }));
    expect(gcount).toEqual({ count: 1 });

    const clean = await acme.callTool({ name: 'lint_query', arguments: { query: 'SELECT name FROM account ORDER BY id LIMIT 5', slug: 'account' } });
    expect(clean.isError).toBeFalsy();
    expect(textOf(clean)).toMatch(/^No problems found/);
    const dirty = await acme.callTool({ name: 'lint_query', arguments: { query: 'SELECT nmae FROM account', slug: 'account' } });
    expect(dirty.isError).toBeFalsy();
    expect(textOf(dirty)).toContain('UNKNOWN_COLUMN');
    expect(textOf(dirty)).toContain('MISSING_LIMIT');

    // The 80 KB report of 16,000 unknown functions: the select-list cap answers it, bounded, while
    // the other workspace's tool is served.
    const payload = `SELECT ${Array(16_000).fill('f(1)').join(', ')} FROM account LIMIT 10`;
    const [big, beside] = await Promise.all([
      acme.callTool({ name: 'lint_query', arguments: { query: payload, slug: 'account' } }),
      globex.callTool({ name: 'count_query', arguments: { query: "SELECT id FROM account WHERE city = 'Pune' LIMIT 100", slug: 'account' } }),
    ]);
    expect(big.isError).toBeFalsy();
    expect(textOf(big)).toMatch(/^401 errors: /);
    expect(textOf(big).match(/TOO_MANY_SELECT_ITEMS/g)).toHaveLength(1);
    expect(jsonOf(beside)).toEqual({ count: 1 });

    const filter = {
      slug: 'opportunity',
      query: { fields: ['name', 'amount'], filters: { and: [{ field: 'stage', operator: 'eq', value: 'proposal' }] }, sort: [{ field: 'amount', direction: 'desc' }] },
    };
    expect(jsonOf(await acme.callTool({ name: 'filter_records', arguments: filter })).records).toEqual([{ name: 'Acme big deal', amount: 500000 }]);
    expect(jsonOf(await globex.callTool({ name: 'filter_records', arguments: filter })).records).toEqual([{ name: 'Globex deal', amount: 999 }]);
    const bad = await acme.callTool({ name: 'filter_records', arguments: { slug: 'opportunity', query: { filters: { and: [{ field: 'stag', operator: 'eq', value: 'x' }] } } } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain('stag');
  });

  it('a rejected query is a tool error listing every diagnostic with code, position, text and hint', async () => {
    const query = "SELECT stage, COUNT(*) FROM opportunity WHERE close_date > '2024-01-01'";
    const result = await acme.callTool({ name: 'execute_query', arguments: { query, slug: 'opportunity' } });
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toMatch(/MISSING_ALIAS at 1:15 near "COUNT\(\*\)".*Hint:/);
    expect(text).toMatch(/MISSING_LIMIT.*Hint:.*LIMIT 100/);
    // The hint computes the epoch milliseconds of the date written: 2024-01-01 UTC.
    expect(text).toContain(String(Date.UTC(2024, 0, 1)));
    expect(text).toContain(`near "'2024-01-01'"`);
    expect(text).not.toMatch(/\bat .+\.ts:\d+/);
  });

  it('every call appears in the tool-log listing of its own organization only, without any token', async () => {
    await acme.callTool({ name: 'execute_query', arguments: { query: 'SELECT id FROM lead LIMIT 1', slug: 'lead' } });
    await acme.callTool({ name: 'execute_query', arguments: { query: 'SELECT id FROM lead', slug: 'lead' } });
    const logs = await toolLogs(KEYS.acmeAdmin);
    const [rejected, ok] = logs;
    expect(rejected).toMatchObject({ user_id: 'u_acme_admin', tool_name: 'execute_query', input_params: { query: 'SELECT id FROM lead', slug: 'lead' }, response_code: 400 });
    expect(ok).toMatchObject({ tool_name: 'execute_query', input_params: { query: 'SELECT id FROM lead LIMIT 1', slug: 'lead' }, response_code: 200 });
    expect(typeof ok.response_time).toBe('number');
    expect(Math.abs(ok.tool_call_timestamp - Date.now())).toBeLessThan(10 * 60_000);
    const names = new Set(logs.map((l: any) => l.tool_name));
    for (const name of ['list_objects', 'describe_object', 'count_query', 'lint_query', 'filter_records']) expect(names).toContain(name);
    const all = JSON.stringify(logs);
    for (const key of Object.values(KEYS)) expect(all).not.toContain(key);
    expect(all).not.toContain('Globex');
    const globexLogs = await toolLogs(KEYS.globexAdmin);
    expect(globexLogs.every((l: any) => l.user_id === 'u_globex_admin')).toBe(true);
    expect(JSON.stringify(globexLogs)).not.toContain('lead');
  });
});

describe('the MCP host over plain HTTP', () => {
  const initialize = {
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
  };
  const post = (path: string, headers: Record<string, string> = {}, body: unknown = initialize) => fetch(h.mcpUrl + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });

  it('answers 401 with the resource_metadata challenge without a token, with a wrong one, or with another workspace\'s key', async () => {
    const expected = `${h.mcpUrl}/acme/.well-known/oauth-protected-resource`;
    const cases: Record<string, string>[] = [{}, { authorization: 'Bearer not-a-key' }, { authorization: `Bearer ${KEYS.globexAdmin}` }, { authorization: 'Basic abc' }];
    for (const headers of cases) {
      const res = await post('/acme/mcp', headers);
      expect(res.status).toBe(401);
      const challenge = res.headers.get('www-authenticate') ?? '';
      expect(challenge.startsWith('Bearer ')).toBe(true);
      expect(challenge).toContain(`resource_metadata="${expected}"`);
      const body = await res.json() as any;
      expect(body.error).toBe('invalid_token');
    }
  });

  it('answers initialize over plain HTTP for protocol 2025-03-26 with a key of the workspace', async () => {
    const res = await post('/acme/mcp', { authorization: `Bearer ${KEYS.acmeMember}` });
    expect(res.status).toBe(200);
    const text = await res.text();
    const json = text.startsWith('{') ? JSON.parse(text) : JSON.parse(text.split('\n').find((l) => l.startsWith('data: '))!.slice(6));
    expect(json.result.protocolVersion).toBe('2025-03-26');
    expect(json.result.serverInfo.name).toBe('oql');
    expect(json.result.capabilities.tools).toBeDefined();
  });

  it('takes a POST whose Accept lists both JSON and SSE, as the Streamable HTTP transport says a client must, and refuses one that lists only one with 406', async () => {
    const auth = { authorization: `Bearer ${KEYS.acmeMember}` };
    for (const accept of ['application/json', 'text/event-stream']) {
      const refused = await post('/acme/mcp', { ...auth, accept });
      expect(refused.status, accept).toBe(406);
      const body = await refused.json() as { jsonrpc: string; error: { message: string } };
      expect(body.jsonrpc).toBe('2.0');
      expect(body.error.message).toMatch(/application\/json.*text\/event-stream/);
    }
    const served = await post('/acme/mcp', auth);
    expect(served.status).toBe(200);
    expect(['application/json', 'text/event-stream']).toContain(served.headers.get('content-type')?.split(';')[0]);
  });

  it('serves the protected-resource metadata of each workspace, at both locations', async () => {
    for (const path of ['/acme/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/acme/mcp']) {
      const res = await fetch(h.mcpUrl + path);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        resource: `${h.mcpUrl}/acme/mcp`,
        authorization_servers: [`${h.baseUrl}/acme`],
        bearer_methods_supported: ['header'],
      });
    }
  });

  it('an unknown workspace is a 404 JSON error on every workspace path', async () => {
    for (const res of [await post('/nowhere/mcp', { authorization: `Bearer ${KEYS.acmeAdmin}` }), await fetch(`${h.mcpUrl}/nowhere/.well-known/oauth-protected-resource`)]) {
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(((await res.json()) as any).error).toBe('workspace_not_found');
    }
  });

  it('has no OAuth endpoints of its own', async () => {
    expect((await fetch(`${h.mcpUrl}/.well-known/oauth-authorization-server`)).status).toBe(404);
    expect((await fetch(`${h.mcpUrl}/.well-known/oauth-authorization-server/acme`)).status).toBe(404);
    for (const path of ['/authorize', '/token', '/register']) {
      const res = await fetch(h.mcpUrl + path, { method: path === '/authorize' ? 'GET' : 'POST' });
      expect(res.status).toBe(404);
    }
  });

  it('refuses a browser Origin of another host, and a rebound Host name on a loopback deployment', async () => {
    const res = await post('/acme/mcp', { authorization: `Bearer ${KEYS.acmeAdmin}`, origin: 'https://evil.example' });
    expect(res.status).toBe(403);
    // A local page on another port of the same machine is the same host.
    expect((await post('/acme/mcp', { authorization: `Bearer ${KEYS.acmeAdmin}`, origin: 'http://localhost:6274' })).status).toBe(200);
    // fetch will not set Host: send the request by hand.
    const { request } = await import('node:http');
    const status = await new Promise<number>((done, fail) => {
      const url = new URL(`${h.mcpUrl}/acme/mcp`);
      const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: {
        host: `evil.example:${url.port}`, authorization: `Bearer ${KEYS.acmeAdmin}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream',
      } }, (res) => { res.resume(); done(res.statusCode ?? 0); });
      req.on('error', fail);
      req.end(JSON.stringify(initialize));
    });
    expect(status).toBe(403);
  });
});
