import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { amcheck } from '@electric-sql/pglite/contrib/amcheck';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { workerDatabase } from '../../src/run/drivers/pglite/service-database.js';
import { EmbeddedDatabase, type EmbeddedDatabaseEvent, type EmbeddedDatabaseOptions } from '../../src/run/drivers/pglite/supervisor.js';
import { failure } from '../support/failure.js';

/**
 * Statements that run past their budget: the database process is killed, a new one reopens the same
 * directory, and Postgres recovers it. What was committed must be there, what was cut off must not.
 */

// Each open of PGlite takes seconds, and minutes on a machine shared with other work: bounds against hangs, not timings.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 600_000 });

const dir = mkdtempSync(join(tmpdir(), 'oql-recovery-'));
const events: EmbeddedDatabaseEvent[] = [];
let db: EmbeddedDatabase;
const waiting: ((e: EmbeddedDatabaseEvent) => void)[] = [];

/** The next event of `type` the database reports (after this call). */
function nextEvent<T extends EmbeddedDatabaseEvent['type']>(type: T): Promise<Extract<EmbeddedDatabaseEvent, { type: T }>> {
  return new Promise((resolve) => {
    const listener = (e: EmbeddedDatabaseEvent): void => {
      if (e.type !== type) return;
      waiting.splice(waiting.indexOf(listener), 1);
      resolve(e as Extract<EmbeddedDatabaseEvent, { type: T }>);
    };
    waiting.push(listener);
  });
}

async function reopen(options: Omit<EmbeddedDatabaseOptions, 'dataDir'> = {}): Promise<void> {
  await db?.close();
  // Generous defaults: on a busy machine a restart or an INSERT can take seconds; the statements
  // that must be cut off get budgets of their own.
  db = await EmbeddedDatabase.open({
    dataDir: dir, sessionSql: "SET TimeZone = 'Asia/Kolkata'", restartWaitMs: 600_000, openTimeoutMs: 600_000, timeoutMs: 60_000, onEvent: (e) => {
      events.push(e);
      for (const listener of [...waiting]) listener(e);
    }, ...options,
  });
}

