import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignInGuard, signInKeys } from '../../src/oauth/sign-in.js';
import type { Database } from '../../src/run/database.js';
import { openDatabase } from '../../src/run/open.js';
import { MemoryAttemptStore, type AttemptStore } from '../../src/service/shared-state/attempts.js';
import { PostgresAttemptStore } from '../../src/service/shared-state/attempts-pg.js';
import { migrate } from '../../src/service/migrations.js';
import { startPgDatabase } from '../support/pg-cluster.js';
import { type PgServer } from '../support/pg-server.js';

/**
 * Attempts counted before they are checked, on both stores: of N attempts sent at once, at most
 * the limit are let through to be checked; a success gives its place back, a failure keeps it; a
 * reservation given back after its window ended takes nothing from the next window.
 */

let server: PgServer;
const dbs: Database[] = [];

beforeAll(async () => {
  server = await startPgDatabase();
  for (let i = 0; i < 3; i++) dbs.push(await openDatabase({ database: server.url, poolSize: 6 }));
  await migrate(dbs[0]!);
}, 120_000);

afterAll(async () => {
  for (const db of dbs) await db.close().catch(() => {});
  await server?.stop();
});

type Stores = (now: () => number) => AttemptStore[];
const STORES: [string, Stores][] = [
  ['in memory', (now) => [new MemoryAttemptStore(now)]],
  // Three instances of a fleet, each on its own pool.
  ['in PostgreSQL', (now) => dbs.map((db) => new PostgresAttemptStore(db, now))],
];

let run = 0;

describe.each(STORES)('reservations %s', (_, storesOf) => {
  const limit = { max: 10, windowSeconds: 300 };

  it('lets at most the limit of 100 attempts sent at once be checked, the rest refused with a wait', async () => {
    const stores = storesOf(Date.now);
    const key = `r:${run++}`;
    const got = await Promise.all(Array.from({ length: 100 }, (_, i) => stores[i % stores.length]!.reserve([key], limit)));
    const granted = got.filter((r) => r.ok);
    expect(granted).toHaveLength(limit.max);
    for (const r of got) if (!r.ok) expect(r.retryAfter).toBeGreaterThan(0);
    // The refused ones took nothing: the count is the granted ones, so the next attempt waits.
    expect(await stores[0]!.exceeded([key], limit)).toBeGreaterThan(0);
  });

  it('gives a success its place back, so a right key always gets in while wrong ones are under the limit', async () => {
    const stores = storesOf(Date.now);
    const key = `r:${run++}`;
    for (let i = 0; i < 3 * limit.max; i++) {
      const r = await stores[i % stores.length]!.reserve([key], limit);
      expect(r.ok).toBe(true);
      if (r.ok) await r.release();
    }
    const failures = await Promise.all(Array.from({ length: limit.max - 1 }, () => stores[0]!.reserve([key], limit)));
    expect(failures.every((r) => r.ok)).toBe(true);
    const right = await stores[stores.length - 1]!.reserve([key], limit);
    expect(right.ok).toBe(true);
    if (right.ok) await right.release();
    if (right.ok) await right.release();
    // Released twice, given back once: the nine failures still count, one place is left.
    expect(await stores[0]!.exceeded([key], limit)).toBe(0);
    expect((await stores[0]!.reserve([key], limit)).ok).toBe(true);
    expect((await stores[0]!.reserve([key], limit)).ok).toBe(false);
  });

  it('counts under every key at once: one full key refuses the attempt and takes nothing from the others', async () => {
    const stores = storesOf(Date.now);
    const full = `r:${run++}`;
    const other = `r:${run++}`;
    const tight = { max: 2, windowSeconds: 300 };
    expect((await stores[0]!.reserve([full], tight)).ok).toBe(true);
    expect((await stores[0]!.reserve([full], tight)).ok).toBe(true);
    const got = await Promise.all(Array.from({ length: 20 }, (_, i) => stores[i % stores.length]!.reserve([other, full], tight)));
    expect(got.filter((r) => r.ok)).toHaveLength(0);
    expect(await stores[0]!.exceeded([other], tight)).toBe(0);
  });

  it('a release after the window ended takes nothing from the next window', async () => {
    let now = Date.UTC(2031, 0, 1) + run * 1_000_000;
    const stores = storesOf(() => now);
    const key = `r:${run++}`;
    const tight = { max: 1, windowSeconds: 30 };
    const old = await stores[0]!.reserve([key], tight);
    expect(old.ok).toBe(true);
    now += 30_000;
    const fresh = await stores[stores.length - 1]!.reserve([key], tight);
    expect(fresh.ok).toBe(true);
    if (old.ok) await old.release();
    expect(await stores[0]!.exceeded([key], tight)).toBe(30);
  });
});

describe.each(STORES)('the sign-in guard %s', (_, storesOf) => {
  it('checks at most the limit of wrong keys sent at once for one workspace and address, and not another workspace', async () => {
    const stores = storesOf(Date.now);
    const limit = { max: 10, windowSeconds: 300 };
    const guards = stores.map((s) => new SignInGuard(s, limit));
    const address = `192.0.2.${run++}`;
    const wrong = (i: number) => `oql_${String(i).padStart(8, '0')}${'x'.repeat(40)}`;
    const got = await Promise.all(Array.from({ length: 100 }, (_, i) => guards[i % guards.length]!.begin('acme', address, wrong(i))));
    expect(got.filter((r) => r.ok)).toHaveLength(limit.max);
    // Another organization's workspace, from the same address, is not locked out.
    const globex = await guards[0]!.begin('globex', address, wrong(1000));
    expect(globex.ok).toBe(true);
    expect(signInKeys('acme', address, wrong(1))).not.toEqual(signInKeys('globex', address, wrong(1)));
  });
});
