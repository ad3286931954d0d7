import { spawn } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/run/database.js';
import { openDatabase } from '../../src/run/open.js';
import { PostgresAttemptStore } from '../../src/service/shared-state/attempts-pg.js';
import { PostgresLeaseStore } from '../../src/service/shared-state/leases-pg.js';
import { migrate } from '../../src/service/migrations.js';
import { storedKey } from '../../src/service/shared-state/stored-key.js';
import { startFleetDatabases, type FleetDatabases } from '../support/fleet.js';

/**
 * The state instances share in PostgreSQL, as several instances of the service use it: each
 * "instance" here is its own store on its own pool, all through PgBouncer in transaction mode.
 * Concurrency leases (the oracle: the leases table and pg_locks, read on a connection of the
 * test's own) and attempt counters.
 */

let fleet: FleetDatabases;
let admin: pg.Pool;
const instances: { db: Database; store: PostgresLeaseStore }[] = [];

beforeAll(async () => {
  fleet = await startFleetDatabases({ poolSize: 30 });
  admin = new pg.Pool({ connectionString: fleet.primary.url, max: 2 });
  for (let i = 0; i < 6; i++) {
    const db = await openDatabase({ database: fleet.primaryUrl, poolSize: 5 });
    if (i === 0) await migrate(db);
    instances.push({ db, store: new PostgresLeaseStore(db, { renewEveryMs: 200 }) });
  }
}, 180_000);

afterAll(async () => {
  for (const i of instances) {
    await i.store.close().catch(() => {});
    await i.db.close().catch(() => {});
  }
  await admin?.end();
  await fleet?.stop();
});

async function liveRows(key: string): Promise<number> {
  const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM oql_service.leases WHERE key = $1 AND expires_at > clock_timestamp()', [storedKey(key)]);
  return rows[0]!.n;
}

/** The leases' earliest expiry as the database holds it (epoch ms), read at once after they were granted. */
async function firstExpiry(key: string): Promise<number> {
  const { rows } = await admin.query<{ ms: string }>('SELECT floor(extract(epoch FROM min(expires_at)) * 1000)::bigint AS ms FROM oql_service.leases WHERE key = $1', [storedKey(key)]);
  return Number(rows[0]!.ms);
}

/**
 * Until the database's clock, the one lease expiry is read against, is past `ms`: the moment a
 * lease granted for its TTL alone would have ended. Asked every 50 ms, bounded by `within` ms.
 */
