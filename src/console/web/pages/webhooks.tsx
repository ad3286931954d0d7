import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, type Session } from '../api.js';
import { CopyButton, Dialog, ErrorBanner } from '../components.js';
import { dateTime, relative } from '../format.js';

/** An endpoint as GET /api/v1/webhooks lists it (docs/webhooks.md). */
interface Webhook {
  readonly id: string;
  readonly url: string;
  readonly description: string | null;
  readonly objects: readonly string[] | null;
  readonly operations: readonly string[] | null;
  readonly status: 'active' | 'paused' | 'disabled';
  readonly disabled_reason: string | null;
  readonly cursor: string;
  readonly next_attempt_at: number | null;
  readonly failing_since: number | null;
  readonly created_at: number;
  readonly created_by: string;
  readonly updated_at: number;
}

interface Delivery {
  readonly id: string;
  readonly event_id: string;
  readonly cursor: string;
  readonly attempted_at: number;
  readonly outcome: 'succeeded' | 'failed' | 'dead_lettered';
  readonly http_status: number | null;
  readonly latency_ms: number | null;
  readonly error: string | null;
  readonly next_attempt_at: number | null;
}

interface Answered {
  readonly success: boolean;
  readonly http_status: number | null;
  readonly latency_ms: number;
  readonly error: string | null;
}

const OPERATIONS = ['created', 'updated', 'deleted', 'restored', 'purged'] as const;
const OUTCOMES: readonly { readonly value: string; readonly label: string }[] = [
  { value: '', label: 'Every attempt' },
  { value: 'succeeded', label: 'Succeeded' },
  { value: 'failed', label: 'Failed' },
  { value: 'dead_lettered', label: 'Dead-lettered' },
];

type Pending = { readonly action: 'delete' | 'rotate'; readonly hook: Webhook } | null;
type Notice = { readonly text: string; readonly good: boolean } | null;

const path = (hook: { id: string }, rest = '') => `/api/v1/webhooks/${encodeURIComponent(hook.id)}${rest}`;

/** What a receiver answered, in a sentence. */
function answerText(what: string, a: Answered): string {
  const status = a.http_status === null ? 'no answer' : `HTTP ${a.http_status}`;
  return a.success ? `${what}: the receiver answered ${status} in ${a.latency_ms} ms.` : `${what} failed after ${a.latency_ms} ms: ${a.error ?? status}.`;
}

/** The organization's webhook endpoints, for its admins: add, pause, rotate, test, delete, and each one's delivery log. */
export function WebhooksPage({ session }: { session: Session }) {
  const [hooks, setHooks] = useState<readonly Webhook[] | null>(null);
  const [last, setLast] = useState<ReadonlyMap<string, Delivery>>(new Map());
  const [error, setError] = useState<ApiError | Error | null>(null);
  const [notice, setNotice] = useState<Notice>(null);
  const [secret, setSecret] = useState<{ readonly hook: Webhook; readonly secret: string; readonly rotated: boolean } | null>(null);
  const [pending, setPending] = useState<Pending>(null);
  const [open, setOpen] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      const { webhooks } = await api<{ webhooks: Webhook[] }>('GET', '/api/v1/webhooks');
      setHooks(webhooks);
      // Each endpoint's newest attempt, for the list's "last delivery".
      const newest = await Promise.all(webhooks.map(async (w) => [w.id, (await api<{ deliveries: Delivery[] }>('GET', path(w, '/deliveries?limit=1'))).deliveries[0]] as const));
      setLast(new Map(newest.filter((e): e is readonly [string, Delivery] => e[1] !== undefined)));
    } catch (e) {
      setError(e as Error);
    }
  }, []);
  useEffect(() => void load(), [load]);

  const act = async (what: () => Promise<void>) => {
    setError(null);
    setNotice(null);
    try {
      await what();
    } catch (e) {
      setError(e as Error);
    }
    await load();
  };

  const shown = hooks?.find((h) => h.id === open) ?? null;

  return (
    <section aria-labelledby="webhooks-title">
      <div class="page-head">
        <h1 id="webhooks-title">Webhooks</h1>
        <p class="muted">Every change to the records of {session.org_id} is POSTed to these endpoints as it commits, in order, signed as Standard Webhooks, and retried for 24 hours.</p>
      </div>
      <ErrorBanner error={error} />
      {notice && <p class={`banner ${notice.good ? 'info' : 'error'}`} role="status">{notice.text}</p>}
      {secret && <NewSecret {...secret} onDone={() => setSecret(null)} />}
      <AddEndpoint onAdded={async (hook, s) => { setError(null); setSecret({ hook, secret: s, rotated: false }); await load(); }} onError={setError} />
      <EndpointTable hooks={hooks} last={last} open={open}
        onOpen={(h) => setOpen(open === h.id ? null : h.id)}
        onPause={(h) => act(async () => { await api('PATCH', path(h), { status: h.status === 'active' ? 'paused' : 'active' }); })}
        onTest={(h) => act(async () => {
          const a = await api<Answered>('POST', path(h, '/test'));
          setNotice({ text: answerText(`Test ping to ${h.url}`, a), good: a.success });
        })}
        onConfirm={(action, hook) => setPending({ action, hook })} />
      {shown && <DeliveryLog key={shown.id} hook={shown} onChanged={load} />}
      {pending && (
        <Confirm pending={pending} onCancel={() => setPending(null)} onConfirm={() => act(async () => {
          const hook = pending.hook;
          setPending(null);
          if (pending.action === 'delete') {
            await api('DELETE', path(hook));
            if (open === hook.id) setOpen(null);
            setNotice({ text: `The endpoint ${hook.url} is deleted.`, good: true });
          } else {
            const rotated = await api<Webhook & { secret: string }>('POST', path(hook, '/rotate-secret'));
            setSecret({ hook: rotated, secret: rotated.secret, rotated: true });
          }
        })} />
      )}
    </section>
  );
}

