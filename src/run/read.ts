import type { Catalog } from '../catalog/types.js';
import { boundedStatement, cutRows, stoppedAt, type Bounds, type Overflow } from './bounds.js';
import { checkCost, planOf } from './cost.js';
import { databaseOf } from './database-of.js';
import type { Database, Queryable } from './database.js';
import { checkTimeout } from './transaction.js';
import { timeoutError } from './errors.js';
import { isOqlError } from '../diagnostics/diagnostic.js';

/**
 * What governs one read: the statement's budget, whose share of the connections it uses, the
 * bytes and rows it may return, and the planner cost above which it is refused unrun. The service
 * sets all of them (src/service/policy.ts); a library caller may set any.
 */
export interface ReadLimits {
  /** statement_timeout in milliseconds. Default 20000. */
  readonly timeoutMs?: number | undefined;
  /** The organization whose share of the connections the read counts against. */
  readonly tenant?: string | undefined;
  /** The most bytes of row text the read may return. Default: no ceiling. */
  readonly maxBytes?: number | undefined;
  /** The most rows; one more is read to know there were more. Default: as many as the query gives. */
  readonly maxRows?: number | undefined;
  /** The highest planner cost run; above it the query is refused unrun. Default: no ceiling. */
  readonly maxCost?: number | undefined;
  /** Names tables as objects in a QUERY_TOO_COSTLY message. */
  readonly catalog?: Catalog | undefined;
  /**
   * Over `maxBytes`: true (the default) reads the rows that fit again and returns them, false
   * returns none (for callers that refuse such a result anyway, which then costs one read).
   */
  readonly rowsThatFit?: boolean | undefined;
}

export interface BoundedRows {
  readonly rows: Record<string, unknown>[];
  /** Which bound cut the rows: the byte ceiling, the row cap, or none. */
  readonly overflow: Overflow;
}

/** A compiled statement whose top-level columns are c0…c(n-1), as the emitter names them. */
export interface Statement {
  readonly sql: string;
  readonly params: readonly unknown[];
  readonly columnCount: number;
}

// Plans found cheap, per database: a repeated statement (the next page of the same filter) is not
// planned twice within a minute. Only verdicts well under the ceiling are kept, so parameters that
// change the estimate (another page, another value) cannot carry a statement across it.
const cheap = new WeakMap<object, Map<string, number>>();
const CHEAP_FOR_MS = 60_000;
const CHEAP_ENTRIES = 2_000;

/**
 * Rows above this size enter the running total of a bounded read blanked (./bounds.ts): the
 * window then holds a few of them well within PostgreSQL's default work_mem (4 MB) and streams.
 */
const BLANK_ABOVE = 1024 * 1024;

/** The size above which the first read of a bounded read blanks a row, under `maxBytes`. */
export function blankAbove(maxBytes: number): number {
  return Math.min(maxBytes, BLANK_ABOVE);
}

export async function readBounded(db: Queryable | Database, statement: Statement, limits: ReadLimits = {}): Promise<BoundedRows> {
  const database = databaseOf(db);
  const timeoutMs = checkTimeout(limits.timeoutMs);
  const options = { timeoutMs, tenant: limits.tenant };
  if (limits.maxCost !== undefined && limits.maxCost > 0) await checkPlan(database, statement, limits.maxCost, options, limits.catalog);
  if (limits.maxBytes === undefined && limits.maxRows === undefined) {
    return { rows: (await database.read(statement.sql, statement.params, options)).rows, overflow: null };
  }
  const bounds = { maxBytes: limits.maxBytes ?? Number.MAX_SAFE_INTEGER, maxRows: limits.maxRows };
  const started = Date.now();
  const read = async (readBounds: Bounds, budgetMs: number): Promise<Record<string, unknown>[]> => {
    const wrapped = boundedStatement(statement.sql, statement.params, statement.columnCount, readBounds);
    return (await database.read(wrapped.sql, wrapped.params, { ...options, timeoutMs: budgetMs })).rows;
  };
  // The rows that fit, read again without blanking and stopped after them, in what is left of the budget.
  const again = async (fit: number, overflow: Overflow): Promise<BoundedRows> => {
    if (fit === 0 || (overflow === 'bytes' && limits.rowsThatFit === false)) return { rows: [], overflow };
    try {
      const cut = cutRows(await read({ ...bounds, readRows: fit }, Math.max(1, timeoutMs - (Date.now() - started))), bounds);
      return { rows: cut.rows, overflow: overflow ?? cut.overflow };
    } catch (e) {
      // Rows changed between the reads and no longer fit: none is returned rather than a wrong cut.
      if (stoppedAt(e) !== undefined) return { rows: [], overflow: 'bytes' };
      // The budget the caller gave is the one a timeout names.
      throw isOqlError(e) && e.code === 'QUERY_TIMEOUT' ? timeoutError(timeoutMs, e.cause) : e;
    }
  };
  let first: ReturnType<typeof cutRows>;
  try {
    first = cutRows(await read({ ...bounds, blankAbove: blankAbove(bounds.maxBytes) }, timeoutMs), bounds);
  } catch (e) {
    // The database stopped at the row after the first one over the ceiling (./bounds.ts).
    const marker = stoppedAt(e);
    if (marker === undefined) throw e;
    return again(marker - 1, 'bytes');
  }
  if (!first.hasBlanked || (first.overflow === 'bytes' && limits.rowsThatFit === false)) return { rows: first.rows, overflow: first.overflow };
  return again(first.rows.length, first.overflow);
}

async function checkPlan(database: Database, statement: Statement, maxCost: number, options: { timeoutMs: number; tenant: string | undefined }, catalog: Catalog | undefined): Promise<void> {
  const key = `${options.tenant ?? ''}\u0000${statement.sql}`;
  let known = cheap.get(database);
  const until = known?.get(key);
  if (until !== undefined && until > Date.now()) return;
  const plan = planOf((await database.read(statement.sql, statement.params, { ...options, explain: true })).rows);
  const cost = checkCost(plan, maxCost, catalog);
  if (cost * 10 <= maxCost) {
    if (!known) cheap.set(database, (known = new Map()));
    if (known.size >= CHEAP_ENTRIES) known.clear();
    known.set(key, Date.now() + CHEAP_FOR_MS);
  }
}
