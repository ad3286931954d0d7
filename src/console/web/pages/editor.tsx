import type { Ref } from 'preact';
import { useRef } from 'preact/hooks';

/** A diagnostic as POST /api/v1/reports/lint returns it. */
export interface Diagnostic {
  readonly code: string;
  readonly severity: 'error' | 'warning';
  readonly message: string;
  readonly hint?: string;
  readonly span: { readonly start: number; readonly end: number; readonly line: number; readonly column: number; readonly endLine: number; readonly endColumn: number };
  readonly fix?: { readonly range: readonly [number, number]; readonly text: string };
}

interface Segment {
  readonly text: string;
  readonly severity: 'error' | 'warning' | null;
}

/**
 * The text cut where diagnostics start and end, each piece marked with the worst severity over
 * it. An empty span (a missing token) marks the character before it, or after it at the start.
 */
export function segments(text: string, diagnostics: readonly Diagnostic[]): Segment[] {
  const marks = new Array<0 | 1 | 2>(text.length).fill(0);
  for (const d of diagnostics) {
    let { start, end } = d.span;
    if (end <= start) [start, end] = start > 0 ? [start - 1, start] : [0, Math.min(1, text.length)];
    const level = d.severity === 'error' ? 2 : 1;
    for (let i = Math.max(0, start); i < Math.min(end, text.length); i++) if (marks[i]! < level) marks[i] = level;
  }
  const out: Segment[] = [];
  let from = 0;
  for (let i = 1; i <= text.length; i++) {
    if (i === text.length || marks[i] !== marks[from]) {
      const m = marks[from];
      out.push({ text: text.slice(from, i), severity: m === 2 ? 'error' : m === 1 ? 'warning' : null });
      from = i;
    }
  }
  return out;
}

/**
 * A plain textarea (native editing, selection, undo and accessibility) over a copy of its text in
 * which the diagnostics' spans are underlined. The copy has the same font, padding and wrapping,
 * and follows the textarea's scrolling.
 */
export function QueryEditor({ text, diagnostics, onInput, onRun, textarea }: {
  text: string;
  diagnostics: readonly Diagnostic[];
  onInput: (text: string) => void;
  onRun: () => void;
  textarea: Ref<HTMLTextAreaElement>;
}) {
  const backdrop = useRef<HTMLDivElement>(null);
  const follow = (e: Event) => {
    const t = e.currentTarget as HTMLTextAreaElement;
    if (backdrop.current) {
      backdrop.current.scrollTop = t.scrollTop;
      backdrop.current.scrollLeft = t.scrollLeft;
    }
  };
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  return (
    <div class="editor">
      <div class="backdrop" ref={backdrop} aria-hidden="true">
        {segments(text, diagnostics).map((s, i) => (s.severity ? <mark key={i} class={`squiggle ${s.severity}`}>{s.text}</mark> : s.text))}
        {'\n'}
      </div>
      <textarea id="query" ref={textarea} value={text} spellcheck={false} autoComplete="off" autoCapitalize="off" rows={6}
        aria-invalid={errors > 0 ? 'true' : 'false'} aria-describedby="diagnostics-summary query-help"
        onInput={(e) => onInput(e.currentTarget.value)} onScroll={follow}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            onRun();
          }
        }} />
    </div>
  );
}

/** Replaces the fix's range with its text: the library's own correction, as written. */
export function applyFix(text: string, fix: NonNullable<Diagnostic['fix']>): string {
  return text.slice(0, fix.range[0]) + fix.text + text.slice(fix.range[1]);
}
