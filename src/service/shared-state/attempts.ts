/**
 * Attempt counters in fixed windows: how many times a key (an endpoint with an address, a client,
 * a key prefix) was tried, and whether it is over its limit. They keep a registration flood from
 * filling the clients table and make guessing keys or codes hopeless.
 *
 * Two stores: in this process (embedded PGlite, whose data directory one process owns), and in
 * PostgreSQL (./attempts-pg.ts), shared by every instance on the database, so a fleet of N
 * instances grants N times nothing.
 */

export interface Limit {
  /** Attempts allowed per window. */
  readonly max: number;
  /** Window length in seconds. */
  readonly windowSeconds: number;
}

export type Verdict = { readonly ok: true } | { readonly ok: false; readonly retryAfter: number };

export interface AttemptStore {
  /**
   * Counts one attempt under each key and says whether every key is still within the limit; when
   * one is over, the seconds until its window ends (for Retry-After).
   */
  hit(keys: readonly string[], limit: Limit): Promise<Verdict>;
  /** Seconds until the latest window of the keys that are already at their limit ends; 0 when none is. Counts nothing. */
  exceeded(keys: readonly string[], limit: Limit): Promise<number>;
}

/** Whole seconds from `now` to `end` (epoch ms), at least 1. */
export function secondsUntil(end: number, now: number): number {
  return Math.max(1, Math.ceil((end - now) / 1000));
}

interface Window {
  end: number;
  count: number;
}

/** Sweeps expired windows once the table holds this many keys, so it cannot grow without bound. */
const SWEEP_AT = 10_000;

/** Counters of one process. */
export class MemoryAttemptStore implements AttemptStore {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly now: () => number = Date.now) {}

  async hit(keys: readonly string[], limit: Limit): Promise<Verdict> {
    const now = this.now();
    if (this.windows.size >= SWEEP_AT) this.sweep(now);
    let retryAfter = 0;
    for (const key of new Set(keys)) {
      let w = this.windows.get(key);
      if (!w || w.end <= now) this.windows.set(key, (w = { end: now + limit.windowSeconds * 1000, count: 0 }));
      w.count += 1;
      if (w.count > limit.max) retryAfter = Math.max(retryAfter, secondsUntil(w.end, now));
    }
    return retryAfter > 0 ? { ok: false, retryAfter } : { ok: true };
  }

  async exceeded(keys: readonly string[], limit: Limit): Promise<number> {
    const now = this.now();
    let wait = 0;
    for (const key of keys) {
      const w = this.windows.get(key);
      if (w && w.end > now && w.count >= limit.max) wait = Math.max(wait, secondsUntil(w.end, now));
    }
    return wait;
  }

  private sweep(now: number): void {
    for (const [key, w] of this.windows) if (w.end <= now) this.windows.delete(key);
  }
}
