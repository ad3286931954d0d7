import { OqlError } from '../../diagnostics/diagnostic.js';
import type { ServiceDb, ServiceTx } from '../types.js';
import { SERVICE_SCHEMA } from '../migrations.js';
import { isOrgId, ORG_ID_RULE } from '../../rules.js';

/**
 * Workspaces: the subdomain in an OAuth or MCP URL names the organization whose data a token may
 * reach. The mapping lives in the database so every server sharing it agrees on it.
 */
export interface Workspace {
  readonly subdomain: string;
  readonly orgId: string;
}

/** A DNS label in lower case: it becomes a host name in hosted deployments. */
const SUBDOMAIN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export function isSubdomain(value: unknown): value is string {
  return typeof value === 'string' && SUBDOMAIN.test(value);
}

function checkWorkspace(w: Workspace, where = ''): void {
  if (!isSubdomain(w.subdomain)) {
    throw OqlError.plain('INVALID_OPTIONS', `${where}subdomain '${String(w.subdomain)}' must be 1 to 63 lower-case letters, digits or '-', not starting or ending with '-'`,
      'for example --subdomain acme');
  }
  if (typeof w.orgId !== 'string' || !isOrgId(w.orgId)) {
    throw OqlError.plain('INVALID_OPTIONS', `${where}organization id '${String(w.orgId)}' must be ${ORG_ID_RULE}`,
      'for example --org org_acme');
  }
}

/**
 * Maps a subdomain to an organization. Creating an existing workspace again for the same
 * organization changes nothing (bootstrap runs on every start); moving it to another organization
 * is refused, because every token issued for it would silently change tenant.
 */
export async function createWorkspace(db: ServiceTx, w: Workspace): Promise<{ created: boolean }> {
  checkWorkspace(w);
  const { rows } = await db.query<{ subdomain: string }>(
    `INSERT INTO ${SERVICE_SCHEMA}.workspaces (subdomain, org_id, created_at) VALUES ($1, $2, $3)
     ON CONFLICT (subdomain) DO NOTHING RETURNING subdomain`,
    [w.subdomain, w.orgId, Date.now()],
  );
  if (rows.length > 0) return { created: true };
  const existing = await resolveWorkspace(db, w.subdomain);
  if (existing && existing.orgId !== w.orgId) {
    throw OqlError.plain('INVALID_OPTIONS', `workspace '${w.subdomain}' already belongs to organization '${existing.orgId}'`,
      'a workspace never changes organization: pick another subdomain');
  }
  return { created: false };
}

/** The workspace of a subdomain, or null; anything that is not a valid subdomain is simply unknown. */
export async function resolveWorkspace(db: ServiceTx, subdomain: string): Promise<Workspace | null> {
  if (!isSubdomain(subdomain)) return null;
  const { rows } = await db.query<{ subdomain: string; org_id: string }>(
    `SELECT subdomain, org_id FROM ${SERVICE_SCHEMA}.workspaces WHERE subdomain = $1`,
    [subdomain],
  );
  const row = rows[0];
  return row ? { subdomain: row.subdomain, orgId: row.org_id } : null;
}

export async function listWorkspaces(db: ServiceTx): Promise<Workspace[]> {
  const { rows } = await db.query<{ subdomain: string; org_id: string }>(
    `SELECT subdomain, org_id FROM ${SERVICE_SCHEMA}.workspaces ORDER BY subdomain`,
  );
  return rows.map((r) => ({ subdomain: r.subdomain, orgId: r.org_id }));
}

/**
 * `OQL_WORKSPACES`: `acme=org_acme,globex=org_globex`. Every entry is checked before any is
 * stored, and a bad one is named by its position.
 */
export function parseWorkspacesEnv(text: string): Workspace[] {
  const out: Workspace[] = [];
  const entries = text.split(',').map((e) => e.trim()).filter((e) => e.length > 0);
  for (const [i, entry] of entries.entries()) {
    const parts = entry.split('=');
    if (parts.length !== 2 || !parts[0] || !parts[1]) {
      throw OqlError.plain('INVALID_OPTIONS', `OQL_WORKSPACES entry ${i + 1}: expected subdomain=org`,
        'entries separated by commas, for example acme=org_acme,globex=org_globex');
    }
    const w = { subdomain: parts[0].trim(), orgId: parts[1].trim() };
    checkWorkspace(w, `OQL_WORKSPACES entry ${i + 1}: `);
    out.push(w);
  }
  return out;
}

/** Creates the table and the workspaces of `OQL_WORKSPACES` (or any list), all or none. */
export async function bootstrapWorkspaces(db: ServiceDb, workspaces: readonly Workspace[]): Promise<void> {
  if (workspaces.length === 0) return;
  await db.transaction(async (tx) => {
    for (const w of workspaces) await createWorkspace(tx, w);
  });
}
