import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadFixtureCatalog } from '../../fixtures/index.js';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import { EmbeddedDatabase } from '../../src/run/drivers/pglite/supervisor.js';
import { currentTurnCheck } from '../../src/run/drivers/pglite/turn-check.js';
import { resolveConfig } from '../../src/service/config.js';
import { MemoryLeaseStore } from '../../src/service/shared-state/leases.js';
import { coolingDown, Policy, requestContext } from '../../src/service/policy.js';

/**
 * The embedded database's cool-down (src/service/policy.ts): after a statement of an organization
 * ran out its budget, its heavy requests are refused for a while, three times as long each time
 * it happens again soon, and never another organization's. The rule is checked when the database
 * grants a call its connection (src/run/drivers/pglite/turn-check.ts), so the batch guarantee and
 * the side-by-side reports are asserted on a real embedded database. The expected lengths are
 * written out here, not read from the module.
 */

const BASE_MS = 10_000;
const catalog = loadFixtureCatalog('crm');
const policy = () => new Policy({ catalog, config: resolveConfig({ env: {} }), leases: new MemoryLeaseStore(), timeoutMs: 2_000, coolDownMs: BASE_MS });
const b = requestContext({ orgId: 'org_b', userId: 'u_b', role: 'admin' } as never);
const b2 = requestContext({ orgId: 'org_b', userId: 'u_b2', role: 'admin' } as never);
const a = requestContext({ orgId: 'org_a', userId: 'u_a', role: 'admin' } as never);

/** What the embedded database does at a statement's deadline: tells the request's turn check, then rejects. */
const runaway = () => {
  currentTurnCheck()?.timedOut();
  return Promise.reject(OqlError.plain('QUERY_TIMEOUT', 'the query timed out after 2 seconds'));
};
const fine = () => Promise.resolve('rows');

async function refusal(p: Policy, ctx: typeof b): Promise<OqlError | null> {
  return p.admit(ctx, 'heavy', fine).then(() => null, (e: OqlError) => e);
}

describe('the cool-down after a runaway statement (its length)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
  });
  afterEach(() => vi.useRealTimers());

  it('refuses the organization, every user of it, for 10 s with Retry-After, and never another organization', async () => {
    const p = policy();
    await expect(p.admit(b, 'heavy', runaway)).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
    for (const ctx of [b, b2]) {
      const e = await refusal(p, ctx);
      expect(e).toMatchObject({ code: 'TOO_MANY_REQUESTS', status: 429 });
      expect(e!.retryAfterSeconds).toBe(10);
    }
    await expect(p.admit(a, 'heavy', fine)).resolves.toBe('rows');
    // Light requests (records) are not what ran away: they go on.
    await expect(p.admit(b, 'light', fine)).resolves.toBe('rows');
    vi.setSystemTime(Date.now() + BASE_MS + 1);
    await expect(p.admit(b, 'heavy', fine)).resolves.toBe('rows');
  });

  it('lasts three times as long when it happens again soon, up to five minutes, and starts over after ten quiet minutes', async () => {
    const p = policy();
    const expected = [10, 30, 90, 270, 300, 300];
    for (const seconds of expected) {
      await expect(p.admit(b, 'heavy', runaway)).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
      expect((await refusal(p, b))!.retryAfterSeconds).toBe(seconds);
      vi.setSystemTime(Date.now() + seconds * 1000 + 1);
    }
    vi.setSystemTime(Date.now() + 10 * 60_000 + 1);
    await expect(p.admit(b, 'heavy', fine)).resolves.toBe('rows');
    await expect(p.admit(b, 'heavy', runaway)).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
    expect((await refusal(p, b))!.retryAfterSeconds).toBe(10);
  });

  it('is never started by a light request, whose turn carries no check', async () => {
    const p = policy();
    await expect(p.admit(b, 'light', runaway)).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
    await expect(p.admit(b, 'heavy', fine)).resolves.toBe('rows');
  });
});

