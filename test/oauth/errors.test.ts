import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/service/store/api-keys.js';
import { revokeToken, verifyAccessToken } from '../../src/oauth/index.js';
import {
  REDIRECT, authorizeUrl, exchange, obtainCode, openConsent, openHarness, pkcePair, postConsent, register, registerClient,
  startAuthServer, tokenRequest, type Harness, type Running,
} from './support.js';

/**
 * Every refusal of the authorization server, with two workspaces of two organizations. Each case
 * checks that nothing usable comes out: no code in a redirect, no token in a body.
 */

let h: Harness;
let server: Running;
let clock = Date.UTC(2026, 0, 1);
let timed: Running;

beforeAll(async () => {
  h = await openHarness();
  server = await startAuthServer(h.db);
  // A second server on the same database whose clock the tests move (code expiry).
  timed = await startAuthServer(h.db, { now: () => clock });
});
afterAll(async () => {
  await timed?.close();
  await server?.close();
  await h?.close();
});

function noToken(body: unknown): void {
  expect(JSON.stringify(body ?? '')).not.toMatch(/"access_token"|"refresh_token"|oqlat_|oqlrt_/);
}

describe('unknown workspace', () => {
  it('answers 404 workspace_not_found on every OAuth path', async () => {
    const base = server.baseUrl;
    const responses = [
      await fetch(`${base}/.well-known/oauth-authorization-server/nowhere`),
      await register(base, 'nowhere', { client_name: 'x', redirect_uris: [REDIRECT], grant_types: ['authorization_code'], response_types: ['code'] }),
      await fetch(`${base}/api/v1/nowhere/oauth/authorize?client_id=x`),
      await fetch(`${base}/api/v1/nowhere/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code' }),
      await fetch(`${base}/.well-known/oauth-authorization-server/Bad%20Name`),
    ];
    for (const res of responses) {
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(((await res.json()) as any).error).toBe('workspace_not_found');
    }
  });
});

describe('registration', () => {
  const good = { client_name: 'Agent', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] };

  it('echoes the metadata with a client_id and treats a missing auth method as none', async () => {
    const res = await register(server.baseUrl, 'acme', { ...good, client_uri: 'https://agent.example/about' });
    expect(res.status).toBe(201);
    const body: any = await res.json();
    expect(body).toMatchObject({ ...good, token_endpoint_auth_method: 'none', client_uri: 'https://agent.example/about' });
    expect(body.client_id).toMatch(/^\S{16,}$/);
  });

  it.each([
    ['no client_name', { ...good, client_name: undefined }, 'invalid_client_metadata'],
    ['empty client_name', { ...good, client_name: '  ' }, 'invalid_client_metadata'],
    ['an empty grant_types', { ...good, grant_types: [] }, 'invalid_client_metadata'],
    ['implicit grant', { ...good, grant_types: ['implicit'] }, 'invalid_client_metadata'],
    ['only refresh_token', { ...good, grant_types: ['refresh_token'] }, 'invalid_client_metadata'],
    ['an empty response_types', { ...good, response_types: [] }, 'invalid_client_metadata'],
    ['an unknown application_type', { ...good, application_type: 'desktop' }, 'invalid_client_metadata'],
    ['a web client with a loopback redirect', { ...good, application_type: 'web', redirect_uris: ['http://127.0.0.1:4000/cb'] }, 'invalid_redirect_uri'],
    ['a web client with https on localhost', { ...good, application_type: 'web', redirect_uris: ['https://localhost/cb'] }, 'invalid_redirect_uri'],
    ['a native client with an https redirect', { ...good, application_type: 'native', redirect_uris: ['https://agent.example/cb'] }, 'invalid_redirect_uri'],
    ['a native client with a scheme without a dot', { ...good, application_type: 'native', redirect_uris: ['myapp:/cb'] }, 'invalid_redirect_uri'],
    ['a native client with javascript:', { ...good, application_type: 'native', redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
    ['token response type', { ...good, response_types: ['token'] }, 'invalid_client_metadata'],
    ['a confidential client', { ...good, token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata'],
    ['a javascript: client_uri', { ...good, client_uri: 'javascript:alert(1)' }, 'invalid_client_metadata'],
    ['no redirect_uris', { ...good, redirect_uris: undefined }, 'invalid_redirect_uri'],
    ['empty redirect_uris', { ...good, redirect_uris: [] }, 'invalid_redirect_uri'],
    ['plain http on a public host', { ...good, redirect_uris: ['http://agent.example/cb'] }, 'invalid_redirect_uri'],
    ['a relative URI', { ...good, redirect_uris: ['/callback'] }, 'invalid_redirect_uri'],
    ['a fragment', { ...good, redirect_uris: ['https://agent.example/cb#x'] }, 'invalid_redirect_uri'],
    ['user information', { ...good, redirect_uris: ['https://good.example@evil.example/cb'] }, 'invalid_redirect_uri'],
    ['a javascript: URI', { ...good, redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
    ['a non-string URI', { ...good, redirect_uris: [42] }, 'invalid_redirect_uri'],
  ])('refuses %s', async (_name, body, error) => {
    const res = await register(server.baseUrl, 'acme', body);
    expect(res.status).toBe(400);
    const json: any = await res.json();
    expect(json.error).toBe(error);
    expect(typeof json.error_description).toBe('string');
    expect(json.client_id).toBeUndefined();
  });

  it('accepts https and every loopback http form', async () => {
    const res = await register(server.baseUrl, 'acme', { ...good, redirect_uris: ['https://agent.example/cb', 'http://localhost:3000/cb', 'http://[::1]:8080/cb', 'http://127.0.0.1/cb'] });
    expect(res.status).toBe(201);
  });

  it('refuses a body that is not a JSON object in the OAuth shape', async () => {
    for (const [type, body] of [['application/json', '[1,2]'], ['application/json', '{"client_name":'], ['text/plain', 'hello']] as const) {
      const res = await fetch(`${server.baseUrl}/api/v1/acme/oauth/register`, { method: 'POST', headers: { 'content-type': type }, body });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      const json: any = await res.json();
      expect(typeof json.error).toBe('string');
      expect(JSON.stringify(json)).not.toMatch(/at .*\.(js|ts):\d+/);
    }
  });
});

describe('authorization request', () => {
  let clientA: string;
  let challenge: string;
  beforeAll(async () => {
    clientA = await registerClient(server.baseUrl, 'acme');
    challenge = pkcePair().challenge;
  });
  const params = (over: Record<string, string | undefined> = {}) => ({
    response_type: 'code', client_id: clientA, redirect_uri: REDIRECT, code_challenge: challenge,
    code_challenge_method: 'S256', resource: h.a.resource, state: 's t&ate=1', ...over,
  });

  it('shows an unknown client on the page, never redirecting', async () => {
    const res = await fetch(authorizeUrl(server.baseUrl, 'acme', params({ client_id: 'oqlc_unknown' })), { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('invalid_client');
  });

  it("treats workspace A's client at workspace B's endpoint as unknown", async () => {
    const res = await fetch(authorizeUrl(server.baseUrl, 'globex', params({ resource: h.b.resource })), { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('invalid_client');
  });

  it.each([
    ['another host', 'https://evil.example/callback'],
    ['a longer path', `${REDIRECT}/more`],
    ['an extra query', `${REDIRECT}?next=1`],
    ['a trailing slash', `${REDIRECT}/`],
    ['another port', 'http://127.0.0.1:49153/callback'],
    ['no redirect_uri', undefined],
  ])('shows an unregistered redirect URI (%s) on the page, never redirecting to it', async (_n, uri) => {
    const res = await fetch(authorizeUrl(server.baseUrl, 'acme', params({ redirect_uri: uri })), { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('invalid_redirect_uri');
  });

  it.each([
    ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
    ['no response_type', { response_type: undefined }, 'invalid_request'],
    ['no code_challenge', { code_challenge: undefined }, 'invalid_request'],
    ['the plain method', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['no method', { code_challenge_method: undefined }, 'invalid_request'],
    ['a malformed challenge', { code_challenge: 'short' }, 'invalid_request'],
    ['no resource', { resource: undefined }, 'invalid_target'],
    ["workspace B's resource", { resource: 'http://127.0.0.1:8081/globex/mcp' }, 'invalid_target'],
    ['a resource with a trailing slash', { resource: 'http://127.0.0.1:8081/acme/mcp/' }, 'invalid_target'],
    ['an unknown scope', { scope: 'read' }, 'invalid_scope'],
    ['a known and an unknown scope', { scope: 'records:read admin' }, 'invalid_scope'],
  ])('sends %s back to the client as an error, with the state and no code', async (_n, over, error) => {
    const res = await fetch(authorizeUrl(server.baseUrl, 'acme', params(over)), { redirect: 'manual' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(REDIRECT);
    expect(location.searchParams.get('error')).toBe(error);
    expect(location.searchParams.get('state')).toBe('s t&ate=1');
    expect(location.searchParams.get('code')).toBeNull();
  });

  it('refuses the same problems when they are posted instead of sent to the page', async () => {
    const url = authorizeUrl(server.baseUrl, 'acme', params());
    const form = await openConsent(url);
    expect(form.status).toBe(200);
    const scoped = await postConsent(url, form, { api_key: h.a.adminKey, decision: 'approve', scope: 'admin' });
    expect(scoped.status).toBe(302);
    expect(new URL(scoped.headers.get('location')!).searchParams.get('error')).toBe('invalid_scope');
    const elsewhere = await postConsent(url, form, { api_key: h.a.adminKey, decision: 'approve', redirect_uri: 'https://evil.example/cb' });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.headers.get('location')).toBeNull();
  });
});

describe('consent form', () => {
  let clientA: string;
  let url: string;
  beforeAll(async () => {
    clientA = await registerClient(server.baseUrl, 'acme', [REDIRECT], 'Form agent');
    url = authorizeUrl(server.baseUrl, 'acme', {
      response_type: 'code', client_id: clientA, redirect_uri: REDIRECT, code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256', resource: h.a.resource, state: 'xyz',
    });
  });

  it('cannot be framed and names the client and the workspace', async () => {
    const form = await openConsent(url);
    expect(form.headers.get('x-frame-options')).toBe('DENY');
    expect(form.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(form.headers.get('cache-control')).toBe('no-store');
    expect(form.html).toContain('Form agent');
    expect(form.html).toContain('acme');
    expect(form.fields.csrf_token).toMatch(/\S+/);
    expect(form.cookie).toMatch(/^oql_oauth_csrf=/);
  });

  it('denies with access_denied and the state', async () => {
    const form = await openConsent(url);
    const res = await postConsent(url, form, { decision: 'deny' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('xyz');
    expect(location.searchParams.get('code')).toBeNull();
  });

  it("refuses a wrong key and another workspace's key with the form again, and no code", async () => {
    for (const key of ['oql_not_a_key_at_all_000000000', h.b.adminKey, '']) {
      const form = await openConsent(url);
      const res = await postConsent(url, form, { api_key: key, decision: 'approve' });
      expect(res.status).toBe(401);
      expect(res.headers.get('location')).toBeNull();
      const html = await res.text();
      expect(html).toContain('not a valid key of the workspace acme');
      expect(html).toContain('name="csrf_token"');
    }
  });

  it('refuses cross-site posts: missing token, missing cookie, another request, foreign Origin, Sec-Fetch-Site', async () => {
    const form = await openConsent(url);
    const approve = { api_key: h.a.adminKey, decision: 'approve' };
    const cases: Response[] = [
      await postConsent(url, { ...form, fields: { ...form.fields, csrf_token: '' } }, approve),
      await postConsent(url, { ...form, cookie: undefined }, approve),
      await postConsent(url, { ...form, cookie: 'oql_oauth_csrf=AAAAAAAAAAAAAAAAAAAAAAAA' }, approve),
      await postConsent(url, form, { ...approve, state: 'other' }),
      await postConsent(url, form, approve, { origin: 'https://evil.example' }),
      await postConsent(url, form, approve, { origin: 'null' }),
      await postConsent(url, form, approve, { 'sec-fetch-site': 'cross-site' }),
    ];
    for (const res of cases) {
      expect(res.status).toBe(403);
      expect(res.headers.get('location')).toBeNull();
    }
    // The untouched form still works: the refusals did not consume anything.
    const ok = await postConsent(url, form, approve, { origin: server.baseUrl });
    expect(ok.status).toBe(302);
    expect(new URL(ok.headers.get('location')!).searchParams.get('code')).toMatch(/\S/);
  });

  it('refuses a decision other than approve or deny', async () => {
    const form = await openConsent(url);
    const res = await postConsent(url, form, { api_key: h.a.adminKey, decision: 'maybe' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
  });
});

describe('token endpoint', () => {
  it('refuses a reused code and revokes what its first use issued', async () => {
    const got = await obtainCode(server.baseUrl, h.a);
    const first = await exchange(server.baseUrl, h.a, got);
    expect(first.status).toBe(200);
    expect(await verifyAccessToken(h.db, first.body.access_token)).not.toBeNull();
    const second = await exchange(server.baseUrl, h.a, got);
    expect(second.status).toBe(400);
    expect(second.body.error).toBe('invalid_grant');
    noToken(second.body);
    expect(await verifyAccessToken(h.db, first.body.access_token)).toBeNull();
    const refresh = await tokenRequest(server.baseUrl, 'acme', { grant_type: 'refresh_token', client_id: got.clientId, refresh_token: first.body.refresh_token });
    expect(refresh.body.error).toBe('invalid_grant');
    noToken(refresh.body);
  });

  it('prunes codes and tokens a day past their expiry, and only those', async () => {
    const stale = await obtainCode(timed.baseUrl, h.a);
    const staleTokens = (await exchange(timed.baseUrl, h.a, await obtainCode(timed.baseUrl, h.a))).body;
    const count = async () => Number((await h.db.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM oql_service.oauth_codes) + (SELECT count(*) FROM oql_service.oauth_tokens) AS n`)).rows[0]!.n);
    const before = await count();
    // 26 hours later by the timed server's clock its next token request prunes what expired more
    // than a day before: the two codes (60 s) and the access token (1 h); the refresh token (30
    // days) and everything issued by the real clock (months later) stay.
    clock += 26 * 3600 * 1000;
    const late = await exchange(timed.baseUrl, h.a, stale);
    expect(late.body.error).toBe('invalid_grant');
    expect(await count()).toBe(before - 3);
    expect(await verifyAccessToken(h.db, staleTokens.access_token, { now: clock - 26 * 3600 * 1000 })).toBeNull();
  });

  it('refuses an expired code', async () => {
    const got = await obtainCode(timed.baseUrl, h.a);
    clock += 61_000;
    const res = await exchange(timed.baseUrl, h.a, got);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
    noToken(res.body);
  });

  it('accepts a code just inside its lifetime', async () => {
    const got = await obtainCode(timed.baseUrl, h.a);
    clock += 59_000;
    const res = await exchange(timed.baseUrl, h.a, got);
    expect(res.status).toBe(200);
  });

  it('refuses a wrong verifier, and the code is spent by it', async () => {
    const got = await obtainCode(server.baseUrl, h.a);
    const wrong = await exchange(server.baseUrl, h.a, { ...got, verifier: pkcePair().verifier });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_grant');
    noToken(wrong.body);
    const right = await exchange(server.baseUrl, h.a, got);
    expect(right.body.error).toBe('invalid_grant');
    noToken(right.body);
  });

  it.each([
    ['no resource', { resource: undefined }, 'invalid_target'],
    ["workspace B's resource", { resource: 'http://127.0.0.1:8081/globex/mcp' }, 'invalid_target'],
    ['another redirect_uri', { redirect_uri: 'http://127.0.0.1:49152/other' }, 'invalid_grant'],
    ['an unknown client', { client_id: 'oqlc_nobody' }, 'invalid_client'],
    ['no code_verifier', { code_verifier: undefined }, 'invalid_request'],
    ['a forged code', { code: 'oqlac_' + 'A'.repeat(43) }, 'invalid_grant'],
    ['another grant type', { grant_type: 'client_credentials' }, 'unsupported_grant_type'],
    ['the password grant', { grant_type: 'password' }, 'unsupported_grant_type'],
  ])('refuses %s', async (_n, over, error) => {
    const got = await obtainCode(server.baseUrl, h.a);
    const body: Record<string, string> = {
      grant_type: 'authorization_code', client_id: got.clientId, code: got.code, redirect_uri: REDIRECT,
      code_verifier: got.verifier, resource: h.a.resource,
    };
    for (const [k, v] of Object.entries(over)) {
      if (v === undefined) delete body[k];
      else body[k] = v;
    }
    const res = await tokenRequest(server.baseUrl, 'acme', body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(error);
    noToken(res.body);
  });

  it("refuses workspace A's code at workspace B's token endpoint, with A's client or B's", async () => {
    const got = await obtainCode(server.baseUrl, h.a);
    const withA = await tokenRequest(server.baseUrl, 'globex', {
      grant_type: 'authorization_code', client_id: got.clientId, code: got.code, redirect_uri: REDIRECT, code_verifier: got.verifier, resource: h.b.resource,
    });
    expect(withA.body.error).toBe('invalid_client');
    const clientB = await registerClient(server.baseUrl, 'globex');
    const withB = await tokenRequest(server.baseUrl, 'globex', {
      grant_type: 'authorization_code', client_id: clientB, code: got.code, redirect_uri: REDIRECT, code_verifier: got.verifier, resource: h.b.resource,
    });
    expect(withB.body.error).toBe('invalid_grant');
    noToken(withA.body);
    noToken(withB.body);
    // The code was never seen by A's endpoint and still works there.
    expect((await exchange(server.baseUrl, h.a, got)).status).toBe(200);
  });

  it("refuses workspace A's refresh token at workspace B, and another client's refresh", async () => {
    const got = await obtainCode(server.baseUrl, h.a);
    const tokens = (await exchange(server.baseUrl, h.a, got)).body;
    const clientB = await registerClient(server.baseUrl, 'globex');
    const atB = await tokenRequest(server.baseUrl, 'globex', { grant_type: 'refresh_token', client_id: clientB, refresh_token: tokens.refresh_token });
    expect(atB.body.error).toBe('invalid_grant');
    noToken(atB.body);
    const scoped = await tokenRequest(server.baseUrl, 'acme', { grant_type: 'refresh_token', client_id: got.clientId, refresh_token: tokens.refresh_token, scope: 'x' });
    expect(scoped.body.error).toBe('invalid_scope');
    const wrongResource = await tokenRequest(server.baseUrl, 'acme', { grant_type: 'refresh_token', client_id: got.clientId, refresh_token: tokens.refresh_token, resource: h.b.resource });
    expect(wrongResource.body.error).toBe('invalid_target');
    // Neither mistake spent the token.
    const ok = await tokenRequest(server.baseUrl, 'acme', { grant_type: 'refresh_token', client_id: got.clientId, refresh_token: tokens.refresh_token, resource: h.a.resource });
    expect(ok.status).toBe(200);
  });

  it('refuses an access token of workspace A for workspace B', async () => {
    const tokens = (await exchange(server.baseUrl, h.a, await obtainCode(server.baseUrl, h.a))).body;
    expect(await verifyAccessToken(h.db, tokens.access_token, { resource: h.b.resource })).toBeNull();
    expect(await verifyAccessToken(h.db, tokens.access_token, { workspace: 'globex' })).toBeNull();
    expect(await verifyAccessToken(h.db, tokens.access_token, { resource: h.a.resource, workspace: 'acme' })).toMatchObject({ orgId: 'org_acme' });
  });

  it('refuses a revoked token and an expired one', async () => {
    const got = await obtainCode(server.baseUrl, h.a);
    const tokens = (await exchange(server.baseUrl, h.a, got)).body;
    expect(await verifyAccessToken(h.db, tokens.access_token, { now: Date.now() + 3601_000 })).toBeNull();
    expect(await revokeToken(h.db, tokens.access_token)).toBe(2);
    expect(await verifyAccessToken(h.db, tokens.access_token)).toBeNull();
    const refresh = await tokenRequest(server.baseUrl, 'acme', { grant_type: 'refresh_token', client_id: got.clientId, refresh_token: tokens.refresh_token });
    expect(refresh.body.error).toBe('invalid_grant');
    noToken(refresh.body);
  });

  it('ends the tokens approved with an API key when that key is revoked, and only those', async () => {
    const key = await createApiKey(h.db, { orgId: 'org_acme', role: 'admin', userId: 'leaver' });
    const got = await obtainCode(server.baseUrl, h.a, { apiKey: key });
    const tokens = (await exchange(server.baseUrl, h.a, got)).body;
    const other = (await exchange(server.baseUrl, h.a, await obtainCode(server.baseUrl, h.a))).body;
    expect(await verifyAccessToken(h.db, tokens.access_token)).toMatchObject({ userId: 'leaver', role: 'admin' });
    // Revoked the way an operator would, in the table; the key is found by its SHA-256.
    await h.db.query('UPDATE oql_service.api_keys SET revoked_at = $1 WHERE key_hash = $2', [Date.now(), createHash('sha256').update(key).digest('hex')]);
    expect(await verifyAccessToken(h.db, tokens.access_token)).toBeNull();
    const refresh = await tokenRequest(server.baseUrl, 'acme', { grant_type: 'refresh_token', client_id: got.clientId, refresh_token: tokens.refresh_token });
    expect(refresh.body.error).toBe('invalid_grant');
    noToken(refresh.body);
    expect(await verifyAccessToken(h.db, other.access_token)).toMatchObject({ userId: 'admin_acme' });
  });

  it('never accepts an API key, a refresh token or a code as an access token', async () => {
    const got = await obtainCode(server.baseUrl, h.a);
    const tokens = (await exchange(server.baseUrl, h.a, got)).body;
    for (const bearer of [h.a.adminKey, tokens.refresh_token, got.code, '', 'x'.repeat(10_000)]) {
      expect(await verifyAccessToken(h.db, bearer)).toBeNull();
    }
  });

  it('answers a JSON body or no body in the OAuth shape', async () => {
    const json = await fetch(`${server.baseUrl}/api/v1/acme/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"grant_type":"authorization_code"}' });
    expect(json.status).toBe(400);
    const refused: any = await json.json();
    expect(refused.error).toBe('invalid_request');
    expect(refused.error_description).toContain('application/x-www-form-urlencoded');
    const none = await fetch(`${server.baseUrl}/api/v1/acme/oauth/token`, { method: 'POST' });
    expect(none.status).toBe(400);
    expect(((await none.json()) as any).error).toBe('invalid_request');
  });
});

describe('attempt limits', () => {
  let limited: Running;
  beforeAll(async () => {
    limited = await startAuthServer(h.db, {
      limits: {
        register: { max: 2, windowSeconds: 60 },
        authorize: { max: 4, windowSeconds: 60 },
        signIn: { max: 2, windowSeconds: 60 },
        token: { max: 3, windowSeconds: 60 },
      },
    });
  });
  afterAll(async () => {
    await limited?.close();
  });

  function limitedShape(res: { status: number; body: any; headers: Headers }) {
    expect(res.status).toBe(429);
    expect(res.body.error).toBe('too_many_requests');
    expect(typeof res.body.error_description).toBe('string');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    noToken(res.body);
  }

  async function asJson(res: Response) {
    return { status: res.status, body: await res.json().catch(() => null), headers: res.headers };
  }

  it('limits registrations per address', async () => {
    const body = { client_name: 'L', redirect_uris: [REDIRECT], grant_types: ['authorization_code'], response_types: ['code'] };
    expect((await register(limited.baseUrl, 'acme', body)).status).toBe(201);
    expect((await register(limited.baseUrl, 'globex', body)).status).toBe(201);
    limitedShape(await asJson(await register(limited.baseUrl, 'acme', body)));
  });

  it('limits token attempts per client and address', async () => {
    const got = await obtainCode(server.baseUrl, h.a);
    const bad = { grant_type: 'authorization_code', client_id: got.clientId, code: 'oqlac_guess', redirect_uri: REDIRECT, code_verifier: got.verifier, resource: h.a.resource };
    for (let i = 0; i < 3; i++) expect((await tokenRequest(limited.baseUrl, 'acme', bad)).status).toBe(400);
    limitedShape(await tokenRequest(limited.baseUrl, 'acme', { ...bad, code: got.code }));
  });

  it('limits refused API keys on the consent form, then authorization requests', async () => {
    const clientId = await registerClient(server.baseUrl, 'acme');
    const url = authorizeUrl(limited.baseUrl, 'acme', {
      response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256', resource: h.a.resource,
    });
    const form = await openConsent(url);
    expect((await postConsent(url, form, { api_key: 'oql_guess_1_aaaaaaaaaaaaaaaa', decision: 'approve' })).status).toBe(401);
    expect((await postConsent(url, form, { api_key: 'oql_guess_2_aaaaaaaaaaaaaaaa', decision: 'approve' })).status).toBe(401);
    // Even the right key is refused once the guessing budget is spent.
    limitedShape(await asJson(await postConsent(url, form, { api_key: h.a.adminKey, decision: 'approve' })));
    // Four authorization requests so far (one page, three posts): the fifth is over the limit.
    limitedShape(await asJson(await fetch(url, { redirect: 'manual' })));
  });
});

describe('refused keys sent at once on the consent form (in this process, as on embedded PGlite)', () => {
  it('checks at most the limit of 50 wrong keys, answers the rest 429, and leaves the other workspace open', async () => {
    const roomy = { max: 100_000, windowSeconds: 60 };
    const limit = { max: 5, windowSeconds: 60 };
    const limited = await startAuthServer(h.db, { limits: { register: roomy, authorize: roomy, token: roomy, signIn: limit } });
    try {
      const formOf = async (t: typeof h.a) => {
        const clientId = await registerClient(limited.baseUrl, t.subdomain);
        const url = authorizeUrl(limited.baseUrl, t.subdomain, {
          response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: pkcePair().challenge,
          code_challenge_method: 'S256', resource: t.resource,
        });
        return { url, form: await openConsent(url) };
      };
      const acme = await formOf(h.a);
      const statuses = (await Promise.all(Array.from({ length: 50 }, (_, i) =>
        postConsent(acme.url, acme.form, { api_key: `oql_${String(i).padStart(8, '0')}${'z'.repeat(40)}`, decision: 'approve' })))).map((r) => r.status);
      expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(limit.max);
      expect(statuses.filter((s) => s === 429).length).toBe(50 - statuses.filter((s) => s === 401).length);
      const globex = await formOf(h.b);
      expect((await postConsent(globex.url, globex.form, { api_key: h.b.adminKey, decision: 'approve' })).status).toBe(302);
    } finally {
      await limited.close();
    }
  });

  it('lets the right key in among wrong ones sent at once while they are under the limit', async () => {
    const roomy = { max: 100_000, windowSeconds: 60 };
    const limit = { max: 5, windowSeconds: 60 };
    const limited = await startAuthServer(h.db, { limits: { register: roomy, authorize: roomy, token: roomy, signIn: limit } });
    try {
      const clientId = await registerClient(limited.baseUrl, 'acme');
      const url = authorizeUrl(limited.baseUrl, 'acme', {
        response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256', resource: h.a.resource,
      });
      const form = await openConsent(url);
      const answers = await Promise.all([
        ...Array.from({ length: limit.max - 1 }, (_, i) => postConsent(url, form, { api_key: `oql_${String(i).padStart(8, '7')}${'w'.repeat(40)}`, decision: 'approve' })),
        postConsent(url, form, { api_key: h.a.adminKey, decision: 'approve' }),
      ]);
      expect(answers.map((r) => r.status)).toEqual([...Array(limit.max - 1).fill(401), 302]);
    } finally {
      await limited.close();
    }
  });
});
