import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { Dialog, ErrorBanner } from '../components.js';
import { dateTime, isoTime } from '../format.js';
import type { ToolLog } from '../../../wire/tool-log.js';


interface Filters {
  readonly tool: string;
  readonly user: string;
  readonly from: string;
  readonly to: string;
}

const NO_FILTERS: Filters = { tool: '', user: '', from: '', to: '' };

/** The body of the endpoint: its own filters and pointer, nothing the console adds. */
function bodyOf(f: Filters, pointer: string | null) {
  const since = f.from === '' ? NaN : new Date(f.from).getTime();
  const until = f.to === '' ? NaN : new Date(f.to).getTime();
  return {
    ...(pointer === null ? {} : { pointer }),
    ...(f.tool.trim() === '' ? {} : { tool_name: f.tool.trim() }),
    ...(f.user.trim() === '' ? {} : { user_id: f.user.trim() }),
    ...(Number.isFinite(since) ? { since } : {}),
    ...(Number.isFinite(until) ? { until } : {}),
  };
}

export function LogsPage() {
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [applied, setApplied] = useState<Filters>(NO_FILTERS);
  const [logs, setLogs] = useState<readonly ToolLog[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [open, setOpen] = useState<ToolLog | null>(null);
  const [tools, setTools] = useState<readonly string[]>([]);

  const load = useCallback(async (filters: Filters, pointer: string | null) => {
    setError(null);
    try {
      const page = await api<{ logs: ToolLog[]; next: string | null }>('POST', '/api/v1/org/tool/mcp/logs/list/', bodyOf(filters, pointer));
      setLogs((before) => (pointer === null ? page.logs : [...(before ?? []), ...page.logs]));
      setNext(page.next);
      setTools((known) => [...new Set([...known, ...page.logs.map((l) => l.tool_name)])].sort());
    } catch (e) {
      setError(e as Error);
    }
  }, []);
  useEffect(() => void load(applied, null), [applied, load]);

  const field = (name: keyof Filters) => (e: Event) => setDraft({ ...draft, [name]: (e.currentTarget as HTMLInputElement).value });

  return (
    <section aria-labelledby="logs-title">
      <div class="page-head">
        <h1 id="logs-title">Tool logs</h1>
        <p class="muted">Every MCP tool call of your organization, newest first: the same entries and pages as <code>POST /api/v1/org/tool/mcp/logs/list/</code>.</p>
      </div>
      <form class="card filters" onSubmit={(e) => { e.preventDefault(); setApplied(draft); }} aria-label="Filter tool logs">
        <div class="fields">
          <div class="field">
            <label for="log-tool">Tool</label>
            <input id="log-tool" list="log-tools" value={draft.tool} onInput={field('tool')} placeholder="any tool" />
            <datalist id="log-tools">{tools.map((t) => <option key={t} value={t} />)}</datalist>
          </div>
          <div class="field">
            <label for="log-user">User</label>
            <input id="log-user" value={draft.user} onInput={field('user')} placeholder="any user" />
          </div>
          <div class="field">
            <label for="log-from">From</label>
            <input id="log-from" type="datetime-local" value={draft.from} onInput={field('from')} />
          </div>
          <div class="field">
            <label for="log-to">To</label>
            <input id="log-to" type="datetime-local" value={draft.to} onInput={field('to')} />
          </div>
          <button type="submit" class="primary">Apply filters</button>
          <button type="button" class="quiet" onClick={() => { setDraft(NO_FILTERS); setApplied(NO_FILTERS); }}>Clear</button>
        </div>
      </form>
      <ErrorBanner error={error} />
      {logs === null && !error && <p class="muted" role="status">Loading…</p>}
      {logs !== null && logs.length === 0 && <p class="empty">No tool calls match.</p>}
      {logs !== null && logs.length > 0 && (
        <div class="table-wrap">
          <table class="logs">
            <caption>{logs.length === 1 ? '1 call' : `${logs.length} calls`} shown, newest first</caption>
            <thead><tr><th scope="col">Time</th><th scope="col">Tool</th><th scope="col">User</th><th scope="col">Status</th><th scope="col" class="num">Duration</th><th scope="col"><span class="visually-hidden">Details</span></th></tr></thead>
            <tbody>
              {logs.map((l) => (
                <tr key={l.id}>
                  <td><time dateTime={isoTime(l.tool_call_timestamp)}>{dateTime(l.tool_call_timestamp, true)}</time></td>
                  <td><code>{l.tool_name}</code></td>
                  <td>{l.user_id}</td>
                  <td><span class={`status ${l.response_code < 400 ? 'status-active' : 'status-revoked'}`}>{l.response_code}</span></td>
                  <td class="num">{l.response_time.toLocaleString(undefined, { maximumFractionDigits: 1 })} ms</td>
                  <td class="actions"><button type="button" class="quiet" aria-label={`Open the ${l.tool_name} call of ${dateTime(l.tool_call_timestamp, true)}`} onClick={() => setOpen(l)}>Open</button></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {next !== null && <button type="button" class="more" onClick={() => load(applied, next)}>Load more</button>}
      {open && <LogEntry log={open} onClose={() => setOpen(null)} />}
    </section>
  );
}

function LogEntry({ log, onClose }: { log: ToolLog; onClose: () => void }) {
  return (
    <Dialog title={`Tool call ${log.tool_name}`} onClose={onClose} wide>
      <dl class="entry">
        <dt>Id</dt><dd class="mono">{log.id}</dd>
        <dt>Time</dt><dd>{dateTime(log.tool_call_timestamp, true)} <span class="muted mono">{isoTime(log.tool_call_timestamp)} ({log.tool_call_timestamp})</span></dd>
        <dt>Tool</dt><dd><code>{log.tool_name}</code></dd>
        <dt>User</dt><dd>{log.user_id}</dd>
        <dt>Response code</dt><dd>{log.response_code}</dd>
        <dt>Response time</dt><dd>{log.response_time} ms</dd>
      </dl>
      <h3>Input</h3>
      {log.truncated && <p class="cut-mark" id="input-cut">Cut to the log's entry size: the call was given more than this shows.</p>}
      <pre class="json" tabIndex={0} aria-label="Input parameters" aria-describedby={log.truncated ? 'input-cut' : undefined}>{JSON.stringify(log.input_params, null, 2)}</pre>
      <h3>Response</h3>
      {log.response === null
        ? <p class="muted">Not recorded: this call was logged before the log kept what calls answered.</p>
        : <>
          {log.response_truncated && <p class="cut-mark" id="response-cut">Cut to the log's entry size: the call answered more than this shows.</p>}
          <pre class="json" tabIndex={0} aria-label="Response" aria-describedby={log.response_truncated ? 'response-cut' : undefined}>
            {log.response}{log.response_truncated && <span class="cut-end">{' … cut here'}</span>}
          </pre>
        </>}
      <div class="dialog-buttons"><button type="button" class="primary" onClick={onClose} autoFocus>Close</button></div>
    </Dialog>
  );
}
