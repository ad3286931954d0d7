import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { ErrorBanner } from '../components.js';
import { cellText, plural } from '../format.js';
import { QueryEditor, applyFix, type Diagnostic } from './editor.js';
import { SchemaPanel, sampleQuery, useSchema } from './schema.js';

interface Lint {
  readonly text: string;
  readonly slug: string | null;
  readonly diagnostics: readonly Diagnostic[];
}

type Outcome =
  | { readonly kind: 'rows'; readonly records: readonly Record<string, unknown>[]; readonly ms: number; readonly message?: string }
  | { readonly kind: 'count'; readonly count: number; readonly ms: number; readonly message?: string }
  | { readonly kind: 'error'; readonly error: ApiError | Error }
  /** Refused for what the problems list already shows: said in a line, not in a second box. */
  | { readonly kind: 'listed'; readonly text: string; readonly errors: number };

/** Rows drawn in the table at most; the row count still says how many came back. */
const SHOWN_ROWS = 1000;
const LINT_DELAY_MS = 250;

// The query survives a visit to another page of the console (not a reload: nothing is stored).
let kept = '';

export function PlaygroundPage() {
  const schema = useSchema();
  const [text, setText] = useState(kept);
  const [lint, setLint] = useState<Lint | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [busy, setBusy] = useState(false);
  const textarea = useRef<HTMLTextAreaElement>(null);
  const inflight = useRef<AbortController | null>(null);

  useEffect(() => {
    const sample = schema.objects && sampleQuery(schema.objects, 20);
    if (!sample) return;
    const shown = sample.query.replace(' FROM ', '\nFROM ').replace(' ORDER BY ', '\nORDER BY ').replace(' LIMIT ', '\nLIMIT ');
    // Only into an empty editor: what was typed while the schema loaded is the user's, and stays.
    setText((t) => (t === '' ? (kept = shown) : t));
  }, [schema.objects]);

  /**
   * Lints a text. Live checks (`live`) replace each other, the newest text winning; the check a
   * Run waits for is never cut short by one of them.
   */
  const check = useCallback(async (q: string, live = true): Promise<Lint | null> => {
    let signal: AbortSignal | undefined;
    if (live) {
      inflight.current?.abort();
      signal = (inflight.current = new AbortController()).signal;
    }
    try {
      const data = await api<{ slug: string | null; diagnostics: Diagnostic[] }>('POST', '/api/v1/reports/lint', { query: q }, signal);
      const result = { text: q, slug: data.slug, diagnostics: data.diagnostics };
      setLint(result);
      return result;
    } catch (e) {
      if ((e as Error).name !== 'AbortError') setOutcome({ kind: 'error', error: e as Error });
      return null;
    }
  }, []);

  // Live diagnostics: a moment after typing stops.
  useEffect(() => {
    kept = text;
    const t = setTimeout(() => void check(text), LINT_DELAY_MS);
    return () => clearTimeout(t);
  }, [text, check]);

  const run = async (what: 'execute' | 'count') => {
    setBusy(true);
    try {
      const checked = lint?.text === text ? lint : await check(text, false);
      if (!checked) return;
      const errors = checked.diagnostics.filter((d) => d.severity === 'error');
      const listed = () => {
        setOutcome({ kind: 'listed', text: checked.text, errors: errors.length });
        if (errors[0]) select(errors[0]);
      };
      if (checked.slug === null) {
        listed();
        return;
      }
      try {
        const started = performance.now();
        const data = await api<{ records?: Record<string, unknown>[]; count?: number; message?: string }>('POST', `/api/v1/reports/${what}`, { query: text, slug: checked.slug });
        const ms = Math.round(performance.now() - started);
        const message = data.message === undefined ? {} : { message: data.message };
        setOutcome(what === 'execute' ? { kind: 'rows', records: data.records ?? [], ms, ...message } : { kind: 'count', count: data.count ?? 0, ms, ...message });
      } catch (e) {
        // The service's refusal of a problem the list already shows is that problem again.
        if (e instanceof ApiError && errors.some((d) => d.code === e.code && d.message === e.message)) listed();
        else throw e;
      }
    } catch (e) {
      setOutcome({ kind: 'error', error: e as Error });
    } finally {
      setBusy(false);
    }
  };

  const insert = (word: string) => {
    const t = textarea.current;
    const at = t ? t.selectionStart : text.length;
    const end = t ? t.selectionEnd : text.length;
    const before = text.slice(0, at);
    const glue = before === '' || /[\s(,.]$/.test(before) ? '' : ' ';
    const next = before + glue + word + text.slice(end);
    setText(next);
    const caret = at + glue.length + word.length;
    requestAnimationFrame(() => {
      t?.focus();
      t?.setSelectionRange(caret, caret);
    });
  };

  const select = (d: Diagnostic) => {
    const t = textarea.current;
    if (!t) return;
    t.focus();
    t.setSelectionRange(d.span.start, Math.max(d.span.start, d.span.end));
  };

  const fix = (d: Diagnostic) => {
    if (!d.fix) return;
    const next = applyFix(text, d.fix);
    setText(next);
    void check(next);
    requestAnimationFrame(() => textarea.current?.focus());
  };

  const current = lint?.text === text ? lint.diagnostics : lint?.diagnostics ?? [];
  return (
    <section aria-labelledby="playground-title" class="playground">
      <div class="page-head">
        <h1 id="playground-title">Query playground</h1>
        <p class="muted">Write a query in the object query language; problems are underlined as you type. Queries run read-only, as you, through the reports API.</p>
      </div>
      <div class="playground-grid">
        <SchemaPanel objects={schema.objects} error={schema.error} from={lint?.slug ?? null} onInsert={insert} />
        <div class="work">
          <div class="card">
            <label for="query" class="editor-label">Query</label>
            <QueryEditor text={text} diagnostics={lint?.text === text ? current : []} onInput={setText} onRun={() => run('execute')} textarea={textarea} />
            <div class="toolbar">
              <button type="button" class="primary" disabled={busy} onClick={() => run('execute')}>Run</button>
              <button type="button" disabled={busy} onClick={() => run('count')}>Count</button>
              <span id="query-help" class="muted small">Ctrl+Enter runs the query. {lint?.slug ? <>Reads from <code>{lint.slug}</code>.</> : null}</span>
            </div>
            <Diagnostics diagnostics={current} onSelect={select} onFix={fix} />
          </div>
          <Results outcome={outcome} busy={busy} text={text} />
        </div>
      </div>
    </section>
  );
}

function Diagnostics({ diagnostics, onSelect, onFix }: { diagnostics: readonly Diagnostic[]; onSelect: (d: Diagnostic) => void; onFix: (d: Diagnostic) => void }) {
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  const warnings = diagnostics.length - errors;
  return (
    <div class="diagnostics">
      <p id="diagnostics-summary" class={`summary ${errors > 0 ? 'bad' : warnings > 0 ? 'warn' : 'good'}`} role="status">
        {diagnostics.length === 0 ? 'No problems found.' : `${plural(errors, 'error')}, ${plural(warnings, 'warning')}`}
      </p>
      {diagnostics.length > 0 && (
        <ul aria-label="Problems">
          {diagnostics.map((d, i) => (
            <li key={`${d.code}-${d.span.start}-${i}`} class={`diagnostic ${d.severity}`}>
              <div class="diagnostic-head">
                <span class={`badge ${d.severity}`}>{d.severity}</span>
                <button type="button" class="link position" onClick={() => onSelect(d)}>Line {d.span.line}, column {d.span.column}</button>
                <code class="code">{d.code}</code>
              </div>
              <p class="message" id={`diagnostic-${i}`}>{d.message}</p>
              {d.hint && <p class="hint">Hint: {d.hint}</p>}
              {d.fix && <button type="button" class="fix" aria-describedby={`diagnostic-${i}`} onClick={() => onFix(d)}>Apply fix</button>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function Results({ outcome, busy, text }: { outcome: Outcome | null; busy: boolean; text: string }) {
  if (busy) return <p class="muted" role="status">Running…</p>;
  if (!outcome) return null;
  if (outcome.kind === 'listed') {
    // Once the text changes, the line no longer speaks of it.
    if (outcome.text !== text) return null;
    return <p class="not-run" role="status">Not run: fix the {outcome.errors === 1 ? 'error' : `${plural(outcome.errors, 'error')}`} listed above first.</p>;
  }
  if (outcome.kind === 'error') {
    const e = outcome.error;
    return <ErrorBanner error={{ message: e.message, hint: e instanceof ApiError ? e.hint : undefined }} />;
  }
  if (outcome.kind === 'count') {
    return (
      <div class="card result" role="status">
        <p class="count">Count: <strong>{outcome.count.toLocaleString()}</strong> <span class="muted">in {outcome.ms} ms</span></p>
        {outcome.message && <p class="banner info">{outcome.message}</p>}
      </div>
    );
  }
  const { records } = outcome;
  const columns = records.length > 0 ? Object.keys(records[0]!) : [];
  return (
    <div class="card result">
      <p class="result-line" role="status">{plural(records.length, 'row')} in {outcome.ms} ms
        {records.length > SHOWN_ROWS && <span class="muted"> (showing the first {SHOWN_ROWS.toLocaleString()})</span>}</p>
      {outcome.message && <p class="banner info">{outcome.message}</p>}
      {records.length > 0 && (
        <div class="table-wrap results">
          <table>
            <caption class="visually-hidden">Query results</caption>
            <thead><tr>{columns.map((c) => <th key={c} scope="col">{c}</th>)}</tr></thead>
            <tbody>
              {records.slice(0, SHOWN_ROWS).map((r, i) => (
                <tr key={i}>{columns.map((c) => <td key={c} class={r[c] === null || r[c] === undefined ? 'null' : typeof r[c] === 'number' ? 'num' : undefined}>{cellText(r[c])}</td>)}</tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
