import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, openReadDatabase } from '../../src/run/open.js';
import { createServer } from '../../src/server/app.js';
import { READER, startFleetDatabases, statementLog, type FleetDatabases } from '../support/fleet.js';

/**
 * Reads on a read role's pool (--read-database): one statement each when the role's defaults carry
 * a read-only transaction, the statement timeout, UTC and ISO dates; BEGIN/SET/ROLLBACK otherwise.
 * What reached the server is read from its statement log, not from the driver. Everything goes
 * through PgBouncer in transaction mode, on the primary and on a streaming replica.
 */

const BUDGET = 1500;
const PLAIN = 'oql_plain';
const READ = 'SELECT id, at, at::date AS day FROM public.fleet_t WHERE org_id = $1 ORDER BY id';
// Written by hand: what the rows are in UTC with ISO dates, whatever the server's own zone.
const EXPECTED = [
  { id: 'a1', at: '2024-02-29 23:30:00+00', day: '2024-02-29' },
  { id: 'a2', at: '2024-03-01 00:15:00+00', day: '2024-03-01' },
];

let fleet: FleetDatabases;

beforeAll(async () => {
  fleet = await startFleetDatabases({ replica: true, readTimeoutMs: BUDGET, users: [PLAIN], settings: { TimeZone: "'America/New_York'" } });
  const admin = new pg.Client({ connectionString: fleet.primary.url });
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE ${PLAIN} LOGIN`);
    await admin.query('CREATE TABLE public.fleet_t (id text PRIMARY KEY, org_id text NOT NULL, at timestamptz NOT NULL)');
    await admin.query(`GRANT SELECT ON public.fleet_t TO ${READER}, ${PLAIN}`);
    await admin.query('CREATE SEQUENCE public.fleet_seq');
    await admin.query(`GRANT USAGE ON public.fleet_seq TO ${READER}`);
    await admin.query(`INSERT INTO public.fleet_t VALUES ('a1', 'org_a', '2024-02-29T23:30:00Z'), ('a2', 'org_a', '2024-03-01T00:15:00Z'), ('b1', 'org_b', '2024-03-01T00:00:00Z')`);
  } finally {
    await admin.end();
  }
  await fleet.caughtUp();
}, 180_000);

afterAll(async () => {
  await fleet?.stop();
});

/** Rows as strings, the way the library's parsers leave timestamps and dates. */
function plain(rows: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return rows.map((r) => ({ id: r.id, at: String(r.at), day: String(r.day) }));
}

describe('reads on a read role through PgBouncer (transaction mode)', () => {
  it('are the statement alone when the role carries the defaults', async () => {
    const log = statementLog(fleet.primary);
    const { db, role } = await openReadDatabase(fleet.bouncer.url('postgres', READER), { timeoutMs: BUDGET, preparedStatements: 0 });
    try {
      expect(role).toMatchObject({ missing: [], standby: false, timeoutMs: BUDGET });
      for (let i = 0; i < 5; i++) expect(plain((await db.read(READ, ['org_a'], { timeoutMs: BUDGET })).rows)).toEqual(EXPECTED);
      const mine = log.since().filter((s) => s.role === READER && !s.text.startsWith('SELECT current_user AS role') && s.text !== 'SELECT 1');
      expect(mine.map((s) => s.text)).toEqual(Array(5).fill(READ));
      expect(mine.every((s) => s.kind === 'execute <unnamed>')).toBe(true);
    } finally {
      await db.close();
    }
  });

  it('take BEGIN READ ONLY … ROLLBACK on a role without them, with the same rows, and say what to run', async () => {
    const log = statementLog(fleet.primary);
    const { db, role } = await openReadDatabase(fleet.bouncer.url('postgres', PLAIN), { timeoutMs: BUDGET, preparedStatements: 0 });
    try {
      expect(role.missing).toHaveLength(4);
      expect(role.fix).toEqual([
        `ALTER ROLE "${PLAIN}" SET default_transaction_read_only = on;`,
        `ALTER ROLE "${PLAIN}" SET statement_timeout = ${BUDGET};`,
        `ALTER ROLE "${PLAIN}" SET TimeZone = 'UTC';`,
        `ALTER ROLE "${PLAIN}" SET DateStyle = 'ISO, YMD';`,
      ]);
      expect(plain((await db.read(READ, ['org_a'], { timeoutMs: BUDGET })).rows)).toEqual(EXPECTED);
      const texts = log.since().filter((s) => s.role === PLAIN && !s.text.startsWith('SELECT current_user AS role') && s.text !== 'SELECT 1').map((s) => s.text);
      expect(texts).toEqual([`BEGIN READ ONLY; SET LOCAL statement_timeout = ${BUDGET}; SET LOCAL TimeZone = 'UTC'; SET LOCAL DateStyle = 'ISO, YMD'`, READ, 'ROLLBACK']);
    } finally {
      await db.close();
    }
  });

  it('take the BEGIN/SET path for a budget other than the role statement_timeout', async () => {
    const log = statementLog(fleet.primary);
    const { db } = await openReadDatabase(fleet.bouncer.url('postgres', READER), { timeoutMs: BUDGET, preparedStatements: 0 });
    try {
      await db.read(READ, ['org_a'], { timeoutMs: BUDGET + 500 });
      const texts = log.since().filter((s) => s.role === READER && s.text.startsWith('BEGIN READ ONLY'));
      expect(texts.map((s) => s.text)).toEqual([`BEGIN READ ONLY; SET LOCAL statement_timeout = ${BUDGET + 500}; SET LOCAL TimeZone = 'UTC'; SET LOCAL DateStyle = 'ISO, YMD'`]);
    } finally {
      await db.close();
    }
  });

  it('are refused any write by the database, and end by the role statement_timeout', async () => {
    const { db } = await openReadDatabase(fleet.bouncer.url('postgres', READER), { timeoutMs: BUDGET, preparedStatements: 0 });
    try {
      const write = await db.read("SELECT nextval('public.fleet_seq') AS n", [], { timeoutMs: BUDGET }).then(() => null, (e: Error) => e);
      expect(write).toMatchObject({ code: 'QUERY_FAILED', message: expect.stringContaining('read-only') });
      const slow = await db.read('SELECT pg_sleep(4) AS s', [], { timeoutMs: BUDGET }).then(() => null, (e: Error) => e);
      expect(slow).toMatchObject({ code: 'QUERY_TIMEOUT', status: 504 });
      // The connection is still good for the next read.
      expect(plain((await db.read(READ, ['org_a'], { timeoutMs: BUDGET })).rows)).toEqual(EXPECTED);
    } finally {
      await db.close();
    }
  });

  it('are one statement on the streaming replica too, which reports itself a standby', async () => {
    const log = statementLog(fleet.replica!);
    const { db, role } = await openReadDatabase(fleet.readerUrl, { timeoutMs: BUDGET, preparedStatements: 0 });
    try {
      expect(role).toMatchObject({ missing: [], standby: true });
      expect(plain((await db.read(READ, ['org_a'], { timeoutMs: BUDGET })).rows)).toEqual(EXPECTED);
      expect(plain((await db.read(READ, ['org_b'], { timeoutMs: BUDGET })).rows)).toEqual([{ id: 'b1', at: '2024-03-01 00:00:00+00', day: '2024-03-01' }]);
      const mine = log.since().filter((s) => s.role === READER && !s.text.startsWith('SELECT current_user AS role') && s.text !== 'SELECT 1');
      expect(mine.map((s) => s.text)).toEqual([READ, READ]);
    } finally {
      await db.close();
    }
  });

  it('become one statement once the printed ALTER ROLE lines are run as written', async () => {
    const direct = `postgres://${PLAIN}@${fleet.primary.host}:${fleet.primary.port}/postgres`;
    const before = await openReadDatabase(direct, { timeoutMs: BUDGET });
    await before.db.close();
    const admin = new pg.Client({ connectionString: fleet.primary.url });
    await admin.connect();
    try {
      for (const line of before.role.fix) await admin.query(line);
    } finally {
      await admin.end();
    }
    const after = await openReadDatabase(direct, { timeoutMs: BUDGET });
    try {
      expect(after.role.missing).toEqual([]);
      const log = statementLog(fleet.primary);
      expect(plain((await after.db.read(READ, ['org_a'], { timeoutMs: BUDGET })).rows)).toEqual(EXPECTED);
      expect(log.since().filter((s) => s.role === PLAIN && s.text.startsWith('BEGIN'))).toEqual([]);
    } finally {
      await after.db.close();
    }
  });
});

