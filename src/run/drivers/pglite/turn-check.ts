import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What the embedded database asks of a call at its turn. The one connection is granted to one
 * call at a time (supervisor.ts); a rule that must hold when the statement starts, not when the
 * request arrived, is checked there: the service's cool-down (src/service/policy.ts) refuses an
 * organization's report that waited in line behind its own runaway query, so a batch of runaway
 * queries sent at once costs one restart, while that organization's ordinary reports wait side by
 * side in the line like anyone's.
 *
 * The check travels with the request's asynchronous context, set by whoever admits the request
 * (the policy), so that the layers between (compile, read, the driver's Database) carry nothing:
 *
 *   await withTurnCheck({ admit: () => refuseIfCooling(org), timedOut: () => startCooling(org) }, () => runReport());
 */
export interface TurnCheck {
  /** At the grant, before the call runs: throws (an OqlError) to refuse the call instead of running it. */
  readonly admit: () => void;
  /**
   * The call's statement ran past its budget. Told before the process is replaced, so before any
   * other call is granted the connection: a refusal `admit` makes from it reaches every call queued.
   */
  readonly timedOut: () => void;
}

const checks = new AsyncLocalStorage<TurnCheck>();

/** Runs `fn` with `check` asked at the turn of every embedded database call `fn` makes. */
export function withTurnCheck<T>(check: TurnCheck, fn: () => Promise<T>): Promise<T> {
  return checks.run(check, fn);
}

/** The check of the calling request, if any (read when a call joins the queue). */
export function currentTurnCheck(): TurnCheck | undefined {
  return checks.getStore();
}
