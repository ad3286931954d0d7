/** Rows as an aligned text table, the way psql shows them: numbers right-aligned, NULL spelled out. */
export function formatTable(columns: readonly string[], rows: readonly Record<string, unknown>[], maxWidth = 60): string {
  const cells = rows.map((row) => columns.map((c) => cell(row[c], maxWidth)));
  const numeric = columns.map((_, j) => rows.length > 0 && rows.every((row) => {
    const v = row[columns[j]!];
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
