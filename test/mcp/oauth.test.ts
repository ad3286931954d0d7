import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client, StreamableHTTPClientTransport, UnauthorizedError,
  type OAuthClientInformationContext, type OAuthClientMetadata, type OAuthClientProvider, type OAuthDiscoveryState,
  type StoredOAuthClientInformation, type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { createServer } from '../../src/server/app.js';
import { revokeToken } from '../../src/oauth/store.js';
import { authorizeUrl, openConsent, pkcePair, postConsent } from '../oauth/support.js';
import { freePort } from '../support/ports.js';
import { KEYS, connect, jsonOf, startHarness, type Harness } from './support.js';

/**
 * The hosted flow as an unmodified SDK v2 client runs it: from the bare MCP URL through the 401,
 * discovery, dynamic registration, authorization (this provider answers the consent form by posting
 * it, as a user's browser would), the token exchange, and then MCP calls with the access token —
 * and later a refresh when the access token stops working.
 */

const REDIRECT = 'http://127.0.0.1:1/callback';

class ConsentingProvider implements OAuthClientProvider {
  private info = new Map<string, StoredOAuthClientInformation>();
  private stored: StoredOAuthTokens | undefined;
  private verifier: string | undefined;
  private discovery: OAuthDiscoveryState | undefined;
  lastState: string | undefined;
  /** The query the authorization server redirected back with. */
  callback: URLSearchParams | undefined;
  authorizations = 0;

  constructor(private readonly apiKey: string, private readonly decision: 'approve' | 'deny' = 'approve') {}

  get redirectUrl(): string {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'oql MCP test client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state(): string {
    this.lastState = `st-${Math.random().toString(36).slice(2)}`;
    return this.lastState;
  }
  clientInformation(ctx?: OAuthClientInformationContext) {
    return ctx ? this.info.get(ctx.issuer) : [...this.info.values()][0];
  }
  saveClientInformation(info: StoredOAuthClientInformation, ctx?: OAuthClientInformationContext) {
    this.info.set(ctx?.issuer ?? 'default', info);
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.stored = tokens;
  }
  /** Test hook: the access token as if it had expired or been revoked (the refresh token kept). */
  spoilAccessToken() {
    if (this.stored) this.stored = { ...this.stored, access_token: `${this.stored.access_token}x` };
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    if (!this.verifier) throw new Error('no code verifier saved');
    return this.verifier;
  }
  /** The user's browser: open the consent page, sign in with the workspace API key, decide. */
  async redirectToAuthorization(url: URL) {
    this.authorizations++;
    const page = await fetch(url, { redirect: 'manual' });
    const html = await page.text();
    if (page.status !== 200) throw new Error(`consent page ${page.status}: ${html.slice(0, 300)}`);
    const fields: Record<string, string> = {};
    for (const m of html.matchAll(/<input type="hidden" name="([a-z_]+)" value="([^"]*)">/g)) {
      fields[m[1]!] = m[2]!.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))).replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
    }
    const cookie = page.headers.get('set-cookie')?.split(';')[0];
    const action = new URL(url);
    action.search = '';
    const posted = await fetch(action, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
      body: new URLSearchParams({ ...fields, api_key: this.apiKey, decision: this.decision }).toString(),
    });
    const location = posted.headers.get('location');
    if (posted.status !== 302 || !location) throw new Error(`consent post ${posted.status}: ${(await posted.text()).slice(0, 300)}`);
    expect(location.startsWith(`${REDIRECT}?`)).toBe(true);
    this.callback = new URL(location).searchParams;
  }
}

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
}, 180_000);

afterAll(async () => {
  await h?.close();
});

