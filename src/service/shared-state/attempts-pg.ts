import type { Database } from '../../run/database.js';
import { storedKey } from './stored-key.js';
import { granted, secondsUntil, type AttemptStore, type Limit, type Reservation, type Verdict } from './attempts.js';
import { SERVICE_SCHEMA } from '../migrations.js';

const S = SERVICE_SCHEMA;

/** Ended windows are deleted at most this often per instance. */
const PRUNE_EVERY_MS = 60_000;
/** A deadlock between two upserts of overlapping keys is retried this many times. */
const ATTEMPTS = 3;

/**
 * Attempt counters in oql_service.attempts (migration 5), shared by every instance on the database,
 * each key stored as its SHA-256.
 * A hit is one INSERT … ON CONFLICT DO UPDATE over all its keys: the row lock of each key makes
 * concurrent hits from any number of instances add up exactly, and a window that has ended starts
 * again at 1. Keys go in sorted order, so two hits over the same keys lock them in the same order.
 *
 * Windows are in the instances' clock (`now`), which is also the clock Retry-After is computed in;
 * instances whose clocks differ by a second disagree about a window's end by that second.
 */
export class PostgresAttemptStore implements AttemptStore {
  private prunedAt = -Infinity;

  constructor(private readonly db: Database, private readonly now: () => number = Date.now) {}

  async hit(keys: readonly string[], limit: Limit): Promise<Verdict> {
    // Keys hold request text (a client id, an address): stored as digests, any character is safe.
    const unique = [...new Set(keys.map(storedKey))].sort();
    if (unique.length === 0) return { ok: true };
    const now = this.now();
    await this.prune(now);
    const end = now + limit.windowSeconds * 1000;
    const { rows } = await this.retrying(() => this.db.query<{ count: number; window_ends: string | number }>(
      `INSERT INTO ${S}.attempts AS a (key, count, window_ends)
         SELECT k, 1, $2::bigint FROM unnest($1::text[]) AS k ORDER BY k
       ON CONFLICT (key) DO UPDATE SET
         count = CASE WHEN a.window_ends <= $3::bigint THEN 1 ELSE a.count + 1 END,
         window_ends = CASE WHEN a.window_ends <= $3::bigint THEN EXCLUDED.window_ends ELSE a.window_ends END
       RETURNING a.count, a.window_ends`,
      [unique, end, now]));
    let retryAfter = 0;
    for (const r of rows) {
      if (Number(r.count) > limit.max) retryAfter = Math.max(retryAfter, secondsUntil(Number(r.window_ends), now));
    }
    return retryAfter > 0 ? { ok: false, retryAfter } : { ok: true };
  }

  /**
   * One upsert adds 1 under every key, as `hit` does, and reads what each key holds then: the row
   * locks order concurrent reservations from every instance, so the ones that find room are at
   * most `limit.max`. A reservation that finds a key over its limit takes its 1 back from each
   * key, in the window it added it to; so does a release.
   */
  async reserve(keys: readonly string[], limit: Limit): Promise<Reservation> {
    const unique = [...new Set(keys.map(storedKey))].sort();
    if (unique.length === 0) return { ok: true, release: async () => {} };
    const now = this.now();
    await this.prune(now);
    const end = now + limit.windowSeconds * 1000;
    const { rows } = await this.retrying(() => this.db.query<{ key: string; count: number; window_ends: string | number }>(
      `INSERT INTO ${S}.attempts AS a (key, count, window_ends)
         SELECT k, 1, $2::bigint FROM unnest($1::text[]) AS k ORDER BY k
       ON CONFLICT (key) DO UPDATE SET
         count = CASE WHEN a.window_ends <= $3::bigint THEN 1 ELSE a.count + 1 END,
         window_ends = CASE WHEN a.window_ends <= $3::bigint THEN EXCLUDED.window_ends ELSE a.window_ends END
       RETURNING a.key, a.count, a.window_ends`,
      [unique, end, now]));
    const windows = rows.map((r) => ({ key: r.key, end: Number(r.window_ends) }));
    const giveBack = () => this.retrying(() => this.db.query(
      `UPDATE ${S}.attempts AS a SET count = a.count - 1
         FROM unnest($1::text[], $2::bigint[]) AS r(key, window_ends)
        WHERE a.key = r.key AND a.window_ends = r.window_ends AND a.count > 0`,
      [windows.map((w) => w.key), windows.map((w) => w.end)]));
    let retryAfter = 0;
    for (const r of rows) {
      if (Number(r.count) > limit.max) retryAfter = Math.max(retryAfter, secondsUntil(Number(r.window_ends), now));
    }
    if (retryAfter > 0) {
      await giveBack();
      return { ok: false, retryAfter };
    }
    return granted(giveBack);
  }

  async exceeded(keys: readonly string[], limit: Limit): Promise<number> {
    if (keys.length === 0) return 0;
    const now = this.now();
    const { rows } = await this.db.query<{ end: string | number | null }>(
      `SELECT max(window_ends) AS end FROM ${S}.attempts WHERE key = ANY($1::text[]) AND window_ends > $2::bigint AND count >= $3`,
      [[...new Set(keys.map(storedKey))], now, limit.max]);
    const end = rows[0]?.end;
    return end === null || end === undefined ? 0 : secondsUntil(Number(end), now);
  }

  private async prune(now: number): Promise<void> {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    await this.db.query(`DELETE FROM ${S}.attempts WHERE window_ends <= $1::bigint`, [now]);
  }

  private async retrying<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        // The database layer wraps driver errors; the SQLSTATE stays on `cause`.
        const state = (e as { cause?: { code?: unknown } })?.cause?.code ?? (e as { code?: unknown })?.code;
        if (attempt >= ATTEMPTS || state !== '40P01') throw e;
      }
    }
  }
}
