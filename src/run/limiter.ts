import { runtimeError } from './errors.js';

export const DEFAULT_MAX_CONCURRENT = 2;
export const DEFAULT_CLIENT_ID = 'default';

/**
 * Caps the analytics queries one client has running at once (2 by default, docs/limits.md). A call
 * over the cap fails at once with 429 instead of queueing, as the service does, so a client that
 * floods the endpoint learns to back off and cannot starve others of connections.
 *
 * One limiter is shared by every call that should count against the same budget: a server
 * creates one and passes it in `RunOptions.limiter`; otherwise calls share a module-level
 * limiter per `maxConcurrent` value.
 */
export class ConcurrencyLimiter {
  private readonly active = new Map<string, number>();
  readonly maxPerClient: number;

  constructor(maxPerClient: number = DEFAULT_MAX_CONCURRENT) {
    if (!Number.isSafeInteger(maxPerClient) || maxPerClient < 1) {
      throw runtimeError('INVALID_OPTIONS', `maxConcurrent must be a whole number of at least 1, not ${String(maxPerClient)}`);
    }
    this.maxPerClient = maxPerClient;
  }

  /**
   * Takes a slot for `clientId`, or throws TOO_MANY_REQUESTS (429) when it has none left. Returns
   * the release function; calling it more than once releases once.
   */
  acquire(clientId: string = DEFAULT_CLIENT_ID): () => void {
    const running = this.active.get(clientId) ?? 0;
    if (running >= this.maxPerClient) {
      throw runtimeError('TOO_MANY_REQUESTS', 'too many concurrent analytics requests are running; retry later', {
        hint: `at most ${this.maxPerClient} analytics ${this.maxPerClient === 1 ? 'query runs' : 'queries run'} at once per client; wait for one to finish`,
      });
    }
    this.active.set(clientId, running + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.active.get(clientId) ?? 1) - 1;
      if (left <= 0) this.active.delete(clientId);
      else this.active.set(clientId, left);
    };
  }

  /** Queries `clientId` has running now. */
  running(clientId: string = DEFAULT_CLIENT_ID): number {
    return this.active.get(clientId) ?? 0;
  }
}

const shared = new Map<number, ConcurrencyLimiter>();

/** The module-level limiter for a cap, made on first use. */
export function sharedLimiter(maxPerClient: number = DEFAULT_MAX_CONCURRENT): ConcurrencyLimiter {
  let limiter = shared.get(maxPerClient);
  if (!limiter) {
    limiter = new ConcurrencyLimiter(maxPerClient);
    shared.set(maxPerClient, limiter);
  }
  return limiter;
}
