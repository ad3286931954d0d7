import { quoteIdent } from '../../catalog/quote.js';

/**
 * A read connection whose role's defaults already make every statement what a read needs — a
 * read-only transaction with a statement timeout, in UTC with ISO dates — needs no BEGIN, SET LOCAL
 * or ROLLBACK around its statement: the statement alone, one round trip, is the whole read. The
 * tenant predicate is in the SQL already.
 *
 * Those defaults belong to the role (ALTER ROLE … SET), so they are the same on every connection of
 * it, including PgBouncer's server connections in transaction mode; on a streaming replica every
 * transaction is read-only anyway. They are checked once per connection, in one statement, and a
 * connection without them takes the BEGIN/SET path: a mistake in the role costs round trips, never
 * a read that can write or run unbounded.
 */

/** One statement: the settings a read relies on, as this connection's session has them. */
export const READ_ROLE_SQL = `SELECT current_user AS role, pg_catalog.pg_is_in_recovery() AS standby,
  pg_catalog.current_setting('transaction_read_only') AS read_only,
  (SELECT setting FROM pg_catalog.pg_settings WHERE name = 'statement_timeout') AS timeout_ms,
  pg_catalog.current_setting('TimeZone') AS time_zone,
  pg_catalog.current_setting('DateStyle') AS date_style`;

export interface ReadRoleRow {
  readonly role: string;
  readonly standby: boolean;
  readonly read_only: string;
  readonly timeout_ms: string | number;
  readonly time_zone: string;
  readonly date_style: string;
}

/** What a connection carries: whether reads on it may be one statement, and why not. */
export interface ReadRole {
  /** The session's statement_timeout in ms (0: none). */
  readonly timeoutMs: number;
  /** A streaming replica (hot standby): reads only, and behind the primary by its replay lag. */
  readonly standby: boolean;
  /** The role's settings a one-statement read needs that it lacks; empty when it has them all. */
  readonly missing: readonly string[];
  /** ALTER ROLE statements that give the role what it lacks, to run on the primary as written. */
  readonly fix: readonly string[];
}

const UTC = new Set(['UTC', 'Etc/UTC', 'Etc/UCT', 'UCT', 'Etc/Universal', 'Universal', 'Zulu', 'Etc/Zulu']);

/**
 * Reads a connection's settings against what a read needs for `timeoutMs`. The statement timeout
 * must equal the service's query timeout: the 504 says how long the query ran.
 */
export function readRoleOf(row: ReadRoleRow, timeoutMs: number): ReadRole {
  const missing: string[] = [];
  const fix: string[] = [];
  const role = quoteIdent(row.role);
  const current = Number(row.timeout_ms);
  if (row.read_only !== 'on') {
    missing.push('default_transaction_read_only = on');
    fix.push(`ALTER ROLE ${role} SET default_transaction_read_only = on;`);
  }
  if (current !== timeoutMs) {
    missing.push(`statement_timeout = ${timeoutMs} (it is ${Number.isFinite(current) ? current : String(row.timeout_ms)})`);
    fix.push(`ALTER ROLE ${role} SET statement_timeout = ${timeoutMs};`);
  }
  if (!UTC.has(row.time_zone)) {
    missing.push(`TimeZone = 'UTC' (it is '${row.time_zone}')`);
    fix.push(`ALTER ROLE ${role} SET TimeZone = 'UTC';`);
  }
  if (row.date_style !== 'ISO, YMD') {
    missing.push(`DateStyle = 'ISO, YMD' (it is '${row.date_style}')`);
    fix.push(`ALTER ROLE ${role} SET DateStyle = 'ISO, YMD';`);
  }
  return { timeoutMs: Number.isFinite(current) ? current : 0, standby: row.standby === true, missing, fix };
}

/** Connections' checks, once each: a connection is checked on its first read and remembered while it lives. */
export class ReadRoleChecks {
  private readonly seen = new WeakMap<object, ReadRoleRow>();

  /** The connection's settings, queried on first sight. */
  async of(client: object, query: (sql: string) => Promise<{ rows: unknown[] }>): Promise<ReadRoleRow> {
    const known = this.seen.get(client);
    if (known) return known;
    const row = (await query(READ_ROLE_SQL)).rows[0] as ReadRoleRow;
    this.seen.set(client, row);
    return row;
  }

  /** Whether a read with this budget may be its statement alone on this connection. */
  async oneStatement(client: object, timeoutMs: number, query: (sql: string) => Promise<{ rows: unknown[] }>): Promise<boolean> {
    return readRoleOf(await this.of(client, query), timeoutMs).missing.length === 0;
  }
}
