import type { Diagnostic } from './diagnostic.js';
import { LineMap } from './span.js';

export interface FrameOptions {
  /** Lines of context shown above the offending line. */
  context?: number;
  /** A label before the message, such as a file name. */
  file?: string;
}

/**
 * Renders a diagnostic as a code frame:
 *
 *   error UNKNOWN_COLUMN: unknown column 'amout' on object 'opportunity' (1:8)
 *     1 | SELECT amout FROM opportunity LIMIT 10
 *       |        ^^^^^
 *   hint: did you mean 'amount'?
 */
export function codeFrame(source: string, d: Diagnostic, options: FrameOptions = {}): string {
  const lines = new LineMap(source);
  const { line, column, endLine, endColumn } = d.span;
  const where = options.file ? `${options.file}:${line}:${column}` : `${line}:${column}`;
  const out = [`${d.severity} ${d.code}: ${d.message} (${where})`];
  const context = options.context ?? 0;
  const gutter = String(line).length;
  for (let l = Math.max(1, line - context); l <= line; l++) {
    const text = lines.lineText(l).replace(/\t/g, ' ');
    out.push(`  ${String(l).padStart(gutter)} | ${clip(text, column)}`);
  }
  const lineText = lines.lineText(line);
  const endCol = endLine === line ? endColumn : lineText.length + 1;
  const width = Math.max(1, endCol - column);
  const shift = clipShift(lineText, column);
  out.push(`  ${' '.repeat(gutter)} | ${' '.repeat(column - 1 - shift + (shift > 0 ? 1 : 0))}${'^'.repeat(Math.min(width, 120))}`);
  if (d.hint) out.push(`  hint: ${d.hint}`);
  return out.join('\n');
}

const WIDTH = 160;

// Very long lines (a 1 MB query on one line) are cut around the caret so a frame stays readable.
function clipShift(text: string, column: number): number {
  return text.length > WIDTH && column > WIDTH / 2 ? column - WIDTH / 2 : 0;
}

function clip(text: string, column: number): string {
  const shift = clipShift(text, column);
  const cut = text.slice(shift, shift + WIDTH);
  return (shift > 0 ? '…' : '') + cut + (shift + WIDTH < text.length ? '…' : '');
}
