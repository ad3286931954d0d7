import type { AddressInfo } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import { fixtureData, loadFixtureCatalog, loadIntoDatabase, type Row } from '../../fixtures/index.js';
import { createServer, databaseOf, type OqlServer, type ServiceDb } from '../../src/server/index.js';
import type { ServerOptions } from '../../src/service/config.js';
import { emptyPglite } from '../support/pglite-template.js';

/** A server listening on 127.0.0.1 at a free port, called over real HTTP. */
export interface Running {
  readonly server: OqlServer;
  readonly url: string;
  call(method: string, path: string, o?: CallOptions): Promise<Answer>;
  close(): Promise<void>;
}

export interface CallOptions {
  /** The API key sent as a bearer token. */
  readonly key?: string;
  /** Sent as JSON unless it is a string or bytes (sent as they are). */
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed body (undefined when it is not JSON). */
  readonly json: any;
}

export async function listen(options: ServerOptions): Promise<Running> {
  const server = await createServer(options);
  await server.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = server.app.server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    server,
    url,
    call: (method, path, o = {}) => call(url, method, path, o),
    close: () => server.close(),
  };
}

export async function call(url: string, method: string, path: string, o: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.key !== undefined) headers['authorization'] = `Bearer ${o.key}`;
  let body: string | Uint8Array | undefined;
  if (o.body !== undefined) {
    body = typeof o.body === 'string' || o.body instanceof Uint8Array ? o.body : JSON.stringify(o.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url + path, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** The crm fixture: its catalog and generated rows, the expected values of the server tests. */
export const crm = { catalog: loadFixtureCatalog('crm'), data: fixtureData('crm') };

/** The fixture rows of one organization that the service serves (not soft-deleted). */
export function liveRows(slug: string, org: string): Row[] {
  return crm.data.get(slug)!.filter((r) => r.org_id === org && r.is_deleted === false);
}

/** The crm fixture loaded into one PGlite, and the service on it listening with the test keys. */
export interface CrmService {
  readonly pglite: PGlite;
  readonly db: ServiceDb;
  readonly api: Running;
  close(): Promise<void>;
}

export async function crmServiceOnPglite(options: Omit<ServerOptions, 'db'> = {}): Promise<CrmService> {
  const pglite = await emptyPglite();
  await loadIntoDatabase(pglite, crm.catalog, crm.data);
  const db = databaseOf(pglite);
  const api = await listen({ db, apiKeys: API_KEYS_ENV, env: {}, ...options });
  return {
    pglite,
    db,
    api,
    async close() {
      try {
        await api.close();
      } finally {
        await pglite.close();
      }
    },
  };
}

/** The error envelope with exactly its five fields (plus an optional hint). */
export function expectEnvelope(answer: Answer, status: number, errorCode: string): void {
  const problems: string[] = [];
  if (answer.status !== status) problems.push(`status ${answer.status}, expected ${status}`);
  const j = answer.json;
  if (j?.success !== false) problems.push('success is not false');
  const d = j?.data ?? {};
  if (d.status_code !== status) problems.push(`data.status_code ${d.status_code}`);
  if (d.error_code !== errorCode) problems.push(`data.error_code ${d.error_code}, expected ${errorCode}`);
  if (typeof d.message !== 'string' || d.message.length === 0) problems.push('no message');
  if (!('validation_errors' in d) || !('meta_data' in d)) problems.push('validation_errors or meta_data missing');
  if (/\bat .+:\d+:\d+\)?/.test(answer.text) || /node_modules|\.ts:\d+/.test(answer.text)) problems.push('a stack trace leaked');
  if (problems.length > 0) throw new Error(`${problems.join('; ')}\nbody: ${answer.text.slice(0, 500)}`);
}

/** Distinct, valid bootstrap keys (OQL_API_KEYS needs 16 characters or more). */
export const KEYS = {
  acmeAdmin: 'test-key-acme-superadmin-0001',
  acmeMember: 'test-key-acme-member-00000002',
  globexAdmin: 'test-key-globex-superadmin-03',
  globexMember: 'test-key-globex-member-000004',
  initechAdmin: 'test-key-initech-superadmin-5',
} as const;

export const API_KEYS_ENV = [
  `${KEYS.acmeAdmin}=org_acme:superadmin:u_acme_admin`,
  `${KEYS.acmeMember}=org_acme:member:u_acme_member`,
  `${KEYS.globexAdmin}=org_globex:superadmin:u_globex_admin`,
  `${KEYS.globexMember}=org_globex:member:u_globex_member`,
  `${KEYS.initechAdmin}=org_initech:superadmin:u_initech_admin`,
].join(',');
