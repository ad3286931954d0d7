import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordToolCall, type ServiceDb } from '../../src/server/index.js';
import { cli } from '../cli/helpers.js';
import { API_KEYS_ENV, KEYS, crmServiceOnPglite, expectEnvelope, listen, liveRows, type CrmService, type Running } from './support.js';

/**
 * The service core over real HTTP on PGlite: authentication, the error envelope, analytics and
 * tool logs for two organizations. Expected values come from the generated fixture rows.
 */

const live = liveRows;

let service: CrmService;
let pglite: PGlite;
let db: ServiceDb;
let api: Running;

beforeAll(async () => {
  service = await crmServiceOnPglite({ roleAccess: { member: ['account', 'contact', 'user'] } });
  ({ pglite, db, api } = service);
}, 180_000);

afterAll(async () => {
  await service?.close();
});

describe('authentication', () => {
  it('answers 401 UNAUTHENTICATED without a bearer token, with a malformed header, and with an unknown key', async () => {
    const body = { query: 'SELECT id FROM account LIMIT 1', slug: 'account' };
    for (const headers of [{} as Record<string, string>, { authorization: 'Basic abc' }, { authorization: 'Bearer' }, { authorization: `Bearer ${KEYS.acmeAdmin}x` }, { authorization: `bearer ${KEYS.acmeAdmin} extra` }]) {
      const a = await api.call('POST', '/api/v1/reports/count', { body, headers });
      expectEnvelope(a, 401, 'UNAUTHENTICATED');
      expect(a.text).not.toContain(KEYS.acmeAdmin);
    }
    expect((await api.call('POST', '/api/v1/reports/count', { body, key: KEYS.acmeAdmin })).status).toBe(200);
  });

  it('tells the sender of an unknown key a command that runs as written and says how to make one', async () => {
    const a = await api.call('POST', '/api/v1/reports/count', { body: { query: 'SELECT id FROM account LIMIT 1', slug: 'account' }, key: `${KEYS.acmeAdmin}x` });
    expectEnvelope(a, 401, 'UNAUTHENTICATED');
    const command = /oql (keys --help)/.exec(a.json.data.hint);
    expect(command, a.json.data.hint).not.toBeNull();
    const help = await cli(command![1]!.split(' '));
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: oql keys create --org <org> --role <role>/);
  });

  it('leaves /health and /openapi.json open', async () => {
    const health = await api.call('GET', '/health');
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ success: true, data: { status: 'ok' } });
    expect((await api.call('GET', '/openapi.json')).status).toBe(200);
  });

  it('tags every answer with a request id', async () => {
    const a = await api.call('GET', '/health');
    const b = await api.call('GET', '/health');
    expect(a.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });
});

