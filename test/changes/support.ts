import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { createServer, type CreateServerOptions, type OqlServer } from '../../src/server/app.js';
import { databaseOf } from '../../src/run/database-of.js';
import type { ServiceDb } from '../../src/service/types.js';
import { seedAndListen } from '../mcp/support.js';
import { call, type Answer, type CallOptions } from '../server/support.js';
import { startPgDatabase } from '../support/pg-cluster.js';
import { type PgServer } from '../support/pg-server.js';

/**
 * The service for the change-log tests on either database: a few records of two organizations
 * written out here by hand (names carry the organization, so a leak shows), the REST host and the
 * MCP host listening on 127.0.0.1, and keys of each role.
 */

export const KEYS = {
  acmeAdmin: 'changes-key-acme-admin-00000001',
  acmeMember: 'changes-key-acme-member-0000002',
  acmeSuper: 'changes-key-acme-super-00000003',
  globexAdmin: 'changes-key-globex-admin-000004',
} as const;

export const API_KEYS = [
  `${KEYS.acmeAdmin}=org_acme:admin:u_acme_admin`,
  `${KEYS.acmeMember}=org_acme:member:u_acme_member`,
  `${KEYS.acmeSuper}=org_acme:superadmin:u_acme_super`,
  `${KEYS.globexAdmin}=org_globex:admin:u_globex_admin`,
].join(',');

export const DATA = {
  account: [
    { id: 'acc_a1', org_id: 'org_acme', name: 'Acme Retail', industry: 'retail', external_id: 'EXT-A1', city: 'Pune' },
    { id: 'acc_a2', org_id: 'org_acme', name: 'Acme Soft', industry: 'software', external_id: 'EXT-A2', city: 'Delhi' },
    { id: 'acc_g1', org_id: 'org_globex', name: 'Globex Retail', industry: 'retail', external_id: 'EXT-G1', city: 'Pune' },
  ],
  contact: [
    { id: 'con_a1', org_id: 'org_acme', name: 'Asha Acme', status: 'active', account: 'acc_a1' },
    { id: 'con_a2', org_id: 'org_acme', name: 'Bala Acme', status: 'bounced', account: 'acc_a2' },
    { id: 'con_a3', org_id: 'org_acme', name: 'Chitra Acme', status: 'inactive', account: 'acc_a2' },
    { id: 'con_g1', org_id: 'org_globex', name: 'Gita Globex', status: 'active', account: 'acc_g1' },
  ],
} as const;

export type DbKind = 'pglite' | 'postgres';

export interface ChangesHarness {
  readonly kind: DbKind;
  readonly server: OqlServer;
  readonly db: ServiceDb;
  readonly baseUrl: string;
  /** `{mcp host}/<subdomain>/mcp` */
  endpoint(subdomain: string): string;
  /** The PostgreSQL server, on postgres. */
  readonly pgServer: PgServer | undefined;
  call(method: string, path: string, o?: CallOptions): Promise<Answer>;
  close(): Promise<void>;
}

export async function startChangesService(kind: DbKind, options: Partial<CreateServerOptions> = {}): Promise<ChangesHarness> {
  let pgServer: PgServer | undefined;
  let pglite: PGlite | undefined;
  let server: OqlServer;
  if (kind === 'postgres') {
    pgServer = await startPgDatabase();
    server = await createServer({ database: pgServer.url, apiKeys: API_KEYS, env: {}, ...options });
  } else {
    pglite = new PGlite();
    server = await createServer({ db: databaseOf(pglite), apiKeys: API_KEYS, env: {}, ...options });
  }
  const db = server.db;
  const { baseUrl, mcpUrl } = await seedAndListen(server, DATA);
  return {
    kind, server, db, baseUrl, pgServer,
    endpoint: (subdomain) => `${mcpUrl}/${subdomain}/mcp`,
    call: (method, path, o = {}) => call(baseUrl, method, path, o),
    async close() {
      try {
        await server.close();
      } finally {
        await pglite?.close();
        await pgServer?.stop();
      }
    },
  };
}

/** A pg client straight to the harness's PostgreSQL, for transactions the test holds open. */
export async function rawClient(h: ChangesHarness): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: h.pgServer!.url });
  await client.connect();
  return client;
}

/** Every change of the organization after `after` (all pages), as the feed gives them. */
export async function allChanges(h: ChangesHarness, key: string, after?: string): Promise<{ changes: any[]; cursor: string }> {
  const changes: any[] = [];
  let cursor = after;
  for (;;) {
    const a = await h.call('GET', `/api/v1/changes?limit=1000${cursor === undefined ? '' : `&after=${cursor}`}`, { key });
    if (a.status !== 200) throw new Error(`feed answered ${a.status}: ${a.text}`);
    changes.push(...a.json.data.changes);
    cursor = a.json.data.next_cursor;
    if (!a.json.data.has_more) return { changes, cursor: cursor! };
  }
}
