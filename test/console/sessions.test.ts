import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/service/store/api-keys.js';
import { databaseOf } from '../../src/run/database-of.js';
import { authorizeUrl, openConsent, pkcePair, postConsent, registerClient } from '../oauth/support.js';
import { KEYS, call, expectEnvelope, liveRows, type Running } from '../server/support.js';
import { asSession, openWorld, sessionCookieOf, signIn, type ConsoleWorld } from './support.js';

/**
 * Console sessions over real HTTP, on PostgreSQL with two instances sharing it: the cookie's
 * attributes, the session as a credential of the public API, CSRF on every change, sign-out, the
 * sign-in's attempt budget shared with the consent form, and the pages' security headers.
 */

let world: ConsoleWorld;
let a: Running;
let b: Running;

beforeAll(async () => {
  world = await openWorld();
  a = await world.start();
  // A second instance with no key cache: what it knows, it knows from the database alone.
  b = await world.start({ apiKeyCacheMs: 0 });
}, 240_000);

afterAll(async () => {
  await world?.close();
});

const REPORT = { query: 'SELECT id FROM account ORDER BY id LIMIT 10000', slug: 'account' };

describe('signing in', () => {
  it('turns an API key into an HttpOnly, SameSite=Strict cookie whose session lives in PostgreSQL, usable on another instance', async () => {
    const answer = await call(a.url, 'POST', '/console/session', { body: { api_key: KEYS.acmeMember } });
    expect(answer.status, answer.text).toBe(200);
    const header = answer.headers.get('set-cookie')!;
    const attributes = header.split(';').map((s) => s.trim());
    expect(attributes).toEqual(expect.arrayContaining(['Path=/', 'HttpOnly', 'SameSite=Strict']));
    expect(attributes).not.toContain('Secure');
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.json.data).toMatchObject({ org_id: 'org_acme', user_id: 'u_acme_member', role: 'member', assignable_roles: ['member'] });
    // The key is nowhere in what comes back, and the table holds no token, only its hash.
    expect(answer.text).not.toContain(KEYS.acmeMember);
    const cookie = sessionCookieOf(answer);
    const token = cookie.split('=')[1]!;
    const { rows } = await world.pool.query('SELECT token_hash, user_id FROM oql_service.console_sessions');
    expect(rows.some((r) => r.token_hash === token)).toBe(false);
    expect(rows.map((r) => r.user_id)).toContain('u_acme_member');

    // Instance b never saw this session being made.
    const again = await call(b.url, 'GET', '/console/session', { headers: { cookie } });
    expect(again.status).toBe(200);
    expect(again.json.data.csrf_token).toBe(answer.json.data.csrf_token);
    const report = await call(b.url, 'POST', '/api/v1/reports/execute', { body: REPORT, headers: { cookie, 'x-csrf-token': answer.json.data.csrf_token } });
    expect(report.status, report.text).toBe(200);
    expect(report.json.data.records.map((r: { id: string }) => r.id).sort()).toEqual(liveRows('account', 'org_acme').map((r) => r.id).sort());
  });

  it('refuses a wrong, revoked or expired key with one message, then the address, on the console only', async () => {
    const limited = await world.start({ mcpUrl: 'http://127.0.0.1:8081', oauth: { limits: { signIn: { max: 3, windowSeconds: 300 } } } });
    const revoked = await issueApiKey(databaseOf(world.pool), { orgId: 'org_acme', role: 'member' });
    const expired = await issueApiKey(databaseOf(world.pool), { orgId: 'org_acme', role: 'member' });
    await world.pool.query('UPDATE oql_service.api_keys SET revoked_at = 1 WHERE id = $1', [revoked.id]);
    await world.pool.query('UPDATE oql_service.api_keys SET expires_at = $2 WHERE id = $1', [expired.id, Date.now() - 1000]);
    const messages = new Set<string>();
    for (const key of ['oql_not-a-key-at-all-0000000000000000000000000', revoked.key, expired.key]) {
      const answer = await call(limited.url, 'POST', '/console/session', { body: { api_key: key } });
      expectEnvelope(answer, 401, 'UNAUTHENTICATED');
      expect(answer.headers.get('set-cookie')).toBeNull();
      messages.add(answer.json.data.message);
    }
    expect(messages.size).toBe(1);
    // The budget is spent: even a good key waits here. The lockout is the console's and this
    // address's (src/oauth/sign-in.ts): a workspace's consent form from the same address is not a
    // neighbour it may lock out.
    const blocked = await call(limited.url, 'POST', '/console/session', { body: { api_key: KEYS.acmeAdmin } });
    expectEnvelope(blocked, 429, 'TOO_MANY_REQUESTS');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);

    const clientId = await registerClient(limited.url, 'acme', ['http://127.0.0.1:49152/callback']);
    const { challenge } = pkcePair();
    const url = authorizeUrl(limited.url, 'acme', {
      response_type: 'code', client_id: clientId, redirect_uri: 'http://127.0.0.1:49152/callback', code_challenge: challenge,
      code_challenge_method: 'S256', resource: 'http://127.0.0.1:8081/acme/mcp', state: 's',
    });
    const form = await openConsent(url);
    expect(form.status, form.html.slice(0, 300)).toBe(200);
    const consent = await postConsent(url, form, { api_key: KEYS.acmeAdmin, decision: 'approve' });
    expect(consent.status).toBe(302);
    expect(new URL(consent.headers.get('location')!).searchParams.get('code')).toMatch(/\S/);
  });

  it('checks at most the limit of 100 wrong keys sent at once, from two instances; the rest are 429 before any lookup', async () => {
    const limit = { max: 10, windowSeconds: 300 };
    const one = await world.start({ trustProxy: '127.0.0.1', oauth: { limits: { signIn: limit } } });
    const two = await world.start({ trustProxy: '127.0.0.1', oauth: { limits: { signIn: limit } } });
    const from = { 'x-forwarded-for': '198.51.100.35' };
    // Each guess has a beginning of its own: only the address's counter can stop them.
    const guess = (i: number) => `oql_${String(i).padStart(8, '0')}${'q'.repeat(40)}`;
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) =>
      call((i % 2 === 0 ? one : two).url, 'POST', '/console/session', { body: { api_key: guess(i) }, headers: from })));
    const checked = answers.filter((x) => x.status === 401);
    const refused = answers.filter((x) => x.status === 429);
    expect(checked.length).toBeLessThanOrEqual(limit.max);
    expect(checked.length + refused.length).toBe(100);
    for (const x of refused) {
      expectEnvelope(x, 429, 'TOO_MANY_REQUESTS');
      expect(Number(x.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    // Another address signs in to either organization meanwhile.
    for (const key of [KEYS.acmeMember, KEYS.globexMember]) {
      expect((await call(two.url, 'POST', '/console/session', { body: { api_key: key }, headers: { 'x-forwarded-for': '198.51.100.36' } })).status).toBe(200);
    }
  });

  it('lets the right key in among wrong ones sent at once while they are under the limit, and its sign-ins spend nothing', async () => {
    const limit = { max: 10, windowSeconds: 300 };
    const one = await world.start({ trustProxy: '127.0.0.1', oauth: { limits: { signIn: limit } } });
    const from = { 'x-forwarded-for': '198.51.100.37' };
    for (let i = 0; i < 2 * limit.max; i++) {
      expect((await call(one.url, 'POST', '/console/session', { body: { api_key: KEYS.globexMember }, headers: from })).status).toBe(200);
    }
    const guess = (i: number) => `oql_${String(i).padStart(8, '1')}${'r'.repeat(40)}`;
    const answers = await Promise.all([
      ...Array.from({ length: limit.max - 1 }, (_, i) => call(one.url, 'POST', '/console/session', { body: { api_key: guess(i) }, headers: from })),
      call(one.url, 'POST', '/console/session', { body: { api_key: KEYS.acmeMember }, headers: from }),
    ]);
    expect(answers.slice(0, -1).map((x) => x.status)).toEqual(Array(limit.max - 1).fill(401));
    expect(answers[answers.length - 1]!.status).toBe(200);
    // Nine refused keys and one place left.
    expect((await call(one.url, 'POST', '/console/session', { body: { api_key: guess(99) }, headers: from })).status).toBe(401);
    expect((await call(one.url, 'POST', '/console/session', { body: { api_key: KEYS.acmeMember }, headers: from })).status).toBe(429);
  });

  it('keeps a key\'s live sessions at their cap, its oldest ending first, and refuses its sign-ins past the minute\'s cap', async () => {
    const capped = await world.start({ maxConsoleSessionsPerKey: 3, maxConsoleSignInsPerMinute: 5 });
    const acme = await issueApiKey(databaseOf(world.pool), { orgId: 'org_acme', role: 'member', userId: 'u_session_cap' });
    const globex = await issueApiKey(databaseOf(world.pool), { orgId: 'org_globex', role: 'member', userId: 'u_session_cap' });
    const cookies: string[] = [];
    for (let i = 0; i < 5; i++) cookies.push((await signIn(capped.url, acme.key)).cookie);
    const live = await world.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM oql_service.console_sessions WHERE api_key_id = $1', [acme.id]);
    expect(live.rows[0]!.n).toBe(3);
    const statuses = await Promise.all(cookies.map(async (cookie) => (await call(capped.url, 'GET', '/console/session', { headers: { cookie } })).status));
    expect(statuses).toEqual([401, 401, 200, 200, 200]);
    const sixth = await call(capped.url, 'POST', '/console/session', { body: { api_key: acme.key } });
    expectEnvelope(sixth, 429, 'TOO_MANY_REQUESTS');
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0);
    // Past a key's cap is that key's alone: another organization's key signs in.
    expect((await call(capped.url, 'POST', '/console/session', { body: { api_key: globex.key } })).status).toBe(200);
  });

  it('sets a Secure __Host- cookie when the public URL is https', async () => {
    const secure = await world.start({ baseUrl: 'https://console.example.test' });
    const answer = await call(secure.url, 'POST', '/console/session', { body: { api_key: KEYS.globexMember } });
    expect(answer.status, answer.text).toBe(200);
    const header = answer.headers.get('set-cookie')!;
    expect(header.startsWith('__Host-oql_session=oqls_')).toBe(true);
    expect(header.split(';').map((s) => s.trim())).toEqual(expect.arrayContaining(['Secure', 'HttpOnly', 'SameSite=Strict', 'Path=/']));
    const cookie = sessionCookieOf(answer);
    expect((await call(secure.url, 'GET', '/api/v1/keys', { headers: { cookie } })).status).toBe(200);
    // The plain name is not read where the secure one is expected.
    expect((await call(secure.url, 'GET', '/api/v1/keys', { headers: { cookie: cookie.replace('__Host-', '') } })).status).toBe(401);
  });
});

