/**
 * Attempt limits on the OAuth endpoints, per client and per address, in fixed windows.
 *
 * They keep a registration flood from filling the clients table and make guessing API keys on the
 * consent form or codes at the token endpoint hopeless. Counters live in the process: servers
 * behind one load balancer each count their own share, which is still a bound.
 */

export interface Limit {
  /** Attempts allowed per window. */
  readonly max: number;
  /** Window length in seconds. */
  readonly windowSeconds: number;
}

export interface OAuthLimits {
  /** Registrations per address. */
  readonly register: Limit;
  /** Authorization requests (page views and form posts) per address and per client. */
  readonly authorize: Limit;
  /** Consent form posts whose API key is not accepted, per address: the key-guessing budget. */
  readonly signIn: Limit;
  /** Token requests per address and per client. */
  readonly token: Limit;
}

export const DEFAULT_LIMITS: OAuthLimits = Object.freeze({
  register: { max: 20, windowSeconds: 60 },
  authorize: { max: 60, windowSeconds: 60 },
  signIn: { max: 10, windowSeconds: 300 },
  token: { max: 60, windowSeconds: 60 },
});

interface Window {
  start: number;
  count: number;
  span: number;
}

/** Sweeps expired windows once the table holds this many keys, so it cannot grow without bound. */
const SWEEP_AT = 10_000;

export class AttemptLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Counts one attempt under each key and says whether every key is still within the limit; when
   * one is over, the seconds until its window ends (for Retry-After).
   */
  hit(keys: readonly string[], limit: Limit): { ok: true } | { ok: false; retryAfter: number } {
    const now = this.now();
    const span = limit.windowSeconds * 1000;
    if (this.windows.size >= SWEEP_AT) this.sweep(now);
    let retryAfter = 0;
    for (const key of keys) {
      let w = this.windows.get(key);
      if (!w || now - w.start >= span) this.windows.set(key, (w = { start: now, count: 0, span }));
      w.count += 1;
      if (w.count > limit.max) retryAfter = Math.max(retryAfter, Math.ceil((w.start + span - now) / 1000));
    }
    return retryAfter > 0 ? { ok: false, retryAfter } : { ok: true };
  }

  /** Whether a key is already over its limit, without counting an attempt. */
  exceeded(key: string, limit: Limit): number {
    const w = this.windows.get(key);
    const now = this.now();
    if (!w || now - w.start >= limit.windowSeconds * 1000 || w.count < limit.max) return 0;
    return Math.max(1, Math.ceil((w.start + limit.windowSeconds * 1000 - now) / 1000));
  }

  private sweep(now: number): void {
    for (const [key, w] of this.windows) if (now - w.start >= w.span) this.windows.delete(key);
  }
}

export function mergeLimits(given: Partial<OAuthLimits> | undefined): OAuthLimits {
  return { ...DEFAULT_LIMITS, ...(given ?? {}) };
}
