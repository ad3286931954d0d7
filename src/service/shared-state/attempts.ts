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

/**
 * An attempt counted before it is checked. Granted, it holds one place under each key until the
 * window ends, so attempts sent at once can never all be checked before the first is counted: a
 * failure keeps its place, a success gives it back with `release`. Refused, nothing is counted.
 */
export type Reservation =
  | { readonly ok: true; release(): Promise<void> }
  | { readonly ok: false; readonly retryAfter: number };

export interface AttemptStore {
  /**
   * Counts one attempt under each key and says whether every key is still within the limit; when
   * one is over, the seconds until its window ends (for Retry-After).
   */
  hit(keys: readonly string[], limit: Limit): Promise<Verdict>;
  /**
   * Takes one place under each key when every key has one left, else refuses with the seconds
   * until the latest full window ends; atomic, so at most `limit.max` reservations of a key are
   * ever granted in one window, however many arrive at once (on every instance sharing the store).
   */
  reserve(keys: readonly string[], limit: Limit): Promise<Reservation>;
  /** Seconds until the latest window of the keys that are already at their limit ends; 0 when none is. Counts nothing. */
  exceeded(keys: readonly string[], limit: Limit): Promise<number>;
}

/** A granted reservation whose `release` gives its places back once, however often it is called. */
export function granted(giveBack: () => Promise<unknown> | void): Reservation {
  let released = false;
  return {
    ok: true,
    release: async () => {
      if (released) return;
      released = true;
      await giveBack();
    },
  };
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

  async reserve(keys: readonly string[], limit: Limit): Promise<Reservation> {
    const now = this.now();
    if (this.windows.size >= SWEEP_AT) this.sweep(now);
    const unique = [...new Set(keys)];
    const wait = this.waitFor(unique, limit, now);
    if (wait > 0) return { ok: false, retryAfter: wait };
    // No await between the check and the count: nothing else runs in between.
    const taken = unique.map((key) => {
      let w = this.windows.get(key);
      if (!w || w.end <= now) this.windows.set(key, (w = { end: now + limit.windowSeconds * 1000, count: 0 }));
      w.count += 1;
      return { key, window: w };
    });
    return granted(() => {
      // Only within the window it was counted in: a later window owes it nothing.
      for (const { key, window } of taken) if (this.windows.get(key) === window && window.count > 0) window.count -= 1;
    });
  }

  async exceeded(keys: readonly string[], limit: Limit): Promise<number> {
    return this.waitFor(keys, limit, this.now());
  }

  private waitFor(keys: readonly string[], limit: Limit, now: number): number {
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