describe('the session as a credential of the public API', () => {
  it('reads without the CSRF token, but refuses every change without it, with another session\'s, or from another site', async () => {
    const admin = await signIn(a.url, KEYS.acmeAdmin);
    const other = await signIn(a.url, KEYS.acmeAdmin);
    expect(other.csrf).not.toBe(admin.csrf);
    expect((await asSession(a.url, admin, 'GET', '/api/v1/keys', { csrf: false })).status).toBe(200);
    const body = { name: 'csrf probe', role: 'member' };
    for (const attempt of [
      asSession(a.url, admin, 'POST', '/api/v1/keys', { body, csrf: false }),
      asSession(a.url, admin, 'POST', '/api/v1/keys', { body, csrf: other.csrf }),
      asSession(a.url, admin, 'POST', '/api/v1/keys', { body, headers: { origin: 'https://evil.example' } }),
      asSession(a.url, admin, 'POST', '/api/v1/keys', { body, headers: { 'sec-fetch-site': 'cross-site' } }),
      asSession(a.url, admin, 'POST', '/api/v1/reports/count', { body: REPORT, csrf: false }),
    ]) expectEnvelope(await attempt, 403, 'PERMISSION_DENIED');
    const listed = await asSession(a.url, admin, 'GET', '/api/v1/keys');
    expect(listed.json.data.keys.some((k: { name: string }) => k.name === 'csrf probe')).toBe(false);
    const created = await asSession(a.url, admin, 'POST', '/api/v1/keys', { body, headers: { origin: a.url } });
    expect(created.status, created.text).toBe(201);
    expect(created.json.data.key.created_by).toBe('u_acme_admin');
  });

  it('is in the OpenAPI document: the cookie and the header by name, on every API route, and its refusals are the answers it gets', async () => {
    const doc = (await call(a.url, 'GET', '/openapi.json')).json;
    expect(doc.components.securitySchemes.consoleSession).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'oql_session' });
    expect(doc.components.securitySchemes.consoleCsrf).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-csrf-token' });
    for (const [path, item] of Object.entries<Record<string, { security: object[] }>>(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const session = method === 'get' ? { consoleSession: [] } : { consoleSession: [], consoleCsrf: [] };
        expect(op.security, `${method} ${path}`).toContainEqual(session);
      }
    }
    const example = (name: string) => doc.components.examples[name].value;
    const keys = doc.paths['/api/v1/keys'].post.responses;
    expect(Object.keys(keys['403'].content['application/json'].examples)).toEqual(expect.arrayContaining(['crossSiteChange', 'csrfMissing']));
    const s = await signIn(a.url, KEYS.acmeMember);
    const body = { name: 'documented refusals', role: 'member' };
    const noToken = await asSession(a.url, s, 'POST', '/api/v1/keys', { body, csrf: false });
    expect([noToken.status, noToken.json]).toEqual([403, example('csrfMissing')]);
    const crossSite = await asSession(a.url, s, 'POST', '/api/v1/keys', { body, headers: { origin: 'https://evil.example' } });
    expect([crossSite.status, crossSite.json]).toEqual([403, example('crossSiteChange')]);
    expect((await asSession(a.url, s, 'DELETE', '/console/session')).status).toBe(200);
    const ended = await asSession(a.url, s, 'GET', '/api/v1/keys');
    expect([ended.status, ended.json]).toEqual([401, example('sessionEnded')]);
    expect(Object.keys(doc.paths['/api/v1/keys'].get.responses['401'].content['application/json'].examples)).toContain('sessionEnded');
  });

  it('an unknown or forged cookie is 401, never another session', async () => {
    for (const cookie of ['oql_session=oqls_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'oql_session=nonsense', 'oql_session=']) {
      expectEnvelope(await call(a.url, 'GET', '/api/v1/keys', { headers: { cookie } }), 401, 'UNAUTHENTICATED');
    }
    expectEnvelope(await call(a.url, 'GET', '/console/session'), 401, 'UNAUTHENTICATED');
  });

  it('a bearer key and a session of another organization in one request: the key decides, as it always did', async () => {
    const globex = await signIn(a.url, KEYS.globexAdmin);
    const answer = await call(a.url, 'POST', '/api/v1/reports/execute', { key: KEYS.acmeMember, body: REPORT, headers: { cookie: globex.cookie } });
    expect(answer.status).toBe(200);
    expect(answer.json.data.records.length).toBe(liveRows('account', 'org_acme').length);
  });

  it('ends when the key it was signed in with is revoked, on every instance at once', async () => {
    const made = await issueApiKey(databaseOf(world.pool), { orgId: 'org_globex', role: 'admin', userId: 'u_globex_ops' });
    const s = await signIn(a.url, made.key);
    expect((await asSession(b.url, s, 'GET', '/api/v1/keys')).status).toBe(200);
    const admin = await signIn(b.url, KEYS.globexAdmin);
    expect((await asSession(b.url, admin, 'POST', `/api/v1/keys/${made.id}/revoke`)).status).toBe(200);
    for (const server of [a, b]) expectEnvelope(await asSession(server.url, s, 'GET', '/api/v1/keys'), 401, 'UNAUTHENTICATED');
    expectEnvelope(await asSession(a.url, s, 'GET', '/console/session'), 401, 'UNAUTHENTICATED');
  });
});

