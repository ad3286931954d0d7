import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchange, obtainCode, type Tenant } from '../../oauth/support.js';
import { pgServerAvailable, startPgServer, type PgServer } from '../../support/pg-server.js';
import { expectEnvelope } from '../support.js';
import {
  A_KEY, A_NAMES, B0_MORE_KEYS, B_KEYS, WORKSPACE_A, WORKSPACE_B, expectNeighbourRows, neighbourReport, records, seedA, startService, toolText, untilRunning,
  type Service,
} from './support.js';

/**
 * Issue 19, what one organization's slow requests may hold, on PostgreSQL 15: F2 (twelve slow
 * filters at once against a pool of ten), F5 (a 10,000-character contains pattern against 4 MB
 * texts, which PostgreSQL does not interrupt inside a row) and F6 (one user's budget, however
 * many OAuth clients and keys it uses). Organization A asks for its own rows meanwhile.
 *
 * The slow requests of F2 and F6 wait for a lock the test holds on `lead`, so they hold their
 * connections and leases exactly as long as the test needs: nothing depends on the machine's
 * speed. F5's statement is slow by its own work, and ends at its 2 s budget.
 */

let pgServer: PgServer | undefined;
let admin: pg.Client;
/** A budget far above what A's requests need, so B's waiting requests end only when the lock goes. */
let patient: Service;
/** The 2 s budget F5's statement runs into. */
let brisk: Service;

const LEAD_FILTER = { query: { fields: ['name', 'company'], filters: { and: [{ field: 'company', operator: 'contains', value: 'acme' }] } } };
const LEAD_REPORT = { slug: 'lead', query: "SELECT name FROM lead WHERE company ILIKE '%acme%' ORDER BY name LIMIT 100" };
const B_LEADS = ['Beta lead 1', 'Beta lead 2', 'Beta lead 3'];
const B_ACCOUNTS = ['Beta account 1', 'Beta account 2'];

beforeAll(async () => {
  expect(pgServerAvailable(), 'PostgreSQL 15 server binaries are required (apt-get install postgresql-15)').toBe(true);
  pgServer = await startPgServer();
  patient = await startService({ database: pgServer.url, queryTimeoutMs: 120_000 });
  brisk = await startService({ database: pgServer.url, queryTimeoutMs: 2_000 });
  admin = new pg.Client({ connectionString: pgServer.url });
  await admin.connect();
  await seedA(patient);
  const leads = await patient.call(B_KEYS[0], 'POST', '/api/v1/org/objects/lead/record/bulk_create', B_LEADS.map((name) => ({ name, company: 'Acme Corp' })));
  expect(leads.status, leads.text.slice(0, 300)).toBe(200);
  const accounts = await patient.call(B_KEYS[0], 'POST', '/api/v1/org/objects/account/record/bulk_create', B_ACCOUNTS.map((name) => ({ name })));
  expect(accounts.status, accounts.text.slice(0, 300)).toBe(200);
}, 180_000);

afterAll(async () => {
  await admin?.end();
  await patient?.close();
  await brisk?.close();
  await pgServer?.stop();
});

/** Runs `fn` while `lead` is locked: reads of it wait, each holding its connection and its lease. */
async function withLeadLocked<T>(fn: () => Promise<T>): Promise<T> {
  const locker = new pg.Client({ connectionString: pgServer!.url });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE public.lead IN ACCESS EXCLUSIVE MODE');
    return await fn();
  } finally {
    await locker.query('ROLLBACK').catch(() => {});
    await locker.end();
  }
}

/** Statements waiting for the lock on `lead`. */
async function waitingForLead(): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%\"lead\"%' AND pid <> pg_backend_pid()");
  return rows[0]!.n;
}