describe('the error envelope', () => {
  const key = KEYS.acmeAdmin;
  it('for malformed JSON, a __proto__ key and a constructor key', async () => {
    expectEnvelope(await api.call('POST', '/api/v1/reports/execute', { key, body: '{"query": ' }), 400, 'MALFORMED_JSON');
    expectEnvelope(await api.call('POST', '/api/v1/reports/execute', { key, body: '{"query":"SELECT id FROM account LIMIT 1","slug":"account","__proto__":{"admin":true}}' }), 400, 'MALFORMED_JSON');
    expectEnvelope(await api.call('POST', '/api/v1/reports/execute', { key, body: '{"query":"x","slug":"account","constructor":{"prototype":{"a":1}}}' }), 400, 'MALFORMED_JSON');
  });

  it('for a content type other than JSON', async () => {
    const a = await api.call('POST', '/api/v1/reports/execute', { key, body: 'query=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expectEnvelope(a, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectEnvelope(await api.call('POST', '/api/v1/reports/execute', { key, body: 'SELECT 1', headers: { 'content-type': 'text/plain' } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('for an unknown route and a wrong method', async () => {
    expectEnvelope(await api.call('GET', '/api/v1/nothing/here', { key }), 404, 'ROUTE_NOT_FOUND');
    // `/` is the console's (docs/console.md); any other unknown path is the envelope's 404.
    expectEnvelope(await api.call('GET', '/nothing-here', {}), 404, 'ROUTE_NOT_FOUND');
    const wrong = await api.call('DELETE', '/api/v1/reports/execute', { key });
    expectEnvelope(wrong, 405, 'METHOD_NOT_ALLOWED');
    expect(wrong.headers.get('allow')).toBe('POST');
    // A path that is a route of its own for POST, which a GET route with a parameter also matches.
    const list = await api.call('GET', '/api/v1/org/objects/list', { key });
    expectEnvelope(list, 405, 'METHOD_NOT_ALLOWED');
    expect(list.headers.get('allow')).toBe('POST');
    expect(list.json.data.message).toContain('GET is not allowed on /api/v1/org/objects/list');
    // The parametric route still answers its own paths.
    expect((await api.call('GET', '/api/v1/org/objects/account', { key })).status).toBe(200);
  });

  it('for a JSON syntax error, saying where it is', async () => {
    const body = '{"slug": "account",\n "query": "SELECT id FROM account LIMIT 1",}';
    const broken = await api.call('POST', '/api/v1/reports/execute', { key, body });
    expectEnvelope(broken, 400, 'MALFORMED_JSON');
    // The trailing comma is legal only before another member: the '}' after it is where JSON breaks.
    expect(broken.json.data.message).toContain(`line 2, column ${body.split('\n')[1]!.indexOf('}') + 1}`);
    const cut = await api.call('POST', '/api/v1/reports/execute', { key, body: '{"query": ' });
    expect(cut.json.data.message).toContain('line 1, column 11');
  });

  it('for schema violations, listing every problem', async () => {
    const a = await api.call('POST', '/api/v1/reports/execute', { key, body: { query: 42 } });
    expectEnvelope(a, 400, 'VALIDATION_FAILED');
    const fields = a.json.data.validation_errors.map((e: { field: string; error_code: string }) => `${e.field}:${e.error_code}`).sort();
    expect(fields).toEqual(['query:TYPE_MISMATCH', 'slug:REQUIRED']);
    expectEnvelope(await api.call('POST', '/api/v1/reports/execute', { key, body: [] }), 400, 'VALIDATION_FAILED');
    expectEnvelope(await api.call('POST', '/api/v1/reports/execute', { key }), 400, 'VALIDATION_FAILED');
  });

  it('for a body over the configured limit', async () => {
    const small = await listen({ db, apiKeys: API_KEYS_ENV, env: {}, bodyLimit: 1024 });
    try {
      const a = await small.call('POST', '/api/v1/reports/execute', { key, body: { query: `SELECT id FROM account WHERE name = '${'x'.repeat(2000)}' LIMIT 1`, slug: 'account' } });
      expectEnvelope(a, 413, 'PAYLOAD_TOO_LARGE');
      expect((await small.call('GET', '/health')).status).toBe(200);
    } finally {
      await small.close();
    }
  });
});

describe('reports (execute and count) for two organizations', () => {
  it('counts and lists only the caller\'s records', async () => {
    for (const [org, k] of [['org_acme', KEYS.acmeAdmin], ['org_globex', KEYS.globexAdmin]] as const) {
      const expected = live('account', org).map((r) => r.id as string).sort();
      const c = await api.call('POST', '/api/v1/reports/count', { key: k, body: { query: 'SELECT id FROM account LIMIT 10000', slug: 'account' } });
      expect(c.status).toBe(200);
      expect(c.json).toEqual({ success: true, data: { count: expected.length } });
      const e = await api.call('POST', '/api/v1/reports/execute', { key: k, body: { query: 'SELECT id FROM account LIMIT 10000', slug: 'account' } });
      expect(e.status).toBe(200);
      expect(e.json.success).toBe(true);
      expect(e.json.data.records.map((r: { id: string }) => r.id).sort()).toEqual(expected);
    }
  });

  it('finds nothing of another organization by guessing its ids', async () => {
    const acmeIds = live('opportunity', 'org_acme').slice(0, 5).map((r) => r.id as string);
    const list = acmeIds.map((id) => `'${id}'`).join(', ');
    const body = { query: `SELECT id, name, amount FROM opportunity WHERE id IN (${list}) LIMIT 10`, slug: 'opportunity' };
    const own = await api.call('POST', '/api/v1/reports/execute', { key: KEYS.acmeAdmin, body });
    expect(own.json.data.records.map((r: { id: string }) => r.id).sort()).toEqual([...acmeIds].sort());
    const other = await api.call('POST', '/api/v1/reports/execute', { key: KEYS.globexAdmin, body });
    expect(other.json).toEqual({ success: true, data: { records: [] } });
    const count = await api.call('POST', '/api/v1/reports/count', { key: KEYS.globexAdmin, body });
    expect(count.json).toEqual({ success: true, data: { count: 0 } });
  });

  it("answers 'Invalid slug' with 400", async () => {
    const a = await api.call('POST', '/api/v1/reports/execute', { key: KEYS.acmeAdmin, body: { query: 'SELECT id FROM account LIMIT 1', slug: 'opportunity' } });
    expectEnvelope(a, 400, 'INVALID_SLUG');
    expect(a.json.data.message).toBe('Invalid slug');
    const b = await api.call('POST', '/api/v1/reports/count', { key: KEYS.acmeAdmin, body: { query: 'SELECT id FROM accounts LIMIT 1', slug: 'accounts' } });
    expect(b.json.data.message).toBe('Invalid slug');
  });

  it('returns an empty result with a message for an object the role may not read', async () => {
    const body = { query: 'SELECT id FROM opportunity LIMIT 10', slug: 'opportunity' };
    const member = await api.call('POST', '/api/v1/reports/execute', { key: KEYS.acmeMember, body });
    expect(member.status).toBe(200);
    expect(member.json.data.records).toEqual([]);
    expect(member.json.data.message).toEqual(expect.any(String));
    const memberCount = await api.call('POST', '/api/v1/reports/count', { key: KEYS.acmeMember, body });
    expect(memberCount.json.data.count).toBe(0);
    const admin = await api.call('POST', '/api/v1/reports/execute', { key: KEYS.acmeAdmin, body });
    expect(admin.json.data.records).toHaveLength(Math.min(10, live('opportunity', 'org_acme').length));
  });

  it('gives compile errors as a 400 envelope with the hint', async () => {
    const a = await api.call('POST', '/api/v1/reports/execute', { key: KEYS.acmeAdmin, body: { query: 'SELECT amout FROM opportunity', slug: 'opportunity' } });
    expectEnvelope(a, 400, 'UNKNOWN_COLUMN');
    expect(a.json.data.hint).toContain('amount');
  });
});

describe('tool logs', () => {
  // Timestamps with ties, so the id breaks them.
  const calls = (org: string, n: number) => Array.from({ length: n }, (_, i) => ({
    orgId: org, userId: `u_${org}`, toolName: i % 2 ? 'execute_query' : 'list_objects',
    inputParams: { i, query: `SELECT ${i}` }, responseTime: i / 10, responseCode: i % 7 ? 200 : 400, timestamp: 1_700_000_000_000 + Math.floor(i / 3),
  }));
  const written = new Map<string, { id: string; ts: number; i: number }[]>();

  beforeAll(async () => {
    for (const [org, n] of [['org_acme', 650], ['org_globex', 3]] as const) {
      const list: { id: string; ts: number; i: number }[] = [];
      for (const call of calls(org, n)) list.push({ id: await recordToolCall(db, call), ts: call.timestamp, i: call.inputParams.i });
      written.set(org, list);
    }
  }, 60_000);

  const newestFirst = (list: { id: string; ts: number }[]) =>
    [...list].sort((a, b) => (b.ts - a.ts) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).map((e) => e.id);

  it('pages newest first in pages of 200, then 400, to the end', async () => {
    const pages: { id: string }[][] = [];
    let pointer: string | undefined;
    for (;;) {
      const a = await api.call('POST', '/api/v1/org/tool/mcp/logs/list/', { key: KEYS.acmeAdmin, body: pointer === undefined ? undefined : { pointer } });
      expect(a.status).toBe(200);
      pages.push(a.json.data.logs);
      if (a.json.data.next === null) break;
      pointer = a.json.data.next;
    }
    expect(pages.map((p) => p.length)).toEqual([200, 400, 50]);
    expect(pages.flat().map((l) => l.id)).toEqual(newestFirst(written.get('org_acme')!));
    const first = pages[0]![0] as Record<string, unknown>;
    const source = written.get('org_acme')!.find((e) => e.id === first['id'])!;
    expect(first).toEqual({
      id: source.id, user_id: 'u_org_acme', tool_name: source.i % 2 ? 'execute_query' : 'list_objects',
      input_params: { i: source.i, query: `SELECT ${source.i}` }, response_time: source.i / 10,
      response_code: source.i % 7 ? 200 : 400, tool_call_timestamp: source.ts, truncated: false,
      // Written without an answer, as a call logged before answers were kept.
      response: null, response_truncated: false,
    });
  });

  it("shows an organization only its own logs", async () => {
    const a = await api.call('POST', '/api/v1/org/tool/mcp/logs/list/', { key: KEYS.globexAdmin, body: {} });
    expect(a.json.data.logs.map((l: { id: string }) => l.id)).toEqual(newestFirst(written.get('org_globex')!));
    expect(a.json.data.next).toBeNull();
    const none = await api.call('POST', '/api/v1/org/tool/mcp/logs/list/', { key: KEYS.initechAdmin });
    expect(none.json).toEqual({ success: true, data: { logs: [], next: null } });
  });

  it('refuses roles other than superadmin with 403 PERMISSION_DENIED', async () => {
    expectEnvelope(await api.call('POST', '/api/v1/org/tool/mcp/logs/list/', { key: KEYS.acmeMember }), 403, 'PERMISSION_DENIED');
    expectEnvelope(await api.call('POST', '/api/v1/org/tool/mcp/logs/list/', {}), 401, 'UNAUTHENTICATED');
  });

  it('refuses a tampered pointer, a made-up one, and one issued to another organization', async () => {
    const first = await api.call('POST', '/api/v1/org/tool/mcp/logs/list/', { key: KEYS.acmeAdmin });
    const pointer: string = first.json.data.next;
    const [body, mac] = pointer.split('.') as [string, string];
    const decoded = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    const forged = `${Buffer.from(JSON.stringify({ ...decoded, n: 2999 })).toString('base64url')}.${mac}`;
    const flipped = `${body}.${mac.slice(0, -2)}${mac.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const bad of [forged, flipped, 'abc', `${body}.`, '.', 'x'.repeat(1025)]) {
      const a = await api.call('POST', '/api/v1/org/tool/mcp/logs/list/', { key: KEYS.acmeAdmin, body: { pointer: bad } });
      expect([400], bad.slice(0, 40)).toContain(a.status);
      expect(['INVALID_TOKEN', 'VALIDATION_FAILED']).toContain(a.json.data.error_code);
    }
    expectEnvelope(await api.call('POST', '/api/v1/org/tool/mcp/logs/list/', { key: KEYS.globexAdmin, body: { pointer } }), 400, 'INVALID_TOKEN');
  });

  it('caps pages at 3000', async () => {
    // 27,500 entries: pages of 200, 400, …, 2800 (24,000 in all), then 3000, 3000 and the last 500.
    await pglite.query(
      `INSERT INTO oql_service.tool_logs (id, org_id, user_id, tool_name, input_params, response_time, response_code, tool_call_timestamp)
       SELECT gen_random_uuid(), 'org_initech', 'u_bulk', 'execute_query', '{}'::jsonb, 1, 200, 1700000000000 + g FROM generate_series(1, 27500) g`,
    );
    const sizes: number[] = [];
    let pointer: string | undefined;
    let previous = Infinity;
    for (;;) {
      const a = await api.call('POST', '/api/v1/org/tool/mcp/logs/list/', { key: KEYS.initechAdmin, body: { pointer } });
      const logs = a.json.data.logs as { tool_call_timestamp: number }[];
      sizes.push(logs.length);
      for (const l of logs) {
        expect(l.tool_call_timestamp).toBeLessThan(previous);
        previous = l.tool_call_timestamp;
      }
      if (a.json.data.next === null) break;
      pointer = a.json.data.next;
    }
    expect(sizes).toEqual([200, 400, 600, 800, 1000, 1200, 1400, 1600, 1800, 2000, 2200, 2400, 2600, 2800, 3000, 3000, 500]);
  }, 180_000);
});

describe('filter for two organizations', () => {
  const path = '/api/v1/org/objects/account/filter';
  it('returns the requested fields of the caller\'s matching records only', async () => {
    for (const [org, key] of [['org_acme', KEYS.acmeAdmin], ['org_globex', KEYS.globexAdmin]] as const) {
      const expected = live('account', org).filter((r) => r.industry === 'finance').map((r) => ({ id: r.id, name: r.name, industry: 'finance' }));
      const a = await api.call('POST', path, { key, body: { query: { fields: ['id', 'name', 'industry'], filters: { and: [{ field: 'industry', operator: 'eq', value: 'finance' }] }, pagination: { page: 1, page_size: 1000 } } } });
      expect(a.status).toBe(200);
      expect(a.json.success).toBe(true);
      const sort = (rows: { id: unknown }[]) => [...rows].sort((x, y) => String(x.id).localeCompare(String(y.id)));
      expect(sort(a.json.data.records)).toEqual(sort(expected));
      expect(expected.length).toBeGreaterThan(0);
    }
  });

  it('finds nothing of another organization by its ids', async () => {
    const ids = live('account', 'org_acme').slice(0, 10).map((r) => r.id);
    const body = { query: { fields: ['id'], filters: { or: [{ field: 'id', operator: 'in', value: ids }, { field: 'id', operator: 'eq', value: ids[0] }] } } };
    expect((await api.call('POST', path, { key: KEYS.globexAdmin, body })).json).toEqual({ success: true, data: { records: [] } });
    expect((await api.call('POST', path, { key: KEYS.acmeAdmin, body })).json.data.records).toHaveLength(10);
  });

  it('answers a bad filter with every problem in the envelope', async () => {
    const a = await api.call('POST', path, { key: KEYS.acmeAdmin, body: { query: { filters: { and: [{ field: 'nope', operator: 'eq', value: 1 }, { field: 'name', operator: 'between', value: 3 }] } } } });
    expectEnvelope(a, 400, 'VALIDATION_FAILED');
    expect(a.json.data.validation_errors.length).toBeGreaterThanOrEqual(2);
    expectEnvelope(await api.call('POST', path, { key: KEYS.acmeAdmin, body: { nope: 1 } }), 400, 'VALIDATION_FAILED');
    expectEnvelope(await api.call('POST', '/api/v1/org/objects/acount/filter', { key: KEYS.acmeAdmin, body: { query: {} } }), 400, 'INVALID_SLUG');
  });
});

describe('connector records for two organizations', () => {
  const path = '/api/v1/flowconnector/objects/account/records';
  it('returns the caller\'s records, and only those changed since a time for an incremental sync', async () => {
    const since = 1_735_000_000_000;
    for (const [org, key] of [['org_acme', KEYS.acmeAdmin], ['org_globex', KEYS.globexAdmin]] as const) {
      const all = await api.call('POST', path, { key, body: { query: { fields: ['name'] }, next_token: null } });
      expect(all.status).toBe(200);
      expect(all.json.data.next_token).toBeNull();
      expect(all.json.data.records.map((r: { id: string }) => r.id).sort()).toEqual(live('account', org).map((r) => r.id).sort());
      const changed = await api.call('POST', path, { key, body: { query: { fields: ['name', 'updated_at'], filter: { and: [{ field: 'updated_at', operator: 'gte', value: since }] } } } });
      const expected = live('account', org).filter((r) => typeof r.updated_at === 'number' && r.updated_at >= since);
      expect(changed.json.data.records.map((r: { id: string }) => r.id).sort()).toEqual(expected.map((r) => r.id).sort());
      // updated_at is an ISO 8601 UTC string on this endpoint.
      const one = changed.json.data.records.find((r: { id: string }) => r.id === expected[0]!.id);
      expect(one.updated_at).toBe(new Date(expected[0]!.updated_at as number).toISOString());
    }
  });

  it('refuses a next_token it did not issue', async () => {
    const a = await api.call('POST', path, { key: KEYS.globexAdmin, body: { query: { fields: ['name'] }, next_token: 'eyJ2IjoxfQ.forged' } });
    expectEnvelope(a, 400, 'INVALID_TOKEN');
  });
});

describe('the OpenAPI document', () => {
  // Every endpoint of the contract this server has, written out by hand from the spec; listed
  // without a trailing slash (the router answers both). /health is a probe, not part of the API.
  const ENDPOINTS: readonly [string, string][] = [
    ['post', '/api/v1/reports/execute'],
    ['post', '/api/v1/reports/count'],
    ['post', '/api/v1/org/tool/mcp/logs/list'],
    ['post', '/api/v1/org/objects/{slug}/filter'],
    ['post', '/api/v1/flowconnector/objects/{slug}/records'],
    ['post', '/api/v1/org/objects/list'],
    ['get', '/api/v1/org/objects/{slug}'],
    ['post', '/api/v1/flowconnector/objects/list'],
    ['get', '/api/v1/flowconnector/objects/{slug}'],
    ['post', '/api/v1/syncconnector/objects/list'],
    ['get', '/api/v1/syncconnector/objects/{slug}'],
    ['post', '/api/v1/org/objects/{slug}/record/bulk_create'],
    ['post', '/api/v1/org/objects/{slug}/record/bulk_upsert'],
    ['get', '/api/v1/org/objects/{slug}/record/{id}'],
    ['put', '/api/v1/org/objects/{slug}/record/{id}'],
  ];

  it('is OpenAPI 3.1 and holds every route with its request schema', async () => {
    const a = await api.call('GET', '/openapi.json');
    expect(a.json.openapi).toMatch(/^3\.1\./);
    const paths = a.json.paths as Record<string, Record<string, { requestBody?: unknown; parameters?: { name: string }[] }>>;
    for (const [method, path] of ENDPOINTS) {
      expect(paths[path]?.[method], `${method.toUpperCase()} ${path}`).toBeDefined();
      if (path.includes('{slug}')) expect(paths[path]![method]!.parameters?.map((p) => p.name)).toContain('slug');
      if (method === 'post' && path.startsWith('/api/v1/reports')) expect(paths[path]![method]!.requestBody).toBeDefined();
    }
  });

  it('answers every documented operation with something other than 404', async () => {
    const paths = (await api.call('GET', '/openapi.json')).json.paths as Record<string, Record<string, unknown>>;
    // OAuth paths name a workspace; an unknown one is rightly a 404 there.
    for (const [path, operations] of Object.entries(paths).filter(([p]) => !p.includes('{subdomain}') && !p.startsWith('/.well-known'))) {
      for (const method of Object.keys(operations)) {
        if (path.endsWith('/stream')) {
          // A stream answers its status at once and then stays open: read the status, then hang up.
          const controller = new AbortController();
          const res = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${KEYS.acmeAdmin}` }, signal: controller.signal });
          controller.abort();
          expect(res.status, `${method} ${path}`).toBe(200);
          continue;
        }
        const a = await api.call(method.toUpperCase(), path.replace(/\{[^}]+\}/g, 'account'), { key: KEYS.acmeAdmin, body: method === 'get' ? undefined : {} });
        expect(a.status, `${method} ${path}`).not.toBe(404);
        expect(a.status, `${method} ${path}`).toBeLessThan(500);
      }
    }
  });
});

