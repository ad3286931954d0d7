import { useState } from 'preact/hooks';
import { ApiError, api, type Session } from '../api.js';

/**
 * Sign-in with an API key. The key goes to the service once, in a POST body, and is forgotten
 * here: the session lives in an HttpOnly cookie, never in a URL or in local storage.
 */
export function SignIn({ notice, onSignedIn }: { notice?: string | undefined; onSignedIn: (s: Session) => void }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const session = await api<Session>('POST', '/console/session', { api_key: key.trim() });
      setKey('');
      onSignedIn(session);
    } catch (err) {
      setError(err instanceof ApiError && err.hint && err.status !== 429 ? `${err.message}. ${err.hint}.` : (err as Error).message);
      setBusy(false);
    }
  };

  return (
    <main class="sign-in" id="main">
      <div class="card">
        <div class="brand large"><span class="logo" aria-hidden="true">oql</span> console</div>
        <h1>Sign in to your workspace</h1>
        <p class="muted">Use an API key of your organization. It starts a session in this browser and is not kept here.</p>
        {notice && !error && <p class="banner info" role="status">{notice}</p>}
        {error && <p class="banner error" role="alert">{error}</p>}
        {/* method="post": should the script ever not stop the submission, the key still goes in a body, never in a URL. */}
        <form onSubmit={submit} method="post" action="/console/session">
          <label for="api-key">API key</label>
          <input id="api-key" name="api_key" type="password" autoComplete="off" spellcheck={false} required
            placeholder="oql_…" value={key} onInput={(e) => setKey(e.currentTarget.value)} />
          <button type="submit" class="primary wide" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
        </form>
        <p class="muted small">No key yet? An admin creates one on the API access page, or on the server with <code>oql keys create</code>.</p>
      </div>
    </main>
  );
}
