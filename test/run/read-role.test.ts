import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, openReadDatabase, openReadSessions } from '../../src/run/open.js';
import { createServer } from '../../src/server/app.js';
import { READER, startFleetDatabases, statementLog, type FleetDatabases } from '../support/fleet.js';
import { serve } from '../support/oql-serve.js';

/**
 * Reads on a read role's pool (--read-database): one statement each when the role's defaults carry
 * a read-only transaction, the statement timeout, UTC and ISO dates; BEGIN/SET/ROLLBACK otherwise.
 * What reached the server is read from its statement log, not from the driver. Everything goes
 * through PgBouncer in transaction mode, on the primary and on a streaming replica.
 */

const BUDGET = 1500;
const PLAIN = 'oql_plain';
/** A role with no defaults, never altered here: the read-only sessions' own. */
const SESSION = 'oql_session';
const READ = 'SELECT id, at, at::date AS day FROM public.fleet_t WHERE org_id = $1 ORDER BY id';
// Written by hand: what the rows are in UTC with ISO dates, whatever the server's own zone.
const EXPECTED = [
  { id: 'a1', at: '2024-02-29 23:30:00+00', day: '2024-02-29' },
  { id: 'a2', at: '2024-03-01 00:15:00+00', day: '2024-03-01' },
];

let fleet: FleetDatabases;

