import { createHash, randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import Fastify, { type FastifyInstance } from 'fastify';
import { databaseOf } from '../../src/run/database-of.js';
import { oauthPlugin, type OAuthOptions } from '../../src/oauth/index.js';
import { createApiKey } from '../../src/service/store/api-keys.js';
import { migrate } from '../../src/service/migrations.js';
import { createWorkspace } from '../../src/service/store/workspaces.js';
import type { ServiceDb } from '../../src/service/types.js';
import { emptyPglite } from '../support/pglite-template.js';

/**
 * Two workspaces of two organizations on one PGlite per test file, and the authorization server on
 * its own Fastify instance listening on 127.0.0.1. The expectations of the tests are written here
 * by hand (URLs, PKCE), not taken from the module under test.
 */

export const MCP_URL = 'http://127.0.0.1:8081';

export interface Tenant {
  readonly subdomain: string;
  readonly orgId: string;
  /** An API key of the organization (superadmin) and one of a member. */
  readonly adminKey: string;
  readonly memberKey: string;
  /** `{mcp}/<subdomain>/mcp`, written out by hand. */
  readonly resource: string;
}

export interface Harness {
  readonly db: ServiceDb;
  readonly a: Tenant;
  readonly b: Tenant;
  close(): Promise<void>;
}

export async function openHarness(): Promise<Harness> {
  const pg = await emptyPglite();
  const db = databaseOf(pg);
  await migrate(db);
  // The plugin creates the workspaces table; create it here too so the tenants exist before any app.
  const tenant = async (subdomain: string, orgId: string): Promise<Tenant> => {
    await createWorkspace(db, { subdomain, orgId });
    return {
      subdomain,
      orgId,
      adminKey: await createApiKey(db, { orgId, role: 'superadmin', userId: `admin_${subdomain}` }),
      memberKey: await createApiKey(db, { orgId, role: 'member', userId: `member_${subdomain}` }),
      resource: `${MCP_URL}/${subdomain}/mcp`,
    };
  };
  const a = await tenant('acme', 'org_acme');
  const b = await tenant('globex', 'org_globex');
  return { db, a, b, close: () => pg.close() };
}

export interface Running {
  readonly app: FastifyInstance;
  readonly baseUrl: string;
  close(): Promise<void>;
}

/** Limits the functional tests never reach; the limit tests set their own. */
const ROOMY = { max: 100_000, windowSeconds: 60 };

/** The authorization server alone, listening on a free loopback port. */
export async function startAuthServer(db: ServiceDb, options: Partial<OAuthOptions> = {}): Promise<Running> {
  const app = Fastify({ logger: false });
  let baseUrl = '';
  const limits = { register: ROOMY, authorize: ROOMY, signIn: ROOMY, token: ROOMY };
  await app.register(oauthPlugin, { db, baseUrl: () => baseUrl, mcpUrl: MCP_URL, ...options, limits: { ...limits, ...options.limits } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { app, baseUrl, close: () => app.close() };
}

/** RFC 7636 by hand: a verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  return { verifier, challenge };
}

export async function register(baseUrl: string, subdomain: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${baseUrl}/api/v1/${subdomain}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

export const REDIRECT = 'http://127.0.0.1:49152/callback';

/** Registers a client with the contract's required fields; returns its client_id. */
export async function registerClient(baseUrl: string, subdomain: string, redirectUris = [REDIRECT], name = 'Test agent'): Promise<string> {
  const res = await register(baseUrl, subdomain, {
    client_name: name,
    redirect_uris: redirectUris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { client_id: string }).client_id;
}

export interface AuthParams {
  client_id: string;
  redirect_uri?: string;
  response_type?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  resource?: string;
  state?: string;
  scope?: string;
}

export function authorizeUrl(baseUrl: string, subdomain: string, params: Record<string, string | undefined>): string {
  const url = new URL(`${baseUrl}/api/v1/${subdomain}/oauth/authorize`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
}

/** The consent page's form fields and the cookie set with it, read from the HTML. */
export interface ConsentForm {
  readonly status: number;
  readonly html: string;
  readonly fields: Record<string, string>;
  readonly cookie: string | undefined;
  readonly headers: Headers;
}

function unescapeHtml(s: string): string {
  return s.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))).replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"');
}

export async function openConsent(url: string, cookie?: string): Promise<ConsentForm> {
  const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  const html = await res.text();
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([a-z_]+)" value="([^"]*)">/g)) fields[m[1]!] = unescapeHtml(m[2]!);
  const setCookie = res.headers.get('set-cookie');
  return { status: res.status, html, fields, cookie: setCookie ? setCookie.split(';')[0] : cookie, headers: res.headers };
}

/** Posts the consent form as a browser without JavaScript would (plus whatever the test overrides). */
export async function postConsent(url: string, form: ConsentForm, extra: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  const action = new URL(url);
  action.search = '';
  return fetch(action, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(form.cookie ? { cookie: form.cookie } : {}), ...headers },
    body: new URLSearchParams({ ...form.fields, ...extra }).toString(),
  });
}

/** Runs register → authorize → approve; returns the code and everything needed to redeem it. */
export async function obtainCode(baseUrl: string, t: Tenant, opts: { clientId?: string; apiKey?: string; state?: string } = {}) {
  const clientId = opts.clientId ?? (await registerClient(baseUrl, t.subdomain));
  const { verifier, challenge } = pkcePair();
  const url = authorizeUrl(baseUrl, t.subdomain, {
    response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge,
    code_challenge_method: 'S256', resource: t.resource, state: opts.state ?? 'st-1',
  });
  const form = await openConsent(url);
  if (form.status !== 200) throw new Error(`consent page: ${form.status} ${form.html}`);
  const res = await postConsent(url, form, { api_key: opts.apiKey ?? t.adminKey, decision: 'approve' });
  const location = res.headers.get('location');
  if (res.status !== 302 || !location) throw new Error(`approve: ${res.status} ${await res.text()}`);
  const code = new URL(location).searchParams.get('code');
  if (!code) throw new Error(`no code in ${location}`);
  return { clientId, verifier, code, location };
}

export async function tokenRequest(baseUrl: string, subdomain: string, params: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${baseUrl}/api/v1/${subdomain}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params).toString(),
  });
  const text = await res.text();
  let body: unknown;
  try { body = JSON.parse(text); } catch { body = text; }
  return { status: res.status, body, headers: res.headers };
}

export async function exchange(baseUrl: string, t: Tenant, got: { clientId: string; verifier: string; code: string }) {
  return tokenRequest(baseUrl, t.subdomain, {
    grant_type: 'authorization_code', client_id: got.clientId, code: got.code, redirect_uri: REDIRECT,
    code_verifier: got.verifier, resource: t.resource,
  });
}

/** A loopback HTTP server standing in for a client's redirect URI; records each callback's query. */
export async function callbackServer(): Promise<{ url: string; hits: URLSearchParams[]; server: Server; close(): Promise<void> }> {
  const hits: URLSearchParams[] = [];
  const server = createHttpServer((req, res) => {
    hits.push(new URL(req.url ?? '/', 'http://x').searchParams);
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>callback</title><p id="done">received</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  return { url, hits, server, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
