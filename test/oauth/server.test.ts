import type { AddressInfo } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createServer, recordToolCall, databaseOf, type OqlServer, type ServiceDb } from '../../src/server/index.js';
import {
  REDIRECT, authorizeUrl, exchange, openConsent, pkcePair, postConsent, registerClient, type Tenant,
} from './support.js';
import { emptyPglite } from '../support/pglite-template.js';

/**
 * The authorization server inside the whole service (createServer): its endpoints on the main
 * host, workspaces from OQL_WORKSPACES, and its access tokens on the tool-log listing — Superadmin
 * only, one organization's logs only, and nowhere else.
 */

let pglite: PGlite;
let db: ServiceDb;
let server: OqlServer;
let base = '';
let a: Tenant;
let b: Tenant;

beforeAll(async () => {
  pglite = await emptyPglite();
  db = databaseOf(pglite);
  server = await createServer({
    db,
    env: { OQL_WORKSPACES: 'acme=org_acme, globex=org_globex' },
    oauth: { limits: { register: { max: 1000, windowSeconds: 60 } } },
  });
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  await server.mcpApp.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
  const mcp = `http://127.0.0.1:${(server.mcpApp.server.address() as AddressInfo).port}`;
  const tenant = async (subdomain: string, orgId: string): Promise<Tenant> => ({
    subdomain, orgId,
    adminKey: await createApiKey(db, { orgId, role: 'superadmin', userId: `admin_${subdomain}` }),
    memberKey: await createApiKey(db, { orgId, role: 'member', userId: `member_${subdomain}` }),
    resource: `${mcp}/${subdomain}/mcp`,
  });
  a = await tenant('acme', 'org_acme');
  b = await tenant('globex', 'org_globex');
  await recordToolCall(db, { orgId: 'org_acme', userId: 'admin_acme', toolName: 'execute_query', inputParams: { slug: 'deal' }, responseTime: 12, responseCode: 200, timestamp: 1_700_000_000_000 });
  await recordToolCall(db, { orgId: 'org_globex', userId: 'admin_globex', toolName: 'list_objects', inputParams: {}, responseTime: 3, responseCode: 200, timestamp: 1_700_000_000_001 });
});
afterAll(async () => {
  await server?.close();
  await pglite?.close();
});

async function accessToken(t: Tenant, key: string, scope?: string): Promise<string> {
  const clientId = await registerClient(base, t.subdomain);
  const { verifier, challenge } = pkcePair();
  const url = authorizeUrl(base, t.subdomain, {
    response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', resource: t.resource,
    ...(scope === undefined ? {} : { scope }),
  });
  const form = await openConsent(url);
  expect(form.status).toBe(200);
  const res = await postConsent(url, form, { api_key: key, decision: 'approve' });
  expect(res.status).toBe(302);
  const code = new URL(res.headers.get('location')!).searchParams.get('code')!;
  const tokens = await exchange(base, t, { clientId, verifier, code });
  expect(tokens.status).toBe(200);
  return tokens.body.access_token;
}

async function toolLogs(bearer: string) {
  const res = await fetch(`${base}/api/v1/org/tool/mcp/logs/list/`, {
    method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: '{}',
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('the authorization server in createServer', () => {
  it('serves the metadata of the workspaces of OQL_WORKSPACES on the main host only', async () => {
    const res = await fetch(`${base}/.well-known/oauth-authorization-server/globex`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).issuer).toBe(`${base}/globex`);
    expect((await fetch(`${base}/.well-known/oauth-authorization-server/initech`)).status).toBe(404);
  });

  it('keeps the OAuth endpoints out of the OpenAPI document of the API-key endpoints', async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).length).toBeGreaterThan(0);
    expect(Object.keys(doc.paths).filter((p) => p.includes('oauth'))).toEqual([]);
  });

  it("lets a superadmin's access token list its own organization's tool logs", async () => {
    const listing = await toolLogs(await accessToken(a, a.adminKey));
    expect(listing.status).toBe(200);
    expect(listing.body.success).toBe(true);
    expect(listing.body.data.logs.map((l: { tool_name: string; user_id: string }) => [l.tool_name, l.user_id])).toEqual([['execute_query', 'admin_acme']]);
    const other = await toolLogs(await accessToken(b, b.adminKey));
    expect(other.body.data.logs.map((l: { tool_name: string }) => l.tool_name)).toEqual(['list_objects']);
  });

  it("refuses a member's access token on the tool-log listing", async () => {
    const listing = await toolLogs(await accessToken(a, a.memberKey));
    expect(listing.status).toBe(403);
    expect(listing.body.success).toBe(false);
    expect(JSON.stringify(listing.body)).not.toContain('execute_query');
  });

  it("refuses a superadmin's token that holds schema:read only, in each organization, and shows none of the calls", async () => {
    for (const [t, tool] of [[a, 'execute_query'], [b, 'list_objects']] as const) {
      const narrow = await toolLogs(await accessToken(t, t.adminKey, 'schema:read'));
      expect(narrow.status).toBe(403);
      expect(narrow.body.data.error_code).toBe('PERMISSION_DENIED');
      expect(narrow.body.data.message).toContain('records:read');
      expect(JSON.stringify(narrow.body)).not.toContain(tool);
      const wide = await toolLogs(await accessToken(t, t.adminKey, 'records:read'));
      expect(wide.status).toBe(200);
      expect(wide.body.data.logs.map((l: { tool_name: string }) => l.tool_name)).toEqual([tool]);
    }
  });

  it('refuses access tokens on the API-key endpoints', async () => {
    const token = await accessToken(a, a.adminKey);
    const filter = (bearer: string) => fetch(`${base}/api/v1/org/objects/opportunity/filter`, {
      method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: '{}',
    });
    expect((await filter(token)).status).toBe(401);
    // The same endpoint and body with the key the token was approved with gets past authentication.
    expect((await filter(a.adminKey)).status).not.toBe(401);
  });

  it('refuses a bad OQL_WORKSPACES before touching the database', async () => {
    await expect(createServer({ db, env: { OQL_WORKSPACES: 'acme' } })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    await expect(createServer({ db, env: { OQL_WORKSPACES: 'Bad_Sub=org_x' } })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });
});
