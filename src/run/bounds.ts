import { outputName } from '../emit/output-names.js';
import { runtimeError } from './errors.js';

/**
 * Bytes bounded inside the database. A compiled statement's rows are measured in Postgres, as the
 * text they travel in, before any of them leaves it: the wrapper keeps a running total in row
 * order, returns the rows that fit under the ceiling and, of the first row that does not, only a
 * marker with its values blanked. Node therefore never receives more than about `maxBytes` for
 * one request, however large a value the query builds (a concatenation of megabyte texts, a page
 * of large rows): such a result becomes a clear 4xx, or a cut result for callers that asked for
 * one (the MCP tools), never a process out of memory.
 *
 * The database also stops building rows once the ceiling is passed: the row after the marker
 * fails the statement with an error naming the marker's position (`stoppedAt` reads it), where
 * the statement would otherwise build every row of its result — a report whose rows are 12 MB
 * concatenations, LIMIT 1000, is gigabytes of work — to return the few that fit.
 *
 * For that stop to come on time the running total must be a stream: PostgreSQL's window keeps
 * the rows it has not passed on in a tuplestore, and once that spills past work_mem it reads its
 * whole input first. So a row larger than `blankAbove` enters the window with its values blanked
 * (its size kept) and comes back flagged; when such a row is among those that fit, the caller
 * reads the rows that fit once more, with `readRows` and without blanking, which ends the
 * statement there. The same re-read gives a caller that wants the rows that fit after a stop.
 *
 * `maxRows` cuts the rows as well (LIMIT n + 1, so the caller knows there were more).
 */
export interface Bounds {
  /** The most bytes of row text one statement may return. */
  readonly maxBytes: number;
  /** The most rows; one more is read to know that the result was cut. */
  readonly maxRows?: number | undefined;
  /** Read at most this many rows of the statement (the rows that fit, as a first read found them). */
  readonly readRows?: number | undefined;
  /** Rows larger than this enter the running total blanked and come back flagged (`hasBlanked`). Default: none are. */
  readonly blankAbove?: number | undefined;
}

export const TOTAL = '__oql_total';
const ROW = '__oql_row';
const OVER = '__oql_over';
const BLANK = '__oql_blank';
const COUNT = '__oql_n';
/** The text the stop casts to an integer; PostgreSQL's error then carries it with the marker's position. */
const STOP = '__oql_stop_at_row_';
const STOP_PATTERN = new RegExp(`${STOP}(\\d+)`);

