import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, api, useCsrfToken, whenSignedOut, type Session } from './api.js';
import { PAGES, navigate, usePage, type PageName } from './router.js';
import { SignIn } from './pages/sign-in.js';
import { KeysPage } from './pages/keys.js';
import { PlaygroundPage } from './pages/playground.js';
import { LogsPage } from './pages/logs.js';
import { ConnectPage } from './pages/connect.js';
import { WebhooksPage } from './pages/webhooks.js';

type State =
  | { readonly kind: 'loading' }
  | { readonly kind: 'signed-out'; readonly notice?: string }
  | { readonly kind: 'signed-in'; readonly session: Session };

export function App() {
  const [state, setState] = useState<State>({ kind: 'loading' });
  const page = usePage();

  const signedIn = useCallback((session: Session) => {
    useCsrfToken(session.csrf_token);
    setState({ kind: 'signed-in', session });
  }, []);

  useEffect(() => {
    whenSignedOut((reason) => setState({ kind: 'signed-out', notice: `Your session has ended (${reason}). Sign in again.` }));
    api<Session>('GET', '/console/session').then(signedIn, (e: unknown) => {
      setState({ kind: 'signed-out', ...(e instanceof ApiError && e.status !== 401 ? { notice: e.message } : {}) });
    });
  }, [signedIn]);

  useEffect(() => {
    const title = state.kind === 'signed-in' ? PAGES.find((p) => p.name === page)?.title : 'Sign in';
    document.title = `${title ?? 'Console'} \u00b7 oql console`;
  }, [state.kind, page]);

  if (state.kind === 'loading') return <p class="loading" role="status">Loading the console…</p>;
  if (state.kind === 'signed-out') return <SignIn notice={state.notice} onSignedIn={signedIn} />;
  return <Shell session={state.session} page={page} onSignedOut={() => setState({ kind: 'signed-out', notice: 'You have signed out.' })} />;
}

function Shell({ session, page, onSignedOut }: { session: Session; page: PageName; onSignedOut: () => void }) {
  const [signingOut, setSigningOut] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const visible = PAGES.filter((p) => (!p.superadmin || session.role === 'superadmin') && (!p.admin || session.role !== 'member'));
  const shown = visible.some((p) => p.name === page) ? page : 'keys';

  const signOut = async () => {
    setSigningOut(true);
    try {
      await api('DELETE', '/console/session');
      onSignedOut();
    } catch (e) {
      setError((e as Error).message);
      setSigningOut(false);
    }
  };

  return (
    <div class="shell">
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <div class="brand"><span class="logo" aria-hidden="true">oql</span> console</div>
        <nav aria-label="Console pages">
          <ul>
            {visible.map((p) => (
              <li key={p.name}>
                <a href={p.path} aria-current={p.name === shown ? 'page' : undefined}
                  onClick={(e) => { e.preventDefault(); navigate(p.path); }}>{p.title}</a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span class="org" title="Organization">{session.org_id}</span>
          <span class="user">{session.user_id} <span class={`role role-${session.role}`}>{session.role}</span></span>
          <button type="button" class="quiet" onClick={signOut} disabled={signingOut}>Sign out</button>
        </div>
      </header>
      {error && <p class="banner error" role="alert">{error}</p>}
      <main id="main" tabIndex={-1}>
        {shown === 'keys' && <KeysPage session={session} />}
        {shown === 'playground' && <PlaygroundPage />}
        {shown === 'webhooks' && <WebhooksPage session={session} />}
        {shown === 'logs' && <LogsPage />}
        {shown === 'connect' && <ConnectPage session={session} />}
      </main>
    </div>
  );
}
