import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { workerDatabase } from '../../src/run/drivers/pglite/service-database.js';
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
  db = await EmbeddedDatabase.open({ memory: true, restartWaitMs: 600_000, openTimeoutMs: 600_000, timeoutMs: 60_000 });
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

  it('does not serve once closed', async () => {
    const other = await EmbeddedDatabase.open({ memory: true, openTimeoutMs: 600_000 });
    expect(other.serving()).toBe(true);
    await other.close();
    expect(other.serving()).toBe(false);
    expect(await workerDatabase(other).ping(2_000)).toBe(false);
  });
});
