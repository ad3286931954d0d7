import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadIntoDatabase } from '../../fixtures/index.js';
import { openDatabase } from '../../src/run/open.js';
import type { Database } from '../../src/run/database.js';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import { inWriteTransaction, together } from '../../src/records/db.js';
import { pgBouncerAvailable, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { pgServerAvailable, startPgServer, type PgServer } from '../support/pg-server.js';
import { startTripCounter, type Transaction, type TripCounter } from '../support/trip-counter.js';
import { API_KEYS_ENV, KEYS, crm, expectEnvelope, listen, liveRows, type Running } from '../server/support.js';

/**
 * The default deployment (`oql serve --database <url>`: no read role) reads in one round trip:
 * straight to PostgreSQL, the statement alone on a session that started read-only with the
 * statement timeout; through PgBouncer, which refuses those sessions, BEGIN READ ONLY with its
 * settings, the statement and ROLLBACK written at once.
 * The trips are counted on the wire by a proxy between the service and the server
 * (../support/trip-counter.ts), directly and through PgBouncer in transaction mode; and every
 * limit of a read still holds on that path: the budget, READ ONLY, UTC and ISO dates, and each
 * organization's rows.
 */

const BUDGET = 1500;
const SLOW_ORG = 'org_slow';
const SLOW_KEY = 'test-key-slow-superadmin-0006';
const KEYS_ENV = `${API_KEYS_ENV},${SLOW_KEY}=${SLOW_ORG}:member:u_slow`;

let server: PgServer;
let bouncer: PgBouncer;
let direct: TripCounter;
let pooled: TripCounter;
let api: Running;
let viaBouncer: Running;

/**
 * The reads since the counter's reset, as [trips, …] (each must have ended). Straight to PostgreSQL
 * each is its statement alone on a read-only session; through PgBouncer, which refuses such
 * sessions, BEGIN READ ONLY … ROLLBACK.
 */
function readTrips(counter: TripCounter, alone: boolean): number[] {
  const reads = counter.transactions().filter((t) => t.alone || t.opening.startsWith('BEGIN READ ONLY'));
  expect(reads.every((t) => t.ended), JSON.stringify(reads)).toBe(true);
  expect(reads.map((t) => t.alone), JSON.stringify(reads)).toEqual(reads.map(() => alone));
  return reads.map((t) => t.trips);
}

/** The writes since the counter's reset: every transaction that is not a read. */
function writesOf(counter: TripCounter): Transaction[] {
  return counter.transactions().filter((t) => !t.alone && !t.opening.startsWith('BEGIN READ ONLY'));
}

beforeAll(async () => {
  expect(pgServerAvailable(), 'PostgreSQL 15 server binaries are required (apt-get install postgresql-15)').toBe(true);
  expect(pgBouncerAvailable(), 'PgBouncer is required (apt-get install pgbouncer)').toBe(true);
  server = await startPgServer({ settings: { TimeZone: "'America/New_York'", DateStyle: "'SQL, DMY'" } });
  const pool = new pg.Pool({ connectionString: server.url, max: 2 });
  try {
    await loadIntoDatabase(pool, crm.catalog, crm.data);
    // Enough rows under one organization that a three-way fan-out outlasts the budget.
    await pool.query(`INSERT INTO account (id, org_id, name) SELECT 'slow_a' || g, $1, 'account ' || g FROM generate_series(1, 20) g`, [SLOW_ORG]);
    for (const table of ['contact', 'opportunity']) {
      await pool.query(`INSERT INTO ${table} (id, org_id, name, account) SELECT 'slow_${table}_' || g, $1, '${table} ' || g, 'slow_a' || (g % 20 + 1) FROM generate_series(1, 40000) g`, [SLOW_ORG]);
    }
    await pool.query('ANALYZE');
  } finally {
    await pool.end();
  }
  bouncer = await startPgBouncer({ fallback: { host: '127.0.0.1', port: server.port }, poolMode: 'transaction' });
  direct = await startTripCounter({ host: '127.0.0.1', port: server.port });
  pooled = await startTripCounter({ host: bouncer.host, port: bouncer.port });
  api = await listen({ database: direct.url(), apiKeys: KEYS_ENV, env: {}, queryTimeoutMs: BUDGET });
  // PgBouncer 1.18 carries no named statement between transactions: off, as docs/fleet.md says.
  viaBouncer = await listen({ database: pooled.url(), apiKeys: KEYS_ENV, env: {}, queryTimeoutMs: BUDGET, preparedStatements: 0 });
}, 240_000);

afterAll(async () => {
  try {
    await api?.close();
    await viaBouncer?.close();
    await direct?.close();
    await pooled?.close();
    await bouncer?.stop();
  } finally {
    await server?.stop();
  }
});

const ACME_OPPORTUNITY = () => liveRows('opportunity', 'org_acme')[0]!.id as string;

/** The reads a client makes most, for one organization's key: each answers 200 with that organization's rows. */
function reads(key: string, org: string): Record<string, (service: Running) => Promise<void>> {
  const ids = liveRows('opportunity', org).map((r) => r.id as string).sort();
  return {
    'get one': async (service) => {
      const one = await service.call('GET', `/api/v1/org/objects/opportunity/record/${ids[0]}`, { key });
      expect(one.status, one.text).toBe(200);
      expect(one.json.data.id).toBe(ids[0]);
    },
    'filter page': async (service) => {
      const page = await service.call('POST', '/api/v1/org/objects/opportunity/filter', { key, body: { query: { fields: ['id'], pagination: { page: 1, page_size: 1000 } } } });
      expect(page.status, page.text).toBe(200);
      expect(page.json.data.records.map((r: { id: string }) => r.id).sort()).toEqual(ids);
    },
    'connector page': async (service) => {
      const page = await service.call('POST', '/api/v1/flowconnector/objects/opportunity/records', { key, body: { query: { fields: ['name'] } } });
      expect(page.status, page.text).toBe(200);
      expect(page.json.data.records.map((r: { id: string }) => r.id).sort()).toEqual(ids);
    },
    report: async (service) => {
      const report = await service.call('POST', '/api/v1/reports/execute', { key, body: { query: 'SELECT id FROM opportunity LIMIT 10000', slug: 'opportunity' } });
      expect(report.status, report.text).toBe(200);
      expect(report.json.data.records.map((r: { id: string }) => r.id).sort()).toEqual(ids);
    },
  };
}

describe.each([
  ['straight to PostgreSQL', () => ({ service: api, counter: direct, alone: true })],
  ['through PgBouncer in transaction mode', () => ({ service: viaBouncer, counter: pooled, alone: false })],
])('the default deployment, %s', (path, setup) => {
  for (const kind of ['get one', 'filter page', 'report']) {
    it(`reads a ${kind} in one round trip, for two organizations, each its own rows`, async () => {
      const { service, counter, alone } = setup();
      for (const [key, org] of [[KEYS.acmeAdmin, 'org_acme'], [KEYS.globexAdmin, 'org_globex']] as const) {
        const read = reads(key, org)[kind]!;
        // A first read may open a connection, which costs the start-up's trips.
        await read(service);
        counter.reset();
        await read(service);
        expect(readTrips(counter, alone)).toEqual([1]);
      }
    });
  }

  it('reads a connector page in one round trip, after the first page of a sync, which also reads the sync\'s cutoff', async () => {
    const { service, counter, alone } = setup();
    for (const [key, org] of [[KEYS.acmeAdmin, 'org_acme'], [KEYS.globexAdmin, 'org_globex']] as const) {
      const read = reads(key, org)['connector page']!;
      await read(service);
      counter.reset();
      await read(service);
      // The cutoff (the database's clock and its oldest open writer), then the page: two reads.
      expect(readTrips(counter, alone)).toEqual([1, 1]);
    }
    // 40,000 opportunities: pages of 3,000, each after the first carrying its cutoff in its token.
    const body = { query: { fields: ['name'] } };
    const first = await service.call('POST', '/api/v1/flowconnector/objects/opportunity/records', { key: SLOW_KEY, body });
    expect(first.status, first.text).toBe(200);
    expect(typeof first.json.data.next_token).toBe('string');
    counter.reset();
    const second = await service.call('POST', '/api/v1/flowconnector/objects/opportunity/records', { key: SLOW_KEY, body: { ...body, next_token: first.json.data.next_token } });
    // Each read is one trip. A page of 40,000 rows is not far enough under the plan-cost ceiling to
    // be remembered as cheap, so its plan is read first, every time (src/run/read.ts).
    expect(readTrips(counter, alone)).toEqual([1, 1]);
    expect(counter.transactions().map((t) => /^EXPLAIN\b/.test(t.statements[t.alone ? 0 : 1] ?? ''))).toEqual([true, false]);
    expect(second.status, second.text).toBe(200);
    const ids: string[] = second.json.data.records.map((r: { id: string }) => r.id);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.every((id) => id.startsWith('slow_opportunity_'))).toBe(true);
    expect(ids.filter((id) => first.json.data.records.some((r: { id: string }) => r.id === id))).toEqual([]);
  });

  it('writes a bulk_create with its changes in two round trips, the INSERT and the changes sent with the COMMIT, for each organization its own', async () => {
    const { service, counter } = setup();
    for (const [key, org] of [[KEYS.acmeAdmin, 'org_acme'], [KEYS.globexAdmin, 'org_globex']] as const) {
      const mark = `Trip ${org} ${path.length} `;
      const names = Array.from({ length: 20 }, (_, i) => `${mark}${i}`);
      counter.reset();
      const created = await service.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key, body: names.map((name) => ({ name })) });
      expect(created.status, created.text).toBe(200);
      const writes = writesOf(counter);
      // The opening with the transaction's id and clock; the INSERT and the change log's row with COMMIT.
      expect(writes.map((t) => [t.trips, t.ended, t.statements.length])).toEqual([[2, true, 5]]);
      expect(writes[0]!.statements.at(-1)).toBe('COMMIT');
      const changes = await service.call('GET', '/api/v1/changes?limit=1000', { key });
      const logged = changes.json.data.changes.filter((c: { record: { name?: string } | null }) => c.record?.name?.startsWith(mark));
      expect(logged.map((c: { record: { name: string } }) => c.record.name).sort()).toEqual([...names].sort());
      const theirs = changes.json.data.changes.filter((c: { record: { name?: string } | null }) => c.record?.name?.startsWith('Trip ') && !c.record.name.startsWith(`Trip ${org} `));
      expect(theirs).toEqual([]);
    }
  });

  it('checks a write\'s relations in the round trip of its clock: two for a bulk_create, two for an update, and a bad relation still refused', async () => {
    const { service, counter } = setup();
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      for (const [key, org, other] of [[KEYS.acmeAdmin, 'org_acme', 'org_globex'], [KEYS.globexAdmin, 'org_globex', 'org_acme']] as const) {
        const account = async (of: string) => String((await client.query('SELECT id FROM account WHERE org_id = $1 AND NOT is_deleted ORDER BY id LIMIT 1', [of])).rows[0].id);
        const own = await account(org);
        counter.reset();
        const created = await service.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key, body: [{ name: `Related ${org} 1`, account: own }, { name: `Related ${org} 2`, account: own }] });
        expect(created.status, created.text).toBe(200);
        const writes = () => writesOf(counter);
        // The opening with the clock and the account's check; the INSERT and the change log's row with COMMIT.
        expect(writes().map((t) => [t.trips, t.ended, t.statements.length])).toEqual([[2, true, 6]]);
        const id = created.json.data.ids[0] as string;
        counter.reset();
        const updated = await service.call('PUT', `/api/v1/org/objects/contact/record/${id}`, { key, body: { account: own, name: `Related ${org} renamed` } });
        expect(updated.status, updated.text).toBe(200);
        // The opening with the clock, the record's row and the account's check; the UPDATE with its
        // change and COMMIT. One update in 32 is a checkpoint, whose change row keeps the record
        // after the UPDATE: that row is a statement of its own, sent with the COMMIT, a trip more.
        const checkpoint = (t: Transaction) => t.statements.some((text) => /^SELECT\s.*\blog_changes?\(/.test(text));
        expect(writes().map((t) => [t.trips, t.ended])).toEqual(writes().map((t) => [checkpoint(t) ? 3 : 2, true]));
        expect(writes()).toHaveLength(1);
        // Another organization's account is no record of this one's, checked in the same trip.
        counter.reset();
        const refused = await service.call('PUT', `/api/v1/org/objects/contact/record/${id}`, { key, body: { account: await account(other) } });
        expectEnvelope(refused, 400, 'VALIDATION_FAILED');
        expect(refused.text).toContain('INVALID_RELATION');
        expect(writes().map((t) => [t.trips, t.ended])).toEqual([[2, true]]);
        const row = (await client.query('SELECT name, account FROM contact WHERE id = $1', [id])).rows[0];
        expect(row).toEqual({ name: `Related ${org} renamed`, account: own });
      }
    } finally {
      await client.end();
    }
  });

  it('ends a runaway read at its budget with 504 QUERY_TIMEOUT, and reads on at once after it', async () => {
    const { service } = setup();
    const runaway = await service.call('POST', '/api/v1/reports/execute', {
      key: SLOW_KEY,
      body: { query: "SELECT COUNT(*) AS n FROM account WHERE contacts.name ILIKE '%x%' OR opportunities.name ILIKE '%y%' LIMIT 1", slug: 'account' },
    });
    expectEnvelope(runaway, 504, 'QUERY_TIMEOUT');
    await reads(KEYS.acmeAdmin, 'org_acme')['get one']!(service);
  });

  it('another organization never reads the first one\'s record by its id', async () => {
    const { service } = setup();
    const guess = await service.call('GET', `/api/v1/org/objects/opportunity/record/${ACME_OPPORTUNITY()}`, { key: KEYS.globexAdmin });
    expectEnvelope(guess, 400, 'NOT_FOUND');
  });
});

