import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EMBEDDED_SESSION_SQL, workerDatabase } from '../../src/run/drivers/pglite/service-database.js';
import { EmbeddedDatabase } from '../../src/run/drivers/pglite/supervisor.js';
import { failure } from '../support/failure.js';

/**
 * What /health reads of the embedded database (its `ping`): a process being replaced after a
 * statement ran out its budget still serves, since the calls made meanwhile wait for the new
 * process and are answered; and where each tenant's calls spent their time (`stats().tenants`).
 */

// Each open of PGlite takes seconds, and minutes on a machine shared with other work: bounds against hangs, not timings.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 600_000 });

let db: EmbeddedDatabase;

beforeAll(async () => {
  // Opened as the service opens it (src/run/open.ts): its reads rely on the session's settings.
  db = await EmbeddedDatabase.open({ memory: true, sessionSql: EMBEDDED_SESSION_SQL, restartWaitMs: 600_000, openTimeoutMs: 600_000, timeoutMs: 60_000 });
});

afterAll(async () => {
  await db?.close();
});

describe('the embedded database through a restart', () => {
  it('answers its ping while the process is replaced, serves the calls that waited, and counts each tenant\'s time', async () => {
    const service = workerDatabase(db);
    expect(await service.ping(2_000)).toBe(true);
    const sleeping = failure(db.query('SELECT pg_sleep(30)', [], { tenant: 'org_slow', timeoutMs: 500 }));
    const behind = db.query<{ what: string }>("SELECT 'served' AS what", [], { tenant: 'org_fast' });
    const e = await sleeping;
    expect(e).toMatchObject({ code: 'QUERY_TIMEOUT' });
    // The timeout began the replacement before its rejection was seen; the call behind waits for it.
    expect(db.stats().state).toBe('restarting');
    expect(db.serving()).toBe(true);
    expect(await service.ping(2_000)).toBe(true);
    expect((await behind).rows).toEqual([{ what: 'served' }]);
    expect(db.stats().state).toBe('ready');

    const { tenants } = db.stats();
    expect(tenants['org_slow']).toMatchObject({ calls: 1 });
    // It held the connection until its deadline: at least its budget.
    expect(tenants['org_slow']!.maxHoldMs).toBeGreaterThanOrEqual(500);
    expect(tenants['org_fast']).toMatchObject({ calls: 1 });
    // The fast call was queued behind the slow one for the whole of it.
    expect(tenants['org_fast']!.maxWaitMs).toBeGreaterThanOrEqual(500);
  });

  it("reads in a READ ONLY transaction, in UTC with ISO dates, from the session's settings, in the replaced process too", async () => {
    const service = workerDatabase(db);
    const restarts = db.stats().restarts;
    // The first test replaced the process; this one's session ran EMBEDDED_SESSION_SQL again.
    expect(restarts).toBeGreaterThan(0);
    const sql = "SELECT current_setting('transaction_read_only') AS ro, current_setting('TimeZone') AS tz, current_setting('DateStyle') AS style, " +
      "to_timestamp(0)::text AS epoch, DATE '2026-11-29'::text AS day";
    expect((await service.read(sql, [], { timeoutMs: 60_000 })).rows).toStrictEqual([
      { ro: 'on', tz: 'UTC', style: 'ISO, YMD', epoch: '1970-01-01 00:00:00+00', day: '2026-11-29' },
    ]);
    await db.exec('CREATE SEQUENCE IF NOT EXISTS serving_counter');
    expect(await failure(service.read("SELECT nextval('serving_counter')", [], { timeoutMs: 60_000 }))).toMatchObject({
      code: 'QUERY_FAILED', message: expect.stringContaining('read-only'),
    });
    // Nothing of the read stays on the connection: outside it, writes go on.
    expect((await db.query<{ ro: string }>("SELECT current_setting('transaction_read_only') AS ro")).rows).toStrictEqual([{ ro: 'off' }]);
    expect((await db.query<{ n: number }>("SELECT nextval('serving_counter')::int AS n")).rows).toStrictEqual([{ n: 1 }]);
    expect(db.stats().restarts).toBe(restarts);
  });

  it('does not serve once closed', async () => {
    const other = await EmbeddedDatabase.open({ memory: true, openTimeoutMs: 600_000 });
    expect(other.serving()).toBe(true);
    await other.close();
    expect(other.serving()).toBe(false);
    expect(await workerDatabase(other).ping(2_000)).toBe(false);
  });
});