function AddEndpoint({ onAdded, onError }: { onAdded: (hook: Webhook, secret: string) => Promise<void>; onError: (e: Error) => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [objects, setObjects] = useState('');
  const [operations, setOperations] = useState<ReadonlySet<string>>(new Set());
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const slugs = objects.split(/[\s,]+/).filter((s) => s !== '');
    try {
      const made = await api<Webhook & { secret: string }>('POST', '/api/v1/webhooks', {
        url: url.trim(),
        ...(description.trim() === '' ? {} : { description: description.trim() }),
        ...(slugs.length === 0 ? {} : { objects: slugs }),
        ...(operations.size === 0 ? {} : { operations: OPERATIONS.filter((o) => operations.has(o)) }),
      });
      setUrl('');
      setDescription('');
      setObjects('');
      setOperations(new Set());
      await onAdded(made, made.secret);
    } catch (err) {
      onError(err as Error);
    } finally {
      setBusy(false);
    }
  };

  const toggle = (op: string) => {
    const next = new Set(operations);
    if (!next.delete(op)) next.add(op);
    setOperations(next);
  };

  return (
    <form class="card add-webhook" onSubmit={submit} aria-labelledby="add-webhook-title">
      <h2 id="add-webhook-title">Add an endpoint</h2>
      <div class="fields">
        <div class="field grow">
          <label for="webhook-url">URL</label>
          <input id="webhook-url" type="text" inputMode="url" required maxLength={2000} placeholder="https://hooks.example.com/oql" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </div>
        <div class="field grow">
          <label for="webhook-description">Description</label>
          <input id="webhook-description" type="text" maxLength={500} placeholder="Warehouse sync" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="webhook-objects">Objects</label>
          <input id="webhook-objects" type="text" placeholder="every object" value={objects} onInput={(e) => setObjects(e.currentTarget.value)} />
        </div>
      </div>
      <fieldset class="operations">
        <legend>Operations <span class="muted small">(none ticked: every operation)</span></legend>
        {OPERATIONS.map((op) => (
          <label key={op} class="check"><input type="checkbox" checked={operations.has(op)} onChange={() => toggle(op)} /> {op}</label>
        ))}
        <button type="submit" class="primary" disabled={busy}>Add endpoint</button>
      </fieldset>
      <p class="muted small">Objects: slugs separated by commas, such as <span class="mono">contact, account</span>. The endpoint receives what commits from now on; its signing secret is shown once.</p>
    </form>
  );
}

/** The signing secret, once: copy it now, it is never shown again. */
function NewSecret({ hook, secret, rotated, onDone }: { hook: Webhook; secret: string; rotated: boolean; onDone: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => field.current?.focus(), []);
  return (
    <div class="card new-key" role="region" aria-labelledby="new-secret-title">
      <h2 id="new-secret-title">{rotated ? 'New signing secret' : 'Signing secret'} for {hook.url}</h2>
      <p>Copy it now and give it to your receiver: <strong>it will not be shown again.</strong>
        {rotated && ' The previous secret keeps signing beside it for 24 hours, so your receiver can switch over without missing a delivery.'}</p>
      <div class="secret-row">
        <input ref={field} aria-label="Signing secret" class="secret" type="text" readOnly value={secret} onFocus={(e) => e.currentTarget.select()} />
        <CopyButton text={secret} fallback={() => field.current} />
        <button type="button" class="quiet" onClick={onDone}>Done</button>
      </div>
    </div>
  );
}

