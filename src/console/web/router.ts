import { useEffect, useState } from 'preact/hooks';

/** The console's pages by path; each path is served the same document by the server. */
export type PageName = 'keys' | 'playground' | 'logs' | 'connect' | 'webhooks';

export const PAGES: readonly { readonly name: PageName; readonly path: string; readonly title: string; readonly superadmin?: boolean; readonly admin?: boolean }[] = [
  { name: 'keys', path: '/keys', title: 'API keys' },
  { name: 'playground', path: '/playground', title: 'Query playground' },
  { name: 'webhooks', path: '/webhooks', title: 'Webhooks', admin: true },
  { name: 'logs', path: '/logs', title: 'Tool logs', superadmin: true },
  { name: 'connect', path: '/connect', title: 'Connect an agent' },
];

function pageOf(pathname: string): PageName {
  return PAGES.find((p) => p.path === pathname.replace(/\/+$/, ''))?.name ?? 'keys';
}

const listeners = new Set<() => void>();

export function navigate(path: string): void {
  if (path === location.pathname) return;
  history.pushState(null, '', path);
  for (const l of listeners) l();
}

/** The current page, following links and the browser's back and forward buttons. */
export function usePage(): PageName {
  const [page, setPage] = useState(() => pageOf(location.pathname));
  useEffect(() => {
    const update = () => setPage(pageOf(location.pathname));
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return page;
}