beforeAll(async () => {
  fleet = await startFleetDatabases({ replica: true, readTimeoutMs: BUDGET, users: [PLAIN, SESSION], settings: { TimeZone: "'America/New_York'" } });
  const admin = new pg.Client({ connectionString: fleet.primary.url });
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE ${PLAIN} LOGIN`);
    await admin.query(`CREATE ROLE ${SESSION} LOGIN`);
    await admin.query('CREATE TABLE public.fleet_t (id text PRIMARY KEY, org_id text NOT NULL, at timestamptz NOT NULL)');
    await admin.query(`GRANT SELECT ON public.fleet_t TO ${READER}, ${PLAIN}, ${SESSION}`);
    await admin.query('CREATE SEQUENCE public.fleet_seq');
    await admin.query(`GRANT USAGE ON public.fleet_seq TO ${READER}, ${SESSION}`);
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

describe('read-only sessions: reads of --database alone, with no role made by hand', () => {
  const direct = (role: string): string => `postgres://${role}@${fleet.primary.host}:${fleet.primary.port}/postgres`;
  /** The statements of `role` since the cursor, without the pool's own check and connect probe. */
  const reads = (log: ReturnType<typeof statementLog>, role: string): string[] =>
    log.since().filter((s) => s.role === role && !s.text.startsWith('SELECT current_user AS role') && s.text !== 'SELECT 1').map((s) => s.text);

  it('are the statement alone on a role with no defaults, in UTC with ISO dates on a server that is not', async () => {
    const log = statementLog(fleet.primary);
    const sessions = await openReadSessions(direct(SESSION), { timeoutMs: BUDGET, preparedStatements: 0 });
    expect(sessions.refused).toBeUndefined();
    try {
      for (let i = 0; i < 3; i++) expect(plain((await sessions.db!.read(READ, ['org_a'], { timeoutMs: BUDGET })).rows)).toEqual(EXPECTED);
      expect(plain((await sessions.db!.read(READ, ['org_b'], { timeoutMs: BUDGET })).rows)).toEqual([{ id: 'b1', at: '2024-03-01 00:00:00+00', day: '2024-03-01' }]);
      expect(reads(log, SESSION)).toEqual(Array(4).fill(READ));
      // A budget other than the sessions' timeout takes BEGIN/SET, with that budget.
      await sessions.db!.read(READ, ['org_a'], { timeoutMs: BUDGET + 500 });
      expect(reads(log, SESSION)).toEqual([`BEGIN READ ONLY; SET LOCAL statement_timeout = ${BUDGET + 500}; SET LOCAL TimeZone = 'UTC'; SET LOCAL DateStyle = 'ISO, YMD'`, READ, 'ROLLBACK']);
    } finally {
      await sessions.db?.close();
    }
    // The role itself was left as it was: a plain session of it has none of the settings.
    const plainClient = new pg.Client({ connectionString: direct(SESSION) });
    await plainClient.connect();
    try {
      const row = (await plainClient.query("SELECT current_setting('transaction_read_only') AS ro, current_setting('statement_timeout') AS t, current_setting('TimeZone') AS tz")).rows[0];
      expect(row).toEqual({ ro: 'off', t: '0', tz: 'America/New_York' });
    } finally {
      await plainClient.end();
    }
  });

  it('are refused any write by the database, and end by the statement timeout', async () => {
    const sessions = await openReadSessions(direct(SESSION), { timeoutMs: BUDGET, preparedStatements: 0 });
    try {
      const write = await sessions.db!.read("SELECT nextval('public.fleet_seq') AS n", [], { timeoutMs: BUDGET }).then(() => null, (e: Error) => e);
      expect(write).toMatchObject({ code: 'QUERY_FAILED', message: expect.stringContaining('read-only') });
      const slow = await sessions.db!.read('SELECT pg_sleep(4) AS s', [], { timeoutMs: BUDGET }).then(() => null, (e: Error) => e);
      expect(slow).toMatchObject({ code: 'QUERY_TIMEOUT', status: 504 });
      expect(plain((await sessions.db!.read(READ, ['org_a'], { timeoutMs: BUDGET })).rows)).toEqual(EXPECTED);
    } finally {
      await sessions.db?.close();
    }
  });

  it('are not had through PgBouncer, which refuses the start-up option', async () => {
    const bounced = await openReadSessions(fleet.bouncer.url('postgres', SESSION), { timeoutMs: BUDGET });
    expect(bounced.db).toBeUndefined();
    expect(bounced.refused).toContain('unsupported startup parameter');
  });

  it('keep the URL\'s own start-up options, whose settings of the same names give way to theirs', async () => {
    // The URL asks for its own search_path, and for a timeout and zone the sessions set otherwise.
    const url = `${direct(SESSION)}?options=${encodeURIComponent('-c search_path=oql_elsewhere,public -c statement_timeout=5 -c TimeZone=Asia/Tokyo')}`;
    const sessions = await openReadSessions(url, { timeoutMs: BUDGET, preparedStatements: 0 });
    expect(sessions.refused).toBeUndefined();
    try {
      const settings = "SELECT pg_catalog.current_setting('search_path') AS path, pg_catalog.current_setting('statement_timeout') AS t, pg_catalog.current_setting('TimeZone') AS tz, pg_catalog.current_setting('transaction_read_only') AS ro";
      expect((await sessions.db!.read(settings, [], { timeoutMs: BUDGET })).rows).toEqual([{ path: 'oql_elsewhere,public', t: `${BUDGET}ms`, tz: 'UTC', ro: 'on' }]);
      expect(plain((await sessions.db!.read(READ, ['org_a'], { timeoutMs: BUDGET })).rows)).toEqual(EXPECTED);
    } finally {
      await sessions.db?.close();
    }
  });

  it('serve get-one and filter pages in one statement each, one organization never seeing the other', async () => {
    const keys = 'session-test-key-org-one1=org_s1:superadmin:u_s1,session-test-key-org-two2=org_s2:superadmin:u_s2';
    const server = await createServer({ database: fleet.primary.url, queryTimeoutMs: BUDGET, poolSize: 3, apiKeys: keys, env: {} });
    try {
      expect(server.readSessions?.db).toBeDefined();
      const one = { authorization: 'Bearer session-test-key-org-one1', 'content-type': 'application/json' };
      const two = { authorization: 'Bearer session-test-key-org-two2', 'content-type': 'application/json' };
      const create = async (headers: Record<string, string>): Promise<string> => {
        const r = await server.app.inject({ method: 'POST', url: '/api/v1/org/objects/account/record/bulk_create', headers, payload: [{ name: 'Session account' }] });
        expect(r.statusCode).toBe(200);
        // bulk_create answers a message, not the ids: read back as written, by the superuser.
        const org = headers === one ? 'org_s1' : 'org_s2';
        const admin = new pg.Client({ connectionString: fleet.primary.url });
        await admin.connect();
        return (await admin.query<{ id: string }>('SELECT id FROM public.account WHERE org_id = $1', [org]).finally(() => admin.end())).rows[0]!.id;
      };
      const [id1, id2] = [await create(one), await create(two)];
      const log = statementLog(fleet.primary);
      expect((await server.app.inject({ method: 'GET', url: `/api/v1/org/objects/account/record/${id1}`, headers: one })).json()).toMatchObject({ data: { id: id1, name: 'Session account' } });
      const other = await server.app.inject({ method: 'GET', url: `/api/v1/org/objects/account/record/${id2}`, headers: one });
      expect(other.json()).toMatchObject({ success: false, data: { error_code: 'NOT_FOUND', status_code: 400 } });
      const filter = { query: { fields: ['id', 'name'], filters: { and: [{ field: 'name', operator: 'eq', value: 'Session account' }] } } };
      expect((await server.app.inject({ method: 'POST', url: '/api/v1/org/objects/account/filter', headers: one, payload: filter })).json()).toEqual({ success: true, data: { records: [{ id: id1, name: 'Session account' }] } });
      expect((await server.app.inject({ method: 'POST', url: '/api/v1/org/objects/account/filter', headers: two, payload: filter })).json()).toEqual({ success: true, data: { records: [{ id: id2, name: 'Session account' }] } });
      const statements = log.since();
      expect(statements.filter((s) => /FROM "public"\."account"/.test(s.text)).length).toBeGreaterThanOrEqual(4);
      expect(statements.filter((s) => s.text.startsWith('BEGIN READ ONLY'))).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('are not taken with OQL_READ_SESSIONS=0, nor through PgBouncer: reads keep BEGIN READ ONLY … ROLLBACK, with the same answers', async () => {
    const keys = 'session-test-key-org-one1=org_s1:superadmin:u_s1';
    const headers = { authorization: 'Bearer session-test-key-org-one1' };
    for (const [options, refused] of [[{ database: fleet.primary.url, env: { OQL_READ_SESSIONS: '0' } }, undefined], [{ database: fleet.primaryUrl, env: {} }, 'unsupported startup parameter']] as const) {
      const server = await createServer({ ...options, queryTimeoutMs: BUDGET, poolSize: 3, apiKeys: keys, preparedStatements: 0 });
      try {
        if (refused === undefined) expect(server.readSessions).toBeUndefined();
        else expect(server.readSessions?.refused).toContain(refused);
        const log = statementLog(fleet.primary);
        const r = await server.app.inject({ method: 'POST', url: '/api/v1/org/objects/account/filter', headers, payload: { query: { fields: ['name'], filters: { and: [{ field: 'name', operator: 'eq', value: 'Session account' }] } } } });
        expect(r.json()).toEqual({ success: true, data: { records: [{ name: 'Session account' }] } });
        expect(log.since().filter((s) => s.text.startsWith('BEGIN READ ONLY')).length).toBeGreaterThanOrEqual(1);
      } finally {
        await server.close();
      }
    }
  });

  it('are named by oql serve at start, and so is their refusal', async () => {
    const [direct, bounced] = await Promise.all([serve(['--database', fleet.primary.url]), serve(['--database', fleet.primaryUrl], { OQL_PREPARED_STATEMENTS: '0' })]);
    try {
      expect(direct.stdout()).toMatch(/^reads {5}read-only sessions of the same database \(one statement per read\)$/m);
      expect(bounced.stdout()).toMatch(/^reads {5}the same pool, BEGIN READ ONLY and ROLLBACK around each statement: read-only sessions were not had \(cannot connect to .*unsupported startup parameter: options.*\)$/m);
    } finally {
      await Promise.all([direct.stop(), bounced.stop()]);
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