describe('a pipelined read on the database', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openDatabase({ database: direct.url(), poolSize: 2 });
  });
  afterAll(async () => {
    await db?.close();
  });

  it('runs in a read-only transaction: a statement that would write is refused, and nothing is written', async () => {
    const refused = await db.read("SELECT pg_catalog.nextval('pg_catalog.pg_class_oid_seq'::regclass) AS n", [], { timeoutMs: BUDGET }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(OqlError);
    // SELECT … FOR UPDATE takes row locks, which a read-only transaction refuses.
    const locking = await db.read('SELECT id FROM account WHERE org_id = $1 FOR UPDATE', ['org_acme'], { timeoutMs: BUDGET }).then(() => undefined, (e: unknown) => e);
    expect(locking).toBeInstanceOf(OqlError);
    expect(String((locking as OqlError).message)).not.toMatch(/FOR UPDATE|account/);
    // The connection came back idle and usable.
    expect((await db.read('SELECT 1 AS one', [], { timeoutMs: BUDGET })).rows).toEqual([{ one: 1 }]);
  });

  it('reads in UTC with ISO dates, whatever the server\'s own zone and date style', async () => {
    const { rows } = await db.read("SELECT TIMESTAMPTZ '2024-02-29 23:30:00+00' AS at, DATE '2024-03-01' AS day, pg_catalog.current_setting('TimeZone') AS zone", [], { timeoutMs: BUDGET });
    // Written by hand: the server's own settings (America/New_York, SQL, DMY) would say 29/02/2024 18:30.
    expect(rows.map((r) => ({ at: String(r.at), day: String(r.day), zone: r.zone }))).toEqual([{ at: '2024-02-29 23:30:00+00', day: '2024-03-01', zone: 'UTC' }]);
  });

  it('leaves no setting behind on the connection', async () => {
    // Both reads share the pool's connections; a plain query on them sees the server's defaults.
    await db.read('SELECT 1 AS one', [], { timeoutMs: 200 });
    const after = await db.query<{ zone: string; timeout: string }>("SELECT pg_catalog.current_setting('TimeZone') AS zone, pg_catalog.current_setting('statement_timeout') AS timeout");
    expect(after.rows).toEqual([{ zone: 'America/New_York', timeout: '0' }]);
  });

  it('answers a failed statement with the database error, in one round trip, and the connection serves the next read', async () => {
    direct.reset();
    const failed = await db.read('SELECT 1 / (SELECT COUNT(*) - COUNT(*) FROM account) AS n', [], { timeoutMs: BUDGET }).then(() => undefined, (e: unknown) => e);
    expect(failed).toBeInstanceOf(OqlError);
    expect(readTrips(direct, false)).toEqual([1]);
    expect((await db.read('SELECT 2 AS two', [], { timeoutMs: BUDGET })).rows).toEqual([{ two: 2 }]);
  });

  it('sends a transaction\'s last statement with its COMMIT; when that statement fails, nothing of the transaction is kept', async () => {
    direct.reset();
    await db.transaction(async (tx) => {
      await tx.query("INSERT INTO account (id, org_id, name) VALUES ('last_a', 'org_last', 'Last')");
      await tx.commitWith!("INSERT INTO account (id, org_id, name) VALUES ('last_b', 'org_last', 'Last')");
    }, { timeoutMs: BUDGET });
    expect(direct.transactions().map((t) => [t.statements.length, t.trips, t.ended])).toEqual([[4, 2, true]]);
    const failed = await db.transaction(async (tx) => {
      await tx.query("INSERT INTO account (id, org_id, name) VALUES ('last_c', 'org_last', 'Last')");
      await tx.commitWith!("INSERT INTO account (id, org_id, name) VALUES ('last_a', 'org_last', 'Again')");
    }, { timeoutMs: BUDGET }).then(() => undefined, (e: unknown) => e);
    expect((failed as { code?: string }).code).toBe('23505');
    const rows = await db.query<{ id: string }>("SELECT id FROM account WHERE org_id = 'org_last' ORDER BY id");
    expect(rows.rows).toEqual([{ id: 'last_a' }, { id: 'last_b' }]);
    expect((await db.read('SELECT 3 AS three', [], { timeoutMs: BUDGET })).rows).toEqual([{ three: 3 }]);
  });

  it('sends statements that wait on no answer together, each answered in order; the first to fail is the error, and nothing of the transaction is kept', async () => {
    direct.reset();
    const answers = await inWriteTransaction(db, { timeoutMs: BUDGET }, (tx) => together<[Record<string, unknown>[], Record<string, unknown>[], number]>(tx, (q) => [
      q.rows("INSERT INTO account (id, org_id, name) VALUES ('together_a', 'org_together', 'A') RETURNING id", []),
      q.rows('SELECT $1::int + 1 AS n', [41]),
      // A step that sends a second statement once its first is answered: that one goes on its own.
      (async () => Number((await q.rows('SELECT 1 AS n', []))[0]!.n) + Number((await q.rows('SELECT 2 AS n', []))[0]!.n))(),
    ]));
    expect(answers).toEqual([[{ id: 'together_a' }], [{ n: 42 }], 3]);
    // The opening and the three first statements in one trip, the step's second statement, the COMMIT.
    expect(direct.transactions().map((t) => [t.statements.length, t.trips, t.ended])).toEqual([[6, 3, true]]);
    const failed = await inWriteTransaction(db, { timeoutMs: BUDGET }, (tx) => together(tx, (q) => [
      q.rows("INSERT INTO account (id, org_id, name) VALUES ('together_b', 'org_together', 'B')", []),
      q.rows('SELECT 1 / $1::int AS n', [0]),
      q.rows("INSERT INTO account (id, org_id, name) VALUES ('together_a', 'org_together', 'Again')", []),
    ])).then(() => undefined, (e: unknown) => e);
    // The division's error, not the aborted transaction's of the statement after it.
    expect(failed).toBeInstanceOf(OqlError);
    expect((failed as OqlError).cause).toMatchObject({ code: '22012' });
    const rows = await db.query<{ id: string }>("SELECT id FROM account WHERE org_id = 'org_together' ORDER BY id");
    expect(rows.rows).toEqual([{ id: 'together_a' }]);
  });

  it('sends a transaction\'s last statement queued together after the others, with the COMMIT, in the round trip of its opening; a failure before it keeps nothing', async () => {
    direct.reset();
    const answers = await inWriteTransaction(db, { timeoutMs: BUDGET }, (tx) => together<[Record<string, unknown>[], Record<string, unknown>[]]>(tx, (q) => [
      q.rows("INSERT INTO account (id, org_id, name) VALUES ('last_together_a', 'org_last_together', 'A') RETURNING id", []),
      q.lastRows("SELECT count(*)::int AS n FROM account WHERE org_id = 'org_last_together'", []),
    ]));
    // The last statement sees the INSERT before it, in the same transaction.
    expect(answers).toEqual([[{ id: 'last_together_a' }], [{ n: 1 }]]);
    // The opening, the INSERT, the last statement and the COMMIT: one trip.
    expect(direct.transactions().map((t) => [t.statements, t.trips, t.ended])).toEqual([[
      [expect.stringMatching(/^BEGIN; SET LOCAL statement_timeout/), expect.stringContaining("'last_together_a'"), expect.stringContaining('count(*)'), 'COMMIT'], 1, true]]);
    const failed = await inWriteTransaction(db, { timeoutMs: BUDGET }, (tx) => together(tx, (q) => [
      q.rows("INSERT INTO account (id, org_id, name) VALUES ('last_together_b', 'org_last_together', 'B')", []),
      q.rows("INSERT INTO account (id, org_id, name) VALUES ('last_together_a', 'org_last_together', 'Again')", []),
      q.lastRows("INSERT INTO account (id, org_id, name) VALUES ('last_together_c', 'org_last_together', 'C')", []),
    ])).then(() => undefined, (e: unknown) => e);
    // The duplicate's error, not the aborted transaction's of the last statement after it.
    expect((failed as OqlError).cause).toMatchObject({ code: '23505' });
    const rows = await db.query<{ id: string }>("SELECT id FROM account WHERE org_id = 'org_last_together' ORDER BY id");
    expect(rows.rows).toEqual([{ id: 'last_together_a' }]);
    // Nothing may be queued after the last statement.
    const after = await inWriteTransaction(db, { timeoutMs: BUDGET }, (tx) => together(tx, (q) => [
      q.lastRows('SELECT 1 AS n', []),
      q.rows('SELECT 2 AS n', []),
    ])).then(() => undefined, (e: unknown) => e);
    // A mistake of the code, not of the database: an internal error, whose cause says what it was.
    expect(after).toMatchObject({ code: 'QUERY_FAILED', status: 500 });
    expect(String(((after as OqlError).cause as Error).message)).toContain('after the transaction\'s last');
  });

  it('writes a record in a round trip per statement and one for COMMIT, and a failed write leaves nothing', async () => {
    await db.transaction(async (tx) => {
      await tx.query('SELECT 1');
    });
    direct.reset();
    await db.transaction(async (tx) => {
      await tx.query("INSERT INTO account (id, org_id, name) VALUES ('trip_a', 'org_trip', 'Trip')");
    }, { timeoutMs: BUDGET });
    // The opening (BEGIN and its settings) goes out with the INSERT; COMMIT is the second.
    expect(direct.transactions().map((t) => [t.statements.length, t.trips, t.ended])).toEqual([[3, 2, true]]);
    const failed = await db.transaction(async (tx) => {
      await tx.query("INSERT INTO account (id, org_id, name) VALUES ('trip_b', 'org_trip', 'Trip')");
      await tx.query("INSERT INTO account (id, org_id, name) VALUES ('trip_a', 'org_trip', 'Trip again')");
    }, { timeoutMs: BUDGET }).then(() => undefined, (e: unknown) => e);
    expect(failed).toBeDefined();
    const rows = await db.query<{ id: string }>("SELECT id FROM account WHERE org_id = 'org_trip' ORDER BY id");
    expect(rows.rows).toEqual([{ id: 'trip_a' }]);
  });
});

