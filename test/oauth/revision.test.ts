import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAccessToken } from '../../src/oauth/store.js';
import {
  authorizeUrl, exchange, obtainCode, openConsent, openHarness, pkcePair, postConsent, REDIRECT, register, startAuthServer,
  tokenRequest, type Harness, type Running,
} from './support.js';

/**
 * What the MCP authorization revision of 2026-07-28 asks of the authorization server: Client ID
 * Metadata Documents (served here by the test itself on 127.0.0.1), the issuer in every
 * authorization response (RFC 9207), application_type at registration, RFC 7591's defaults, and
 * scopes. URLs and expected values are written out by hand.
 */

let h: Harness;
let server: Running;
let strict: Running;
let docs: Server;
let docsUrl = '';
const hits = new Map<string, number>();
/** path → [status, headers, body] the document server answers with. */
const answers = new Map<string, [number, Record<string, string>, string]>();

function serve(path: string, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }, status = 200): string {
  answers.set(path, [status, headers, typeof body === 'string' ? body : JSON.stringify(body)]);
  return `${docsUrl}${path}`;
}

function document(path: string, extra: Record<string, unknown> = {}): string {
  return serve(path, { client_id: `${docsUrl}${path}`, client_name: `Agent ${path}`, redirect_uris: [REDIRECT], ...extra });
}

beforeAll(async () => {
  h = await openHarness();
  docs = createHttpServer((req, res) => {
    hits.set(req.url!, (hits.get(req.url!) ?? 0) + 1);
    if (req.url === '/slow.json') return; // never answers
    const answer = answers.get(req.url!);
    if (!answer) return void res.writeHead(404).end();
    res.writeHead(answer[0], answer[1]).end(answer[2]);
  });
  await new Promise<void>((done) => docs.listen(0, '127.0.0.1', done));
  docsUrl = `http://127.0.0.1:${(docs.address() as AddressInfo).port}`;
  server = await startAuthServer(h.db, { clientMetadata: { allowLoopbackHttp: true, timeoutMs: 1000 } });
  // Its names resolve to 127.0.0.1, as a name an attacker controls can: nothing is looked up off the machine.
  strict = await startAuthServer(h.db, { clientMetadata: { resolver: async () => [{ address: '127.0.0.1', family: 4 }] } });
  // A ceiling for a loaded machine (PGlite takes seconds to start), not a measurement.
}, 600_000);

afterAll(async () => {
  docs?.closeAllConnections();
  await new Promise((done) => docs?.close(done));
  await server?.close();
  await strict?.close();
  await h?.close();
}, 300_000);

describe('registration (RFC 7591, OpenID Connect application_type)', () => {
  it('registers a client that sends only client_name and redirect_uris, with the defaults', async () => {
    const res = await register(server.baseUrl, 'acme', { client_name: 'Minimal', redirect_uris: [REDIRECT] });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ client_name: 'Minimal', redirect_uris: [REDIRECT], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' });
    expect(body.application_type).toBeUndefined();
    // It completes the authorization code flow; the refresh grant it did not ask for is refused.
    const got = await obtainCode(server.baseUrl, h.a, { clientId: body.client_id as string });
    const tokens = await exchange(server.baseUrl, h.a, got);
    expect(tokens.status).toBe(200);
    const refresh = await tokenRequest(server.baseUrl, 'acme', { grant_type: 'refresh_token', client_id: got.clientId, refresh_token: tokens.body.refresh_token });
    expect(refresh.body.error).toBe('unauthorized_client');
  });

  it('registers a native client with a loopback and a private-scheme redirect, and a web client with https', async () => {
    const native = await register(server.baseUrl, 'acme', { client_name: 'Desktop', application_type: 'native', redirect_uris: ['http://127.0.0.1:7000/cb', 'com.example.desktop:/oauth'] });
    expect(native.status).toBe(201);
    expect(await native.json()).toMatchObject({ application_type: 'native', redirect_uris: ['http://127.0.0.1:7000/cb', 'com.example.desktop:/oauth'] });
    const web = await register(server.baseUrl, 'acme', { client_name: 'Web', application_type: 'web', redirect_uris: ['https://agent.example/cb'] });
    expect(web.status).toBe(201);
    expect(await web.json()).toMatchObject({ application_type: 'web' });
  });

  it("sends the code to a native client's private scheme", async () => {
    const res = await register(server.baseUrl, 'acme', { client_name: 'Phone', application_type: 'native', redirect_uris: ['com.example.phone:/oauth'] });
    const clientId = ((await res.json()) as { client_id: string }).client_id;
    const { challenge } = pkcePair();
    const url = authorizeUrl(server.baseUrl, 'acme', { response_type: 'code', client_id: clientId, redirect_uri: 'com.example.phone:/oauth', code_challenge: challenge, code_challenge_method: 'S256', resource: h.a.resource, state: 'p' });
    const form = await openConsent(url);
    expect(form.status).toBe(200);
    expect(form.html).toContain('<code id="redirect-host">com.example.phone:</code>');
    const approved = await postConsent(url, form, { api_key: h.a.adminKey, decision: 'approve' });
    const location = approved.headers.get('location')!;
    expect(location.startsWith('com.example.phone:/oauth?code=')).toBe(true);
  });
});

