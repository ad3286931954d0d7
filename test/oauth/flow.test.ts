import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oauthAuthResolver, verifyAccessToken } from '../../src/oauth/index.js';
import {
  MCP_URL, REDIRECT, authorizeUrl, openConsent, openHarness, postConsent, startAuthServer, tokenRequest,
  type Harness, type Running, type Tenant,
} from './support.js';

/**
 * The whole flow driven by oauth4webapi, a client nobody here wrote and one that checks the issuer,
 * the metadata location, the state and the token response strictly. The test only plays the user:
 * it answers the consent form.
 */

let h: Harness;
let server: Running;
const insecure = { [oauth.allowInsecureRequests]: true } as const;

beforeAll(async () => {
  h = await openHarness();
  server = await startAuthServer(h.db);
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});

async function discover(t: Tenant): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(`${server.baseUrl}/${t.subdomain}`);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
}

async function fullFlow(t: Tenant, apiKey: string) {
  const as = await discover(t);
  const registered = await oauth.processDynamicClientRegistrationResponse(await oauth.dynamicClientRegistrationRequest(as, {
    client_name: 'oauth4webapi agent',
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  }, insecure));
  const client: oauth.Client = { client_id: registered.client_id, token_endpoint_auth_method: 'none' };
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', client.client_id);
  url.searchParams.set('redirect_uri', REDIRECT);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  url.searchParams.set('resource', t.resource);
  url.searchParams.set('state', state);

  const form = await openConsent(url.href);
  expect(form.status).toBe(200);
  const approved = await postConsent(url.href, form, { api_key: apiKey, decision: 'approve' });
  expect(approved.status).toBe(302);
  const callback = new URL(approved.headers.get('location')!);
  expect(callback.origin + callback.pathname).toBe(REDIRECT);
  expect(callback.searchParams.get('state')).toBe(state);

  const params = oauth.validateAuthResponse(as, client, callback, state);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(
    as, client, oauth.None(), params, REDIRECT, verifier, { additionalParameters: { resource: t.resource }, ...insecure }));
  return { as, client, tokens };
}

describe('oauth4webapi end to end', () => {
  it('serves RFC 8414 metadata at the path-inserted location with the issuer {base_url}/<subdomain>', async () => {
    const res = await fetch(`${server.baseUrl}/.well-known/oauth-authorization-server/acme`);
    expect(res.status).toBe(200);
    const base = server.baseUrl;
    expect(await res.json()).toEqual({
      issuer: `${base}/acme`,
      authorization_endpoint: `${base}/api/v1/acme/oauth/authorize`,
      token_endpoint: `${base}/api/v1/acme/oauth/token`,
      registration_endpoint: `${base}/api/v1/acme/oauth/register`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['none'],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: ['schema:read', 'records:read'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
  });

  it('goes discovery → registration → consent → token → refresh with rotation', async () => {
    const { as, client, tokens } = await fullFlow(h.a, h.a.adminKey);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);
    expect(typeof tokens.refresh_token).toBe('string');

    const principal = await verifyAccessToken(h.db, tokens.access_token, { resource: `${MCP_URL}/acme/mcp` });
    expect(principal).toEqual({ orgId: 'org_acme', userId: 'admin_acme', role: 'superadmin', via: 'oauth', clientId: client.client_id, workspace: 'acme', scopes: ['schema:read', 'records:read'] });
    // Bound to workspace A's MCP URL: worthless at B's.
    expect(await verifyAccessToken(h.db, tokens.access_token, { resource: `${MCP_URL}/globex/mcp` })).toBeNull();
    expect(await verifyAccessToken(h.db, tokens.access_token, { workspace: 'globex' })).toBeNull();

    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(
      as, client, oauth.None(), tokens.refresh_token!, { additionalParameters: { resource: h.a.resource }, ...insecure }));
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect((await verifyAccessToken(h.db, refreshed.access_token))?.orgId).toBe('org_acme');

    // Rotation: the first refresh token is spent; presenting it again is theft and ends the family.
    const reuse = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure);
    await expect(oauth.processRefreshTokenResponse(as, client, reuse)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect(await verifyAccessToken(h.db, refreshed.access_token)).toBeNull();
    expect(await verifyAccessToken(h.db, tokens.access_token)).toBeNull();
    const afterRevoke = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshed.refresh_token!, insecure);
    await expect(oauth.processRefreshTokenResponse(as, client, afterRevoke)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('binds the second workspace to its own organization, user and role', async () => {
    const { tokens, client } = await fullFlow(h.b, h.b.memberKey);
    const principal = await verifyAccessToken(h.db, tokens.access_token, { resource: h.b.resource });
    expect(principal).toEqual({ orgId: 'org_globex', userId: 'member_globex', role: 'member', via: 'oauth', clientId: client.client_id, workspace: 'globex', scopes: ['schema:read', 'records:read'] });
    expect(await verifyAccessToken(h.db, tokens.access_token, { resource: h.a.resource })).toBeNull();
  });

  it('answers a token request with no-store and the contract fields only', async () => {
    const { as, client } = await fullFlow(h.a, h.a.adminKey);
    // A fresh grant by hand, to look at the raw response.
    const verifier = oauth.generateRandomCodeVerifier();
    const url = authorizeUrl(server.baseUrl, 'acme', {
      response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, resource: h.a.resource,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const form = await openConsent(url);
    const res = await postConsent(url, form, { api_key: h.a.adminKey, decision: 'approve' });
    const location = new URL(res.headers.get('location')!);
    // No state sent: none comes back; the issuer always does (RFC 9207).
    expect([...location.searchParams.keys()]).toEqual(['code', 'iss']);
    expect(location.searchParams.get('iss')).toBe(`${server.baseUrl}/acme`);
    const raw = await tokenRequest(server.baseUrl, 'acme', {
      grant_type: 'authorization_code', client_id: client.client_id, code: location.searchParams.get('code')!,
      redirect_uri: REDIRECT, code_verifier: verifier, resource: h.a.resource,
    });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(raw.body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
    expect(raw.body.scope).toBe('schema:read records:read');
    expect(raw.body.token_type).toBe('Bearer');
    expect(as.issuer).toBe(`${server.baseUrl}/acme`);
  });

  it('gives the tool-log endpoint a resolver that accepts access tokens of any workspace and nothing else', async () => {
    const { tokens } = await fullFlow(h.b, h.b.adminKey);
    const resolve = oauthAuthResolver(h.db);
    expect(await resolve(tokens.access_token)).toMatchObject({ orgId: 'org_globex', role: 'superadmin', via: 'oauth' });
    expect(await resolve(tokens.refresh_token!)).toBeNull();
    expect(await resolve(h.b.adminKey)).toBeNull();
    expect(await resolve('oqlat_' + 'A'.repeat(43))).toBeNull();
  });
});