/** Runs the whole authorization from the bare URL; returns a connected client. */
async function authorize(provider: ConsentingProvider, url: string): Promise<Client> {
  const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await expect(new Client({ name: 'e2e', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.authorizations).toBe(1);
  expect(provider.callback?.get('state')).toBe(provider.lastState);
  expect(provider.callback?.get('code')).toBeTruthy();
  await first.finishAuth(provider.callback!);
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
  return client;
}

async function toolLogsWith(bearer: string): Promise<{ status: number; logs: any[] }> {
  const res = await fetch(`${h.baseUrl}/api/v1/org/tool/mcp/logs/list/`, {
    method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: '{}',
  });
  const body = await res.json() as any;
  return { status: res.status, logs: body?.data?.logs ?? [] };
}

describe('the SDK client from the bare MCP URL to rows', () => {
  it('401 → discovery → registration → consent → token → initialize → tools → rows → tool log; then refresh', async () => {
    const provider = new ConsentingProvider(KEYS.acmeAdmin);
    const client = await authorize(provider, h.endpoint('acme'));
    try {
      const tokens = provider.tokens()!;
      expect(tokens.token_type.toLowerCase()).toBe('bearer');
      expect(tokens.refresh_token).toBeTruthy();
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('execute_query');
      const rows = jsonOf(await client.callTool({ name: 'execute_query', arguments: { query: 'SELECT name FROM account ORDER BY name LIMIT 10', slug: 'account' } }));
      expect(rows.records).toEqual([{ name: 'Acme Retail' }, { name: 'Acme Soft' }]);

      // The call is in the organization's tool log, listed with the same OAuth token (a superadmin's).
      const listed = await toolLogsWith(tokens.access_token);
      expect(listed.status).toBe(200);
      expect(listed.logs[0]).toMatchObject({ tool_name: 'execute_query', user_id: 'u_acme_admin', response_code: 200, input_params: { slug: 'account' } });
      expect(JSON.stringify(listed.logs)).not.toContain(tokens.access_token);

      // The access token stops working: the SDK refreshes with the refresh token, and goes on.
      const before = provider.tokens()!;
      provider.spoilAccessToken();
      const again = jsonOf(await client.callTool({ name: 'count_query', arguments: { query: 'SELECT id FROM account LIMIT 100', slug: 'account' } }));
      expect(again).toEqual({ count: 2 });
      const after = provider.tokens()!;
      expect(after.access_token).not.toBe(before.access_token);
      expect(after.refresh_token).toBeTruthy();
      expect(after.refresh_token).not.toBe(before.refresh_token);
      expect(provider.authorizations).toBe(1);
    } finally {
      await client.close();
    }
  }, 120_000);

  it('a token of one workspace opens no other, and a denied consent yields no token', async () => {
    const provider = new ConsentingProvider(KEYS.acmeAdmin);
    const client = await authorize(provider, h.endpoint('acme'));
    await client.close();
    const token = provider.tokens()!.access_token;
    const res = await fetch(h.endpoint('globex'), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain(`resource_metadata="${h.mcpUrl}/globex/.well-known/oauth-protected-resource"`);

    // A deny sends the user back with access_denied and no code.
    const denied = new ConsentingProvider(KEYS.acmeAdmin, 'deny');
    const transport = new StreamableHTTPClientTransport(new URL(h.endpoint('acme')), { authProvider: denied });
    await expect(new Client({ name: 'e2e', version: '1.0.0' }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(denied.callback?.get('error')).toBe('access_denied');
    expect(denied.callback?.get('code')).toBeNull();
    expect(denied.tokens()).toBeUndefined();

    // Revoked: the token that opened acme a moment ago no longer does.
    const initialize = (bearer: string) => fetch(h.endpoint('acme'), {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    expect((await initialize(token)).status).toBe(200);
    expect(await revokeToken(h.db, token)).toBeGreaterThan(0);
    const revoked = await initialize(token);
    expect(revoked.status).toBe(401);
    expect(revoked.headers.get('www-authenticate')).toContain('error="invalid_token"');
  }, 120_000);
});

describe('an expired access token', () => {
  it('is refused with the challenge, though it was issued for this workspace', async () => {
    // An authorization server whose clock runs two hours behind issues tokens already expired.
    const past = await startHarness({ oauth: { now: () => Date.now() - 2 * 3600_000 } });
    try {
      const provider = new ConsentingProvider(KEYS.acmeAdmin);
      const first = new StreamableHTTPClientTransport(new URL(past.endpoint('acme')), { authProvider: provider });
      await expect(new Client({ name: 'e2e', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
      await first.finishAuth(provider.callback!);
      const token = provider.tokens()!.access_token;
      const res = await fetch(past.endpoint('acme'), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain(`resource_metadata="${past.mcpUrl}/acme/.well-known/oauth-protected-resource"`);
    } finally {
      await past.close();
    }
  }, 120_000);
});

describe('the MCP host alone', () => {
  it('serves tokens another process\'s authorization server issued, from the same database', async () => {
    // Two services on one database: the main host (authorization server) of one, the MCP host of
    // the other, as `oql serve --only api` and `oql serve --only mcp` would run them.
    const [apiPort, mcpPort] = [await freePort(), await freePort()];
    const baseUrl = `http://127.0.0.1:${apiPort}`;
    const mcpUrl = `http://127.0.0.1:${mcpPort}`;
    const api = await createServer({ db: h.db, baseUrl, mcpUrl, env: {} });
    const mcp = await createServer({ db: h.db, baseUrl, mcpUrl, env: {} });
    try {
      await api.app.listen({ host: '127.0.0.1', port: apiPort });
      await mcp.mcpApp.listen({ host: '127.0.0.1', port: mcpPort });
      const provider = new ConsentingProvider(KEYS.acmeAdmin);
      const client = await authorize(provider, `${mcpUrl}/acme/mcp`);
      try {
        const rows = jsonOf(await client.callTool({ name: 'execute_query', arguments: { query: "SELECT name FROM contact WHERE status = 'active' LIMIT 10", slug: 'contact' } }));
        expect(rows.records).toEqual([{ name: 'Asha' }]);
      } finally {
        await client.close();
      }
    } finally {
      await mcp.close();
      await api.close();
    }
  }, 120_000);
});

describe('scopes on the hosted endpoint', () => {
  /** An access token of workspace A granted only the given scope, through the consent form. */
  async function tokenWith(scope: string): Promise<string> {
    const redirect = 'http://127.0.0.1:2/callback';
    const reg = await fetch(`${h.baseUrl}/api/v1/acme/oauth/register`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'narrow', redirect_uris: [redirect] }),
    });
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const { verifier, challenge } = pkcePair();
    const url = authorizeUrl(h.baseUrl, 'acme', { response_type: 'code', client_id: clientId, redirect_uri: redirect, code_challenge: challenge, code_challenge_method: 'S256', resource: h.endpoint('acme'), scope });
    const posted = await postConsent(url, await openConsent(url), { api_key: KEYS.acmeAdmin, decision: 'approve' });
    const code = new URL(posted.headers.get('location')!).searchParams.get('code')!;
    const res = await fetch(`${h.baseUrl}/api/v1/acme/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', client_id: clientId, code, redirect_uri: redirect, code_verifier: verifier, resource: h.endpoint('acme') }),
    });
    const body = (await res.json()) as { access_token: string; scope: string };
    expect(body.scope).toBe(scope);
    return body.access_token;
  }

  it('names every scope in the 401 challenge and the protected-resource metadata', async () => {
    const res = await fetch(h.endpoint('acme'), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('scope="schema:read records:read"');
    const prm = (await (await fetch(`${h.mcpUrl}/acme/.well-known/oauth-protected-resource`)).json()) as { scopes_supported?: string[] };
    expect(prm.scopes_supported).toEqual(['schema:read', 'records:read']);
  });

  it('lets a schema:read token list and describe, and answers a record tool with one 403 insufficient_scope challenge', async () => {
    const token = await tokenWith('schema:read');
    const client = await connect(h.endpoint('acme'), token);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('execute_query');
      const described = jsonOf(await client.callTool({ name: 'describe_object', arguments: { slug: 'contact' } }));
      expect(JSON.stringify(described)).toContain('status');
    } finally {
      await client.close();
    }
    const call = await fetch(h.endpoint('acme'), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'execute_query', arguments: { query: 'SELECT name FROM contact LIMIT 1', slug: 'contact' } } }),
    });
    expect(call.status).toBe(403);
    const challenge = call.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer error="insufficient_scope", scope="records:read", resource_metadata="[^"]+\/acme\/\.well-known\/oauth-protected-resource"/);
    expect(((await call.json()) as { error: string }).error).toBe('insufficient_scope');
    // The same token at workspace B is no token at all: 401, not 403.
    const atB = await fetch(h.endpoint('globex'), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    expect(atB.status).toBe(401);
  });

  it('runs record tools for a records:read token (which implies schema:read)', async () => {
    const client = await connect(h.endpoint('acme'), await tokenWith('records:read'));
    try {
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      const rows = jsonOf(await client.callTool({ name: 'execute_query', arguments: { query: "SELECT name FROM contact WHERE status = 'active' LIMIT 10", slug: 'contact' } }));
      expect(rows.records).toEqual([{ name: 'Asha' }]);
    } finally {
      await client.close();
    }
  });
});