describe('the issuer in every authorization response (RFC 9207)', () => {
  const issuer = () => `${server.baseUrl}/acme`;

  it('names the issuer once on success, on a denial and on an error sent back to the client', async () => {
    const got = await obtainCode(server.baseUrl, h.a, { state: 'ok' });
    expect(new URL(got.location).searchParams.getAll('iss')).toEqual([issuer()]);

    const clientId = (await obtainCode(server.baseUrl, h.a)).clientId;
    const { challenge } = pkcePair();
    const params = { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', resource: h.a.resource, state: 'd' };
    const url = authorizeUrl(server.baseUrl, 'acme', params);
    const denied = await postConsent(url, await openConsent(url), { decision: 'deny' });
    const deniedAt = new URL(denied.headers.get('location')!);
    expect(deniedAt.searchParams.get('error')).toBe('access_denied');
    expect(deniedAt.searchParams.getAll('iss')).toEqual([issuer()]);

    const bad = await fetch(authorizeUrl(server.baseUrl, 'acme', { ...params, code_challenge_method: 'plain' }), { redirect: 'manual' });
    const badAt = new URL(bad.headers.get('location')!);
    expect(badAt.searchParams.get('error')).toBe('invalid_request');
    expect(badAt.searchParams.getAll('iss')).toEqual([issuer()]);
  });

  it('advertises it, and Client ID Metadata Documents, and the scopes', async () => {
    const meta = await (await fetch(`${server.baseUrl}/.well-known/oauth-authorization-server/globex`)).json();
    expect(meta).toMatchObject({
      issuer: `${server.baseUrl}/globex`,
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      scopes_supported: ['schema:read', 'records:read'],
    });
  });
});

/** Opens the consent page for a metadata-document client. */
async function consentFor(clientId: string, over: Record<string, string> = {}, base = server.baseUrl) {
  const { verifier, challenge } = pkcePair();
  const url = authorizeUrl(base, 'acme', { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', resource: h.a.resource, state: 'c', ...over });
  return { url, verifier, form: await openConsent(url) };
}

describe('Client ID Metadata Documents', () => {
  it('authorizes a client by its document, issues tokens to it, and keeps it to its workspace', async () => {
    const clientId = document('/agent.json', { client_uri: 'https://agent.example', grant_types: ['authorization_code', 'refresh_token'] });
    const { url, verifier, form } = await consentFor(clientId);
    expect(form.status).toBe(200);
    expect(form.html).toContain('Agent /agent.json');
    expect(form.html).toContain(`<code>${clientId}</code>`);
    expect(form.html).toContain('this computer');
    const approved = await postConsent(url, form, { api_key: h.a.adminKey, decision: 'approve' });
    const code = new URL(approved.headers.get('location')!).searchParams.get('code')!;
    const tokens = await tokenRequest(server.baseUrl, 'acme', { grant_type: 'authorization_code', client_id: clientId, code, redirect_uri: REDIRECT, code_verifier: verifier, resource: h.a.resource });
    expect(tokens.status).toBe(200);
    expect(tokens.body.scope).toBe('schema:read records:read');
    const principal = await verifyAccessToken(h.db, tokens.body.access_token, { resource: h.a.resource });
    expect(principal).toMatchObject({ orgId: 'org_acme', clientId, workspace: 'acme' });
    expect(await verifyAccessToken(h.db, tokens.body.access_token, { workspace: 'globex' })).toBeNull();
    const refreshed = await tokenRequest(server.baseUrl, 'acme', { grant_type: 'refresh_token', client_id: clientId, refresh_token: tokens.body.refresh_token });
    expect(refreshed.status).toBe(200);
  });

  it('fetches a document once while its Cache-Control allows, and every time under no-store', async () => {
    const cached = document('/cached.json');
    answers.set('/cached.json', [200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' }, answers.get('/cached.json')![2]]);
    await consentFor(cached);
    await consentFor(cached);
    expect(hits.get('/cached.json')).toBe(1);
    const fresh = document('/fresh.json');
    answers.set('/fresh.json', [200, { 'content-type': 'application/json', 'cache-control': 'no-store' }, answers.get('/fresh.json')![2]]);
    await consentFor(fresh);
    await consentFor(fresh);
    expect(hits.get('/fresh.json')).toBe(2);
  });

  it.each([
    ['a document naming another client_id', () => serve('/other.json', { client_id: 'https://other.example/c.json', client_name: 'O', redirect_uris: [REDIRECT] }), /another client_id/],
    ['a document without client_name', () => serve('/noname.json', { client_id: `${docsUrl}/noname.json`, redirect_uris: [REDIRECT] }), /client_name is required/],
    ['a document with a client_secret', () => document('/secret.json', { client_secret: 's' }), /client_secret/],
    ['a document served as text/html', () => serve('/html.json', '{}', { 'content-type': 'text/html' }), /not application\/json/],
    ['a document that is not JSON', () => serve('/broken.json', '{"client_id":', { 'content-type': 'application/json' }), /not valid JSON/],
    ['a document over 5 KiB', () => document('/big.json', { client_uri: `https://agent.example/${'a'.repeat(6000)}` }), /larger than 5120 bytes/],
    ['a missing document', () => `${docsUrl}/missing.json`, /HTTP 404/],
    ['a redirect to another host', () => serve('/moved.json', '', { location: 'http://localhost:1/x.json' }, 302), /redirects to another host/],
    ['a document that never arrives', () => `${docsUrl}/slow.json`, /took longer than 1000 ms/],
    ['a client_id URL without a path', () => `${docsUrl}/`, /must have a path/],
    ['a client_id URL with a dot-dot segment', () => `${docsUrl}/a/../agent.json`, /\. or \.\. path segments/],
    ['a client_id URL on a private address', () => 'https://10.1.2.3/client.json', /not a public internet address: 10\.1\.2\.3 is in 10\.0\.0\.0\/8 \(Private-Use\)/],
    ['a client_id URL on an IPv4-compatible loopback address', () => 'https://[::7f00:1]/client.json', /not a public internet address: ::7f00:1 is in ::\/96/],
    ['a client_id URL on a 6to4 address carrying loopback', () => 'https://[2002:7f00:1::]/client.json', /not a public internet address: 2002:7f00:1:: carries 127\.0\.0\.1/],
    ['a client_id URL on the metadata address in hexadecimal', () => 'https://0xa9fea9fe/client.json', /169\.254\.169\.254 is in 169\.254\.169\.254\/32/],
    ['a client_id URL on plain http elsewhere', () => 'http://agent.example/client.json', /must use https/],
  ])('shows %s on the page as invalid_client, and redirects nowhere', async (_name, make, message) => {
    const { form } = await consentFor(make());
    expect(form.status).toBe(400);
    expect(form.headers.get('location')).toBeNull();
    expect(form.html).toContain('invalid_client');
    expect(form.html.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)))).toMatch(message);
  });

  it('shows a redirect URI the document does not list on the page, and redirects nowhere', async () => {
    const { form } = await consentFor(document('/elsewhere.json', { redirect_uris: ['http://127.0.0.1:1/other'] }));
    expect(form.status).toBe(400);
    expect(form.headers.get('location')).toBeNull();
    expect(form.html).toContain('invalid_redirect_uri');
  });

  it('follows a redirect within the same origin', async () => {
    serve('/alias.json', '', { location: '/alias-target.json' }, 301);
    serve('/alias-target.json', { client_id: `${docsUrl}/alias.json`, client_name: 'Moved agent', redirect_uris: [REDIRECT] });
    const { form } = await consentFor(`${docsUrl}/alias.json`);
    expect(form.status).toBe(200);
    expect(form.html).toContain('Moved agent');
  });

  it('refuses loopback documents unless the server was told to allow them (tests only)', async () => {
    const clientId = document('/strict.json');
    const { form } = await consentFor(clientId, {}, strict.baseUrl);
    expect(form.status).toBe(400);
    expect(form.html).toContain('must use https');
    expect(hits.get('/strict.json') ?? 0).toBe(0);
    const loopbackHttps = await consentFor('https://127.0.0.1:1/client.json', {}, strict.baseUrl);
    expect(loopbackHttps.form.html).toContain('not a public internet address');
  });

  it('refuses a name that resolves to loopback when the connection is made', async () => {
    const { form } = await consentFor('https://agent.example/client.json', {}, strict.baseUrl);
    expect(form.status).toBe(400);
    expect(form.html.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))))
      .toContain('the host of the client_id URL, agent.example, is not a public internet address: 127.0.0.1 is in 127.0.0.0/8 (Loopback)');
  });
});