describe('the cool-down at the embedded database\'s turn', () => {
  let db: EmbeddedDatabase;
  beforeAll(async () => {
    db = await EmbeddedDatabase.open({ memory: true, timeoutMs: 5_000 });
  }, 120_000);
  afterAll(() => db?.close());

  /** Settles with the error's code and message, or 'ok'. */
  const outcome = (p: Promise<unknown>) => p.then(() => 'ok', (e: OqlError) => `${e.code}: ${e.message}`);
  const read = (tenant: string, sql: string, timeoutMs = 5_000) => db.read('SET TRANSACTION READ ONLY', sql, [], { tenant, timeoutMs });

  /** Resolves once `enter` was called `n` times; fails after 30 s saying how many came. */
  function arrivals(n: number, what: string): { enter: () => void; all: () => Promise<void> } {
    let count = 0;
    let done!: () => void;
    const reached = new Promise<void>((r) => (done = r));
    return {
      enter: () => {
        if (++count === n) done();
      },
      all: async () => {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`waited 30 s for ${n} ${what} to reach the database; ${count} did`)), 30_000);
        });
        await Promise.race([reached, late]).finally(() => clearTimeout(timer));
      },
    };
  }

  /**
   * Holds the one connection in `tenant`'s name until the returned function is called: calls made
   * meanwhile all wait in the database's line, none can finish.
   */
  async function holdConnection(tenant: string): Promise<() => Promise<void>> {
    let letGo!: () => void;
    const released = new Promise<void>((r) => (letGo = r));
    let held!: () => void;
    const holding = new Promise<void>((r) => (held = r));
    const done = db.transaction(async (tx) => {
      await tx.query('SELECT 1');
      held();
      await released;
    }, { tenant, timeoutMs: 120_000 });
    await holding;
    return async () => {
      letGo();
      await done;
    };
  }

  it('runs a well-behaved organization\'s two heavy requests side by side: both wait in the database\'s line at once', async () => {
    const p = policy();
    const release = await holdConnection('org_c');
    // fn calls the database at once, so a call that entered it is in the database's line.
    const reached = arrivals(2, "of org_a's reports");
    const report = () => p.admit(a, 'heavy', () => {
      reached.enter();
      return read(a.org, 'SELECT 41 + 1 AS n');
    });
    const reports = [report(), report()];
    // Nothing can finish while org_c holds the connection: the second report reaches the
    // database before the first has run, not after it.
    await reached.all();
    expect(db.stats().queued).toBe(2);
    await release();
    const results = await Promise.all(reports);
    expect(results.map((r) => r.rows)).toEqual([[{ n: 42 }], [{ n: 42 }]]);
  }, 60_000);

  it('a batch of runaway queries sent at once by one organization costs one restart; the rest are refused at their turn, and the other organization is served', async () => {
    const p = policy();
    const restartsBefore = db.stats().restarts;
    // org_a holds the connection while the batch queues, so all of it is in the line before any runs.
    const release = await holdConnection('org_a');
    const reached = arrivals(5, 'requests');
    // Two users of one organization, within their budgets, send four runaway queries at once.
    const batch = [b, b, b2, b2].map((ctx) => outcome(p.admit(ctx, 'heavy', () => {
      reached.enter();
      return read(b.org, 'SELECT pg_sleep(30)', 1_000);
    })));
    // The other organization's report, in the line behind the batch.
    const other = p.admit(a, 'heavy', () => {
      reached.enter();
      return read(a.org, 'SELECT 6 * 7 AS n');
    });
    await reached.all();
    expect(db.stats().queued).toBe(5);
    await release();
    const results = await Promise.all(batch);
    const cooling = `TOO_MANY_REQUESTS: ${coolingDown(1).message}`;
    expect(results.sort()).toEqual([expect.stringMatching(/^QUERY_TIMEOUT: /), cooling, cooling, cooling]);
    expect(db.stats().restarts - restartsBefore).toBe(1);
    expect((await other).rows).toEqual([{ n: 42 }]);
    // The organization still cools down; the other one does not.
    expect(await outcome(p.admit(b2, 'heavy', fine))).toBe(cooling);
    await expect(p.admit(a, 'heavy', fine)).resolves.toBe('rows');
  }, 120_000);
});