describe('signing out', () => {
  it('needs the CSRF token, ends the session on every instance and clears the cookie', async () => {
    const s = await signIn(a.url, KEYS.globexMember);
    expectEnvelope(await asSession(a.url, s, 'DELETE', '/console/session', { csrf: false }), 403, 'PERMISSION_DENIED');
    expect((await asSession(b.url, s, 'GET', '/console/session')).status).toBe(200);
    const out = await asSession(a.url, s, 'DELETE', '/console/session');
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/^oql_session=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0$/);
    for (const server of [a, b]) {
      expectEnvelope(await asSession(server.url, s, 'GET', '/console/session'), 401, 'UNAUTHENTICATED');
      expectEnvelope(await asSession(server.url, s, 'GET', '/api/v1/keys'), 401, 'UNAUTHENTICATED');
    }
  });
});

describe('the console\'s pages and files', () => {
  it('are served with a CSP that allows no inline script or style, and refuse to be framed', async () => {
    for (const path of ['/', '/keys', '/playground', '/webhooks', '/logs', '/connect']) {
      const page = await call(a.url, 'GET', path);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const csp = page.headers.get('content-security-policy')!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe');
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      // No inline script or style in the document itself.
      expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=/i);
    }
    const script = await call(a.url, 'GET', '/console/app.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const etag = script.headers.get('etag')!;
    expect((await call(a.url, 'GET', '/console/app.js', { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect(script.text).not.toMatch(/[^\x00-\x7f]/);
  });

  it('are left out of the OpenAPI document, where the endpoints the console uses are described with their responses', async () => {
    const doc = (await call(a.url, 'GET', '/openapi.json')).json;
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/console') || p === '/')).toBe(false);
    // Shared shapes are components: follow a `$ref` to the schema it names.
    const resolved = (schema: { $ref?: string }): any => (schema.$ref ? doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')] : schema);
    const data = (response: any) => resolved(response.content['application/json'].schema.properties.data);
    expect(resolved(data(doc.paths['/api/v1/keys'].get.responses['200']).properties.keys.items).required)
      .toEqual(expect.arrayContaining(['id', 'name', 'role', 'user_id', 'prefix', 'last4', 'created_at', 'last_used_at', 'expires_at', 'revoked_at']));
    expect(doc.paths['/api/v1/keys'].post.requestBody.content['application/json'].schema.required).toEqual(['name', 'role']);
    expect(data(doc.paths['/api/v1/keys'].post.responses['201']).required).toEqual(['key', 'secret']);
    expect(data(doc.paths['/api/v1/keys/{id}/roll'].post.responses['201']).required).toEqual(['key', 'secret', 'previous']);
    expect(doc.paths['/api/v1/keys/{id}/revoke'].post.responses['200']).toBeDefined();
    expect(resolved(data(doc.paths['/api/v1/reports/lint'].post.responses['200']).properties.diagnostics.items).properties.fix).toBeDefined();
  });
});