describe('scopes', () => {
  it('grants what was asked, lists it on the page, and lets a refresh narrow it but never widen it', async () => {
    const clientId = document('/scoped.json', { grant_types: ['authorization_code', 'refresh_token'] });
    const { url, verifier, form } = await consentFor(clientId, { scope: 'schema:read' });
    expect(form.html).toContain('id="scope-schema-read"');
    expect(form.html).not.toContain('id="scope-records-read"');
    const code = new URL((await postConsent(url, form, { api_key: h.a.adminKey, decision: 'approve' })).headers.get('location')!).searchParams.get('code')!;
    const tokens = await tokenRequest(server.baseUrl, 'acme', { grant_type: 'authorization_code', client_id: clientId, code, redirect_uri: REDIRECT, code_verifier: verifier, resource: h.a.resource });
    expect(tokens.body.scope).toBe('schema:read');
    expect((await verifyAccessToken(h.db, tokens.body.access_token))?.scopes).toEqual(['schema:read']);
    const wider = await tokenRequest(server.baseUrl, 'acme', { grant_type: 'refresh_token', client_id: clientId, refresh_token: tokens.body.refresh_token, scope: 'records:read' });
    expect(wider.body.error).toBe('invalid_scope');

    const full = await exchange(server.baseUrl, h.a, await obtainCode(server.baseUrl, h.a));
    expect(full.body.scope).toBe('schema:read records:read');
  });

  it('narrows a full grant on refresh', async () => {
    const got = await obtainCode(server.baseUrl, h.a);
    const tokens = (await exchange(server.baseUrl, h.a, got)).body;
    const narrowed = await tokenRequest(server.baseUrl, 'acme', { grant_type: 'refresh_token', client_id: got.clientId, refresh_token: tokens.refresh_token, scope: 'schema:read' });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.scope).toBe('schema:read');
    expect((await verifyAccessToken(h.db, narrowed.body.access_token))?.scopes).toEqual(['schema:read']);
  });
});
