import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadIntoDatabase } from '../../fixtures/index.js';
import { compile } from '../../src/compile.js';
import { createServer } from '../../src/server/app.js';
import { READER, startFleetDatabases, statementLog, type FleetDatabases } from '../support/fleet.js';
import { serve, type Served } from '../support/oql-serve.js';
import { API_KEYS_ENV, KEYS, call, crm, liveRows } from './support.js';

/**
 * The fleet as docs/fleet.md deploys it: PostgreSQL 15, a streaming replica (pg_basebackup -R),
 * PgBouncer in transaction mode in front of both, and two `oql serve` processes behind one public
 * URL, writing to the primary through PgBouncer and reading reports and filters from the replica
 * through a read role. What the instances must agree on, they agree on through the database.
 */

const BASE = 'http://api.fleet.test';
const MCP = 'http://mcp.fleet.test';
const REDIRECT = 'http://127.0.0.1:49152/callback';
const EXTRA_ACCOUNTS = 3100;
/** Long enough for a report to wait on a lock while the test looks at what it holds. */
const QUERY_TIMEOUT_MS = 60_000;

let fleet: FleetDatabases;
let admin: pg.Pool;
let replicaAdmin: pg.Pool;
let a: Served;
let b: Served;

/**
 * The ids a connector sync filtered on updated_at >= 0 delivers: stamped, and stamped
 * before now minus the default sync lag of 5 s.
 */
function syncedIds(rows: readonly Record<string, unknown>[]): string[] {
  return rows.filter((r) => typeof r.updated_at === 'number' && r.updated_at < Date.now() - 5000).map((r) => String(r.id));
}

function flags(): string[] {
  return ['--database', fleet.primaryUrl, '--read-database', fleet.readerUrl, '--trust-proxy', 'loopback', '--base-url', BASE, '--mcp-url', MCP];
}
// PgBouncer 1.18 in transaction mode carries no named statement from one transaction to the next: off, as docs/fleet.md says.
const ENV = { OQL_API_KEYS: API_KEYS_ENV, OQL_WORKSPACES: 'acme=org_acme,globex=org_globex', OQL_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS), OQL_PREPARED_STATEMENTS: '0' };

beforeAll(async () => {
  fleet = await startFleetDatabases({ replica: true, poolSize: 25, readTimeoutMs: QUERY_TIMEOUT_MS });
  admin = new pg.Pool({ connectionString: fleet.primary.url, max: 3 });
  replicaAdmin = new pg.Pool({ connectionString: fleet.replica!.url, max: 2 });
  await loadIntoDatabase(admin, crm.catalog, crm.data);
  // Enough accounts for two connector pages (3000 a page), stamped long ago so no sync lag holds them back.
  await admin.query(
    `INSERT INTO public.account (id, org_id, name, updated_at) SELECT 'acc_fleet_' || lpad(g::text, 5, '0'), 'org_acme', 'Fleet account ' || g, 1000 FROM generate_series(1, ${EXTRA_ACCOUNTS}) g`);
  [a, b] = await Promise.all([serve(flags(), ENV), serve(flags(), ENV)]);
  await fleet.caughtUp();
}, 300_000);

afterAll(async () => {
  await Promise.allSettled([a?.stop(), b?.stop()]);
  await admin?.end();
  await replicaAdmin?.end();
  await fleet?.stop();
});

