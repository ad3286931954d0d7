import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, type Session } from '../api.js';
import { CopyButton, Dialog, ErrorBanner } from '../components.js';
import { dateTime, dayAndTime, relative } from '../format.js';
import { ownUserOf } from '../../../wire/api-key.js';

/** A key as GET /api/v1/keys lists it. */
interface Key {
  readonly id: string;
  readonly name: string | null;
  readonly role: string;
  readonly user_id: string;
  readonly prefix: string | null;
  readonly last4: string | null;
  readonly created_at: number;
  readonly created_by: string | null;
  readonly expires_at: number | null;
  readonly last_used_at: number | null;
  readonly revoked_at: number | null;
  readonly revoked_by: string | null;
  readonly rolled_from: string | null;
  readonly status: 'active' | 'expired' | 'revoked';
  readonly can_manage: boolean;
}

interface Issued {
  readonly key: Key;
  readonly secret: string;
  readonly previous?: Key;
}

const EXPIRY_CHOICES: readonly { readonly label: string; readonly days: number | null }[] = [
  { label: 'Never', days: null },
  { label: 'In 7 days', days: 7 },
  { label: 'In 30 days', days: 30 },
  { label: 'In 90 days', days: 90 },
  { label: 'In 1 year', days: 365 },
];

type Pending = { readonly action: 'revoke' | 'roll'; readonly key: Key } | null;

export function KeysPage({ session }: { session: Session }) {
  const [keys, setKeys] = useState<readonly Key[] | null>(null);
  const [error, setError] = useState<ApiError | Error | null>(null);
  const [issued, setIssued] = useState<Issued | null>(null);
  const [pending, setPending] = useState<Pending>(null);
  // The listing comes a page at a time: the cursor of the page after those shown, null after the last.
  const [next, setNext] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      const page = await api<{ keys: Key[]; next: string | null }>('GET', '/api/v1/keys');
      setKeys(page.keys);
      setNext(page.next);
    } catch (e) {
      setError(e as Error);
    }
  }, []);
  const more = async () => {
    if (next === null) return;
    try {
      const page = await api<{ keys: Key[]; next: string | null }>('GET', `/api/v1/keys?cursor=${encodeURIComponent(next)}`);
      setKeys((shown) => [...(shown ?? []), ...page.keys]);
      setNext(page.next);
    } catch (e) {
      setError(e as Error);
    }
  };
  useEffect(() => void load(), [load]);

  const act = async (action: 'revoke' | 'roll', key: Key) => {
    setError(null);
    try {
      if (action === 'roll') setIssued(await api<Issued>('POST', `/api/v1/keys/${encodeURIComponent(key.id)}/roll`));
      else await api('POST', `/api/v1/keys/${encodeURIComponent(key.id)}/revoke`);
      setPending(null);
      await load();
    } catch (e) {
      setPending(null);
      setError(e as Error);
    }
  };

  const scope = session.role === 'member'
    ? 'the keys that act as you'
    : `every key of ${session.org_id}`;

  return (
    <section aria-labelledby="keys-title">
      <div class="page-head">
        <h1 id="keys-title">API keys</h1>
        <p class="muted">Keys let scripts, connectors and agents call the API as a user of {session.org_id}. You see {scope}.</p>
      </div>
      <ErrorBanner error={error} />
      {issued && <NewKey issued={issued} onDone={() => setIssued(null)} />}
      <CreateKey roles={session.assignable_roles} onCreated={async (i) => { setIssued(i); setError(null); await load(); }} onError={setError} />
      <KeyTable keys={keys} onAction={(action, key) => setPending({ action, key })} />
      {next !== null && <button type="button" class="quiet" onClick={() => void more()}>Show more keys</button>}
      {pending && (
        <ConfirmAction pending={pending} onCancel={() => setPending(null)} onConfirm={() => act(pending.action, pending.key)} />
      )}
    </section>
  );
}

