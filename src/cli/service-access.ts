import { hostname } from 'node:os';
import { resolve } from 'node:path';
import type { DiagnosticCode } from '../diagnostics/codes.js';
import { CODES } from '../diagnostics/codes.js';
import { OqlError } from '../diagnostics/diagnostic.js';
import { dataDirOwner } from '../run/data-dir-lock.js';
import { DEFAULT_DATA_DIR, openDatabase } from '../run/open.js';
import { readAdminAddress, type AdminAddress } from '../service/admin-address.js';
import { migrate } from '../service/migrations.js';
import { Operator, type ApiKeyInfo, type NewApiKey, type Workspace } from '../service/operator.js';
import { DEFAULT_API_KEY_CACHE_MS } from '../service/config.js';
import { shellWord } from './io.js';

/**
 * What `oql keys` and `oql workspaces` do to the service's tables, wherever those are: in a
 * database this process opens, or behind the running server that holds an embedded directory.
 */
export interface ServiceAccess {
  /** Where the work was done, for messages. */
  readonly label: string;
  /** When a revocation is in force, for the message that reports it. */
  readonly revocationReach: string;
  /** Refuses an organization nothing in the database belongs to, unless `newOrg` says it is meant. */
  issueKey(o: NewApiKey & { readonly newOrg?: boolean }): Promise<{ readonly id: string; readonly key: string }>;
  listKeys(o: { readonly orgId?: string | undefined; readonly revoked?: boolean }): Promise<ApiKeyInfo[]>;
  /** The key's organization, or null when no live key has that id. */
  revokeKey(id: string): Promise<string | null>;
  createWorkspace(w: Workspace): Promise<{ readonly created: boolean }>;
  listWorkspaces(): Promise<Workspace[]>;
  close(): Promise<void>;
}

export interface ServiceAccessOptions {
  readonly database?: string | undefined;
  readonly dataDir?: string | undefined;
  /** The command as typed (without `oql`), repeated in a refusal as the command to run once the server is stopped. */
  readonly argv: readonly string[];
}

/** How long the CLI waits for the admin host's answer: a server that takes longer is stuck. */
const ADMIN_TIMEOUT_MS = 30_000;

/**
 * A PostgreSQL server is opened directly: every server sharing it sees the write, and a revoked
 * key is refused within their key cache time. An embedded directory that no process holds is
 * opened directly too (and held while the command runs). An embedded directory a server holds is
 * never opened: the work goes to that server's admin host, and when it cannot be reached the
 * command refuses, saying why and what to run.
 */
export async function openServiceAccess(o: ServiceAccessOptions): Promise<ServiceAccess> {
  if (o.database !== undefined) return direct(o, `servers using it refuse it within their key cache time (OQL_API_KEY_CACHE_MS, ${DEFAULT_API_KEY_CACHE_MS / 1000} s by default)`);
  const dir = o.dataDir ?? DEFAULT_DATA_DIR;
  const owner = dataDirOwner(dir);
  if (owner === null) return direct(o, 'no server holds this directory; the next one to open it starts with it');
  const address = readAdminAddress(dir);
  const again = `oql ${o.argv.map(shellWord).join(' ')}`;
  const refuse = (why: string): never => {
    throw OqlError.plain('DATABASE_ERROR', `the embedded database in '${dir}' is held by process ${owner.pid}${owner.host !== hostname() ? ` on host ${owner.host}` : ''}, ${why}`,
      `stop that process (kill ${owner.pid}; an oql serve stops cleanly on SIGTERM), then run: ${again}`);
  };
  if (owner.host !== hostname()) refuse('and its admin host is on that machine: run the command there');
  if (address === 'missing') refuse('which has no admin host: only oql serve answers key and workspace commands for its directory, and a second process must not open it');
  if (address === 'unreadable') refuse(`and its admin address (${resolve(dir, 'oql-admin.json')}) cannot be read by this user`);
  if (address === 'readable by others') refuse(`and its admin address (${resolve(dir, 'oql-admin.json')}) is readable by other users, so it is not used; the server writes a new one when it starts`);
  const a = address as AdminAddress;
  if (a.pid !== owner.pid) refuse(`and the admin address in that directory is process ${a.pid}'s, which is gone`);
  return viaServer(a, dir, refuse);
}

async function direct(o: ServiceAccessOptions, revocationReach: string): Promise<ServiceAccess> {
  const db = await openDatabase({ database: o.database, dataDir: o.dataDir });
  try {
    await migrate(db);
  } catch (e) {
    await db.close();
    throw e;
  }
  const operator = new Operator(db);
  return {
    label: db.label,
    revocationReach,
    issueKey: (k) => operator.issueKey(k),
    listKeys: (q) => operator.listKeys(q),
    revokeKey: (id) => operator.revokeKey(id),
    createWorkspace: (w) => operator.createWorkspace(w),
    listWorkspaces: () => operator.listWorkspaces(),
    close: () => db.close(),
  };
}

function viaServer(a: AdminAddress, dir: string, refuse: (why: string) => never): ServiceAccess {
  const call = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    let response: Response;
    try {
      response = await fetch(`${a.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${a.secret}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS),
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).name;
      return refuse(`which does not answer at its admin address ${a.url} (${cause}): it may be starting or stopping`);
    }
    const json = (await response.json().catch(() => null)) as { success?: boolean; data?: Record<string, unknown> } | null;
    if (response.ok && json?.success === true && json.data !== undefined) return json.data as T;
    const data = (json?.data ?? {}) as { message?: unknown; error_code?: unknown; hint?: unknown };
    const code = typeof data.error_code === 'string' && data.error_code in CODES ? (data.error_code as DiagnosticCode) : 'DATABASE_ERROR';
    const message = typeof data.message === 'string' ? data.message : `the admin host answered ${response.status}`;
    throw OqlError.plain(code, message, typeof data.hint === 'string' ? data.hint : undefined);
  };
  return {
    label: `the embedded database in ${dir}, through the oql serve running on it (process ${a.pid})`,
    revocationReach: `refused from now on by the oql serve holding ${dir}`,
    issueKey: (k) => call('POST', '/keys', {
      org_id: k.orgId, role: k.role, ...(k.userId === undefined ? {} : { user_id: k.userId }), ...(k.name === undefined ? {} : { name: k.name }),
      ...(k.newOrg === true ? { new_org: true } : {}),
    }),
    listKeys: async (q) => (await call<{ keys: ApiKeyInfo[] }>('GET', `/keys?${new URLSearchParams({ ...(q.orgId === undefined ? {} : { org_id: q.orgId }), revoked: String(q.revoked === true) })}`)).keys,
    // Longer than any id: not one, as the database would say.
    revokeKey: async (id) => (id.length > 200 ? null : (await call<{ org_id: string | null }>('POST', '/keys/revoke', { id })).org_id),
    createWorkspace: (w) => call('POST', '/workspaces', { subdomain: w.subdomain, org_id: w.orgId }),
    listWorkspaces: async () => (await call<{ workspaces: Workspace[] }>('GET', '/workspaces')).workspaces,
    close: async () => {},
  };
}