describe('two instances on PostgreSQL through PgBouncer with a replica', () => {
  it('start against the same database, each reading from the replica in one statement', () => {
    for (const s of [a, b]) {
      expect(s.output()).toMatch(/database {2}postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres \(one round trip per read\)/);
      expect(s.output()).toMatch(/reads {5}postgres:\/\/oql_reader@127\.0\.0\.1:\d+\/replica \(a streaming replica; one statement per read\)/);
    }
  });

  it('serve reports and filters from the replica, and get-one and connector pages from the primary', async () => {
    const primaryLog = statementLog(fleet.primary);
    const replicaLog = statementLog(fleet.replica!);
    const report = { query: "SELECT count(id) AS n FROM lead WHERE company = 'Fleet Replica Check' LIMIT 1", slug: 'lead' };
    const expectedSql = compile(report.query, { catalog: crm.catalog, slug: 'lead', orgId: 'org_globex' });
    expect(expectedSql.kind).toBe('query');
    const sql = (expectedSql as { sql: string }).sql;

    await replicaAdmin.query('SELECT pg_wal_replay_pause()');
    try {
      await admin.query(`INSERT INTO public.lead (id, org_id, name, company, updated_at) VALUES ('lead_fleet_lag', 'org_globex', 'Lagging lead', 'Fleet Replica Check', 1000)`);
      // The replica has not replayed the write: the report and the filter, read there, do not see it.
      const counted = await call(b.url, 'POST', '/api/v1/reports/execute', { key: KEYS.globexAdmin, body: report });
      expect(counted.json).toEqual({ success: true, data: { records: [{ n: 0 }] } });
      // The report's statement (inside the wrapper that bounds its bytes) is now the last one of a
      // read-role backend on the replica.
      const { rows } = await replicaAdmin.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1 AND backend_type = 'client backend' AND position($2 in query) > 0", [READER, sql]);
      expect(rows[0]!.n).toBe(1);
      const filtered = await call(a.url, 'POST', '/api/v1/org/objects/lead/filter', {
        key: KEYS.globexAdmin, body: { query: { fields: ['id'], filters: { and: [{ field: 'company', operator: 'eq', value: 'Fleet Replica Check' }] } } },
      });
      expect(filtered.json).toEqual({ success: true, data: { records: [] } });
      // The primary's readers see it at once.
      const one = await call(b.url, 'GET', '/api/v1/org/objects/lead/record/lead_fleet_lag', { key: KEYS.globexAdmin });
      expect(one.status).toBe(200);
      expect((one.json as { data: { name: string } }).data.name).toBe('Lagging lead');
      const synced = await call(a.url, 'POST', '/api/v1/flowconnector/objects/lead/records', {
        key: KEYS.globexAdmin, body: { query: { fields: ['id', 'company'], filter: { and: [{ field: 'updated_at', operator: 'gte', value: 0 }] } }, next_token: null },
      });
      expect(synced.status).toBe(200);
      const ids = (synced.json as { data: { records: { id: string }[] } }).data.records.map((r) => r.id);
      expect(ids).toContain('lead_fleet_lag');
      expect(ids.sort()).toEqual([...syncedIds(liveRows('lead', 'org_globex')), 'lead_fleet_lag'].sort());

    } finally {
      await replicaAdmin.query('SELECT pg_wal_replay_resume()');
    }
    await fleet.caughtUp();
    const after = await call(a.url, 'POST', '/api/v1/reports/execute', { key: KEYS.globexAdmin, body: report });
    expect(after.json).toEqual({ success: true, data: { records: [{ n: 1 }] } });

    const replicaStatements = replicaLog.since();
    // Both runs of the report read on the replica (with the planner's estimate before the first); none on the primary.
    const onReplica = replicaStatements.filter((s) => s.text.includes(sql));
    expect(onReplica.filter((s) => !s.text.startsWith('EXPLAIN')).length).toBe(2);
    expect(onReplica.every((s) => s.role === READER && s.kind === 'execute <unnamed>')).toBe(true);
    expect(primaryLog.since().filter((s) => s.text.includes(sql))).toEqual([]);
    // Reads are one statement: no read transaction was opened for them on the replica.
    expect(replicaStatements.filter((s) => s.role === READER && s.text.startsWith('BEGIN'))).toEqual([]);
  });

  it('page a connector sync on one instance with the token the other gave', async () => {
    const body = (token: string | null) => ({ query: { fields: ['id', 'name'], filter: { and: [{ field: 'updated_at', operator: 'gte', value: 0 }] } }, next_token: token });
    const first = await call(a.url, 'POST', '/api/v1/flowconnector/objects/account/records', { key: KEYS.acmeAdmin, body: body(null) });
    expect(first.status).toBe(200);
    const page1 = first.json as { data: { records: { id: string }[]; next_token: string | null } };
    expect(page1.data.records).toHaveLength(3000);
    expect(page1.data.next_token).toEqual(expect.any(String));
    const second = await call(b.url, 'POST', '/api/v1/flowconnector/objects/account/records', { key: KEYS.acmeAdmin, body: body(page1.data.next_token) });
    expect(second.status).toBe(200);
    const page2 = second.json as { data: { records: { id: string }[]; next_token: string | null } };
    expect(page2.data.next_token).toBeNull();
    const got = [...page1.data.records, ...page2.data.records].map((r) => r.id);
    const expected = [
      ...syncedIds(liveRows('account', 'org_acme')),
      ...Array.from({ length: EXTRA_ACCOUNTS }, (_, i) => `acc_fleet_${String(i + 1).padStart(5, '0')}`),
    ];
    expect(new Set(got).size).toBe(got.length);
    expect(got.sort()).toEqual(expected.sort());
    // Another organization's key cannot continue it.
    const stolen = await call(b.url, 'POST', '/api/v1/flowconnector/objects/account/records', { key: KEYS.globexAdmin, body: body(page1.data.next_token) });
    expect(stolen.status).toBe(400);
  });
});