function EndpointTable({ hooks, last, open, onOpen, onPause, onTest, onConfirm }: {
  hooks: readonly Webhook[] | null;
  last: ReadonlyMap<string, Delivery>;
  open: string | null;
  onOpen: (h: Webhook) => void;
  onPause: (h: Webhook) => void;
  onTest: (h: Webhook) => void;
  onConfirm: (action: 'delete' | 'rotate', h: Webhook) => void;
}) {
  if (hooks === null) return <p role="status" class="muted">Loading endpoints…</p>;
  if (hooks.length === 0) return <p class="empty">No endpoints yet. Add one above.</p>;
  const now = Date.now();
  return (
    <div class="table-wrap">
      <table class="webhooks">
        <caption>{hooks.length === 1 ? '1 endpoint' : `${hooks.length} endpoints`}, oldest first</caption>
        <thead>
          <tr><th scope="col">Endpoint</th><th scope="col">Sends</th><th scope="col">Status</th><th scope="col">Last delivery</th>
            <th scope="col"><span class="visually-hidden">Actions</span></th></tr>
        </thead>
        <tbody>
          {hooks.map((h) => {
            const d = last.get(h.id);
            return (
              <tr key={h.id}>
                <th scope="row" id={`webhook-${h.id}`}>
                  <span class="mono url">{h.url}</span>
                  {h.description && <div>{h.description}</div>}
                  <div class="muted small mono">{h.id}</div>
                </th>
                <td>
                  <div>{h.objects === null ? <span class="muted">every object</span> : h.objects.join(', ')}</div>
                  <div class="muted small">{h.operations === null ? 'every operation' : h.operations.join(', ')}</div>
                </td>
                <td>
                  <span class={`status status-${h.status}`}>{h.status}</span>
                  {h.disabled_reason && <div class="muted small reason">{h.disabled_reason}</div>}
                  {h.next_attempt_at !== null && <div class="muted small">retrying {relative(h.next_attempt_at, now)}</div>}
                </td>
                <td>
                  {d === undefined ? <span class="muted">none yet</span> : (
                    <>
                      <span class={`status outcome-${d.outcome}`}>{d.http_status ?? d.outcome.replace('_', ' ')}</span>{' '}
                      <span title={dateTime(d.attempted_at, true)}>{relative(d.attempted_at, now)}</span>
                    </>
                  )}
                </td>
                <td class="actions">
                  <button type="button" class="quiet" aria-describedby={`webhook-${h.id}`} aria-expanded={open === h.id} onClick={() => onOpen(h)}>Deliveries</button>
                  <button type="button" class="quiet" aria-describedby={`webhook-${h.id}`} onClick={() => onTest(h)}>Send test</button>
                  <button type="button" class="quiet" aria-describedby={`webhook-${h.id}`} onClick={() => onPause(h)}>{h.status === 'active' ? 'Pause' : 'Resume'}</button>
                  <button type="button" class="quiet" aria-describedby={`webhook-${h.id}`} onClick={() => onConfirm('rotate', h)}>Rotate secret</button>
                  <button type="button" class="danger" aria-describedby={`webhook-${h.id}`} onClick={() => onConfirm('delete', h)}>Delete</button>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** An endpoint's attempts, newest first, a page at a time; a dead letter can be retried, and the endpoint replayed from a cursor. */
function DeliveryLog({ hook, onChanged }: { hook: Webhook; onChanged: () => Promise<void> }) {
  const [outcome, setOutcome] = useState('');
  const [rows, setRows] = useState<readonly Delivery[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | Error | null>(null);
  const [notice, setNotice] = useState<Notice>(null);
  const [after, setAfter] = useState('');
  const [busy, setBusy] = useState(false);

  const page = useCallback(async (before: string | null) => {
    const q = new URLSearchParams({ limit: '25' });
    if (outcome !== '') q.set('status', outcome);
    if (before !== null) q.set('before', before);
    return api<{ deliveries: Delivery[]; next_before: string | null }>('GET', path(hook, `/deliveries?${q}`));
  }, [hook, outcome]);
  const load = useCallback(async () => {
    try {
      const p = await page(null);
      setRows(p.deliveries);
      setNext(p.next_before);
    } catch (e) {
      setError(e as Error);
    }
  }, [page]);
  useEffect(() => void load(), [load]);

  const run = async (what: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    setNotice(null);
    try {
      await what();
    } catch (e) {
      setError(e as Error);
    } finally {
      setBusy(false);
    }
    await Promise.all([load(), onChanged()]);
  };

  const retry = (d: Delivery) => run(async () => {
    const a = await api<Answered & { delivery: Delivery }>('POST', path(hook, `/deliveries/${encodeURIComponent(d.id)}/retry`));
    setNotice({ text: answerText(`Retry of change ${d.cursor}`, a) + (a.success ? '' : ' It stays dead-lettered.'), good: a.success });
  });
  const replay = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const w = await api<Webhook>('POST', path(hook, '/replay'), { after: after.trim() });
      setAfter('');
      setNotice({ text: `Replaying: every change after ${w.cursor} is sent again, in order.`, good: true });
    });
  };

  const now = Date.now();
  return (
    <section class="card deliveries" aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries to <span class="mono">{hook.url}</span></h2>
      <p class="muted small">Delivered up to change <span class="mono">{hook.cursor}</span>
        {hook.failing_since !== null && `; failing since ${dateTime(hook.failing_since, true)}`}.</p>
      <ErrorBanner error={error} />
      {notice && <p class={`banner ${notice.good ? 'info' : 'error'}`} role="status">{notice.text}</p>}
      <div class="fields">
        <div class="field">
          <label for="delivery-outcome">Show</label>
          <select id="delivery-outcome" value={outcome} onChange={(e) => setOutcome(e.currentTarget.value)}>
            {OUTCOMES.map((o) => <option key={o.value} value={o.value}>{o.label}</option>)}
          </select>
        </div>
        <form class="fields replay" onSubmit={replay}>
          <div class="field">
            <label for="replay-after">Replay every change after</label>
            <input id="replay-after" type="text" required maxLength={40} placeholder="a cursor, such as c2n9c" class="mono" value={after} onInput={(e) => setAfter(e.currentTarget.value)} />
          </div>
          <button type="submit" disabled={busy}>Replay</button>
        </form>
      </div>
      {rows === null ? <p role="status" class="muted">Loading deliveries…</p> : rows.length === 0 ? <p class="empty">No deliveries {outcome === '' ? 'yet' : 'of this kind'}.</p> : (
        <div class="table-wrap">
          <table class="deliveries">
            <caption>{rows.length === 1 ? '1 attempt' : `${rows.length} attempts`}, newest first</caption>
            <thead>
              <tr><th scope="col">Time</th><th scope="col">Change</th><th scope="col">Outcome</th><th scope="col" class="num">HTTP</th>
                <th scope="col" class="num">Latency</th><th scope="col">Error</th><th scope="col">Next attempt</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.id}>
                  <td title={relative(d.attempted_at, now)}>{dateTime(d.attempted_at, true)}</td>
                  <th scope="row" id={`delivery-${d.id}`} class="mono"><span title={`webhook-id ${d.event_id}`}>{d.cursor}</span><div class="muted small">{d.event_id}</div></th>
                  <td><span class={`status outcome-${d.outcome}`}>{d.outcome.replace('_', ' ')}</span></td>
                  <td class="num">{d.http_status ?? <span class="muted">none</span>}</td>
                  <td class="num">{d.latency_ms === null ? '' : `${d.latency_ms} ms`}</td>
                  <td class="error-text">{d.error ?? ''}</td>
                  <td>{d.next_attempt_at === null ? '' : dateTime(d.next_attempt_at, true)}</td>
                  <td class="actions">
                    {d.outcome === 'dead_lettered' && <button type="button" aria-describedby={`delivery-${d.id}`} disabled={busy} onClick={() => void retry(d)}>Retry</button>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {next !== null && (
        <button type="button" class="quiet" onClick={async () => {
          try {
            const p = await page(next);
            setRows((shown) => [...(shown ?? []), ...p.deliveries]);
            setNext(p.next_before);
          } catch (e) {
            setError(e as Error);
          }
        }}>Show older attempts</button>
      )}
    </section>
  );
}

function Confirm({ pending, onCancel, onConfirm }: { pending: NonNullable<Pending>; onCancel: () => void; onConfirm: () => Promise<void> }) {
  const [busy, setBusy] = useState(false);
  const remove = pending.action === 'delete';
  return (
    <Dialog title={remove ? 'Delete this endpoint?' : 'Rotate its signing secret?'} onClose={onCancel}>
      <p class="mono">{pending.hook.url}</p>
      {remove
        ? <p>No more changes are sent to it, and its delivery log is removed. This cannot be undone.</p>
        : <p>A new secret is made now and shown once. The current one keeps signing beside it for 24 hours: give the new one to your receiver before then.</p>}
      <div class="dialog-buttons">
        <button type="button" class="quiet" onClick={onCancel} autoFocus>Cancel</button>
        <button type="button" class={remove ? 'danger solid' : 'primary'} disabled={busy}
          onClick={async () => { setBusy(true); await onConfirm(); }}>{remove ? 'Delete endpoint' : 'Rotate secret'}</button>
      </div>
    </Dialog>
  );
}