describe('named statements', () => {
  const text = (n: number) => `SELECT $1::int + ${n} AS n`;

  it('bind a repeated read to the statement parsed the first time, and keep at most their share on a connection, the least recently read let go', async () => {
    // One connection, two statements kept: A, B, then C lets A go, and the look at what the
    // connection holds (a read too) lets B go.
    const db = await openDatabase({ database: server.url, poolSize: 1, preparedStatements: 2 });
    try {
      for (const n of [1, 1, 2, 3]) expect((await db.read(text(n), [10], { timeoutMs: BUDGET })).rows).toEqual([{ n: 10 + n }]);
      const held = (await db.read('SELECT name, statement FROM pg_prepared_statements ORDER BY statement', [], { timeoutMs: BUDGET })).rows;
      expect(held.map((r) => r.statement).sort()).toEqual([text(3), 'SELECT name, statement FROM pg_prepared_statements ORDER BY statement'].sort());
      // Named by their text: the same name for the same text, whichever process or connection.
      expect(held.every((r) => /^oql_[\w-]{22}$/.test(String(r.name)))).toBe(true);
      // One name per organization: the plan one organization's reads get is chosen from its own runs.
      const perOrg = await openDatabase({ database: server.url, poolSize: 1, preparedStatements: 100 });
      try {
        for (const tenant of ['org_a', 'org_b', 'org_a']) expect((await perOrg.read(text(5), [1], { timeoutMs: BUDGET, tenant })).rows).toEqual([{ n: 6 }]);
        const names = (await perOrg.read('SELECT name FROM pg_prepared_statements WHERE statement = $1', [text(5)], { timeoutMs: BUDGET })).rows;
        expect(names).toHaveLength(2);
      } finally {
        await perOrg.close();
      }
      // And off: nothing is kept.
      const unnamed = await openDatabase({ database: server.url, poolSize: 1, preparedStatements: 0 });
      try {
        expect((await unnamed.read(text(1), [1], { timeoutMs: BUDGET })).rows).toEqual([{ n: 2 }]);
        expect((await unnamed.read('SELECT count(*)::int AS n FROM pg_prepared_statements', [], { timeoutMs: BUDGET })).rows).toEqual([{ n: 0 }]);
      } finally {
        await unnamed.close();
      }
    } finally {
      await db.close();
    }
  });

  it('turn off by themselves behind a pooler that shares one server connection between two clients, and every read still answers', async () => {
    // PgBouncer in transaction mode with one server connection: the second client to read a text
    // finds its name there already. That read is made again unnamed, and the pool names none after.
    const shared = await startPgBouncer({ fallback: { host: '127.0.0.1', port: server.port }, poolMode: 'transaction', poolSize: 1 });
    const db = await openDatabase({ database: shared.url(), poolSize: 2, preparedStatements: 100 });
    try {
      for (let i = 0; i < 10; i++) {
        const answers = await Promise.all([db.read(text(1), [i], { timeoutMs: BUDGET }), db.read(text(1), [i + 100], { timeoutMs: BUDGET })]);
        expect(answers.map((a) => a.rows)).toEqual([[{ n: i + 1 }], [{ n: i + 101 }]]);
      }
      // A text never read before is not prepared any more.
      for (let i = 0; i < 3; i++) expect((await db.read(text(7), [i], { timeoutMs: BUDGET })).rows).toEqual([{ n: i + 7 }]);
      const held = (await db.read('SELECT statement FROM pg_prepared_statements', [], { timeoutMs: BUDGET })).rows.map((r) => r.statement);
      expect(held).toContain(text(1));
      expect(held).not.toContain(text(7));
    } finally {
      await db.close();
      await shared.stop();
    }
  });
});
