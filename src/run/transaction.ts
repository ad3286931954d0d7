import { databaseOf } from './database-of.js';
import type { Database, Queryable } from './database.js';
import { runtimeError } from './errors.js';

export type { Queryable } from './database.js';

export const DEFAULT_TIMEOUT_MS = 20_000;

export interface TransactionOptions {
  /** statement_timeout in milliseconds. Default 20000. */
  readonly timeoutMs?: number;
  /** Whose share of the connections the statement counts against (the organization). */
  readonly tenant?: string;
}

export interface ReadOnlyResult {
  readonly rows: Record<string, unknown>[];
}

export function checkTimeout(timeoutMs: number | undefined): number {
  const ms = timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 1 || ms > 2_147_483_647) {
    throw runtimeError('INVALID_OPTIONS', `timeoutMs must be a number of milliseconds between 1 and 2147483647, not ${String(timeoutMs)}`);
  }
  return Math.round(ms);
}

/**
 * Runs one statement in a READ ONLY transaction with a statement timeout, UTC time zone and ISO
 * dates, decoded with the library's parsers, through the database layer (./database.ts). Errors
 * come out as OqlError. The transaction always ends in ROLLBACK: a read-only transaction has
 * nothing to commit, and a rollback also undoes any session setting the statement changed
 * (`set_config(..., false)`), so a pooled connection goes back as it came. The statement is sent
 * with the extended protocol, which takes exactly one statement: `SELECT 1; COMMIT; INSERT ...`
 * is rejected, not split.
 *
 * Internal: `execute` and `count` are the public entry points; tests call this directly to prove
 * that the database refuses writes even if the compiler emitted one.
 */
export async function runReadOnly(db: Queryable | Database, sql: string, params: readonly unknown[], options: TransactionOptions = {}): Promise<ReadOnlyResult> {
  const timeoutMs = checkTimeout(options.timeoutMs);
  return databaseOf(db).read(sql, params, { timeoutMs, tenant: options.tenant });
}