function CreateKey({ roles, onCreated, onError }: { roles: readonly string[]; onCreated: (i: Issued) => void; onError: (e: Error) => void }) {
  const [name, setName] = useState('');
  const [role, setRole] = useState(roles[0] ?? 'member');
  const [expiry, setExpiry] = useState(0);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const days = EXPIRY_CHOICES[expiry]!.days;
    try {
      const issued = await api<Issued>('POST', '/api/v1/keys', {
        name: name.trim(), role, ...(days === null ? {} : { expires_at: Date.now() + days * 86_400_000 }),
      });
      setName('');
      onCreated(issued);
    } catch (err) {
      onError(err as Error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="card create-key" onSubmit={submit} aria-labelledby="create-title">
      <h2 id="create-title">Create a key</h2>
      <div class="fields">
        <div class="field grow">
          <label for="key-name">Name</label>
          <input id="key-name" type="text" required maxLength={100} placeholder="Nightly export" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="key-role">Role</label>
          <select id="key-role" value={role} onChange={(e) => setRole(e.currentTarget.value)}>
            {roles.map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
        </div>
        <div class="field">
          <label for="key-expiry">Expires</label>
          <select id="key-expiry" value={String(expiry)} onChange={(e) => setExpiry(Number(e.currentTarget.value))}>
            {EXPIRY_CHOICES.map((c, i) => <option key={c.label} value={String(i)}>{c.label}</option>)}
          </select>
        </div>
        <button type="submit" class="primary" disabled={busy}>Create key</button>
      </div>
      <p class="muted small">A key can have your role or a lower one. The whole key is shown once, right after it is created.</p>
    </form>
  );
}

/** The whole key, once: copy it now, it is never shown again. */
function NewKey({ issued, onDone }: { issued: Issued; onDone: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => field.current?.focus(), []);
  return (
    <div class="card new-key" role="region" aria-labelledby="new-key-title">
      <h2 id="new-key-title">{issued.previous ? 'Your rolled key' : 'Your new key'}: {issued.key.name ?? issued.key.id}</h2>
      <p>Copy it now and store it somewhere safe: <strong>it will not be shown again.</strong>
        {issued.previous && ` The old key keeps working until ${dateTime(issued.previous.expires_at)}, then expires.`}</p>
      <div class="secret-row">
        <input ref={field} aria-label="New API key" class="secret" type="text" readOnly value={issued.secret} onFocus={(e) => e.currentTarget.select()} />
        <CopyButton text={issued.secret} fallback={() => field.current} />
        <button type="button" class="quiet" onClick={onDone}>Done</button>
      </div>
    </div>
  );
}

function KeyTable({ keys, onAction }: { keys: readonly Key[] | null; onAction: (a: 'revoke' | 'roll', k: Key) => void }) {
  if (keys === null) return <p role="status" class="muted">Loading keys…</p>;
  if (keys.length === 0) return <p class="empty">No keys yet. Create one above.</p>;
  const now = Date.now();
  return (
    <div class="table-wrap">
      <table class="keys">
        <caption>{keys.length === 1 ? '1 key' : `${keys.length} keys`}, newest first</caption>
        <thead>
          <tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Role</th><th scope="col">Owner</th><th scope="col">Created</th>
            <th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr key={k.id} class={k.status !== 'active' ? 'dead' : undefined}>
              <th scope="row" id={`key-${k.id}`}>{k.name ?? <span class="muted">unnamed</span>}<div class="muted small mono">{k.id}</div></th>
              <td class="mono">{k.prefix !== null ? `${k.prefix}…${k.last4}` : <span class="muted">not recorded</span>}</td>
              <td><span class={`role role-${k.role}`}>{k.role}</span></td>
              <td>{k.user_id === ownUserOf(k.id)
                ? <><span>the key itself</span><div class="muted small mono" title="the user id its writes carry">{k.user_id}</div></>
                : k.user_id}</td>
              <td class="when"><When ms={k.created_at} />{k.created_by && <div class="muted small">by {k.created_by}</div>}</td>
              <td>{k.last_used_at === null ? <span class="muted">never</span> : <span title={dateTime(k.last_used_at)}>{relative(k.last_used_at, now)}</span>}</td>
              <td class="when">{k.expires_at === null ? <span class="muted">never</span> : <span title={relative(k.expires_at, now)}><When ms={k.expires_at} /></span>}</td>
              <td>
                <span class={`status status-${k.status}`}>{k.status}</span>
                {k.revoked_at !== null && <div class="muted small"><When ms={k.revoked_at} />{k.revoked_by && <div>by {k.revoked_by}</div>}</div>}
                {k.rolled_from && <div class="muted small">rolled from {k.rolled_from}</div>}
              </td>
              <td class="actions">
                {k.can_manage && k.status === 'active' && (
                  <button type="button" class="quiet" aria-describedby={`key-${k.id}`} onClick={() => onAction('roll', k)}>Roll</button>
                )}
                {k.can_manage && (
                  <button type="button" class="danger" aria-describedby={`key-${k.id}`} onClick={() => onAction('revoke', k)}>Revoke</button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A time in a narrow cell: the day, and under it the time of day (the table fits a 1280 px window). */
function When({ ms }: { ms: number }) {
  const { day, time } = dayAndTime(ms);
  return <><div>{day}</div><div class="small">{time}</div></>;
}

function ConfirmAction({ pending, onCancel, onConfirm }: { pending: NonNullable<Pending>; onCancel: () => void; onConfirm: () => Promise<void> }) {
  const [busy, setBusy] = useState(false);
  const name = pending.key.name ?? pending.key.id;
  const revoke = pending.action === 'revoke';
  return (
    <Dialog title={revoke ? `Revoke ${name}?` : `Roll ${name}?`} onClose={onCancel}>
      {revoke
        ? <p>Every request made with this key will be refused from now on, and sessions signed in with it end. This cannot be undone.</p>
        : <p>A new key is created now and shown once. The current key keeps working for 24 hours, then expires: switch your clients over before then.</p>}
      <div class="dialog-buttons">
        <button type="button" class="quiet" onClick={onCancel} autoFocus>Cancel</button>
        <button type="button" class={revoke ? 'danger solid' : 'primary'} disabled={busy}
          onClick={async () => { setBusy(true); await onConfirm(); }}>{revoke ? 'Revoke key' : 'Roll key'}</button>
      </div>
    </Dialog>
  );
}