/** PKCE by hand (RFC 7636). */
function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

async function registerClient(on: Served, workspace: string, from: string): Promise<string> {
  const res = await fetch(`${on.url}/api/v1/${workspace}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
    body: JSON.stringify({ client_name: 'Fleet agent', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

/** The consent page of `workspace` opened on `on`; its `post` sends the form to any instance from an address. */
async function consent(on: Served, workspace: string, from: string) {
  const clientId = await registerClient(on, workspace, from);
  const { verifier, challenge } = pkce();
  const params = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', resource: `${MCP}/${workspace}/mcp`,
  });
  const page = await fetch(`${on.url}/api/v1/${workspace}/oauth/authorize?${params}`, { headers: { 'x-forwarded-for': from } });
  expect(page.status).toBe(200);
  const html = await page.text();
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([a-z_]+)" value="([^"]*)">/g)) fields[m[1]!] = m[2]!.replace(/&amp;/g, '&').replace(/&quot;/g, '"');
  const cookie = page.headers.get('set-cookie')!.split(';')[0]!;
  return {
    clientId,
    verifier,
    post: (to: Served, apiKey: string, address = from) => fetch(`${to.url}/api/v1/${workspace}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, 'x-forwarded-for': address },
      body: new URLSearchParams({ ...fields, api_key: apiKey, decision: 'approve' }).toString(),
    }),
  };
}

