/** Half-open range of UTF-16 offsets into the query text: `text.slice(start, end)`. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** A span resolved against its source: 1-based line and column of both ends. */
export interface SourceSpan extends Span {
  readonly line: number;
  readonly column: number;
  readonly endLine: number;
  readonly endColumn: number;
}

export function span(start: number, end: number): Span {
  return { start, end };
}

/** The smallest span covering both. */
export function cover(a: Span, b: Span): Span {
  return { start: Math.min(a.start, b.start), end: Math.max(a.end, b.end) };
}

/**
 * Maps offsets to lines and columns. Built only when a diagnostic is shown, so the compile
 * path never pays for it.
 */
export class LineMap {
  private readonly lineStarts: number[] = [0];

  constructor(readonly text: string) {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10) this.lineStarts.push(i + 1);
      else if (c === 13 && text.charCodeAt(i + 1) !== 10) this.lineStarts.push(i + 1);
    }
  }

  position(offset: number): { line: number; column: number } {
    const o = Math.max(0, Math.min(offset, this.text.length));
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid]! <= o) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: o - this.lineStarts[lo]! + 1 };
  }

  resolve(s: Span): SourceSpan {
    const a = this.position(s.start);
    const b = this.position(s.end);
    return { start: s.start, end: s.end, line: a.line, column: a.column, endLine: b.line, endColumn: b.column };
  }

  /** The text of a 1-based line, without its line break. */
  lineText(line: number): string {
    const start = this.lineStarts[line - 1] ?? this.text.length;
    const next = this.lineStarts[line];
    let end = next === undefined ? this.text.length : next;
    while (end > start && (this.text.charCodeAt(end - 1) === 10 || this.text.charCodeAt(end - 1) === 13)) end--;
    return this.text.slice(start, end);
  }
}
