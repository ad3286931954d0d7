/**
 * Rows as CSV (RFC 4180): one header row of the output keys, in select-list (or `fields`) order,
 * then a row a record; CRLF line ends; a cell is quoted when it holds a comma, a quote, CR or LF,
 * quotes doubled.
 *
 * Values: null is an empty cell; numbers and booleans as JSON writes them (numbers beyond a
 * double's exactness arrive as their exact text already); arrays (multi-select values) and
 * objects as their JSON text. A text cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage
 * return, and is not a plain number, is neutralised against formula injection as OWASP
 * recommends: prefixed with a single quote (and quoted), so a spreadsheet shows it as text.
 */

const PLAIN_NUMBER = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One cell's text. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text: string;
  if (typeof value === 'string') {
    text = FORMULA_START.test(value) && !PLAIN_NUMBER.test(value) ? `'${value}` : value;
    // A neutralised cell is quoted too, so no reader takes its quote mark for the cell's end.
    if (text !== value || NEEDS_QUOTES.test(text)) return `"${text.replaceAll('"', '""')}"`;
    return text;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  text = JSON.stringify(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * The CSV of these records under a header of `columns` (each record keyed by them), in pieces of
 * about `rows` rows each: the header row comes with the first, and every piece ends a line.
 */
export function* csvPieces(columns: readonly string[], records: readonly Record<string, unknown>[], rows = 500): Generator<string> {
  let lines = [columns.map(csvCell).join(',')];
  for (const record of records) {
    lines.push(columns.map((c) => csvCell(record[c])).join(','));
    if (lines.length >= rows) {
      yield `${lines.join('\r\n')}\r\n`;
      lines = [];
    }
  }
  if (lines.length > 0) yield `${lines.join('\r\n')}\r\n`;
}

/** The CSV text of these records under a header of `columns`, whole. */
export function toCsv(columns: readonly string[], records: readonly Record<string, unknown>[]): string {
  return [...csvPieces(columns, records)].join('');
}
