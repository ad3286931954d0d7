import { quoteIdent } from '../../catalog/quote.js';
import { OqlError } from '../../diagnostics/diagnostic.js';
import type { ServiceDb } from '../types.js';

/** The column the service's own tables name an organization by. */
const SERVICE_TENANT_COLUMN = 'org_id';

/**
 * Whether anything in the database belongs to the organization: a row of data, a workspace, a
 * key (live or revoked), a tool-log entry. Every table outside PostgreSQL's own schemas that has
 * a tenant column is asked for one row, so a catalog the caller does not hold (the CLI opens the
 * database without one) is covered too: `tenantColumn` names the catalog's column when it is not
 * `org_id`.
 */
export async function organizationIsKnown(db: ServiceDb, orgId: string, tenantColumn = SERVICE_TENANT_COLUMN): Promise<boolean> {
  const { rows: tables } = await db.query<{ table_schema: string; table_name: string; column_name: string }>(
    `SELECT c.table_schema, c.table_name, c.column_name
       FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.column_name = ANY($1::text[]) AND t.table_type = 'BASE TABLE'
        AND c.table_schema NOT IN ('pg_catalog', 'information_schema') AND c.table_schema NOT LIKE 'pg\\_%'
      ORDER BY c.table_schema, c.table_name`,
    [[...new Set([SERVICE_TENANT_COLUMN, tenantColumn])]],
  );
  for (const t of tables) {
    const { rows } = await db.query(
      `SELECT 1 FROM ${quoteIdent(t.table_schema)}.${quoteIdent(t.table_name)} WHERE ${quoteIdent(t.column_name)}::text = $1 LIMIT 1`,
      [orgId],
    );
    if (rows.length > 0) return true;
  }
  return false;
}

/**
 * A key for an organization nothing in the database belongs to is most often a misspelling: the
 * key would work and see nothing. Refused unless the caller says the organization is new.
 */
export async function checkOrganizationForNewKey(db: ServiceDb, orgId: string, where: string, tenantColumn?: string): Promise<void> {
  if (await organizationIsKnown(db, orgId, tenantColumn)) return;
  throw OqlError.plain('INVALID_OPTIONS',
    `organization '${orgId}' has no data, workspace or key in ${where}, so a key for it would see nothing`,
    'check the spelling (oql keys list shows the organizations that have keys); to start a new organization, add --new-org');
}
