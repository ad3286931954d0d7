import { compile, compileCount, type CompileOptions } from '../compile.js';
import { tooLarge, type Overflow } from '../run/bounds.js';
import type { Database } from '../run/database.js';
import { runtimeError } from '../run/errors.js';
import { decodeRows } from '../run/decode.js';
import { ConcurrencyLimiter, DEFAULT_CLIENT_ID, sharedLimiter } from '../run/limiter.js';
import { readBounded, type ReadLimits } from '../run/read.js';
import { checkTimeout, type Queryable } from '../run/transaction.js';

/** The body of `reports/execute` and `reports/count`. */
export interface QueryRequest {
  /** The query text. */
  readonly query: string;
  /** The request slug: the top-level FROM must name it. */
  readonly slug: string;
}

export interface RunOptions extends Omit<CompileOptions, 'slug'>, Omit<ReadLimits, 'catalog'> {
  /** Whose concurrency budget the call counts against. Default 'default'. */
  readonly clientId?: string;
  /** Queries one client may have running at once; ignored when `limiter` is given. Default 2. */
  readonly maxConcurrent?: number;
  /**
   * A limiter shared across calls (one per server); default: a module-level one per
   * `maxConcurrent`. false: the caller admits calls itself (the service's policy point does).
   */
  readonly limiter?: ConcurrencyLimiter | false;
  /** Over `maxBytes` or `maxRows`: return what fits and say so, instead of refusing (RESPONSE_TOO_LARGE). */
  readonly truncate?: boolean;
  /** Told the output keys in select-list order, for a caller that writes rows without keys (CSV). */
  readonly onColumns?: (keys: readonly string[]) => void;
}

/** `data` of a successful execute: rows keyed by the output keys, in select-list order. */
export interface ExecuteResult {
  records: Record<string, unknown>[];
  /** With `truncate`: the records were cut at the row cap or the byte ceiling; more exist. */
  truncated?: Exclude<Overflow, null>;
  /** Set when the caller may not read an object the query touches (records are then empty). */
  message?: string;
}

/** `data` of a successful count: rows the query produces, at most its LIMIT. */
export interface CountResult {
  count: number;
  /** Set when the caller may not read an object the query touches (the count is then 0). */
  message?: string;
}

/**
 * Compiles and runs a query for one tenant. Compile errors throw OqlError (400) before anything
 * else; a query touching an object outside `access` returns no records and a message without
 * running SQL; otherwise the query takes a concurrency slot (429 when none is free) and runs in a
 * read-only transaction with a statement timeout (504).
 */
export async function execute(db: Queryable | Database, request: QueryRequest, options: RunOptions): Promise<ExecuteResult> {
  const compiled = compile(request.query, compileOptions(request, options));
  if (compiled.kind === 'restricted') return { records: [], message: compiled.message };
  options.onColumns?.(compiled.columns.map((c) => c.key));
  const statement = { sql: compiled.sql, params: compiled.params, columnCount: compiled.columns.length };
  const { rows, overflow } = await withSlot(options, (timeoutMs) => readBounded(db, statement, readLimits(options, timeoutMs)));
  if (overflow === 'bytes' && !options.truncate) throw tooLarge(options.maxBytes!, 'query');
  const records = decodeRows(rows, compiled.columns);
  return overflow === null ? { records } : { records, truncated: overflow };
}

/** Counts the rows `execute` would return, stopping at the query's LIMIT. */
export async function count(db: Queryable | Database, request: QueryRequest, options: RunOptions): Promise<CountResult> {
  const compiled = compileCount(request.query, compileOptions(request, options));
  if (compiled.kind === 'restricted') return { count: 0, message: compiled.message };
  const statement = { sql: compiled.sql, params: compiled.params, columnCount: 1 };
  const { maxBytes: _b, maxRows: _r, ...limits } = readLimits(options, 0);
  const { rows } = await withSlot(options, (timeoutMs) => readBounded(db, statement, { ...limits, timeoutMs }));
  const value = rows[0]?.['count'];
  return { count: typeof value === 'number' ? value : Number(value ?? 0) };
}

function compileOptions(request: QueryRequest, options: RunOptions): CompileOptions {
  if (typeof request?.query !== 'string' || typeof request.slug !== 'string') {
    throw runtimeError('INVALID_OPTIONS', 'the request needs a query string and a slug string', {
      hint: '{"query": "SELECT id FROM account LIMIT 100", "slug": "account"}',
      status: 400,
    });
  }
  const { clientId: _c, timeoutMs: _t, maxConcurrent: _m, limiter: _l, tenant: _te, maxBytes: _b, maxRows: _r, maxCost: _co, truncate: _tr, rowsThatFit: _rf, ...rest } = options;
  return { ...rest, slug: request.slug };
}

function readLimits(options: RunOptions, timeoutMs: number): ReadLimits {
  return {
    timeoutMs, tenant: options.tenant ?? options.orgId, maxBytes: options.maxBytes, maxRows: options.maxRows,
    maxCost: options.maxCost, catalog: options.catalog,
    // A result over the ceiling is refused unless the caller takes what fits.
    rowsThatFit: options.truncate === true,
  };
}

async function withSlot<T>(options: RunOptions, fn: (timeoutMs: number) => Promise<T>): Promise<T> {
  const timeoutMs = checkTimeout(options.timeoutMs);
  if (options.limiter === false) return fn(timeoutMs);
  const limiter = options.limiter ?? sharedLimiter(options.maxConcurrent);
  const release = limiter.acquire(options.clientId ?? DEFAULT_CLIENT_ID);
  try {
    return await fn(timeoutMs);
  } finally {
    release();
  }
}
