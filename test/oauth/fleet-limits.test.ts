import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oauthPlugin } from '../../src/oauth/index.js';
import type { Database } from '../../src/run/database.js';
import { openDatabase } from '../../src/run/open.js';
import { createApiKey } from '../../src/service/store/api-keys.js';
import { migrate } from '../../src/service/migrations.js';
import { createWorkspace } from '../../src/service/store/workspaces.js';
import { fastifyTrustProxy, parseTrustProxy } from '../../src/service/trust-proxy.js';
import { startFleetDatabases, type FleetDatabases } from '../support/fleet.js';
import { MCP_URL, REDIRECT, authorizeUrl, openConsent, pkcePair, postConsent, type Tenant } from './support.js';

/**
 * Attempt limits and lockouts of the authorization server as a fleet sees them: two instances,
 * each with its own pool, on one PostgreSQL through PgBouncer (transaction mode), behind a proxy
 * on loopback that names the client in X-Forwarded-For. A lockout reached through one instance
 * holds on the other; it hits the (workspace, address) pair that earned it, and a key beginning
 * that is being guessed, never another workspace or another address.
 */

const LIMIT = { max: 3, windowSeconds: 60 };
const ROOMY = { max: 100_000, windowSeconds: 60 };
const ATTACKER = '198.51.100.7';
const NEIGHBOUR = '203.0.113.9';

interface Instance {
  readonly db: Database;
  readonly app: FastifyInstance;
  readonly baseUrl: string;
}

let fleet: FleetDatabases;
let a: Instance;
let b: Instance;
let direct: Instance;
let acme: Tenant;
let globex: Tenant;
let admin: pg.Client;