describe('the service with --read-database on the primary', () => {
  it('reads a get-one and a filter page as one statement each, of the read role', async () => {
    const server = await createServer({
      database: fleet.primaryUrl, readDatabase: fleet.bouncer.url('postgres', READER), queryTimeoutMs: BUDGET, poolSize: 3,
      apiKeys: 'read-role-test-key-000001=org_rr:superadmin:u_rr', env: {},
    });
    try {
      expect(server.reads).toMatchObject({ role: { missing: [], standby: false } });
      const key = { authorization: 'Bearer read-role-test-key-000001', 'content-type': 'application/json' };
      const created = await server.app.inject({ method: 'POST', url: '/api/v1/org/objects/account/record/bulk_create', headers: key, payload: [{ name: 'Read role account' }] });
      expect(created.statusCode).toBe(200);
      const admin = new pg.Client({ connectionString: fleet.primary.url });
      await admin.connect();
      const id = (await admin.query<{ id: string }>("SELECT id FROM public.account WHERE org_id = 'org_rr'").finally(() => admin.end())).rows[0]!.id;
      const log = statementLog(fleet.primary);
      expect((await server.app.inject({ method: 'GET', url: `/api/v1/org/objects/account/record/${id}`, headers: key })).statusCode).toBe(200);
      const filter = { query: { fields: ['id', 'name'], filters: { and: [{ field: 'name', operator: 'eq', value: 'Read role account' }] } } };
      expect((await server.app.inject({ method: 'POST', url: '/api/v1/org/objects/account/filter', headers: key, payload: filter })).json()).toEqual({ success: true, data: { records: [{ id, name: 'Read role account' }] } });
      const statements = log.since();
      const reads = statements.filter((s) => /FROM "public"."account"/.test(s.text));
      expect(reads.length).toBeGreaterThanOrEqual(2);
      expect(reads.filter((s) => s.role !== READER)).toEqual([]);
      expect(statements.filter((s) => s.role === READER && s.text.startsWith('BEGIN'))).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe('a --read-database that cannot be used', () => {
  it('is refused with a clear error that never shows its password', async () => {
    await expect(openDatabase({ readDatabase: fleet.readerUrl })).rejects.toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringContaining('--read-database needs --database') });
    await expect(openReadDatabase('mysql://u:secret@127.0.0.1/db', { timeoutMs: BUDGET })).rejects.toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringContaining('--read-database must be a postgres:// URL') });
    const down = await openReadDatabase('postgres://oql_reader:secret@127.0.0.1:1/db', { timeoutMs: BUDGET }).then(() => null, (e: Error) => e);
    expect(down).toMatchObject({ code: 'DATABASE_ERROR' });
    expect(down!.message).toContain('oql_reader:***@');
    expect(down!.message).not.toContain('secret');
  });
});
