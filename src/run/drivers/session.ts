import { runtimeError } from '../errors.js';

/**
 * What every driver does the same way around a read: the settings of its transaction and the
 * guard that only a SELECT is sent.
 */

/**
 * What a read's transaction needs besides being read-only: its budget (SET takes no parameters, so
 * the timeout is a checked integer), UTC and ISO dates. Name, value, and whether SET quotes it.
 */
function readParameters(timeoutMs: number): readonly (readonly [string, string, boolean])[] {
  return [['statement_timeout', String(Math.round(timeoutMs)), false], ['TimeZone', 'UTC', true], ['DateStyle', 'ISO, YMD', true]];
}

/** Session settings for one transaction. */
export function readStatements(timeoutMs: number): string[] {
  return ['BEGIN READ ONLY', ...readParameters(timeoutMs).map(([name, value, quoted]) => `SET LOCAL ${name} = ${quoted ? `'${value}'` : value}`)];
}

/**
 * The same as a session's defaults, in the start-up packet's `options` (`-c name=value`, a space
 * escaped): every transaction of a session that starts with them is what a read needs.
 */
export function readSessionOptions(timeoutMs: number): string {
  return [['default_transaction_read_only', 'on'] as const, ...readParameters(timeoutMs)].map(([name, value]) => `-c ${name}=${value.replaceAll(' ', '\\ ')}`).join(' ');
}

/** The same in one round trip, for drivers that take several statements in one simple-protocol text. */
export function readSettings(timeoutMs: number): string {
  return readStatements(timeoutMs).join('; ');
}

/** The transaction-scoped settings of a write: a budget for its statements, and the same clock and date style. */
export function writeSettings(timeoutMs: number | undefined): string | undefined {
  return timeoutMs === undefined ? undefined : [`SET LOCAL statement_timeout = ${Math.round(timeoutMs)}`, "SET LOCAL TimeZone = 'UTC'"].join('; ');
}

/**
 * The emitter writes SELECT and nothing else. Anything else (COMMIT, SET, INSERT) is a bug that
 * must not reach the connection, even though READ ONLY would stop the writes among them.
 */
export function assertSelect(sql: string): void {
  if (!/^\s*SELECT\s/i.test(sql)) {
    throw runtimeError('QUERY_FAILED', 'the compiled statement is not a SELECT; it was not run', { status: 500 });
  }
}

/** Rows of whatever a driver returned. */
export function rowsOf(result: unknown): Record<string, unknown>[] {
  const rows = (result as { rows?: unknown } | undefined)?.rows;
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
}
