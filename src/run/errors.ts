import { OqlError } from '../diagnostics/diagnostic.js';
import type { DiagnosticCode } from '../diagnostics/codes.js';

/**
 * Turns whatever a driver threw into an OqlError. Nothing of the driver's message reaches the
 * caller: each SQLSTATE class gets a message of our own (the original stays on `cause`, for
 * server logs), because a Postgres message may name internal tables, columns or values.
 */

interface RuntimeErrorOptions {
  readonly hint?: string;
  /** Overrides the status the code implies (QUERY_FAILED is 400 for the query's fault, 500 for ours). */
  readonly status?: number;
  readonly cause?: unknown;
}

export function runtimeError(code: DiagnosticCode, message: string, options: RuntimeErrorOptions = {}): OqlError {
  const err = OqlError.plain(code, message, options.hint);
  if (options.status !== undefined && options.status !== err.status) {
    Object.defineProperty(err, 'status', { value: options.status, enumerable: true, writable: false, configurable: true });
  }
  if (options.cause !== undefined) {
    // Not enumerable, like Error's own `cause`: logs that serialise the error do not print it by accident.
    Object.defineProperty(err, 'cause', { value: options.cause, enumerable: false, writable: true, configurable: true });
  }
  return err;
}

/** "20 seconds", "0.5 seconds", "1 second". */
export function describeSeconds(ms: number): string {
  const seconds = Math.round(ms) / 1000;
  return `${seconds} ${seconds === 1 ? 'second' : 'seconds'}`;
}

export function timeoutError(timeoutMs: number, cause?: unknown): OqlError {
  return runtimeError('QUERY_TIMEOUT', `the query timed out after ${describeSeconds(timeoutMs)}`, {
    hint:
      'make the query cheaper: compare relation columns to known ids, avoid OR across two virtual relations ' +
      '(use EXISTS or inclusion-exclusion), or narrow the WHERE clause',
    cause,
  });
}

/**
 * The timeout of a filter or connector page, whose body has conditions, not a query's text: the
 * hint names what makes such a read slow and the body's way to narrow it.
 */
export function bodyTimeout(e: unknown, what: 'filter' | 'connector'): unknown {
  if (!(e instanceof OqlError) || e.code !== 'QUERY_TIMEOUT') return e;
  return runtimeError('QUERY_TIMEOUT', e.message, {
    hint: 'make the filter cheaper: narrow it with eq or in on id or a relation field, or a range of a date field; '
      + `use fewer and shorter contains, like and global_search values${what === 'filter' ? '; or ask for a smaller page_size' : ''}`,
    cause: e.cause,
  });
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH',
  'EAI_AGAIN', 'ENOENT', 'EACCES',
]);

// Driver errors without a SQLSTATE that mean the connection, not the query, failed.
const CONNECTION_MESSAGES =
  /connection terminated|not queryable|timeout exceeded when trying to connect|connection error|pglite is closed|socket|the server closed/i;

function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !NETWORK_CODES.has(code) ? code : undefined;
}

function isConnectionFailure(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; syscall?: unknown; message?: unknown };
  if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return true;
  if (typeof e.syscall === 'string') return true;
  return sqlState(err) === undefined && typeof e.message === 'string' && CONNECTION_MESSAGES.test(e.message);
}

const UNAVAILABLE = 'the database is unavailable; retry later';

/** Maps an error from running SQL; OqlErrors pass through unchanged. */
export function databaseError(err: unknown, timeoutMs: number): OqlError {
  if (err instanceof OqlError) return err;
  const state = sqlState(err);
  if (state === undefined) {
    if (isConnectionFailure(err)) return runtimeError('DATABASE_ERROR', UNAVAILABLE, { cause: err });
    return runtimeError('QUERY_FAILED', 'the query could not be run because of an internal error', { status: 500, cause: err });
  }
  if (state === '57014') return timeoutError(timeoutMs, err);
  const cls = state.slice(0, 2);
  switch (cls) {
    case '22':
      return dataException(state, err);
    case '21':
      return runtimeError('QUERY_FAILED', 'a subquery used as a value returned more than one row', {
        hint: 'make the subquery return one row: aggregate it (MAX(...), COUNT(...)) or filter it down to one record',
        cause: err,
      });
    case '25':
      if (state === '25006' || state === '25001') {
        return runtimeError('QUERY_FAILED', 'the query tried to change data; analytics queries are read-only', { cause: err });
      }
      break;
    case '54':
      return runtimeError('QUERY_FAILED', 'the query is too large or too complex for the database', {
        hint: 'simplify the query: fewer items in lists, shallower nesting',
        cause: err,
      });
    case '08': // connection exceptions
    case '53': // insufficient resources (too many connections, out of memory, disk full)
    case '40': // serialization failure, deadlock: retryable
    case '57': // operator intervention: shutdown, cannot connect now
    case '58': // system error (I/O)
    case 'XX': // internal error
      return runtimeError('DATABASE_ERROR', UNAVAILABLE, { cause: err });
    default:
      break;
  }
  // Syntax errors, unknown tables and columns, type errors: the compiler or the catalog is wrong, not the query.
  return runtimeError('QUERY_FAILED', `the database rejected the compiled query (SQLSTATE ${state})`, { status: 500, cause: err });
}

function dataException(state: string, err: unknown): OqlError {
  const fail = (message: string, hint?: string): OqlError =>
    runtimeError('QUERY_FAILED', message, hint === undefined ? { cause: err } : { hint, cause: err });
  switch (state) {
    case '22012':
      return fail('division by zero: a divisor in the query is 0 for some row', 'guard the divisor: CASE WHEN x = 0 THEN NULL ELSE y / x END');
    case '22003':
      return fail('a number in the query is out of range (numeric overflow)', 'divide earlier or round the value');
    case '22008':
      return fail('a date or time in the query is out of range', 'to_timestamp takes seconds: divide epoch milliseconds by 1000');
    case '22007':
    case '22009':
      return fail('a date, time or time zone value in the query is not valid');
    case '22023':
    case '22P02':
      return invalidParameter(err) ?? fail('a value in the query is not valid where it is used');
    case '2201B':
      return fail('a pattern in the query is not a valid regular expression');
    case '22025':
    case '22019':
      return fail('a LIKE pattern in the query ends with an escape character (\\)', 'double the backslash to match one');
    case '22004':
    case '22002':
      return fail('a value in the query is NULL where NULL is not allowed');
    default:
      return fail(`a value in the query is not valid for the operation applied to it (SQLSTATE ${state})`);
  }
}

/**
 * Unknown time zones and date units name only what the user wrote, so they can be repeated
 * back; the name is taken from the driver's message and re-quoted in ours.
 */
function invalidParameter(err: unknown): OqlError | undefined {
  const message = String((err as { message?: unknown }).message ?? '');
  const zone = /time zone "([^"]{1,100})" not recognized/.exec(message);
  if (zone) {
    return runtimeError('QUERY_FAILED', `time zone '${zone[1]}' is not recognized`, {
      hint: "use an IANA zone name such as 'Asia/Kolkata', 'America/New_York' or 'UTC'",
      cause: err,
    });
  }
  const unit = /unit "([^"]{1,100})" not recognized/.exec(message);
  if (unit) {
    return runtimeError('QUERY_FAILED', `date unit '${unit[1]}' is not recognized`, {
      hint: "use one of 'year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second', or 'epoch' in date_part",
      cause: err,
    });
  }
  return undefined;
}
