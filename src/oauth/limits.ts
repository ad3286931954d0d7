import type { Limit } from '../service/shared-state/attempts.js';

/**
 * Attempt limits on the OAuth endpoints, per client and per address, in fixed windows. They keep a
 * registration flood from filling the clients table and make guessing API keys on the consent form
 * or codes at the token endpoint hopeless. The counters live in an AttemptStore
 * (src/service/shared-state/attempts.ts): in the database when it is PostgreSQL, so every instance of a fleet
 * counts against one budget.
 */

export type { Limit } from '../service/shared-state/attempts.js';

export interface OAuthLimits {
  /** Registrations per address. */
  readonly register: Limit;
  /** Authorization requests (page views and form posts) per address and per client. */
  readonly authorize: Limit;
  /**
   * Consent-form posts whose API key is not accepted: the key-guessing budget, per workspace and
   * address, and per key prefix (./sign-in.ts).
   */
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

export function mergeLimits(given: Partial<OAuthLimits> | undefined): OAuthLimits {
  return { ...DEFAULT_LIMITS, ...(given ?? {}) };
}
