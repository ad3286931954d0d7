process.env.TZ = 'America/New_York'; // before anything makes a Date: results must not depend on it

import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fixtureData, loadFixtureCatalog, loadIntoDatabase } from '../../fixtures/index.js';
import { quoteQualified } from '../../src/catalog/quote.js';
import { TEXT_PARSERS } from '../../src/run/decode.js';
import { databaseError } from '../../src/run/errors.js';
import { pgliteDatabase, type PgliteLike } from '../../src/run/drivers/pglite/in-thread.js';
import { dataDirOwner, EmbeddedDatabase, type EmbeddedTx } from '../../src/run/drivers/pglite/supervisor.js';
import { workerDatabase } from '../../src/run/drivers/pglite/service-database.js';
import { failure } from '../support/failure.js';
import { emptyPglite } from '../support/pglite-template.js';
import { NODE_FLAGS } from '../support/node-flags.js';

/**
 * The embedded database in its own process, against PGlite on this thread as the oracle: the
 * same statements must give the same JS values, errors and transaction outcomes.
 */

// Each open of PGlite takes seconds, and minutes on a machine shared with other work: bounds against hangs, not timings.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 600_000 });

const catalog = loadFixtureCatalog('crm');
const data = fixtureData('crm');

let db: EmbeddedDatabase;
let local: PGlite;

/** Session settings both sides run with: a zone that is neither UTC nor the host's. */
const SESSION = "SET TimeZone = 'Asia/Kolkata'; SET DateStyle = 'ISO, YMD'";

beforeAll(async () => {
  [db, local] = await Promise.all([EmbeddedDatabase.open({ memory: true, sessionSql: SESSION, timeoutMs: 60_000, openTimeoutMs: 600_000 }), emptyPglite({ extensions: { pg_trgm } })]);
  await local.exec(SESSION);
  await loadIntoDatabase(db, catalog, data);
  await loadIntoDatabase(local, catalog, data);
});

afterAll(async () => {
  await Promise.all([db?.close(), local?.close()]);
});

/** The embedded database as the service's `Database`, and PGlite on this thread behind the same interface. */
const service = () => workerDatabase(db);
const inThread = () => pgliteDatabase(local as unknown as PgliteLike, 'PGlite');

/** In-thread PGlite with the decoders the embedded database's caller gets. */
function localQuery(sql: string, params: unknown[] = []) {
  return local.query<Record<string, unknown>>(sql, params, { parsers: { ...TEXT_PARSERS } });
}