function token(on: Served, workspace: string, params: Record<string, string>) {
  return fetch(`${on.url}/api/v1/${workspace}/oauth/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params).toString(),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> }));
}

describe('instances starting at once', () => {
  it('create the service schema and the catalog tables of an empty database together', async () => {
    for (let round = 0; round < 3; round++) {
      const name = `fresh_${round}`;
      await admin.query(`CREATE DATABASE ${name}`);
      const url = fleet.bouncer.url(name, 'postgres');
      const started = await Promise.allSettled([1, 2, 3].map(() => createServer({ database: url, poolSize: 3, env: {}, preparedStatements: 0 })));
      for (const s of started) if (s.status === 'fulfilled') await s.value.close();
      expect(started.map((s) => (s.status === 'rejected' ? String((s.reason as Error).message) : 'started'))).toEqual(['started', 'started', 'started']);
    }
  });
});

describe('the authorization server across two instances', () => {
  it('holds a consent-form lockout reached through one instance on the other, for that workspace and address only', async () => {
    const attacker = '198.51.100.23';
    const form = await consent(a, 'acme', attacker);
    // The default budget: 10 refused keys per workspace and address in 5 minutes.
    for (let i = 0; i < 10; i++) expect((await form.post(i % 2 ? a : b, `oql_fleet_guess_${i}_${'q'.repeat(30)}`)).status).toBe(401);
    const locked = await form.post(b, KEYS.acmeAdmin);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await form.post(a, KEYS.acmeAdmin)).status).toBe(429);
    // The same address signs in to globex; acme's users elsewhere sign in.
    expect((await (await consent(b, 'globex', attacker)).post(a, KEYS.globexAdmin)).status).toBe(302);
    expect((await (await consent(b, 'acme', '203.0.113.40')).post(a, KEYS.acmeAdmin)).status).toBe(302);
  });

  it('refuses on one instance a code redeemed on the other, and rotates refresh tokens once across both', async () => {
    const form = await consent(a, 'acme', '203.0.113.41');
    const approved = await form.post(b, KEYS.acmeAdmin);
    expect(approved.status).toBe(302);
    const code = new URL(approved.headers.get('location')!).searchParams.get('code')!;
    const grant = { grant_type: 'authorization_code', client_id: form.clientId, code, redirect_uri: REDIRECT, code_verifier: form.verifier, resource: `${MCP}/acme/mcp` };
    const first = await token(a, 'acme', grant);
    expect(first.status).toBe(200);
    const replay = await token(b, 'acme', grant);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');

    const login = await consent(b, 'acme', '203.0.113.42');
    const code2 = new URL((await login.post(a, KEYS.acmeAdmin)).headers.get('location')!).searchParams.get('code')!;
    const tokens = await token(b, 'acme', { ...grant, client_id: login.clientId, code: code2, code_verifier: login.verifier });
    expect(tokens.status).toBe(200);
    const refresh = { grant_type: 'refresh_token', client_id: login.clientId, refresh_token: tokens.body.refresh_token! };
    expect((await token(a, 'acme', refresh)).status).toBe(200);
    const reused = await token(b, 'acme', refresh);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
  });
});

describe('PgBouncer in transaction mode', () => {
  it('never sees a statement that leans on session state from the service', async () => {
    const log = statementLog(fleet.primary);
    // A little of everything through both instances, then read what reached the primary.
    for (const s of [a, b]) {
      expect((await call(s.url, 'GET', '/health')).status).toBe(200);
      expect((await call(s.url, 'POST', '/api/v1/org/objects/account/record/bulk_create', { key: KEYS.globexAdmin, body: [{ name: 'Pooled' }] })).status).toBe(200);
      expect((await call(s.url, 'POST', '/api/v1/org/tool/mcp/logs/list/', { key: KEYS.globexAdmin })).status).toBe(200);
    }
    const statements = log.since();
    expect(statements.length).toBeGreaterThan(5);
    const offending = statements.filter((s) =>
      /^\s*(SET|RESET)\s/i.test(s.text) && !/^\s*SET\s+LOCAL\s/i.test(s.text)
      || /pg_(try_)?advisory_lock(_shared)?\s*\(/i.test(s.text)
      || /^\s*(PREPARE|LISTEN|DECLARE|DISCARD)\s/i.test(s.text)
      || /\bTEMP(ORARY)?\s+TABLE\b/i.test(s.text)
      || (s.kind.startsWith('execute') && s.kind !== 'execute <unnamed>'));
    expect(offending).toEqual([]);
  });
});

/**
 * Holds reports on `lead` for as long as `fn` runs: an ACCESS EXCLUSIVE lock taken on the primary
 * reaches the replica with its WAL, where the reports wait for it, each holding its lease.
 */
async function withLeadLocked<T>(fn: () => Promise<T>): Promise<T> {
  const locker = await admin.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE public.lead IN ACCESS EXCLUSIVE MODE');
    await fleet.caughtUp();
    return await fn();
  } finally {
    await locker.query('ROLLBACK').catch(() => {});
    locker.release();
  }
}

const SLOW_REPORT = { query: 'SELECT count(id) AS n FROM lead LIMIT 1', slug: 'lead' };
const report = (on: Served, key: string, body: object = SLOW_REPORT) => call(on.url, 'POST', '/api/v1/reports/execute', { key, body });

/** Leases held now, in all, and by the instance with this pid (its holder names the pid). */
async function leases(pid?: number): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM oql_service.leases WHERE expires_at > clock_timestamp() AND ($1::text IS NULL OR holder LIKE '%:' || $1 || ':%')", [pid === undefined ? null : String(pid)]);
  return rows[0]!.n;
}

async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("a principal's budget across both instances", () => {
  it('refuses its third concurrent report with 429 on either instance, and no one else', async () => {
    await withLeadLocked(async () => {
      // The default budget: two heavy requests at once per user, on whichever instances.
      const first = report(a, KEYS.globexAdmin);
      const second = report(b, KEYS.globexAdmin);
      await until('two reports holding their leases', async () => (await leases()) === 2);
      for (const on of [a, b]) {
        const third = await report(on, KEYS.globexAdmin);
        expect(third.status).toBe(429);
        expect(third.json).toMatchObject({ success: false, data: { error_code: 'TOO_MANY_REQUESTS' } });
        expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      // Another user of the organization, and another organization, have budgets of their own.
      const other = { query: 'SELECT count(id) AS n FROM account LIMIT 1', slug: 'account' };
      expect((await report(a, KEYS.globexMember, other)).status).toBe(200);
      expect((await report(b, KEYS.acmeAdmin, other)).status).toBe(200);
      // Their leases are given back just after their answers (the next statement of their instance deletes them).
      await until("the other users' leases given back", async () => (await leases()) === 2, 2_000);
      return [first, second];
    }).then(async ([first, second]) => {
      expect((await first).status).toBe(200);
      expect((await second).status).toBe(200);
    });
    await until('every lease given back', async () => (await leases()) === 0, 2_000);
  });
});

describe('an instance killed with SIGKILL', () => {
  it('frees the leases it held within 10 s, so the principal may use its whole budget again', async () => {
    await withLeadLocked(async () => {
      const onA = report(a, KEYS.globexAdmin).then((r) => r.status, () => 0);
      const onB = report(b, KEYS.globexAdmin);
      await until('a lease held by each instance', async () => (await leases(a.pid)) === 1 && (await leases(b.pid)) === 1);
      expect((await report(b, KEYS.globexAdmin)).status).toBe(429);
      await a.stop('SIGKILL');
      expect(await onA).toBe(0);
      const killedAt = Date.now();
      await until("the killed instance's lease to expire", async () => (await leases(a.pid)) === 0, 12_000);
      expect(Date.now() - killedAt).toBeLessThanOrEqual(10_000);
      // Its slot is free again: this report is admitted, and waits on the lock like the other.
      const again = report(b, KEYS.globexAdmin);
      await until('the freed slot taken', async () => (await leases(b.pid)) === 2);
      return [onB, again];
    }).then(async ([onB, again]) => {
      expect((await onB).status).toBe(200);
      expect((await again).status).toBe(200);
    });
    a = await serve(flags(), ENV);
  });

  it('loses no committed write: every acknowledged batch is there, every batch in flight wholly or not at all', async () => {
    const batch = (tag: string) => Array.from({ length: 500 }, (_, i) => ({ name: `Kill ${tag} ${i}`, external_id: `kill-${tag}-${String(i).padStart(4, '0')}` }));
    const acknowledged: string[] = [];
    for (const tag of ['k1', 'k2']) {
      const r = await call(a.url, 'POST', '/api/v1/org/objects/account/record/bulk_create', { key: KEYS.acmeAdmin, body: batch(tag) });
      expect(r.status).toBe(200);
      acknowledged.push(tag);
    }
    const inFlight = ['k3', 'k4', 'k5'];
    const arrived = a.received('/api/v1/org/objects/:slug/record/bulk_create');
    const pending = inFlight.map((tag) => call(a.url, 'POST', '/api/v1/org/objects/account/record/bulk_create', { key: KEYS.acmeAdmin, body: batch(tag) }).then((r) => r.status, () => 0));
    await arrived;
    await a.stop('SIGKILL');
    const statuses = await Promise.all(pending);
    const counts = async (tag: string) => Number((await admin.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM public.account WHERE org_id = 'org_acme' AND external_id LIKE $1", [`kill-${tag}-%`])).rows[0]!.n);
    for (const tag of acknowledged) expect(await counts(tag)).toBe(500);
    for (const [i, tag] of inFlight.entries()) {
      // The primary has rolled back a transaction whose client vanished; PgBouncer may take a moment to notice.
      let n = await counts(tag);
      for (let t = 0; t < 20 && n !== 0 && n !== 500; t++) n = (await new Promise((r) => setTimeout(r, 250)), await counts(tag));
      expect([0, 500]).toContain(n);
      if (statuses[i] === 200) expect(n).toBe(500);
    }
    // The other instance serves on.
    const still = await call(b.url, 'POST', '/api/v1/reports/count', { key: KEYS.acmeAdmin, body: { query: 'SELECT id FROM account LIMIT 10000', slug: 'account' } });
    expect(still.status).toBe(200);
  });
});