async function instance(trustProxy: string | undefined, registrations = { max: 2, windowSeconds: 60 }): Promise<Instance> {
  const db = await openDatabase({ database: fleet.primaryUrl, poolSize: 4 });
  const app = Fastify({ logger: false, trustProxy: fastifyTrustProxy(parseTrustProxy(trustProxy)) });
  let baseUrl = '';
  await app.register(oauthPlugin, {
    db, baseUrl: () => baseUrl, mcpUrl: MCP_URL,
    limits: { register: registrations, authorize: ROOMY, signIn: LIMIT, token: ROOMY },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { db, app, baseUrl };
}

beforeAll(async () => {
  fleet = await startFleetDatabases();
  const setup = await openDatabase({ database: fleet.primaryUrl, poolSize: 2 });
  try {
    await migrate(setup);
    const tenant = async (subdomain: string, orgId: string): Promise<Tenant> => {
      await createWorkspace(setup, { subdomain, orgId });
      return {
        subdomain, orgId, resource: `${MCP_URL}/${subdomain}/mcp`,
        adminKey: await createApiKey(setup, { orgId, role: 'superadmin' }),
        memberKey: await createApiKey(setup, { orgId, role: 'member' }),
      };
    };
    acme = await tenant('acme', 'org_acme');
    globex = await tenant('globex', 'org_globex');
  } finally {
    await setup.close();
  }
  a = await instance('loopback');
  b = await instance('loopback');
  direct = await instance(undefined, ROOMY);
  admin = new pg.Client({ connectionString: fleet.primary.url });
  await admin.connect();
}, 180_000);

afterAll(async () => {
  for (const i of [a, b, direct]) {
    await i?.app.close();
    await i?.db.close();
  }
  await admin?.end();
  await fleet?.stop();
});

let registrations = 0;

/** A client of `t` registered on `on`, from an address of its own (registrations are limited per address). */
async function registerFresh(on: Instance, t: Tenant): Promise<string> {
  const res = await fetch(`${on.baseUrl}/api/v1/${t.subdomain}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': `100.96.${Math.floor(registrations / 250)}.${registrations++ % 250}` },
    body: JSON.stringify({ client_name: 'Agent', redirect_uris: [REDIRECT], grant_types: ['authorization_code'], response_types: ['code'] }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

/** A consent form of `t` opened on `on` for a client registered there, from `address`. */
async function consent(on: Instance, t: Tenant, address: string) {
  const clientId = await registerFresh(on, t);
  const url = authorizeUrl(on.baseUrl, t.subdomain, {
    response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256', resource: t.resource,
  });
  const form = await openConsent(url);
  expect(form.status).toBe(200);
  /** Posts the form to `to` (another instance may take it: the CSRF secret is in the database). */
  return (to: Instance, apiKey: string, from = address) =>
    postConsent(url.replace(on.baseUrl, to.baseUrl), form, { api_key: apiKey, decision: 'approve' }, { 'x-forwarded-for': from });
}

/** A key that is not one, beginning with the first 12 characters of `key`. */
function guessLike(key: string, n: number): string {
  return `${key.slice(0, 12)}${'x'.repeat(30)}${n}`;
}

describe('consent-form lockouts across two instances', () => {
  it('checks at most the limit of 50 wrong keys sent at once through both instances; the rest are 429', async () => {
    const address = '198.51.100.50';
    const post = await consent(a, acme, address);
    const statuses = (await Promise.all(Array.from({ length: 50 }, (_, i) =>
      post(i % 2 === 0 ? a : b, `oql_${String(i).padStart(8, '0')}${'v'.repeat(40)}`)))).map((r) => r.status);
    const checked = statuses.filter((s) => s === 401).length;
    expect(checked).toBeLessThanOrEqual(LIMIT.max);
    expect(statuses.filter((s) => s === 429).length).toBe(50 - checked);
    // Another organization's workspace from the same address, and the right key from another address, get in.
    const other = await consent(b, globex, address);
    expect((await other(a, globex.adminKey)).status).toBe(302);
    const fresh = await consent(a, acme, '198.51.100.51');
    expect((await fresh(b, acme.adminKey)).status).toBe(302);
  });

  it('locks out the (workspace, address) pair on both instances, and only that pair', async () => {
    const post = await consent(a, acme, ATTACKER);
    for (let i = 0; i < LIMIT.max; i++) expect((await post(i % 2 === 0 ? a : b, `oql_wrong_${i}_${'y'.repeat(30)}`)).status).toBe(401);
    // Through the other instance, even the right key: the budget of this pair is spent.
    const locked = await post(b, acme.adminKey);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await locked.json()) as { error: string }).error).toBe('too_many_requests');
    expect((await post(a, acme.adminKey)).status).toBe(429);

    // The same address signs in to another workspace, through either instance.
    const other = await consent(b, globex, ATTACKER);
    expect((await other(b, globex.adminKey)).status).toBe(302);
    // The workspace's users at another address sign in.
    const neighbour = await consent(a, acme, NEIGHBOUR);
    expect((await neighbour(b, acme.memberKey)).status).toBe(302);
  });

  it('slows guesses of one key beginning from any number of addresses, and no other key', async () => {
    const target = globex.memberKey;
    for (let i = 0; i < LIMIT.max; i++) {
      const post = await consent(i % 2 === 0 ? a : b, globex, `192.0.2.${10 + i}`);
      expect((await post(i % 2 === 0 ? b : a, guessLike(target, i))).status).toBe(401);
    }
    const fresh = await consent(a, globex, '192.0.2.50');
    expect((await fresh(b, guessLike(target, 99))).status).toBe(429);
    // Answering the right key now would tell the guesser which guess was right.
    expect((await fresh(a, target)).status).toBe(429);
    // Another key of the workspace, from the same fresh address, is not held up.
    expect((await fresh(a, globex.adminKey)).status).toBe(302);
  });

  it('keeps no key text in the counters', async () => {
    const { rows } = await admin.query<{ key: string }>('SELECT key FROM oql_service.attempts');
    expect(rows.length).toBeGreaterThan(0);
    for (const t of [acme, globex]) {
      for (const key of [t.adminKey, t.memberKey]) expect(rows.some((r) => r.key.includes(key.slice(4, 12)))).toBe(false);
    }
  });

  it('ignores X-Forwarded-For without --trust-proxy: a client cannot choose the address it is counted under', async () => {
    const t = acme;
    for (let i = 0; i < LIMIT.max; i++) {
      const post = await consent(direct, t, `198.18.0.${i}`);
      expect((await post(direct, `oql_other_${i}_${'z'.repeat(30)}`)).status).toBe(401);
    }
    const post = await consent(direct, t, '198.18.0.200');
    expect((await post(direct, t.adminKey)).status).toBe(429);
  });
});

describe('registration limits across two instances', () => {
  it('counts registrations from one address on both instances against one budget', async () => {
    const body = { client_name: 'L', redirect_uris: [REDIRECT], grant_types: ['authorization_code'], response_types: ['code'] };
    const from = (address: string) => ({ 'x-forwarded-for': address });
    const reg = (on: Instance, address: string) => fetch(`${on.baseUrl}/api/v1/acme/oauth/register`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...from(address) }, body: JSON.stringify(body),
    });
    expect((await reg(a, '100.64.0.1')).status).toBe(201);
    expect((await reg(b, '100.64.0.1')).status).toBe(201);
    expect((await reg(a, '100.64.0.1')).status).toBe(429);
    expect((await reg(b, '100.64.0.2')).status).toBe(201);
  });
});
