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
 * `maxRows` cuts the rows as well (LIMIT n + 1, so the caller knows there were more).
 */
export interface Bounds {
  /** The most bytes of row text one statement may return. */
  readonly maxBytes: number;
  /** The most rows; one more is read to know that the result was cut. */
  readonly maxRows?: number | undefined;
}

export const TOTAL = '__oql_total';
const ROW = '__oql_row';
const OVER = '__oql_over';

/** The statement wrapped so that only what fits under `bounds` leaves the database. Its top-level columns are c0…c(n-1). */
export function boundedStatement(sql: string, params: readonly unknown[], columnCount: number, bounds: Bounds): { sql: string; params: unknown[] } {
  const ceiling = `$${params.length + 1}`;
  const columns = Array.from({ length: columnCount }, (_, i) => {
    const c = `"${outputName(i)}"`;
    return `CASE WHEN b.${OVER} THEN NULL ELSE b.${c} END AS ${c}`;
  });
  // octet_length(q::text): the row as the text protocol carries it. The running sum follows the
  // statement's own row order (a window without ORDER BY reads its input as it comes), and the
  // outer ORDER BY on that strictly increasing sum keeps exactly that order.
  const text = `SELECT ${[...columns, `b.${OVER} AS "${OVER}"`].join(', ')} FROM (`
    + `SELECT s.*, s.${TOTAL} > ${ceiling}::bigint AS ${OVER} FROM (`
    + `SELECT r.*, sum(r.${ROW}) OVER (ROWS UNBOUNDED PRECEDING) AS ${TOTAL} FROM (`
    + `SELECT q.*, octet_length(q::text) AS ${ROW} FROM (${sql}) q) r) s) b `
    + `WHERE b.${TOTAL} - b.${ROW} <= ${ceiling}::bigint ORDER BY b.${TOTAL}`
    + (bounds.maxRows === undefined ? '' : ` LIMIT ${Math.floor(bounds.maxRows) + 1}`);
  return { sql: text, params: [...params, Math.floor(bounds.maxBytes)] };
}

export type Overflow = 'bytes' | 'rows' | null;

/** The rows of a bounded statement without the marker, and which bound cut them, if any. */
export function cutRows(rows: Record<string, unknown>[], bounds: Bounds): { rows: Record<string, unknown>[]; overflow: Overflow } {
  let overflow: Overflow = null;
  if (rows.length > 0 && rows[rows.length - 1]![OVER] === true) {
    rows.pop();
    overflow = 'bytes';
  }
  if (bounds.maxRows !== undefined && rows.length > bounds.maxRows) {
    rows.length = bounds.maxRows;
    overflow ??= 'rows';
  }
  for (const r of rows) delete r[OVER];
  return { rows, overflow };
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