/** `p`'s value, or 'late' when it has not settled within `ms`: a bound against a hang, not a measure of speed. */
async function within<T>(ms: number, p: Promise<T>): Promise<T | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: not within a minute`);
}

describe('F2: twelve slow filters of one organization against a pool of ten', () => {
  it('hold only its share of the pool: A\'s get-one, filter and report and /health answer before any of them ends', async () => {
    const ids = records(await patient.call(A_KEY, 'POST', '/api/v1/org/objects/account/filter', { query: { fields: ['id'], pagination: { page: 1, page_size: 1 } } }));
    const order: string[] = [];
    const track = <T>(label: string, p: Promise<T>): Promise<T> => p.finally(() => order.push(label));
    const { attacks, mine } = await withLeadLocked(async () => {
      // Six users of B with two filters each: every user within its budget, twelve at once in all.
      const attacks = Array.from({ length: 12 }, (_, i) => track('B', patient.call(B_KEYS[i % 6], 'POST', '/api/v1/org/objects/lead/filter', LEAD_FILTER)));
      // The organization's share: half of the pool of ten. The other seven wait in B's own line.
      await until("B's share of the pool waiting for the lock", async () => (await waitingForLead()) === 5);
      const mine = await within(60_000, Promise.all([
        track('A get-one', patient.call(A_KEY, 'GET', `/api/v1/org/objects/account/record/${String(ids[0]!.id)}`)),
        track('A filter', patient.call(A_KEY, 'POST', '/api/v1/org/objects/account/filter', { query: { fields: ['name'], pagination: { page: 1, page_size: 100 } } })),
        track('A report', neighbourReport(patient)),
        track('health', patient.call(undefined, 'GET', '/health')),
      ]));
      // B never held more than its share while A was served.
      expect(await waitingForLead()).toBe(5);
      return { attacks, mine };
    });
    if (mine === 'late') throw new Error("A's requests were still waiting a minute after B's filters took the pool");
    expect(order.slice(0, 4).sort()).toEqual(['A filter', 'A get-one', 'A report', 'health']);
    expect(mine[0].status).toBe(200);
    expect(mine[0].json.data.id).toBe(ids[0]!.id);
    expect(records(mine[1]).map((r) => r.name).sort()).toEqual(A_NAMES);
    expectNeighbourRows(mine[2]);
    expect(mine[3].status).toBe(200);
    // Once the lock goes, every one of B's filters is answered with B's leads.
    for (const answer of await Promise.all(attacks)) expect(records(answer).map((r) => r.name).sort()).toEqual(B_LEADS);
  }, 180_000);
});

describe('F6: one user\'s budget across OAuth clients and keys', () => {
  it('refuses the third concurrent call whichever client or key makes it, and no other user', async () => {
    const beta: Tenant = { subdomain: WORKSPACE_B, orgId: 'org_b', adminKey: B_KEYS[0]!, memberKey: B_KEYS[0]!, resource: `${patient.mcpUrl}/${WORKSPACE_B}/mcp` };
    // Three clients the same user registered and signed in to with its key: three grants of one principal.
    const tokens: string[] = [];
    for (let i = 0; i < 3; i++) {
      const granted = await exchange(patient.url, beta, await obtainCode(patient.url, beta));
      expect(granted.status).toBe(200);
      tokens.push(granted.body.access_token as string);
    }
    const [first, second, third] = await Promise.all(tokens.map((t) => patient.mcp(WORKSPACE_B, t)));
    const byKey = await patient.mcp(WORKSPACE_B, B0_MORE_KEYS[0]!);
    const otherUser = await patient.mcp(WORKSPACE_B, B_KEYS[1]!);
    const neighbour = await patient.mcp(WORKSPACE_A, A_KEY);
    const run = { name: 'execute_query', arguments: LEAD_REPORT };
    const accounts = { name: 'execute_query', arguments: { slug: 'account', query: 'SELECT name FROM account ORDER BY name LIMIT 100' } };

    const held = await withLeadLocked(async () => {
      const held = [first!.callTool(run, { timeout: 170_000 }), second!.callTool(run, { timeout: 170_000 })];
      await until("the user's two reports waiting for the lock", async () => (await waitingForLead()) === 2);
      for (const refused of [await third!.callTool(run), await byKey.callTool(run)]) {
        const { text, isError } = toolText(refused);
        expect(isError).toBe(true);
        expect(text).toContain('TOO_MANY_REQUESTS: too many concurrent analytics requests are running; retry later');
        expect(text).toContain('at most 2 reports, filter or connector pages run at once per user, across all of its keys and clients');
      }
      const rest = await patient.call(B0_MORE_KEYS[1], 'POST', '/api/v1/reports/execute', LEAD_REPORT);
      expectEnvelope(rest, 429, 'TOO_MANY_REQUESTS');
      expect(Number(rest.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // Another user of B, and A, are not held up by u_b0's budget.
      expect(JSON.parse(toolText(await otherUser.callTool(accounts)).text).records).toEqual(B_ACCOUNTS.map((name) => ({ name })));
      expect((JSON.parse(toolText(await neighbour.callTool(accounts)).text).records as { name: string }[]).map((r) => r.name)).toEqual(A_NAMES);
      return held;
    });
    for (const answer of await Promise.all(held)) expect(JSON.parse(toolText(answer).text).records).toEqual(B_LEADS.map((name) => ({ name })));
    // The budget is whole again.
    expect(toolText(await third!.callTool(run)).isError).toBe(false);
  }, 240_000);
});

describe('F5: a 10,000-character contains pattern against 4 MB texts', () => {
  const pattern = `${'y'.repeat(9_999)}z`;

  beforeAll(async () => {
    // Texts written before the 100,000-character limit of the API, or by another application:
    // 50,000 characters where every position starts a near-match of the pattern, then 'x' to 4 MB.
    await admin.query(
      `INSERT INTO lead (id, org_id, name, company) SELECT 'huge_' || g, 'org_b', 'Huge ' || g, repeat('y', 50000) || repeat('x', 3950000) FROM generate_series(1, 30) g`);
  });

  it('answers 504 at its budget with a hint for a filter, drops the statement\'s connection, and A is served meanwhile', async () => {
    let done = false;
    const attack = brisk.call(B_KEYS[2], 'POST', '/api/v1/org/objects/lead/filter', { query: { fields: ['name'], filters: { and: [{ field: 'company', operator: 'contains', value: pattern }] } } })
      .finally(() => (done = true));
    // The bounded statement itself (the cost check before it is an EXPLAIN of the bare one).
    const running = '%__oql_total%ILIKE%';
    expect(await untilRunning(admin, running, 1, () => done)).toBe(1);
    const { rows } = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()", [running]);
    const neighbour = neighbourReport(brisk);
    const timedOut = await attack;
    expectEnvelope(timedOut, 504, 'QUERY_TIMEOUT');
    expect(timedOut.json.data.message).toBe('the query timed out after 2 seconds');
    expect(timedOut.json.data.hint).toContain('use fewer and shorter contains, like and global_search values');
    expect(timedOut.json.data.hint).not.toContain('WHERE');
    expectNeighbourRows(await neighbour);
    // The backend ends at its next look at the cancel, between rows; its connection is gone from
    // the service's pool already, so the backend process exits with it.
    let left = rows.length;
    for (let i = 0; i < 1200 && left > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = (await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1)', [rows.map((r) => r.pid)])).rows[0]!.n;
    }
    expect(rows.length).toBe(1);
    expect(left).toBe(0);
    expectNeighbourRows(await neighbourReport(brisk));
  }, 180_000);

  it('refuses a longer pattern up front with the limit it is over', async () => {
    const [refused, neighbour] = await Promise.all([
      brisk.call(B_KEYS[3], 'POST', '/api/v1/org/objects/lead/filter', { query: { fields: ['name'], filters: { and: [{ field: 'company', operator: 'contains', value: `${'y'.repeat(19_999)}z` }] } } }),
      neighbourReport(brisk),
    ]);
    expectEnvelope(refused, 400, 'VALIDATION_FAILED');
    expect(refused.json.data.validation_errors).toEqual([expect.objectContaining({ error_code: 'LIMIT_EXCEEDED', message: 'the value is longer than 10000 characters' })]);
    expectNeighbourRows(neighbour);
  }, 60_000);
});
