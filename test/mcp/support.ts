import type { AddressInfo } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { insertRows } from '../../src/demo/load.js';
import { createServer, type CreateServerOptions, type OqlServer } from '../../src/server/app.js';
import { databaseOf } from '../../src/run/database-of.js';
import { migrate } from '../../src/service/migrations.js';
import { createWorkspace } from '../../src/service/store/workspaces.js';
import type { ServiceDb } from '../../src/service/types.js';
import { emptyPglite } from '../support/pglite-template.js';

/**
 * One PGlite per test file holding two organizations' records, written out here by hand so the
 * tests' expectations do not come from the code under test; the service with both hosts
 * listening on 127.0.0.1 at free ports; and SDK clients connected over real HTTP.
 */

export const KEYS = {
  acmeAdmin: 'mcp-test-key-acme-superadmin-01',
  acmeMember: 'mcp-test-key-acme-member-000002',
  globexAdmin: 'mcp-test-key-globex-superadmin-3',
} as const;

/** The keys above as `OQL_API_KEYS` gives them: two organizations, an admin and a member in one. */
export const API_KEYS = [
  `${KEYS.acmeAdmin}=org_acme:superadmin:u_acme_admin`,
  `${KEYS.acmeMember}=org_acme:member:u_acme_member`,
  `${KEYS.globexAdmin}=org_globex:superadmin:u_globex_admin`,
].join(',');

const JAN_1_2024 = Date.UTC(2024, 0, 1);
const MAR_1_2024 = Date.UTC(2024, 2, 1);

/** The records of both organizations; names carry the organization so a leak is visible. */
export const DATA = {
  account: [
    { id: 'acc_a1', org_id: 'org_acme', name: 'Acme Retail', industry: 'retail', tags: ['key'], annual_revenue: 900, city: 'Pune' },
    { id: 'acc_a2', org_id: 'org_acme', name: 'Acme Soft', industry: 'software', tags: [], annual_revenue: 100, city: 'Delhi' },
    { id: 'acc_a3', org_id: 'org_acme', name: 'Acme Gone', industry: 'retail', tags: [], annual_revenue: 5, city: 'Pune', is_deleted: true },
    { id: 'acc_g1', org_id: 'org_globex', name: 'Globex Retail', industry: 'retail', tags: ['key'], annual_revenue: 700, city: 'Pune' },
  ],
  contact: [
    { id: 'con_a1', org_id: 'org_acme', name: 'Asha', status: 'active', account: 'acc_a1' },
    { id: 'con_a2', org_id: 'org_acme', name: 'Bala', status: 'bounced', account: 'acc_a1' },
    { id: 'con_a3', org_id: 'org_acme', name: 'Chitra', status: 'inactive', account: 'acc_a2' },
    { id: 'con_g1', org_id: 'org_globex', name: 'Gita', status: 'active', account: 'acc_g1' },
  ],
  opportunity: [
    { id: 'opp_a1', org_id: 'org_acme', name: 'Acme big deal', amount: 500000, stage: 'proposal', account: 'acc_a1', close_date: JAN_1_2024, sources: ['web'] },
    { id: 'opp_a2', org_id: 'org_acme', name: 'Acme small deal', amount: 1000, stage: 'prospecting', account: 'acc_a2', close_date: MAR_1_2024, sources: [] },
    { id: 'opp_g1', org_id: 'org_globex', name: 'Globex deal', amount: 999, stage: 'proposal', account: 'acc_g1', close_date: MAR_1_2024, sources: ['web'] },
  ],
} as const;

export interface Harness {
  readonly server: OqlServer;
  readonly db: ServiceDb;
  /** Main host, e.g. http://127.0.0.1:40001 */
  readonly baseUrl: string;
  /** MCP host. */
  readonly mcpUrl: string;
  /** `{mcpUrl}/<subdomain>/mcp`, written out by hand. */
  endpoint(subdomain: string): string;
  close(): Promise<void>;
}

/**
 * Loads `data` (by object slug; DATA by default) into a new server's database, makes the workspaces `acme` (org_acme) and `globex`
 * (org_globex), and listens with the REST and MCP apps on 127.0.0.1.
 */
export async function seedAndListen(server: OqlServer, data: Record<string, readonly Record<string, unknown>[]> = DATA): Promise<{ baseUrl: string; mcpUrl: string }> {
  const db = server.db;
  for (const [slug, rows] of Object.entries(data)) {
    await insertRows(db, server.catalog, server.catalog.objects.get(slug)!, rows.map((r) => ({ is_deleted: false, ...r })));
  }
  await migrate(db);
  await createWorkspace(db, { subdomain: 'acme', orgId: 'org_acme' });
  await createWorkspace(db, { subdomain: 'globex', orgId: 'org_globex' });
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  await server.mcpApp.listen({ host: '127.0.0.1', port: 0 });
  return {
    baseUrl: `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`,
    mcpUrl: `http://127.0.0.1:${(server.mcpApp.server.address() as AddressInfo).port}`,
  };
}

export async function startHarness(options: { oauth?: CreateServerOptions['oauth'] } = {}): Promise<Harness> {
  const pg = await emptyPglite();
  const db = databaseOf(pg);
  const server = await createServer({ db, apiKeys: API_KEYS, env: {}, ...(options.oauth ? { oauth: options.oauth } : {}) });
  const { baseUrl, mcpUrl } = await seedAndListen(server);
  return {
    server,
    db,
    baseUrl,
    mcpUrl,
    endpoint: (subdomain) => `${mcpUrl}/${subdomain}/mcp`,
    async close() {
      await server.close();
      await pg.close();
    },
  };
}

/** An SDK client connected with a static bearer token (an API key or an access token). */
export async function connect(url: string, bearer: string): Promise<Client> {
  const client = new Client({ name: 'oql-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${bearer}` } },
  });
  await client.connect(transport);
  return client;
}

/** The text of a tool result's first content block. */
export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  const first = content[0];
  if (!first || first.type !== 'text' || typeof first.text !== 'string') throw new Error(`no text content in ${JSON.stringify(result).slice(0, 300)}`);
  return first.text;
}

/** The JSON of a successful tool result. */
export function jsonOf(result: unknown): any {
  if ((result as { isError?: boolean }).isError) throw new Error(`tool error: ${textOf(result)}`);
  return JSON.parse(textOf(result));
}