/** The statement wrapped so that only what fits under `bounds` leaves the database. Its top-level columns are c0…c(n-1). */
export function boundedStatement(sql: string, params: readonly unknown[], columnCount: number, bounds: Bounds): { sql: string; params: unknown[] } {
  const ceiling = `$${params.length + 1}::bigint`;
  const blankAbove = `$${params.length + 2}::bigint`;
  const names = Array.from({ length: columnCount }, (_, i) => `"${outputName(i)}"`);
  const blanked = (from: string, when: string) => names.map((c) => `CASE WHEN ${when} THEN NULL ELSE ${from}.${c} END AS ${c}`);
  // Rows past the marker are never needed: the statement reads at most the row cap (plus one)
  // and the rows a first read found to fit, and builds no row beyond them. OFFSET 0 keeps each
  // level a subquery of its own: merged into the next, the measured row would be built twice, and
  // the blanking would move above the window, which would then hold the values it blanks.
  const limits = [bounds.maxRows === undefined ? undefined : Math.floor(bounds.maxRows) + 1, bounds.readRows === undefined ? undefined : Math.max(1, Math.floor(bounds.readRows))]
    .filter((n): n is number => n !== undefined);
  const limit = limits.length === 0 ? ' OFFSET 0' : ` LIMIT ${Math.min(...limits)}`;
  // octet_length(q::text): the row as the text protocol carries it. The running sum follows the
  // statement's own row order (a window without ORDER BY reads its input as it comes), and the
  // outer ORDER BY on that strictly increasing sum keeps exactly that order. A row whose
  // predecessors already passed the ceiling fails the statement: the cast of a text made from a
  // column (so the planner cannot fold it into an error before the statement runs) names the
  // marker's position, the row before it.
  const stop = `(('${STOP}' || (b.${COUNT} - 1)::text)::int IS NULL)`;
  const measured = `SELECT q.*, octet_length(q::text) AS ${ROW} FROM (${sql}) q${limit}`;
  const entering = `SELECT ${[...blanked('p', `p.${ROW} > ${blankAbove}`), `p.${ROW}`, `p.${ROW} > ${blankAbove} AS ${BLANK}`].join(', ')} FROM (${measured}) p OFFSET 0`;
  const text = `SELECT ${[...blanked('b', `b.${OVER}`), `b.${OVER} AS "${OVER}"`, `b.${BLANK} AS "${BLANK}"`].join(', ')} FROM (`
    + `SELECT s.*, s.${TOTAL} > ${ceiling} AS ${OVER} FROM (`
    + `SELECT r.*, sum(r.${ROW}) OVER w AS ${TOTAL}, count(*) OVER w AS ${COUNT} FROM (${entering}) r WINDOW w AS (ROWS UNBOUNDED PRECEDING)) s) b `
    + `WHERE CASE WHEN b.${TOTAL} - b.${ROW} <= ${ceiling} THEN true ELSE ${stop} END ORDER BY b.${TOTAL}`;
  const noBlanking = Number.MAX_SAFE_INTEGER;
  return { sql: text, params: [...params, Math.floor(bounds.maxBytes), Math.floor(bounds.blankAbove ?? noBlanking)] };
}

/**
 * The number of rows up to and including the marker when `error` is the stop of a bounded
 * statement (the driver turned it into an OqlError and kept PostgreSQL's own on `cause`); else undefined.
 */
export function stoppedAt(error: unknown): number | undefined {
  for (let e = error, depth = 0; e !== null && typeof e === 'object' && depth < 3; e = (e as { cause?: unknown }).cause, depth++) {
    const m = STOP_PATTERN.exec(String((e as { message?: unknown }).message ?? ''));
    if (m) return Number(m[1]);
  }
  return undefined;
}

export type Overflow = 'bytes' | 'rows' | null;

/**
 * The rows of a bounded statement without the marker, which bound cut them, if any, and whether
 * any of them came back blanked (read them again, with `readRows` = their number, for the values).
 */
export function cutRows(rows: Record<string, unknown>[], bounds: Bounds): { rows: Record<string, unknown>[]; overflow: Overflow; hasBlanked: boolean } {
  let overflow: Overflow = null;
  if (rows.length > 0 && rows[rows.length - 1]![OVER] === true) {
    rows.pop();
    overflow = 'bytes';
  }
  if (bounds.maxRows !== undefined && rows.length > bounds.maxRows) {
    rows.length = bounds.maxRows;
    overflow ??= 'rows';
  }
  let hasBlanked = false;
  for (const r of rows) {
    if (r[BLANK] === true) hasBlanked = true;
    delete r[OVER];
    delete r[BLANK];
  }
  return { rows, overflow, hasBlanked };
}

/** "16 MB", "512 KB". */
export function describeBytes(n: number): string {
  if (n >= 1024 * 1024) return `${Math.round((n / (1024 * 1024)) * 10) / 10} MB`;
  if (n >= 1024) return `${Math.round((n / 1024) * 10) / 10} KB`;
  return `${n} bytes`;
}

/** The refusal of a result over the response ceiling, saying what to change. */
export function tooLarge(maxBytes: number, what: 'query' | 'page' | 'record'): Error {
  const hint = what === 'query'
    ? 'select fewer fields, lower the LIMIT, or shorten long texts with LEFT(field, n)'
    : what === 'page'
      ? 'ask for fewer fields or a smaller page_size'
      : 'the record holds more data than one response may carry';
  return runtimeError('RESPONSE_TOO_LARGE', `the result is larger than the ${describeBytes(maxBytes)} one response may carry`, { hint });
}