async function untilDatabaseClockPasses(ms: number, within = 30_000): Promise<void> {
  const deadline = Date.now() + within;
  for (;;) {
    const { rows } = await admin.query<{ past: boolean }>('SELECT clock_timestamp() > to_timestamp($1::float8 / 1000) AS past', [ms]);
    if (rows[0]!.past) return;
    if (Date.now() > deadline) throw new Error(`the database's clock did not pass ${new Date(ms).toISOString()} within ${within} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Until `check` holds, asked every 50 ms, bounded by `within` ms. */
async function until<T>(what: string, check: () => Promise<T | null>, within = 30_000): Promise<T> {
  const deadline = Date.now() + within;
  for (;;) {
    const value = await check();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${within} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Holds a slot for a moment of random length, as a request would, without a timer: 0 to 15 turns of the event loop. */
async function hold(): Promise<void> {
  for (let i = Math.floor(Math.random() * 16); i > 0; i--) await new Promise((r) => setImmediate(r));
}

describe('PostgresLeaseStore', () => {
  it('grants exactly max slots of one key to 60 simultaneous acquires from six instances, round after round', async () => {
    for (let round = 0; round < 8; round++) {
      const key = `p:hammer:${round}`;
      const max = 1 + round;
      const got = await Promise.all(Array.from({ length: 60 }, (_, i) => instances[i % instances.length]!.store.acquire(key, max, 10_000)));
      const granted = got.filter((l) => l !== null);
      expect(granted).toHaveLength(max);
      expect(await liveRows(key)).toBe(max);
      expect(await instances[3]!.store.held(key)).toBe(max);
      await Promise.all(granted.map((l) => l!.release()));
      expect(await liveRows(key)).toBe(0);
    }
  });

  it('never lets more than max run at once while holders come and go on every instance', async () => {
    const key = 'p:churn';
    const max = 3;
    let running = 0;
    let most = 0;
    let grants = 0;
    const worker = async (store: PostgresLeaseStore, turns: number) => {
      for (let t = 0; t < turns; t++) {
        const lease = await store.acquire(key, max, 10_000);
        if (!lease) continue;
        grants++;
        running++;
        most = Math.max(most, running);
        await hold();
        // Counted down before the row goes: the table always holds at least `running` leases.
        running--;
        await lease.release();
      }
    };
    await Promise.all(Array.from({ length: 24 }, (_, i) => worker(instances[i % instances.length]!.store, 15)));
    expect(most).toBeLessThanOrEqual(max);
    // The hammer did contend: slots were both granted and refused.
    expect(most).toBe(max);
    expect(grants).toBeGreaterThan(max);
    expect(grants).toBeLessThan(24 * 15);
    expect(await liveRows(key)).toBe(0);
  });

  it("counts none of an instance's own released leases, even before their rows are gone", async () => {
    const store = instances[4]!.store;
    const releases: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      const lease = await store.acquire('p:sequential', 1, 10_000);
      expect(lease).not.toBeNull();
      // Not waited for, as the policy point does not wait: the next acquire carries the release.
      releases.push(lease!.release());
    }
    // Only the table is waited for: every release's DELETE has been answered.
    await Promise.all(releases);
    expect(await liveRows('p:sequential')).toBe(0);
  });

  it('takes over a lease it released moments ago without a statement, the slot counted on every instance meanwhile', async () => {
    const { db } = instances[5]!;
    let acquires = 0;
    // The instance's own database, counting the acquiring statements it is sent.
    const counted = Object.create(db) as Database;
    counted.query = ((sql: string, params?: readonly unknown[]) => {
      if (sql.includes('acquire_lease')) acquires++;
      return db.query(sql, params);
    }) as Database['query'];
    const store = new PostgresLeaseStore(counted, { renewEveryMs: 200 });
    try {
      let lease = (await store.acquire('p:keep-alive', 1, 10_000))!;
      expect(lease).not.toBeNull();
      for (let i = 0; i < 10; i++) {
        const released = lease.release();
        const next = await store.acquire('p:keep-alive', 1, 10_000);
        expect(next).not.toBeNull();
        await released;
        expect(await liveRows('p:keep-alive')).toBe(1);
        expect(await instances[0]!.store.acquire('p:keep-alive', 1, 10_000)).toBeNull();
        lease = next!;
      }
      expect(acquires).toBe(1);
      // Another key is never served from it.
      const other = await store.acquire('p:keep-alive-2', 1, 10_000);
      expect(acquires).toBe(2);
      await Promise.all([lease.release(), other!.release()]);
      expect(await liveRows('p:keep-alive')).toBe(0);
      expect(await liveRows('p:keep-alive-2')).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('never counts a released lease whose DELETE is still on its way', async () => {
    const { db } = instances[5]!;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => { open = resolve; });
    let sent!: () => void;
    const deleteSent = new Promise<void>((resolve) => { sent = resolve; });
    // The instance's own database, holding back the DELETE of released leases until the gate opens.
    const held = Object.create(db) as Database;
    held.query = (async (sql: string, params?: readonly unknown[]) => {
      if (/^DELETE FROM \S+\.leases WHERE id = ANY/.test(sql)) {
        sent();
        await gate;
      }
      return db.query(sql, params);
    }) as Database['query'];
    const store = new PostgresLeaseStore(held, { renewEveryMs: 200 });
    try {
      const first = await store.acquire('p:in-flight', 1, 10_000);
      const released = first!.release();
      // The release's own DELETE has been sent (and is held back here).
      await deleteSent;
      expect(await liveRows('p:in-flight')).toBe(1);
      const second = await store.acquire('p:in-flight', 1, 10_000);
      expect(second).not.toBeNull();
      open();
      await released;
      expect(await liveRows('p:in-flight')).toBe(1);
      await second!.release();
      expect(await liveRows('p:in-flight')).toBe(0);
    } finally {
      open();
      await store.close();
    }
  });

  it('holds no lock between statements: no advisory lock outlives an acquire', async () => {
    const leases = await Promise.all(Array.from({ length: 10 }, (_, i) => instances[i % 6]!.store.acquire('p:locks', 10, 10_000)));
    const { rows } = await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'");
    expect(rows[0]!.n).toBe(0);
    await Promise.all(leases.map((l) => l!.release()));
  });

  it('renews a held lease past its TTL, and a released slot is free again at once', async () => {
    const store = instances[0]!.store;
    const lease = await store.acquire('p:renew', 1, 600);
    expect(lease).not.toBeNull();
    // Past the expiry the lease was granted with, and then past the expiry it had at that moment:
    // it has been renewed at least once since its TTL would have ended it.
    await untilDatabaseClockPasses(await firstExpiry('p:renew'));
    await untilDatabaseClockPasses(await firstExpiry('p:renew'));
    expect(await liveRows('p:renew')).toBe(1);
    expect(await instances[1]!.store.acquire('p:renew', 1, 600)).toBeNull();
    await lease!.release();
    await lease!.release();
    const again = await instances[1]!.store.acquire('p:renew', 1, 600);
    expect(again).not.toBeNull();
    await again!.release();
  });

  it('frees the leases of an instance killed with SIGKILL within their TTL', async () => {
    const key = 'p:killed';
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/lease-holder.ts', fleet.primaryUrl, key, '3', '4000'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const holding = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('\n')) resolve(out.trim());
      });
      child.once('exit', (code) => reject(new Error(`the holder exited (${code}) before holding: ${out}`)));
    });
    expect(holding).toBe('holding 3');
    // Held past its TTL by renewal while the process lives: past the expiry the leases were
    // granted with, and past the one they had then.
    await untilDatabaseClockPasses(await firstExpiry(key));
    await untilDatabaseClockPasses(await firstExpiry(key));
    expect(await liveRows(key)).toBe(3);
    expect(await instances[0]!.store.acquire(key, 3, 4000)).toBeNull();
    child.kill('SIGKILL');
    // Freed by their TTL, as no holder renews them any more (an acquire is refused until then).
    const lease = await until('a slot of the killed holder', () => instances[0]!.store.acquire(key, 3, 4000), 10_000);
    expect(await liveRows(key)).toBe(1);
    await lease!.release();
  });

  it('deletes what an instance holds when it closes', async () => {
    const db = await openDatabase({ database: fleet.primaryUrl, poolSize: 2 });
    const store = new PostgresLeaseStore(db);
    try {
      expect(await store.acquire('p:close', 5, 10_000)).not.toBeNull();
      expect(await store.acquire('p:close', 5, 10_000)).not.toBeNull();
      expect(await liveRows('p:close')).toBe(2);
      await store.close();
      expect(await liveRows('p:close')).toBe(0);
      await expect(store.acquire('p:close', 5, 10_000)).rejects.toThrow(/closed/);
    } finally {
      await db.close();
    }
  });

  it('keeps keys apart: one principal at its budget does not take another one', async () => {
    const a = await instances[0]!.store.acquire('p:a', 1, 10_000);
    expect(await instances[1]!.store.acquire('p:a', 1, 10_000)).toBeNull();
    const b = await instances[1]!.store.acquire('p:b', 1, 10_000);
    expect(b).not.toBeNull();
    await a!.release();
    await b!.release();
  });
});

describe('PostgresAttemptStore', () => {
  const limit = { max: 10, windowSeconds: 60 };

  it('counts 60 simultaneous attempts on one key from six instances exactly: 10 pass, 50 are refused', async () => {
    const stores = instances.map((i) => new PostgresAttemptStore(i.db));
    const verdicts = await Promise.all(Array.from({ length: 60 }, (_, i) => stores[i % stores.length]!.hit(['a:hammer'], limit)));
    expect(verdicts.filter((v) => v.ok)).toHaveLength(10);
    const refused = verdicts.filter((v) => !v.ok) as { retryAfter: number }[];
    expect(refused).toHaveLength(50);
    for (const v of refused) expect(v.retryAfter).toBeGreaterThan(0);
    expect(countOf(await admin.query<{ count: number }>('SELECT count FROM oql_service.attempts WHERE key = $1', [storedKey('a:hammer')]))).toBe(60);
    expect(await stores[0]!.exceeded(['a:hammer'], limit)).toBeGreaterThan(0);
  });

  it('starts a window again once it has ended, on any instance', async () => {
    let now = Date.UTC(2030, 0, 1);
    const one = new PostgresAttemptStore(instances[0]!.db, () => now);
    const two = new PostgresAttemptStore(instances[1]!.db, () => now);
    const tight = { max: 2, windowSeconds: 30 };
    expect((await one.hit(['a:window'], tight)).ok).toBe(true);
    expect((await two.hit(['a:window'], tight)).ok).toBe(true);
    expect(await two.exceeded(['a:window'], tight)).toBe(30);
    const third = await one.hit(['a:window'], tight);
    expect(third).toEqual({ ok: false, retryAfter: 30 });
    now += 29_000;
    expect(await one.exceeded(['a:window'], tight)).toBe(1);
    now += 1_000;
    expect(await two.exceeded(['a:window'], tight)).toBe(0);
    expect((await two.hit(['a:window'], tight)).ok).toBe(true);
  });

  it('checks without counting, and takes keys of any text', async () => {
    const store = new PostgresAttemptStore(instances[2]!.db);
    const odd = ['a\u0000b', 'x'.repeat(20_000), "'; DROP TABLE oql_service.attempts; --"];
    for (let i = 0; i < 3; i++) expect(await store.exceeded(odd, { max: 1, windowSeconds: 60 })).toBe(0);
    expect((await store.hit(odd, { max: 1, windowSeconds: 60 })).ok).toBe(true);
    expect(await store.exceeded([odd[0]!], { max: 1, windowSeconds: 60 })).toBeGreaterThan(0);
    expect(await store.exceeded(['a\u0000c'], { max: 1, windowSeconds: 60 })).toBe(0);
  });
});

function countOf(result: { rows: { count: number }[] }): number {
  return Number(result.rows[0]?.count);
}