describe('values', () => {
  it('every table of the example catalog reads back as PGlite on this thread reads it', async () => {
    let compared = 0;
    for (const obj of catalog.objects.values()) {
      const sql = `SELECT * FROM ${quoteQualified(catalog.mapping.schema, obj.table)} ORDER BY id`;
      const [mine, theirs] = [await db.query(sql), await localQuery(sql)];
      expect(mine.rows, obj.slug).toStrictEqual(theirs.rows);
      expect(mine.fields, obj.slug).toStrictEqual(theirs.fields);
      compared += mine.rows.length;
    }
    expect(compared).toBeGreaterThan(100);
  });

  const TYPES = `CREATE TABLE every_type (
    id int PRIMARY KEY, t text, b bigint, n numeric, flag boolean, tags text[], doc jsonb,
    d date, ts timestamp, tz timestamptz, i int, f float8, big bigint[], days date[], iv interval, tm time
  )`;
  const ROWS: unknown[][] = [
    [1, 'plain', 42, '12.50', true, ['a', 'b c', null], { k: [1, 'x', null], nested: { y: true } },
      '2024-05-01', '2024-05-01 13:14:15.5', '2024-05-01 13:14:15+02', 7, 1.25, [1, 9007199254740993n], ['2024-01-02'], '1 day 02:00', '23:59:59'],
    [2, "O'Brien \u00fcn\u00efcode", '9007199254740993', 'NaN', false, [], [], '0001-01-01', '1999-12-31 23:59:59', '1970-01-01 00:00:00+00', -1, -0.5, [], [], '-1 mons', '00:00'],
    [3, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null],
  ];

  beforeAll(async () => {
    for (const side of [db, local] as const) {
      await side.exec(TYPES);
      for (const row of ROWS) {
        await side.query(`INSERT INTO every_type VALUES (${row.map((_, i) => `$${i + 1}`).join(', ')})`, row);
      }
    }
  });

  it('text, bigint, numeric, boolean, text[], jsonb, date, timestamp, timestamptz and NULLs, as on this thread', async () => {
    const sql = 'SELECT * FROM every_type ORDER BY id';
    const [mine, theirs] = [await db.query(sql), await localQuery(sql)];
    expect(mine.rows).toStrictEqual(theirs.rows);
    expect(mine.fields).toStrictEqual(theirs.fields);
  });

  it('decodes our types as decode.ts says, not as PGlite would by default', async () => {
    const { rows } = await db.query('SELECT b, n, d, ts, tz, tags, doc, flag FROM every_type ORDER BY id');
    // Written from the inserted literals and the session zone (Asia/Kolkata, +05:30), not read from any output.
    expect(rows[0]).toStrictEqual({
      b: 42, n: 12.5, d: '2024-05-01', ts: '2024-05-01 13:14:15.5', tz: '2024-05-01 16:44:15+05:30',
      tags: ['a', 'b c', null], doc: { k: [1, 'x', null], nested: { y: true } }, flag: true,
    });
    // Beyond 2^53 and NaN: the text, as no JSON number holds them (parseNumber).
    expect(rows[1]).toMatchObject({ b: '9007199254740993', n: 'NaN', d: '0001-01-01', tz: '1970-01-01 05:30:00+05:30', tags: [], doc: [] });
    expect(rows[2]).toStrictEqual({ b: null, n: null, d: null, ts: null, tz: null, tags: null, doc: null, flag: null });
  });

  it('parameters of every kind arrive as PGlite on this thread takes them', async () => {
    const sql = 'SELECT $1::timestamptz AS at, $2::text[] AS list, $3::jsonb AS doc, $4::int8 AS big, $5::bytea AS bytes, $6::boolean AS yes';
    const params = [new Date(Date.UTC(2024, 4, 1, 12)), ['x', 'y'], JSON.stringify({ a: 1 }), 12345678901234n, new Uint8Array([0, 255]), true];
    const [mine, theirs] = [await db.query(sql, params), await localQuery(sql, params)];
    expect(mine.rows).toStrictEqual(theirs.rows);
    expect(mine.rows[0]!['at']).toBe('2024-05-01 17:30:00+05:30');
  });

  it('a repeated column name keeps its last value, as PGlite does', async () => {
    const sql = "SELECT 1::int8 AS a, 'x' AS a, now()::date AS b, 2.5::numeric AS b";
    const [mine, theirs] = [await db.query(sql), await localQuery(sql)];
    expect(mine.rows).toStrictEqual(theirs.rows);
    expect(mine.rows[0]).toStrictEqual({ a: 'x', b: 2.5 });
  });

  it('exec runs several statements and answers each', async () => {
    const results = await db.exec('CREATE TEMP TABLE scratch (x int8); INSERT INTO scratch VALUES (1), (2); SELECT sum(x) AS s FROM scratch');
    expect(results).toHaveLength(3);
    expect(results[1]!.affectedRows).toBe(2);
    expect(results[2]!.rows).toStrictEqual([{ s: 3 }]);
  });

  it('pg_trgm is loaded', async () => {
    await db.exec('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    const { rows } = await db.query("SELECT similarity('harbor', 'harbour') > 0.4 AS close");
    expect(rows).toStrictEqual([{ close: true }]);
  });
});

describe('errors', () => {
  it('a SQL error keeps the fields callers read (code, constraint), as on this thread', async () => {
    const insert = 'INSERT INTO every_type (id) VALUES (1)';
    const mine = await db.query(insert).then(() => null, (e: unknown) => e as Record<string, unknown>);
    const theirs = await local.query(insert).then(() => null, (e: unknown) => e as Record<string, unknown>);
    expect(mine).toBeInstanceOf(Error);
    for (const key of ['message', 'code', 'constraint', 'table', 'detail', 'severity']) expect(mine![key], key).toBe(theirs![key]);
    expect(mine!['code']).toBe('23505');
    expect(databaseError(mine, 5000).code).toBe(databaseError(theirs, 5000).code);
  });

  it('division by zero maps to the same OqlError as on this thread', async () => {
    const e = await db.query('SELECT 1 / 0').then(() => null, (x: unknown) => x);
    expect(databaseError(e, 5000)).toMatchObject({ code: 'QUERY_FAILED', status: 400, message: expect.stringContaining('division by zero') });
  });

  it('a parameter that cannot cross to the process is an error of that call only', async () => {
    await expect(db.query('SELECT $1::text AS x', [() => 1])).rejects.toThrow(/could not be cloned/);
    expect((await db.query("SELECT 'still here' AS x")).rows).toStrictEqual([{ x: 'still here' }]);
    expect(db.stats().restarts).toBe(0);
  });
});

describe('transactions', () => {
  beforeAll(async () => {
    await db.exec('CREATE TABLE ledger (id serial PRIMARY KEY, tenant text NOT NULL, note text)');
  });
  const countOf = async (tenant: string): Promise<number> =>
    (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM ledger WHERE tenant = $1', [tenant])).rows[0]!.n;

  it('commits when the function resolves and answers its value', async () => {
    const value = await db.transaction(async (tx) => {
      await tx.query('INSERT INTO ledger (tenant, note) VALUES ($1, $2), ($1, $3)', ['org_a', 'one', 'two']);
      return (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM ledger WHERE tenant = $1', ['org_a'])).rows[0]!.n;
    }, { tenant: 'org_a' });
    expect(value).toBe(2);
    expect(await countOf('org_a')).toBe(2);
  });

  it('rolls back when the function throws, and rethrows its error', async () => {
    const boom = new Error('boom');
    await expect(db.transaction(async (tx) => {
      await tx.query("INSERT INTO ledger (tenant) VALUES ('org_b')");
      throw boom;
    })).rejects.toBe(boom);
    expect(await countOf('org_b')).toBe(0);
  });

  it("another tenant's call never runs inside a transaction in progress", async () => {
    let otherSettled = false;
    let other: Promise<number> | undefined;
    await expect(db.transaction(async (tx) => {
      await tx.query("INSERT INTO ledger (tenant) VALUES ('org_c')");
      // Issued while the transaction holds the connection: it must wait for the end.
      other = countOf('org_c').finally(() => {
        otherSettled = true;
      });
      for (let i = 0; i < 5; i++) await tx.query('SELECT 1');
      expect(otherSettled).toBe(false);
      throw new Error('undo');
    }, { tenant: 'org_c' })).rejects.toThrow('undo');
    // Had it run inside, it would have counted the row that was rolled back.
    expect(await other).toBe(0);
  });

  it('statements a function starts without awaiting run in order inside it', async () => {
    await db.transaction(async (tx) => {
      await Promise.all([1, 2, 3, 4].map((i) => tx.query('INSERT INTO ledger (tenant, note) VALUES ($1, $2)', ['org_d', `n${i}`])));
    });
    const { rows } = await db.query<{ note: string }>("SELECT note FROM ledger WHERE tenant = 'org_d' ORDER BY id");
    expect(rows.map((r) => r.note)).toEqual(['n1', 'n2', 'n3', 'n4']);
  });

  it('a transaction that pauses longer than its budget is rolled back without a restart', async () => {
    const restarts = db.stats().restarts;
    let resume: () => void = () => {};
    const paused = new Promise<void>((r) => {
      resume = r;
    });
    let body: Promise<void> | undefined;
    const e = await failure(db.transaction((tx) => (body = (async () => {
      await tx.query("INSERT INTO ledger (tenant) VALUES ('org_e')", [], { timeoutMs: 60_000 });
      await paused; // work that is not SQL, longer than the budget
      await tx.query("INSERT INTO ledger (tenant) VALUES ('org_e')");
    })()), { timeoutMs: 1000 }));
    expect(e.code).toBe('QUERY_TIMEOUT');
    expect(e.status).toBe(504);
    expect(e.message).toContain('without running a statement');
    resume();
    // The function's next statement is refused with the same error.
    await expect(body).rejects.toBe(e);
    expect(await countOf('org_e')).toBe(0);
    expect(db.stats().restarts).toBe(restarts);
  });

  it('a pause before the first statement is bounded by the budget too, and the connection stays usable', async () => {
    let resume: () => void = () => {};
    const paused = new Promise<void>((r) => {
      resume = r;
    });
    let body: Promise<void> | undefined;
    const e = await failure(db.transaction((tx) => (body = (async () => {
      await paused; // holds the connection before any statement
      await tx.query("INSERT INTO ledger (tenant) VALUES ('org_p')");
    })()), { timeoutMs: 1000 }));
    expect(e.code).toBe('QUERY_TIMEOUT');
    resume();
    await expect(body).rejects.toBe(e);
    expect(await countOf('org_p')).toBe(0);
    expect((await db.query<{ ro: string }>("SELECT current_setting('transaction_read_only') AS ro")).rows).toStrictEqual([{ ro: 'off' }]);
  });

  it('a first statement that fails leaves no transaction open; one that runs none commits nothing and answers', async () => {
    // The driver's own error at this layer (the service maps it with databaseError()).
    await expect(db.transaction((tx) => tx.query('INSERT INTO no_such_table VALUES (1)'))).rejects.toMatchObject({ code: '42P01' });
    // Were BEGIN left open, this statement would run in the failed transaction and be refused.
    await db.query("INSERT INTO ledger (tenant) VALUES ('org_q')");
    expect(await countOf('org_q')).toBe(1);
    expect(await db.transaction(async () => 'nothing to run')).toBe('nothing to run');
    expect(await db.transaction(async (tx) => {
      await tx.rollback();
      return 'rolled back';
    })).toBe('rolled back');
  });

  it('tx.rollback() undoes the work and the call answers the value without committing', async () => {
    let kept: EmbeddedTx | undefined;
    const value = await db.transaction(async (tx) => {
      kept = tx;
      await tx.query("INSERT INTO ledger (tenant) VALUES ('org_f')");
      await tx.rollback();
      return 'kept';
    });
    expect(value).toBe('kept');
    expect(await countOf('org_f')).toBe(0);
    expect((await failure(kept!.query('SELECT 1'))).message).toContain('the transaction has ended');
  });

  it('the transaction object is dead once the transaction has ended', async () => {
    let kept: EmbeddedTx | undefined;
    await db.transaction(async (tx) => {
      kept = tx;
    });
    const e = await failure(kept!.query('SELECT 1'));
    expect(e.message).toContain('the transaction has ended');
  });

  it('an error inside leaves the connection usable for everyone after the rollback', async () => {
    await expect(db.transaction(async (tx) => {
      await tx.query('SELECT 1 / 0');
    })).rejects.toMatchObject({ code: '22012' });
    expect((await db.query("SELECT 'ok' AS x")).rows).toStrictEqual([{ x: 'ok' }]);
  });

  /**
   * The answers the database process sends while `work` runs, read from the process's IPC channel
   * (one answer per message the service sends it).
   */
  async function answersDuring(work: () => Promise<unknown>): Promise<number> {
    const child = (db as unknown as { child: { spawned: { child: import('node:child_process').ChildProcess } } }).child.spawned.child;
    let answers = 0;
    const count = (): void => {
      answers++;
    };
    child.on('message', count);
    try {
      await work();
    } finally {
      child.off('message', count);
    }
    return answers;
  }

  it('commitWith sends the last statement and its COMMIT as one message, and the work is kept', async () => {
    let rows: unknown;
    const answers = await answersDuring(() => db.transaction(async (tx) => {
      await tx.query("INSERT INTO ledger (tenant, note) VALUES ('org_cw', 'first')");
      rows = (await tx.commitWith<{ note: string }>("INSERT INTO ledger (tenant, note) VALUES ('org_cw', 'last') RETURNING note")).rows;
    }, { tenant: 'org_cw' }));
    expect(rows).toStrictEqual([{ note: 'last' }]);
    // BEGIN with the first statement, COMMIT with the last: two messages, where three were sent.
    expect(answers).toBe(2);
    expect(await countOf('org_cw')).toBe(2);
    // A transaction of one statement is one message: BEGIN, the statement, COMMIT.
    expect(await answersDuring(() => db.transaction((tx) => tx.commitWith("INSERT INTO ledger (tenant) VALUES ('org_cw')")))).toBe(1);
    expect(await countOf('org_cw')).toBe(3);
  });

  it('a commitWith statement that fails takes the whole transaction back, in the process, with no message more', async () => {
    let sent: Promise<unknown> | undefined;
    const answers = await answersDuring(async () => {
      sent = db.transaction(async (tx) => {
        await tx.query("INSERT INTO ledger (tenant) VALUES ('org_cx')");
        await tx.commitWith('INSERT INTO no_such_table VALUES (1)');
      });
      await sent.catch(() => {});
    });
    await expect(sent).rejects.toMatchObject({ code: '42P01' });
    // BEGIN with the first statement; the failed last one with its ROLLBACK: no third message.
    expect(answers).toBe(2);
    expect(await countOf('org_cx')).toBe(0);
    // The process ended the transaction: the next call runs outside any transaction block, where
    // SAVEPOINT is refused (in the failed transaction it would have been "current transaction is aborted").
    await expect(db.exec('SAVEPOINT probe')).rejects.toMatchObject({ code: '25P01' });
    expect(db.stats().restarts).toBe(0);
  });

  it('a COMMIT that fails (a deferred constraint) is the error of commitWith, and nothing of the transaction is kept', async () => {
    await db.exec(`CREATE TABLE deferred_once (id int PRIMARY KEY, tenant text NOT NULL,
      CONSTRAINT one_per_tenant UNIQUE (tenant) DEFERRABLE INITIALLY DEFERRED)`);
    await expect(db.transaction(async (tx) => {
      await tx.query("INSERT INTO deferred_once VALUES (1, 'org_d')");
      // Accepted by the statement; refused at COMMIT, when the deferred check runs.
      return tx.commitWith("INSERT INTO deferred_once VALUES (2, 'org_d')");
    })).rejects.toMatchObject({ code: '23505', constraint: 'one_per_tenant' });
    expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM deferred_once')).rows).toStrictEqual([{ n: 0 }]);
  });

  it('nothing is sent in the transaction after commitWith: a later statement is refused, and the commit stands', async () => {
    let later: Error | undefined;
    await db.transaction(async (tx) => {
      await tx.commitWith("INSERT INTO ledger (tenant) VALUES ('org_cy')");
      later = await failure(tx.query("INSERT INTO ledger (tenant) VALUES ('org_cy')"));
    });
    expect(later?.message).toContain('the transaction has ended');
    expect(await countOf('org_cy')).toBe(1);
  });
});

describe('the queue', () => {
  it("one tenant's 50 queued calls delay another tenant's single call by at most one statement", async () => {
    const done: string[] = [];
    const flood = Array.from({ length: 50 }, (_, i) =>
      db.query('SELECT count(*) FROM generate_series(1, 2000)', [], { tenant: 'flood' }).then(() => done.push(`flood${i}`)));
    const single = db.query('SELECT 1', [], { tenant: 'quiet' }).then(() => done.push('quiet'));
    expect(db.stats().queued).toBeGreaterThanOrEqual(50);
    await Promise.all([...flood, single]);
    // The first flood call took the free connection at once; the quiet one is next.
    expect(done.indexOf('quiet')).toBeLessThanOrEqual(1);
    expect(done).toHaveLength(51);
    expect(db.stats().queued).toBe(0);
  });

  it("reads, one message each, take their tenant's turn like any call", async () => {
    const done: string[] = [];
    const settings = 'SET TRANSACTION READ ONLY';
    const flood = Array.from({ length: 30 }, (_, i) =>
      db.read(settings, 'SELECT count(*) FROM generate_series(1, 2000)', [], { tenant: 'flood' }).then(() => done.push(`flood${i}`)));
    const single = db.read(settings, 'SELECT 1 AS one', [], { tenant: 'quiet' }).then((r) => {
      done.push('quiet');
      return r.rows;
    });
    expect(db.stats().queued).toBeGreaterThanOrEqual(30);
    const settled = await Promise.allSettled([...flood, single]);
    expect(await single).toStrictEqual([{ one: 1 }]);
    expect(done.indexOf('quiet')).toBeLessThanOrEqual(1);
    expect(settled.filter((r) => r.status === 'fulfilled')).toHaveLength(31);
    expect((await db.query<{ ro: string }>("SELECT current_setting('transaction_read_only') AS ro")).rows).toStrictEqual([{ ro: 'off' }]);
  });

  it('calls without a tenant share one turn and keep their order', async () => {
    const done: number[] = [];
    await Promise.all([0, 1, 2, 3].map((i) => db.query('SELECT $1::int AS i', [i]).then(() => done.push(i))));
    expect(done).toEqual([0, 1, 2, 3]);
  });
});

describe('as the service\'s Database', () => {

  it('read answers what the in-thread driver answers, in UTC whatever the session zone', async () => {
    const sql = 'SELECT id, b, n, d, ts, tz, tags, doc FROM every_type WHERE id < $1 ORDER BY id';
    const [mine, theirs] = [await service().read(sql, [10], { timeoutMs: 60_000 }), await inThread().read(sql, [10], { timeoutMs: 60_000 })];
    expect(mine.rows).toStrictEqual(theirs.rows);
    expect(mine.rows[0]!['tz']).toBe('2024-05-01 11:14:15+00');
  });

  it('read is read-only in the database, and sends nothing but a SELECT', async () => {
    await db.exec('CREATE SEQUENCE IF NOT EXISTS counter');
    const e = await failure(service().read("SELECT nextval('counter')", [], { timeoutMs: 60_000 }));
    expect(e).toMatchObject({ code: 'QUERY_FAILED', message: expect.stringContaining('read-only') });
    expect((await failure(service().read('DELETE FROM ledger', [], { timeoutMs: 60_000 }))).message).toContain('not a SELECT');
    expect((await db.query<{ n: number }>("SELECT last_value::int AS n FROM counter")).rows).toStrictEqual([{ n: 1 }]);
  });

  it('a read ends its transaction in the process, whatever its query did: nothing of its settings stays on the connection', async () => {
    const restarts = db.stats().restarts;
    const inside = await service().read("SELECT current_setting('transaction_read_only') AS ro, current_setting('TimeZone') AS tz", [], { timeoutMs: 60_000 });
    expect(inside.rows).toStrictEqual([{ ro: 'on', tz: 'UTC' }]);
    for (const sql of ['SELECT * FROM no_such_table', 'SELECT 1 / 0', "SELECT nextval('counter')"]) {
      expect((await failure(service().read(sql, [], { timeoutMs: 60_000 }))).code).toBe('QUERY_FAILED');
      // Out of the transaction, in the session's own zone, and writable again.
      const after = await db.query<{ ro: string; tz: string }>("SELECT current_setting('transaction_read_only') AS ro, current_setting('TimeZone') AS tz");
      expect(after.rows).toStrictEqual([{ ro: 'off', tz: 'Asia/Kolkata' }]);
    }
    await db.query("INSERT INTO ledger (tenant, note) VALUES ('org_r', 'after failed reads')");
    expect((await db.query("SELECT note FROM ledger WHERE tenant = 'org_r'")).rows).toStrictEqual([{ note: 'after failed reads' }]);
    expect(db.stats().restarts).toBe(restarts);
  });

  it('read plans instead of running when asked', async () => {
    const { rows } = await service().read('SELECT * FROM every_type WHERE id = $1', [1], { timeoutMs: 60_000, explain: true });
    expect(JSON.stringify(rows[0])).toContain('every_type');
  });

  it('transaction commits, query runs a plain statement, ping answers without a statement', async () => {
    const database = service();
    expect(database.kind).toBe('pglite');
    expect(database.label).toBe(db.label);
    await database.transaction((tx) => tx.query("INSERT INTO ledger (tenant, note) VALUES ('org_g', 'via Database')"), { tenant: 'org_g' });
    expect((await database.query<{ note: string }>("SELECT note FROM ledger WHERE tenant = 'org_g'")).rows).toStrictEqual([{ note: 'via Database' }]);
    expect(await database.ping(1000)).toBe(true);
    const e = await failure(database.query('SELECT * FROM no_such_table'));
    expect(e.code).toBe('QUERY_FAILED');
  });
});

describe('named statements of reads', () => {
  /** The statements the process's session holds with this text (PostgreSQL's own view of them). */
  const kept = async (on: EmbeddedDatabase, text: string) =>
    (await on.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1', [text])).rows[0]!.n;

  it('a text read again is one statement per organization, and reads what the in-thread driver reads, parameters of every kind', async () => {
    const sql = 'SELECT id, t, b, n, flag, tags FROM every_type WHERE id = ANY($1::int[]) AND (t IS NULL OR t <> $2) AND ($3::boolean IS NULL OR $3) AND b IS DISTINCT FROM $4::bigint AND n IS DISTINCT FROM $5::numeric ORDER BY id';
    const params: unknown[][] = [[[1, 2, 3], 'x', null, 5, '1.5'], [[2], "O'Brien", true, 9007199254740993n, null], [[], '', false, null, 'NaN']];
    for (const tenant of ['org_n1', 'org_n2', 'org_n1']) {
      for (const p of params) {
        const [mine, theirs] = [await service().read(sql, p, { timeoutMs: 60_000, tenant }), await inThread().read(sql, p, { timeoutMs: 60_000 })];
        expect(mine.rows, `${tenant} ${JSON.stringify(p, (_, v) => (typeof v === 'bigint' ? String(v) : v))}`).toStrictEqual(theirs.rows);
      }
    }
    expect(await kept(db, sql)).toBe(2);
  });

  it('an EXPLAIN is read unnamed, and a text that does not parse is not kept', async () => {
    await service().read('SELECT id FROM every_type WHERE id = $1', [1], { timeoutMs: 60_000, explain: true, tenant: 'org_n1' });
    expect(await kept(db, 'EXPLAIN (FORMAT JSON) SELECT id FROM every_type WHERE id = $1')).toBe(0);
    expect((await failure(service().read('SELECT id FROM every_type WHERE', [], { timeoutMs: 60_000, tenant: 'org_n1' }))).code).toBe('QUERY_FAILED');
    expect(await kept(db, 'SELECT id FROM every_type WHERE')).toBe(0);
  });

  it('a parameter its type refuses fails that read alone: no transaction is left open and the statement serves the next read', async () => {
    const sql = 'SELECT $1::int + 1 AS x';
    expect((await service().read(sql, [1], { timeoutMs: 60_000, tenant: 'org_n1' })).rows).toStrictEqual([{ x: 2 }]);
    const e = await failure(service().read(sql, ['not a number'], { timeoutMs: 60_000, tenant: 'org_n1' }));
    expect(e.code).toBe('QUERY_FAILED');
    const after = await db.query<{ ro: string }>("SELECT current_setting('transaction_read_only') AS ro");
    expect(after.rows).toStrictEqual([{ ro: 'off' }]);
    expect((await service().read(sql, [41], { timeoutMs: 60_000, tenant: 'org_n1' })).rows).toStrictEqual([{ x: 42 }]);
    expect(await kept(db, sql)).toBe(1);
  });

  it('a parameter its type cannot write fails that read alone, as on this thread, and nothing restarts', async () => {
    // PGlite's writer of timestamps takes a Date, a string or a number, and throws on anything else.
    const sql = 'SELECT $1::timestamp AS t';
    const restarts = db.stats().restarts;
    const [mine, theirs] = [await failure(service().read(sql, [{ not: 'a date' }], { timeoutMs: 60_000, tenant: 'org_n1' })), await failure(inThread().read(sql, [{ not: 'a date' }], { timeoutMs: 60_000 }))];
    expect(theirs.code).toEqual(expect.any(String));
    expect({ code: mine.code, message: mine.message }).toStrictEqual({ code: theirs.code, message: theirs.message });
    const good = ['2024-05-01 13:14:15'];
    expect((await service().read(sql, good, { timeoutMs: 60_000, tenant: 'org_n1' })).rows).toStrictEqual((await inThread().read(sql, good, { timeoutMs: 60_000 })).rows);
    expect(db.stats().restarts).toBe(restarts);
  });

  it("a column whose type changes under a kept statement is read with its new type", async () => {
    await db.exec('CREATE TABLE altered (id int PRIMARY KEY, v int); INSERT INTO altered VALUES (1, 5)');
    const sql = 'SELECT v FROM altered WHERE id = $1';
    for (let i = 0; i < 6; i++) expect((await service().read(sql, [1], { timeoutMs: 60_000, tenant: 'org_n1' })).rows).toStrictEqual([{ v: 5 }]);
    await db.exec("ALTER TABLE altered ALTER v TYPE text USING v::text || ' (text)'");
    const restarts = db.stats().restarts;
    expect((await service().read(sql, [1], { timeoutMs: 60_000, tenant: 'org_n1' })).rows).toStrictEqual([{ v: '5 (text)' }]);
    expect(await kept(db, sql)).toBe(1);
    expect(db.stats().restarts).toBe(restarts);
  });

  it('keeps at most preparedStatements, the least recently read closed first; with 0, none', async () => {
    const [two, none] = await Promise.all([
      EmbeddedDatabase.open({ memory: true, timeoutMs: 60_000, openTimeoutMs: 600_000, preparedStatements: 2 }),
      EmbeddedDatabase.open({ memory: true, timeoutMs: 60_000, openTimeoutMs: 600_000, preparedStatements: 0 }),
    ]);
    try {
      const texts = ['SELECT $1::int AS a', 'SELECT $1::int AS b', 'SELECT $1::int AS c'];
      const read = (on: EmbeddedDatabase, i: number) => workerDatabase(on).read(texts[i]!, [i], { timeoutMs: 60_000, tenant: 'org_n1' });
      for (const i of [0, 1, 0, 2]) expect((await read(two, i)).rows).toStrictEqual([{ [texts[i]!.slice(-1)]: i }]);
      // 1 was read least recently when 2 came: it went, 0 and 2 stayed.
      expect(await Promise.all(texts.map((t) => kept(two, t)))).toStrictEqual([1, 0, 1]);
      expect((await read(two, 1)).rows).toStrictEqual([{ b: 1 }]);
      expect(await Promise.all(texts.map((t) => kept(two, t)))).toStrictEqual([0, 1, 1]);
      for (const i of [0, 1, 2, 0]) expect((await read(none, i)).rows).toStrictEqual([{ [texts[i]!.slice(-1)]: i }]);
      expect(await Promise.all(texts.map((t) => kept(none, t)))).toStrictEqual([0, 0, 0]);
    } finally {
      await Promise.all([two.close(), none.close()]);
    }
    await expect(EmbeddedDatabase.open({ memory: true, preparedStatements: -1 })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });
});

describe('opening and closing', () => {
  it('refuses inconsistent options before starting anything', async () => {
    expect((await failure(EmbeddedDatabase.open({ memory: true, dataDir: '/tmp/x' }))).code).toBe('INVALID_OPTIONS');
    expect((await failure(EmbeddedDatabase.open({}))).code).toBe('INVALID_OPTIONS');
    expect((await failure(EmbeddedDatabase.open({ memory: true, extensions: ['postgis' as 'pg_trgm'] }))).message).toContain("no extension 'postgis'");
    expect((await failure(EmbeddedDatabase.open({ memory: true, timeoutMs: 0 }))).code).toBe('INVALID_OPTIONS');
  });

  it('a directory open in this process cannot be opened again', async () => {
    expect(dataDirOwner(db.dataDir)).toEqual({ pid: process.pid, host: expect.any(String) });
    const e = await failure(EmbeddedDatabase.open({ dataDir: db.dataDir }));
    expect(e.code).toBe('DATABASE_ERROR');
    expect(e.status).toBe(503);
    expect(e.hint).toContain('--data-dir');
    expect(e.hint).toContain('--memory');
  });

  it('a process that exits without close leaves neither its lock nor its temporary directory behind', async () => {
    const module = resolve(import.meta.dirname, '../../src/run/drivers/pglite/supervisor.ts');
    const script = `const { EmbeddedDatabase } = await import(${JSON.stringify(module)});
      const db = await EmbeddedDatabase.open({ memory: true, extensions: false, timeoutMs: 60000 });
      await db.query('SELECT 1');
      process.stdout.write(db.dataDir);
      process.exit(0);`;
    const { stdout } = await promisify(execFile)(process.execPath, [...NODE_FLAGS, '--import', 'tsx', '--input-type=module', '-e', script], { timeout: 540_000 });
    expect(stdout).toMatch(/oql-pglite-/);
    expect(existsSync(stdout)).toBe(false);
  });

  it("the database process takes the service's WebAssembly compiler flags, and nothing else of its command line", async () => {
    const module = resolve(import.meta.dirname, '../../src/run/drivers/pglite/supervisor.ts');
    const script = `const { readFileSync } = await import('node:fs');
      const { EmbeddedDatabase } = await import(${JSON.stringify(module)});
      const db = await EmbeddedDatabase.open({ memory: true, extensions: false, timeoutMs: 60000 });
      await db.query('SELECT 1');
      process.stdout.write(readFileSync('/proc/' + db.child.pid + '/cmdline', 'utf8'));
      await db.close();`;
    const service = ['--liftoff-only', '--no-wasm-tier-up', '--stack-trace-limit=20', '--import', 'tsx'];
    const { stdout } = await promisify(execFile)(process.execPath, [...service, '--input-type=module', '-e', script], { timeout: 540_000 });
    const argv = stdout.split('\0');
    expect(argv).toEqual(expect.arrayContaining(['--liftoff-only', '--no-wasm-tier-up']));
    expect(argv.filter((a) => a === '--import' || a === 'tsx' || a.startsWith('--stack-trace-limit'))).toEqual([]);
  });

  it('a service killed with SIGKILL in the middle of a statement leaves no database process behind', async () => {
    const module = resolve(import.meta.dirname, '../../src/run/drivers/pglite/supervisor.ts');
    const script = `const { EmbeddedDatabase } = await import(${JSON.stringify(module)});
      const db = await EmbeddedDatabase.open({ memory: true, extensions: false, timeoutMs: 600000 });
      await db.query('SELECT 1');
      const running = db.query('SELECT pg_sleep(600)');
      process.stdout.write('busy\\n');
      await running;`;
    const service = spawn(process.execPath, [...NODE_FLAGS, '--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        service.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('busy') && resolve());
        service.once('exit', (code) => reject(new Error(`the service exited early (code ${code})`)));
      });
      // Its database processes: the one running the statement, and the spare waiting for a directory
      // (started a few seconds after the first).
      const childrenOf = (pid: number) =>
        execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).split('\n').map((l) => Number(l.trim())).filter((n) => n > 0);
      let children = childrenOf(service.pid!);
      for (let i = 0; i < 300 && children.length < 2; i++) {
        await new Promise((r) => setTimeout(r, 100));
        children = childrenOf(service.pid!);
      }
      expect(children).toHaveLength(2);
      const alive = (pid: number) => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      expect(children.every(alive)).toBe(true);
      service.kill('SIGKILL');
      // The statement keeps the busy process's main thread from hearing that; its watchdog does.
      for (let i = 0; i < 100 && children.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
      expect(children.filter(alive)).toEqual([]);
    } finally {
      service.kill('SIGKILL');
    }
  });

  it('close lets running and queued calls finish, then removes the lock and the temporary directory', async () => {
    const other = await EmbeddedDatabase.open({ memory: true, extensions: false });
    expect(other.label).toBe('embedded PostgreSQL (PGlite) in memory');
    const running = other.query('SELECT count(*)::int AS n FROM generate_series(1, 200000)', [], { tenant: 'a' });
    const queued = other.query('SELECT 2 AS two', [], { tenant: 'b' });
    const closed = other.close();
    const late = await failure(other.query('SELECT 3'));
    expect(late.code).toBe('DATABASE_ERROR');
    expect(late.message).toContain('is closed');
    expect((await running).rows).toStrictEqual([{ n: 200000 }]);
    expect((await queued).rows).toStrictEqual([{ two: 2 }]);
    await closed;
    expect(other.stats().state).toBe('closed');
    expect(dataDirOwner(other.dataDir)).toBeNull();
    expect(existsSync(other.dataDir)).toBe(false);
    await other.close(); // twice is fine
  });
});