describe('request logs', () => {
  it('write one line per request with id, route, status and duration, and never the key or the body', async () => {
    const lines: string[] = [];
    const logged = await listen({ db, apiKeys: API_KEYS_ENV, env: {}, log: { level: 'info', stream: { write: (line: string) => lines.push(line) } } });
    try {
      const secretValue = 'confidential-needle-7731';
      const ok = await logged.call('POST', '/api/v1/reports/execute', { key: KEYS.acmeAdmin, body: { query: `SELECT id FROM account WHERE name = '${secretValue}' LIMIT 1`, slug: 'account' } });
      const denied = await logged.call('POST', '/api/v1/reports/count', { key: 'wrong-key-0000000000', body: { query: secretValue, slug: 'account' } });
      const requests = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['msg'] === 'request');
      expect(requests).toHaveLength(2);
      expect(requests[0]).toMatchObject({ reqId: ok.headers.get('x-request-id'), method: 'POST', route: '/api/v1/reports/execute', status: 200, ms: expect.any(Number) });
      expect(requests[1]).toMatchObject({ reqId: denied.headers.get('x-request-id'), route: '/api/v1/reports/count', status: 401 });
      const all = lines.join('\n');
      for (const secret of [KEYS.acmeAdmin, 'wrong-key-0000000000', secretValue, 'authorization']) expect(all).not.toContain(secret);
    } finally {
      await logged.close();
    }
  });
});
