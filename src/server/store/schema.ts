import type { ServiceTx } from '../types.js';

/** The Postgres schema holding the service's own tables, apart from the catalog's. */
export const SERVICE_SCHEMA = 'oql_service';

/**
 * The service's tables. Idempotent (IF NOT EXISTS throughout), so it runs on every start; other
 * parts of the service (workspaces, OAuth) create their own tables in the same schema.
 */
const STATEMENTS: readonly string[] = [
  `CREATE SCHEMA IF NOT EXISTS ${SERVICE_SCHEMA}`,
  // Keys are stored as SHA-256 hashes: a leaked table gives no usable key. A key is random
  // (256 bits), so a fast unsalted hash is enough and lets a lookup go through the unique index.
  `CREATE TABLE IF NOT EXISTS ${SERVICE_SCHEMA}.api_keys (
     id text PRIMARY KEY,
     key_hash text NOT NULL UNIQUE,
     org_id text NOT NULL,
     user_id text NOT NULL,
     role text NOT NULL CHECK (role IN ('member', 'admin', 'superadmin')),
     created_at bigint NOT NULL,
     revoked_at bigint
   )`,
  `CREATE TABLE IF NOT EXISTS ${SERVICE_SCHEMA}.tool_logs (
     id uuid PRIMARY KEY,
     org_id text NOT NULL,
     user_id text NOT NULL,
     tool_name text NOT NULL,
     input_params jsonb NOT NULL,
     response_time double precision NOT NULL,
     response_code integer NOT NULL,
     tool_call_timestamp bigint NOT NULL
   )`,
  // The listing's order and keyset, per organization.
  `CREATE INDEX IF NOT EXISTS tool_logs_org_ts_id_idx ON ${SERVICE_SCHEMA}.tool_logs (org_id, tool_call_timestamp DESC, id DESC)`,
  `CREATE TABLE IF NOT EXISTS ${SERVICE_SCHEMA}.settings (
     name text PRIMARY KEY,
     value text NOT NULL
   )`,
];

export async function createServiceSchema(db: ServiceTx): Promise<void> {
  for (const statement of STATEMENTS) await db.query(statement);
}
