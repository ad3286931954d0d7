/**
 * Rows as an aligned text table, the way psql shows them: numbers right-aligned, NULL spelled
 * out. With `types` (the logical type of each column, as `compile` reports them), `datetime`
 * values, which are epoch milliseconds, read as UTC times (`2025-03-04 18:30:05 UTC`) and
 * `date` values as calendar dates: a table is for reading. JSON output keeps the numbers.
 */
export function formatTable(columns: readonly string[], rows: readonly Record<string, unknown>[], maxWidth = 60, types?: readonly string[]): string {
  const cells = rows.map((row) => columns.map((c, j) => cell(readable(row[c], types?.[j]), maxWidth)));
  const numeric = columns.map((_, j) => rows.length > 0 && rows.every((row) => {
    const v = readable(row[columns[j]!], types?.[j]);
    return v === null || v === undefined || typeof v === 'number' || typeof v === 'bigint';
  }));
  const widths = columns.map((c, j) => Math.max(width(c), ...cells.map((r) => width(r[j]!))));
  const pad = (text: string, j: number): string => {
    const fill = ' '.repeat(widths[j]! - width(text));
    return numeric[j] ? fill + text : text + fill;
  };
  const lines = [
    columns.map((c, j) => pad(c, j)).join(' | ').trimEnd(),
    widths.map((w) => '-'.repeat(w)).join('-+-'),
    ...cells.map((r) => r.map((text, j) => pad(text, j)).join(' | ').trimEnd()),
  ];
  return lines.join('\n');
}

/** A datetime or date column's epoch milliseconds as UTC text; anything else as it is. */
export function readable(value: unknown, type: string | undefined): unknown {
  if ((type !== 'datetime' && type !== 'date') || typeof value !== 'number' || !Number.isFinite(value)) return value;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return value;
  const iso = d.toISOString(); // 2025-03-04T18:30:05.123Z
  if (type === 'date' && iso.endsWith('T00:00:00.000Z')) return iso.slice(0, 10);
  const ms = iso.slice(19, 23) === '.000' ? '' : iso.slice(19, 23);
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${ms} UTC`;
}

function cell(value: unknown, maxWidth: number): string {
  let text: string;
  if (value === null || value === undefined) text = 'NULL';
  else if (typeof value === 'string') text = value;
  else if (value instanceof Date) text = value.toISOString();
  else if (typeof value === 'object') text = JSON.stringify(value);
  else text = String(value);
  // One row per line: control characters would break the layout.
  text = text.replace(/\r\n|\r|\n/g, '\\n').replace(/\t/g, '\\t');
  const chars = [...text];
  return chars.length > maxWidth ? `${chars.slice(0, maxWidth - 1).join('')}…` : text;
}

/** Display width in code points; good enough for the Latin, accented and CJK-free text of reports. */
function width(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}