const count = async (table: string, where = 'true'): Promise<number> =>
  (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`)).rows[0]!.n;

beforeAll(async () => {
  await reopen();
  await db.exec(`
    CREATE TABLE note (id int PRIMARY KEY, tenant text NOT NULL, body text);
    CREATE INDEX note_tenant ON note (tenant);
    CREATE TABLE cube (v int);
    INSERT INTO cube SELECT generate_series(1, 2000);`);
});

afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Three levels of correlated subqueries over 2000 rows: billions of steps, as in the report that froze the service. */
const RUNAWAY = `SELECT count(*) FROM cube a
  WHERE (SELECT count(*) FROM cube b WHERE b.v > a.v AND (SELECT count(*) FROM cube c WHERE c.v < b.v AND c.v <> a.v) > 0) > 0`;

describe('a statement past its budget', () => {
  it('SELECT pg_sleep(30) with a 2 s budget is ended, and the next tenant is served by a new process', async () => {
    const restarts = db.stats().restarts;
    const started = Date.now();
    const sleeping = failure(db.query('SELECT pg_sleep(30)', [], { tenant: 'org_slow', timeoutMs: 2000 }));
    const behind = db.query<{ tz: string }>("SELECT 'served' AS what, current_setting('TimeZone') AS tz", [], { tenant: 'org_fast' });
    const e = await sleeping;
    expect(e.code).toBe('QUERY_TIMEOUT');
    expect(e.status).toBe(504);
    expect(e.message).toBe('the query timed out after 2 seconds');
    expect(Date.now() - started).toBeLessThan(15_000);
    // Queued behind the killed statement, not lost: it ran in the new process, with the session settings.
    expect((await behind).rows).toStrictEqual([{ what: 'served', tz: 'Asia/Kolkata' }]);
    expect(db.stats()).toMatchObject({ state: 'ready', restarts: restarts + 1, queued: 0 });
    expect(db.stats().lastRestartMs).toBeGreaterThan(0);
    const restart = events.find((ev) => ev.type === 'restarting' && ev.tenant === 'org_slow');
    expect(restart).toMatchObject({ reason: 'timeout', error: e });
  });

  it('a three-level correlated subquery read as the service reads is ended at its budget too (CPU in WASM, not a sleep)', async () => {
    const started = Date.now();
    const e = await failure(workerDatabase(db).read(RUNAWAY, [], { tenant: 'org_slow', timeoutMs: 2000 }));
    expect(e.code).toBe('QUERY_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await count('cube')).toBe(2000);
  });

  it('rows committed before the kill are there after it', async () => {
    for (let i = 1; i <= 5; i++) await db.query('INSERT INTO note VALUES ($1, $2, $3)', [i, 'org_a', `committed ${i}`]);
    await db.transaction(async (tx) => {
      for (let i = 6; i <= 10; i++) await tx.query('INSERT INTO note VALUES ($1, $2, $3)', [i, 'org_a', `committed ${i}`]);
    });
    await failure(db.query(RUNAWAY, [], { timeoutMs: 1000 }));
    const { rows } = await db.query<{ id: number }>("SELECT id FROM note WHERE tenant = 'org_a' ORDER BY id");
    expect(rows.map((r) => r.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('a write transaction cut off at its deadline leaves nothing behind, and its function learns it', async () => {
    const restarts = db.stats().restarts;
    let afterKill: Promise<unknown> | undefined;
    const e = await failure(db.transaction(async (tx) => {
      await tx.query("INSERT INTO note SELECT g, 'org_b', 'partial' FROM generate_series(100, 5100) g");
      await tx.query("UPDATE note SET body = 'changed' WHERE tenant = 'org_a'");
      try {
        await tx.query('SELECT pg_sleep(30)', [], { timeoutMs: 1500 });
      } catch {
        // A function that swallows the error and goes on must not get a commit.
        afterKill = tx.query("INSERT INTO note VALUES (99, 'org_b', 'after')");
        await afterKill.catch(() => {});
      }
    }, { tenant: 'org_b' }));
    expect(e.code).toBe('QUERY_TIMEOUT');
    await expect(afterKill).rejects.toBe(e);
    expect(db.stats().restarts).toBe(restarts + 1);
    expect(await count('note', "tenant = 'org_b'")).toBe(0);
    expect(await count('note', "body = 'changed'")).toBe(0);
    expect(await count('note', "tenant = 'org_a'")).toBe(10);
    // The connection takes new transactions.
    await db.transaction((tx) => tx.query("INSERT INTO note VALUES (11, 'org_a', 'later')"));
    expect(await count('note', "tenant = 'org_a'")).toBe(11);
  });
});

describe('recovery of a directory whose process was killed while writing', () => {
  it('keeps every commit and none of the cut-off writes, over repeated kills, with intact indexes', async () => {
    await db.exec('CREATE TABLE IF NOT EXISTS churn (id bigint PRIMARY KEY, round int NOT NULL, pad text)');
    const fds = () => readdirSync('/proc/self/fd').length;
    const fdsBefore = fds();
    let committed = 0;
    const rounds = 3;
    for (let round = 1; round <= rounds; round++) {
      for (let k = 0; k < 20; k++) {
        committed++;
        await db.query('INSERT INTO churn VALUES ($1, $2, $3)', [committed, round, 'committed']);
      }
      // A large write killed part-way, at a different point each round: heap, index and WAL pages in flight.
      const budget = 300 + Math.floor(Math.random() * 1200);
      const cut = await failure(db.query(
        "INSERT INTO churn SELECT 1000000000 + g, $1, repeat('x', 200) FROM generate_series(1, 5000000) g", [round], { timeoutMs: budget }));
      expect(cut.code).toBe('QUERY_TIMEOUT');
      expect(await count('churn')).toBe(committed);
      expect(await count('churn', 'id >= 1000000000')).toBe(0);
    }
    expect(fds()).toBeLessThan(fdsBefore + 10);
    // An independent check of the files: amcheck on PGlite on this thread, after a clean close.
    await db.close();
    const check = await PGlite.create({ dataDir: dir, extensions: { amcheck, pg_trgm } });
    try {
      await check.exec('CREATE EXTENSION IF NOT EXISTS amcheck');
      await check.query("SELECT bt_index_parent_check('churn_pkey', true)");
      await check.query("SELECT bt_index_parent_check('note_pkey', true)");
      const { rows } = await check.query<{ n: number }>('SELECT count(*)::int AS n FROM churn');
      expect(rows[0]!.n).toBe(committed);
    } finally {
      await check.close();
      await reopen();
    }
  });
});

describe('the slice: how long a read may hold the connection while another tenant waits', () => {
  it("a tenant's read past the slice is cut when another tenant's call waits, and that call is served", async () => {
    await reopen({ sliceMs: 300 });
    const restarts = db.stats().restarts;
    const slow = failure(db.read('SET TRANSACTION READ ONLY', 'SELECT pg_sleep(30)', [], { tenant: 'org_slow' }));
    const other = db.query<{ n: number }>('SELECT count(*)::int AS n FROM cube', [], { tenant: 'org_fast' });
    const e = await slow;
    expect(e.code).toBe('QUERY_TIMEOUT');
    expect(e.status).toBe(504);
    expect(e.message).toBe(`the query was stopped after 0.3 seconds: other organizations were waiting for the ${db.label}, which runs one statement at a time`);
    expect(e.hint).toContain('on PostgreSQL (--database)');
    expect((await other).rows).toStrictEqual([{ n: 2000 }]);
    expect(db.stats().restarts).toBe(restarts + 1);
    expect([...events].reverse().find((ev) => ev.type === 'restarting')).toMatchObject({ reason: 'timeout', tenant: 'org_slow', error: e });
  });

  it('alone, or with only its own calls and the service\'s waiting, a read keeps its whole budget', async () => {
    const restarts = db.stats().restarts;
    const read = db.read<{ done: boolean }>('SET TRANSACTION READ ONLY', 'SELECT true AS done FROM pg_sleep(1)', [], { tenant: 'org_slow' });
    const own = db.query<{ n: number }>('SELECT 1 AS n', [], { tenant: 'org_slow' });
    const service = db.query<{ n: number }>('SELECT 2 AS n');
    expect((await read).rows).toStrictEqual([{ done: true }]);
    expect((await own).rows).toStrictEqual([{ n: 1 }]);
    expect((await service).rows).toStrictEqual([{ n: 2 }]);
    expect(db.stats().restarts).toBe(restarts);
  });

  it('statements other than reads (writes, transactions) are not cut by the slice', async () => {
    const restarts = db.stats().restarts;
    const write = db.transaction(async (tx) => {
      await tx.query("INSERT INTO note SELECT 500 + g, 'org_slow', 'slow write' FROM generate_series(1, 3) g WHERE pg_sleep(0.4) IS NOT NULL");
    }, { tenant: 'org_slow' });
    const other = db.query<{ n: number }>('SELECT 1 AS n', [], { tenant: 'org_fast' });
    await write;
    expect((await other).rows).toStrictEqual([{ n: 1 }]);
    expect(await count('note', "body = 'slow write'")).toBe(3);
    expect(db.stats().restarts).toBe(restarts);
    await db.query("DELETE FROM note WHERE body = 'slow write'");
  });

  it('sliceMs is checked like the other options', async () => {
    expect((await failure(EmbeddedDatabase.open({ memory: true, sliceMs: 0 }))).message).toBe('sliceMs must be a whole number between 1 and 2147483647, not 0');
  });
});

describe('what keeps a restart short', () => {
  it('the write-ahead log is checkpointed once it passes 8 MB, so a restart does not replay it all', async () => {
    await db.exec('CREATE TABLE IF NOT EXISTS bulk (id int PRIMARY KEY, body text)');
    const checkpoint = nextEvent('checkpoint');
    const before = db.stats().checkpoints;
    // About 16 MB of text that compresses little: each row 60 md5 digests strung together.
    await db.query(
      "INSERT INTO bulk SELECT g, (SELECT string_agg(md5(g::text || ':' || k), '') FROM generate_series(1, 60) k) FROM generate_series(1, 8000) g");
    const event = await checkpoint;
    expect(event.walBytes).toBeGreaterThan(8 * 1024 * 1024);
    expect(db.stats().checkpoints).toBeGreaterThan(before);
    // Postgres's own account: the log since the last checkpoint is now well under the threshold.
    const { rows } = await db.query<{ bytes: number }>('SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn)::int8 AS bytes FROM pg_control_checkpoint()');
    expect(Number(rows[0]!.bytes)).toBeLessThan(8 * 1024 * 1024);
    // What was written before the checkpoint survives a kill.
    expect((await failure(db.query(RUNAWAY, [], { timeoutMs: 500 }))).code).toBe('QUERY_TIMEOUT');
    expect(await count('bulk')).toBe(8000);
    await db.exec('DROP TABLE bulk');
  });

  it('a large write given the connection as a look at the log ends is looked at by the next look', async () => {
    await db.exec('CREATE TABLE IF NOT EXISTS bulk (id int PRIMARY KEY, body text)');
    // The looks the database makes every few seconds, made here at chosen moments.
    const look = () => (db as unknown as { checkpointIfDue(): Promise<void> }).checkpointIfDue();
    await look();
    await db.query('SELECT 1');
    const before = db.stats().checkpoints;
    const checkpoints: number[] = [];
    const recorded = nextEvent('checkpoint').then((e) => checkpoints.push(e.walBytes));
    // The look's statement is given the connection first; the INSERT, queued behind it, as it ends,
    // before the look has finished.
    const first = look();
    const write = db.query(
      "INSERT INTO bulk SELECT g, (SELECT string_agg(md5(g::text || ':' || k), '') FROM generate_series(1, 60) k) FROM generate_series(1, 8000) g");
    await Promise.all([first, write]);
    // Nothing else was served since: only the INSERT can make this look, or the database's own
    // one meanwhile, check the log.
    await look();
    // When the database's own look was under way, this one made none: that one decides.
    const looking = () => (db as unknown as { checkpointing: boolean }).checkpointing;
    while (looking()) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(db.stats().checkpoints).toBeGreaterThan(before);
    await recorded;
    expect(checkpoints[0]).toBeGreaterThan(8 * 1024 * 1024);
    const { rows } = await db.query<{ bytes: number }>('SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn)::int8 AS bytes FROM pg_control_checkpoint()');
    expect(Number(rows[0]!.bytes)).toBeLessThan(8 * 1024 * 1024);
    await db.exec('DROP TABLE bulk');
  });

  it('the spare warms its code up before it is needed, and the restart through it serves at once', async () => {
    await reopen();
    const ready = await nextEvent('spare-ready');
    expect(ready.statements).toBeGreaterThan(5);
    const restarted = nextEvent('restarted');
    expect((await failure(db.query(RUNAWAY, [], { tenant: 'org_slow', timeoutMs: 500 }))).code).toBe('QUERY_TIMEOUT');
    expect(await restarted).toMatchObject({ warm: true });
    // The warm-up's table was in a database of its own, gone with it.
    expect((await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_class WHERE relname = 'warm'")).rows[0]!.n).toBe(0);
    expect(await count('cube')).toBe(2000);
  });
});

describe('while the process is replaced', () => {
  it('a call that waits longer than restartWaitMs gets 503 with a retry time, never a hang', async () => {
    await reopen({ restartWaitMs: 50 });
    const killed = failure(db.query('SELECT pg_sleep(30)', [], { timeoutMs: 500 }));
    const waiting = failure(db.query('SELECT 1', [], { tenant: 'org_other' }));
    expect((await killed).code).toBe('QUERY_TIMEOUT');
    const e = await waiting;
    expect(e.code).toBe('SERVICE_UNAVAILABLE');
    expect(e.status).toBe(503);
    expect(e.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(e.hint).toMatch(/^retry in \d+ seconds?$/);
    // Once it is back, calls are served again.
    for (let i = 0; i < 6000 && db.stats().state !== 'ready'; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await db.query('SELECT 2 AS two')).rows).toStrictEqual([{ two: 2 }]);
  });

  it('a process that dies on its own (out of its heap) is replaced; the call that did it is told why', async () => {
    await reopen({ maxHeapMb: 96 });
    const restarts = db.stats().restarts;
    const e = await failure(db.query("SELECT repeat('x', 1000) AS s FROM generate_series(1, 300000)", [], { tenant: 'org_big', timeoutMs: 120_000 }));
    expect(e.code).toBe('QUERY_FAILED');
    expect(e.message).toContain('96 MB');
    expect(e.hint).toContain('LEFT(field, n)');
    expect(events.filter((ev) => ev.type === 'restarting').at(-1)).toMatchObject({ reason: 'crash', tenant: 'org_big' });
    expect(await count('cube')).toBe(2000);
    expect(db.stats().restarts).toBe(restarts + 1);
  });

  it('a process that aborts between two statements of a transaction takes the transaction along; the service lives', async () => {
    await reopen();
    const restarts = db.stats().restarts;
    let inserted: () => void = () => {};
    const firstDone = new Promise<void>((r) => {
      inserted = r;
    });
    let resume: () => void = () => {};
    const paused = new Promise<void>((r) => {
      resume = r;
    });
    const outcome = failure(db.transaction(async (tx) => {
      await tx.query("INSERT INTO note VALUES (500, 'org_x', 'first')");
      inserted();
      await paused;
      await tx.query("INSERT INTO note VALUES (501, 'org_x', 'second')");
    }, { tenant: 'org_x' }));
    await firstDone;
    // The process aborts while the transaction waits, as V8 ends one on a failed check of its own.
    process.kill((db as unknown as { child: { pid: number } }).child.pid, 'SIGABRT');
    for (let i = 0; i < 6000 && (db.stats().restarts === restarts || db.stats().state !== 'ready'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(db.stats()).toMatchObject({ state: 'ready', restarts: restarts + 1 });
    // The new process is up: the second statement must not run in it, outside any transaction.
    resume();
    const e = await outcome;
    expect(e.code).toBe('DATABASE_ERROR');
    expect(e.message).toContain('nothing of it was committed');
    expect(await count('note', "tenant = 'org_x'")).toBe(0);
  });

  it('close during a restart waits for the new process and closes it cleanly', async () => {
    await reopen();
    await failure(db.query('SELECT pg_sleep(30)', [], { timeoutMs: 300 }));
    expect(db.stats().state).toBe('restarting');
    await db.close();
    expect(db.stats().state).toBe('closed');
    // PGlite on this thread opens it and finds the data.
    const check = await PGlite.create({ dataDir: dir, extensions: { pg_trgm } });
    try {
      expect((await check.query<{ n: number }>('SELECT count(*)::int AS n FROM cube')).rows[0]!.n).toBe(2000);
    } finally {
      await check.close();
    }
    await reopen();
  });
});
