import type { Database, Tx } from '../run/database.js';

/** The Postgres schema holding the service's own tables, apart from the catalog's. */
export const SERVICE_SCHEMA = 'oql_service';

/**
 * The one list of the service's own tables, in the order they came. Each migration runs once per
 * database, recorded in oql_service.migrations; every entry point (oql serve, the CLI, the tests)
 * runs `migrate` at start, and concurrent starts queue on a transaction-scoped advisory lock (safe
 * behind PgBouncer in transaction mode). Statements stay idempotent (IF NOT EXISTS) so a database
 * made before the list existed, whose tables are there but unrecorded, is taken over as it is.
 * A new table or column is a new entry at the end: never edit one that has shipped.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly statements: readonly string[];
}

const S = SERVICE_SCHEMA;

export const MIGRATIONS: readonly Migration[] = Object.freeze([
  {
    version: 1,
    name: 'api keys, tool logs, settings',
    statements: [
      // Keys are stored as SHA-256 hashes: a leaked table gives no usable key. A key is random
      // (256 bits), so a fast unsalted hash is enough and lets a lookup go through the unique index.
      `CREATE TABLE IF NOT EXISTS ${S}.api_keys (
         id text PRIMARY KEY,
         key_hash text NOT NULL UNIQUE,
         org_id text NOT NULL,
         user_id text NOT NULL,
         role text NOT NULL CHECK (role IN ('member', 'admin', 'superadmin')),
         created_at bigint NOT NULL,
         revoked_at bigint
       )`,
      `CREATE TABLE IF NOT EXISTS ${S}.tool_logs (
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
      `CREATE INDEX IF NOT EXISTS tool_logs_org_ts_id_idx ON ${S}.tool_logs (org_id, tool_call_timestamp DESC, id DESC)`,
      `CREATE TABLE IF NOT EXISTS ${S}.settings (
         name text PRIMARY KEY,
         value text NOT NULL
       )`,
    ],
  },
  {
    version: 2,
    name: 'workspaces',
    statements: [
      `CREATE TABLE IF NOT EXISTS ${S}.workspaces (
         subdomain text PRIMARY KEY,
         org_id text NOT NULL,
         created_at bigint NOT NULL
       )`,
    ],
  },
  {
    version: 3,
    name: 'oauth clients, codes and tokens',
    statements: [
      // A client is registered in one workspace: its id used at another workspace's endpoints is unknown there.
      `CREATE TABLE IF NOT EXISTS ${S}.oauth_clients (
         client_id text PRIMARY KEY,
         workspace text NOT NULL,
         client_name text NOT NULL,
         redirect_uris jsonb NOT NULL,
         grant_types jsonb NOT NULL,
         response_types jsonb NOT NULL,
         token_endpoint_auth_method text NOT NULL,
         client_uri text,
         created_at bigint NOT NULL
       )`,
      `CREATE TABLE IF NOT EXISTS ${S}.oauth_codes (
         code_hash text PRIMARY KEY,
         family_id text NOT NULL,
         workspace text NOT NULL,
         org_id text NOT NULL,
         user_id text NOT NULL,
         role text NOT NULL,
         client_id text NOT NULL,
         redirect_uri text NOT NULL,
         code_challenge text NOT NULL,
         resource text NOT NULL,
         expires_at bigint NOT NULL,
         used_at bigint
       )`,
      `CREATE TABLE IF NOT EXISTS ${S}.oauth_tokens (
         token_hash text PRIMARY KEY,
         kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
         family_id text NOT NULL,
         workspace text NOT NULL,
         org_id text NOT NULL,
         user_id text NOT NULL,
         role text NOT NULL,
         client_id text NOT NULL,
         resource text NOT NULL,
         created_at bigint NOT NULL,
         expires_at bigint NOT NULL,
         rotated_at bigint,
         revoked_at bigint
       )`,
      `CREATE INDEX IF NOT EXISTS oauth_tokens_family_idx ON ${S}.oauth_tokens (family_id)`,
      // For pruneExpired.
      `CREATE INDEX IF NOT EXISTS oauth_tokens_expires_idx ON ${S}.oauth_tokens (expires_at)`,
      `CREATE INDEX IF NOT EXISTS oauth_codes_expires_idx ON ${S}.oauth_codes (expires_at)`,
    ],
  },
  {
    version: 4,
    name: 'oauth grants tied to their api key',
    statements: [
      `ALTER TABLE ${S}.oauth_codes ADD COLUMN IF NOT EXISTS api_key_id text`,
      `ALTER TABLE ${S}.oauth_tokens ADD COLUMN IF NOT EXISTS api_key_id text`,
    ],
  },
  {
    version: 5,
    name: 'oauth scopes and application types',
    statements: [
      // NULL: a client, code or token from before these columns (web-or-native rules, every scope).
      `ALTER TABLE ${S}.oauth_clients ADD COLUMN IF NOT EXISTS application_type text`,
      `ALTER TABLE ${S}.oauth_codes ADD COLUMN IF NOT EXISTS scope text`,
      `ALTER TABLE ${S}.oauth_tokens ADD COLUMN IF NOT EXISTS scope text`,
    ],
  },
  {
    version: 6,
    name: 'api keys managed from the console; console sessions',
    statements: [
      // What the API access page shows of a key: a name, a recognisable prefix and last four
      // characters (never enough to use it), expiry, last use, and who created, revoked or rolled it.
      `ALTER TABLE ${S}.api_keys ADD COLUMN IF NOT EXISTS name text`,
      `ALTER TABLE ${S}.api_keys ADD COLUMN IF NOT EXISTS key_prefix text`,
      `ALTER TABLE ${S}.api_keys ADD COLUMN IF NOT EXISTS key_last4 text`,
      `ALTER TABLE ${S}.api_keys ADD COLUMN IF NOT EXISTS expires_at bigint`,
      `ALTER TABLE ${S}.api_keys ADD COLUMN IF NOT EXISTS last_used_at bigint`,
      `ALTER TABLE ${S}.api_keys ADD COLUMN IF NOT EXISTS created_by text`,
      `ALTER TABLE ${S}.api_keys ADD COLUMN IF NOT EXISTS revoked_by text`,
      `ALTER TABLE ${S}.api_keys ADD COLUMN IF NOT EXISTS rolled_from text`,
      // The listing: one organization's keys, newest first.
      `CREATE INDEX IF NOT EXISTS api_keys_org_created_idx ON ${S}.api_keys (org_id, created_at DESC, id DESC)`,
      // A console session is a random token in an HttpOnly cookie, stored as its SHA-256. It acts
      // through the API key it was signed in with, and ends with it (revoked or expired).
      `CREATE TABLE IF NOT EXISTS ${S}.console_sessions (
         token_hash text PRIMARY KEY,
         api_key_id text NOT NULL,
         org_id text NOT NULL,
         user_id text NOT NULL,
         created_at bigint NOT NULL,
         last_seen_at bigint NOT NULL,
         expires_at bigint NOT NULL,
         ends_at bigint NOT NULL
       )`,
      `CREATE INDEX IF NOT EXISTS console_sessions_expires_idx ON ${S}.console_sessions (expires_at)`,
    ],
  },
  {
    version: 7,
    name: 'state shared by a fleet: concurrency leases, attempt counters',
    statements: [
      // One row per running request of a principal; a row whose holder died expires by itself.
      // Expiry is the database's clock, so instances whose clocks differ still agree.
      `CREATE TABLE IF NOT EXISTS ${S}.leases (
         id bigserial PRIMARY KEY,
         key text NOT NULL,
         holder text NOT NULL,
         ttl_ms integer NOT NULL CHECK (ttl_ms > 0),
         expires_at timestamptz NOT NULL
       )`,
      `CREATE INDEX IF NOT EXISTS leases_key_idx ON ${S}.leases (key)`,
      `CREATE INDEX IF NOT EXISTS leases_expires_idx ON ${S}.leases (expires_at)`,
      // Atomic across instances in one statement: callers of one key queue on a lock that lasts
      // for the statement's own transaction (so it holds behind PgBouncer in transaction mode), and
      // each statement after the lock reads a fresh snapshot, which holds every lease committed by
      // the callers before it (a transaction's commit is visible before its locks are released).
      // The caller's leases released since its last statement go first, in the same round trip.
      `CREATE OR REPLACE FUNCTION ${S}.acquire_lease(p_key text, p_max integer, p_ttl_ms integer, p_holder text, p_released bigint[]) RETURNS bigint
       LANGUAGE plpgsql VOLATILE AS $fn$
       DECLARE
         taken integer;
         lease bigint;
       BEGIN
         IF current_setting('transaction_isolation') <> 'read committed' THEN
           RAISE EXCEPTION 'acquire_lease needs READ COMMITTED (a fresh snapshot after the lock), not %', current_setting('transaction_isolation');
         END IF;
         -- A lease lives for seconds and is void after a crash anyway: its commit need not wait
         -- for the WAL to reach the disk, which would add a flush to every admitted request.
         PERFORM set_config('synchronous_commit', 'off', true);
         IF cardinality(p_released) > 0 THEN
           DELETE FROM ${S}.leases WHERE id = ANY(p_released) AND holder = p_holder;
         END IF;
         PERFORM pg_advisory_xact_lock(hashtextextended('oql lease|' || p_key, 0));
         DELETE FROM ${S}.leases WHERE key = p_key AND expires_at <= clock_timestamp();
         SELECT count(*) INTO taken FROM ${S}.leases WHERE key = p_key;
         IF taken >= p_max THEN
           RETURN NULL;
         END IF;
         INSERT INTO ${S}.leases (key, holder, ttl_ms, expires_at)
           VALUES (p_key, p_holder, p_ttl_ms, clock_timestamp() + p_ttl_ms * interval '1 millisecond')
           RETURNING id INTO lease;
         RETURN lease;
       END
       $fn$`,
      // Fixed windows of attempts per key (an endpoint and an address, a client, a key prefix).
      // Windows are in the callers' epoch milliseconds, the clock their Retry-After is told in.
      `CREATE TABLE IF NOT EXISTS ${S}.attempts (
         key text PRIMARY KEY,
         count integer NOT NULL,
         window_ends bigint NOT NULL
       )`,
      `CREATE INDEX IF NOT EXISTS attempts_window_idx ON ${S}.attempts (window_ends)`,
    ],
  },
  {
    version: 8,
    name: 'the change log',
    statements: [
      // One row per committed change of a record. Positions are taken from the sequence while the
      // writing transaction holds its organization's change lock, which it keeps until it commits:
      // an organization's positions are therefore in commit order, and a reader that follows
      // `position > cursor` can never step past a change that commits later (docs/changes.md).
      // `record` and `previous` are json, not jsonb, so a record's keys keep get-one's order.
      `CREATE TABLE IF NOT EXISTS ${S}.changes (
         position bigserial PRIMARY KEY,
         org_id text NOT NULL,
         event_id uuid NOT NULL DEFAULT gen_random_uuid() UNIQUE,
         object_slug text NOT NULL,
         record_id text NOT NULL,
         operation text NOT NULL CHECK (operation IN ('created', 'updated', 'deleted', 'restored', 'purged')),
         changed_fields json,
         record json,
         previous json,
         actor_user_id text,
         actor_surface text NOT NULL,
         committed_at bigint NOT NULL
       )`,
      `CREATE INDEX IF NOT EXISTS changes_org_position_idx ON ${S}.changes (org_id, position)`,
      `CREATE INDEX IF NOT EXISTS changes_committed_at_idx ON ${S}.changes (committed_at)`,
      // The newest position the retention pruned, per organization: a cursor before it has lost changes.
      `CREATE TABLE IF NOT EXISTS ${S}.change_horizons (
         org_id text PRIMARY KEY,
         pruned_through bigint NOT NULL
       )`,
    ],
  },
  {
    version: 9,
    name: 'webhook endpoints and their delivery attempts',
    statements: [
      // An endpoint delivers its organization's changes in log order: `position` is the last change
      // it is done with (delivered or dead-lettered). An instance claims an endpoint for a while
      // (claimed_by, claimed_until) to make its next attempt; a killed instance's claim runs out.
      `CREATE TABLE IF NOT EXISTS ${S}.webhook_endpoints (
         id text PRIMARY KEY,
         org_id text NOT NULL,
         url text NOT NULL,
         description text,
         objects text[],
         operations text[],
         status text NOT NULL CHECK (status IN ('active', 'paused', 'disabled')),
         disabled_reason text,
         secret text NOT NULL,
         previous_secret text,
         previous_secret_until bigint,
         position bigint NOT NULL,
         attempt integer NOT NULL DEFAULT 0,
         first_failed_at bigint,
         next_attempt_at bigint NOT NULL DEFAULT 0,
         dead_in_a_row integer NOT NULL DEFAULT 0,
         claimed_by text,
         claimed_until bigint,
         created_at bigint NOT NULL,
         created_by text NOT NULL,
         updated_at bigint NOT NULL
       )`,
      `CREATE INDEX IF NOT EXISTS webhook_endpoints_org_idx ON ${S}.webhook_endpoints (org_id, created_at)`,
      `CREATE INDEX IF NOT EXISTS webhook_endpoints_due_idx ON ${S}.webhook_endpoints (next_attempt_at) WHERE status = 'active'`,
      `CREATE TABLE IF NOT EXISTS ${S}.webhook_attempts (
         id bigserial PRIMARY KEY,
         endpoint_id text NOT NULL,
         org_id text NOT NULL,
         position bigint NOT NULL,
         event_id text NOT NULL,
         attempted_at bigint NOT NULL,
         outcome text NOT NULL CHECK (outcome IN ('succeeded', 'failed', 'dead_lettered')),
         http_status integer,
         latency_ms integer,
         error text,
         next_attempt_at bigint
       )`,
      `CREATE INDEX IF NOT EXISTS webhook_attempts_endpoint_idx ON ${S}.webhook_attempts (endpoint_id, id DESC)`,
      `CREATE INDEX IF NOT EXISTS webhook_attempts_time_idx ON ${S}.webhook_attempts (attempted_at)`,
    ],
  },
  {
    version: 10,
    name: 'caps on what a tenant creates: tool-log entries cut to size, keys and sessions counted',
    statements: [
      // Whether an entry's input_params were cut to the entry cap (src/service/store/tool-log-input.ts).
      `ALTER TABLE ${S}.tool_logs ADD COLUMN IF NOT EXISTS input_truncated boolean NOT NULL DEFAULT false`,
      // Live keys per user, counted when one is created.
      `CREATE INDEX IF NOT EXISTS api_keys_org_user_idx ON ${S}.api_keys (org_id, user_id)`,
      // Live sessions per key, counted at each sign-in.
      `CREATE INDEX IF NOT EXISTS console_sessions_key_idx ON ${S}.console_sessions (api_key_id, created_at)`,
    ],
  },
  {
    version: 11,
    name: 'what a tool call answered, kept in its log entry',
    statements: [
      // The text the tool answered (src/service/store/tool-log-input.ts, storableResponse); NULL for calls logged before it was kept.
      `ALTER TABLE ${S}.tool_logs ADD COLUMN IF NOT EXISTS response text`,
      `ALTER TABLE ${S}.tool_logs ADD COLUMN IF NOT EXISTS response_truncated boolean NOT NULL DEFAULT false`,
    ],
  },
  {
    version: 12,
    name: 'the change log appended by a function, planned once per connection',
    statements: [
      // What a write's last statement did as a statement of its own (src/service/changes/log.ts):
      // the organization's change lock, held to the commit, then every change in the drafts' order.
      // PL/pgSQL keeps the INSERT's plan for the life of the server connection, where the statement
      // was parsed and planned again by every write; a named prepared statement would do the same
      // but does not pass PgBouncer's transaction mode before 1.21.
      `CREATE OR REPLACE FUNCTION ${S}.append_changes(p_org text, p_user text, p_surface text, p_objects text[], p_records text[],
         p_operations text[], p_fields text[], p_values text[], p_previous text[]) RETURNS void LANGUAGE plpgsql AS $fn$
       BEGIN
         PERFORM pg_advisory_xact_lock(hashtextextended('oql changes|' || p_org, 0));
         INSERT INTO ${S}.changes (org_id, object_slug, record_id, operation, changed_fields, record, previous, actor_user_id, actor_surface, committed_at)
         SELECT p_org, c.o, c.r, c.op, c.f::json, c.rec::json, c.prev::json, p_user, p_surface, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
           FROM unnest(p_objects, p_records, p_operations, p_fields, p_values, p_previous) WITH ORDINALITY AS c(o, r, op, f, rec, prev, n)
          ORDER BY c.n;
       END
       $fn$`,
    ],
  },
  {
    version: 13,
    name: 'the change log keeps what a change did, not the record after it; a create statement one row',
    statements: [
      // A row keeps what undoes its change (src/service/changes/log.ts), not the record after it:
      // readers rebuild records from the table, or from the record one change in about 32 keeps
      // (`record`, a checkpoint, so no rebuild walks far). A create statement's records of one object are one
      // row: `width` changes, their ids in `record_ids`, their positions the `width` ones that end
      // at the row's own. Rows from before keep their record and their event id, and read as before.
      `ALTER TABLE ${S}.changes ADD COLUMN IF NOT EXISTS width integer NOT NULL DEFAULT 1 CHECK (width BETWEEN 1 AND 1000)`,
      `ALTER TABLE ${S}.changes ADD COLUMN IF NOT EXISTS record_ids text[]`,
      `ALTER TABLE ${S}.changes ADD COLUMN IF NOT EXISTS undo json`,
      `ALTER TABLE ${S}.changes ALTER COLUMN record_id DROP NOT NULL`,
      // A new row's event id is derived from its position when read: no uuid to make, no unique index to keep.
      `ALTER TABLE ${S}.changes ALTER COLUMN event_id DROP NOT NULL`,
      `ALTER TABLE ${S}.changes DROP CONSTRAINT IF EXISTS changes_event_id_key`,
      // Only the retention reads commit times, in position order: a BRIN index is enough, and costs a write next to nothing.
      `DROP INDEX IF EXISTS ${S}.changes_committed_at_idx`,
      `CREATE INDEX IF NOT EXISTS changes_committed_at_brin ON ${S}.changes USING brin (committed_at)`,
      // Every read names the organization, and (org_id, position) serves them all; the retention
      // deletes rows by their address. The position's own index was one more entry for every write.
      `ALTER TABLE ${S}.changes DROP CONSTRAINT IF EXISTS changes_pkey`,
      // A reader rebuilding a record walks back its later changes; creates, a record's first, never need finding.
      `CREATE INDEX IF NOT EXISTS changes_org_record_idx ON ${S}.changes (org_id, record_id, position) WHERE record_id IS NOT NULL`,
      // Room between a row's position and the one before it for its changes' positions (at most
      // 1,000 a row): positions stay in commit order, one per change, and a cursor is one of them.
      // The next row's position leaves room for 1,000 changes after the last one taken (or after 0).
      `ALTER SEQUENCE ${S}.changes_position_seq INCREMENT BY 1000`,
      `SELECT setval('${S}.changes_position_seq', (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM ${S}.changes_position_seq) + 1000, false)`,
      // append_changes of migration 12, for rows of this shape: the organization's change lock, held
      // to the commit, then the rows in order; p_widths says how many of p_ids each row takes.
      `CREATE OR REPLACE FUNCTION ${S}.log_changes(p_org text, p_user text, p_surface text, p_objects text[], p_operations text[],
         p_widths int[], p_ids text[], p_fields text[], p_previous text[], p_undo text[], p_records text[]) RETURNS void LANGUAGE plpgsql AS $fn$
       BEGIN
         PERFORM pg_advisory_xact_lock(hashtextextended('oql changes|' || p_org, 0));
         INSERT INTO ${S}.changes (org_id, object_slug, operation, width, record_id, record_ids, changed_fields, previous, undo, record, actor_user_id, actor_surface, committed_at, event_id)
         SELECT p_org, c.o, c.op, c.w,
                CASE WHEN c.op = 'created' THEN NULL ELSE p_ids[c.s] END,
                CASE WHEN c.op = 'created' THEN p_ids[c.s : c.s + c.w - 1] END,
                c.f::json, c.prev::json, c.u::json, c.rec::json, p_user, p_surface, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint, NULL
           FROM (SELECT r.*, (sum(r.w) OVER (ORDER BY r.n) - r.w + 1)::int AS s
                   FROM unnest(p_objects, p_operations, p_widths, p_fields, p_previous, p_undo, p_records) WITH ORDINALITY AS r(o, op, w, f, prev, u, rec, n)) c
          ORDER BY c.n;
       END
       $fn$`,
      // The same for a write of one change, most writes: no arrays to take apart.
      `CREATE OR REPLACE FUNCTION ${S}.log_change(p_org text, p_user text, p_surface text, p_object text, p_operation text,
         p_id text, p_fields text, p_previous text, p_undo text, p_record text) RETURNS void LANGUAGE plpgsql AS $fn$
       BEGIN
         PERFORM pg_advisory_xact_lock(hashtextextended('oql changes|' || p_org, 0));
         INSERT INTO ${S}.changes (org_id, object_slug, operation, width, record_id, record_ids, changed_fields, previous, undo, record, actor_user_id, actor_surface, committed_at, event_id)
         VALUES (p_org, p_object, p_operation, 1,
                 CASE WHEN p_operation = 'created' THEN NULL ELSE p_id END,
                 CASE WHEN p_operation = 'created' THEN ARRAY[p_id] END,
                 p_fields::json, p_previous::json, p_undo::json, p_record::json, p_user, p_surface, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint, NULL);
       END
       $fn$`,
    ],
  },
]);

// Any constant: the key of the advisory lock every migrating start takes.
const MIGRATION_LOCK = 7_402_113_991;

/**
 * Brings the service schema up to the newest migration; returns the versions it applied. Safe to
 * call on every start and from several processes at once.
 */
export async function migrate(db: Database, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  return db.transaction(async (tx) => {
    // The lock first: two instances starting at once would otherwise both try to create the
    // schema, and IF NOT EXISTS does not stop the second from failing on the first's.
    await tx.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${S}`);
    await tx.query(`CREATE TABLE IF NOT EXISTS ${S}.migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`);
    const done = new Set((await tx.query<{ version: number }>(`SELECT version FROM ${S}.migrations`)).rows.map((r) => Number(r.version)));
    const applied: number[] = [];
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue;
      await apply(tx, m);
      applied.push(m.version);
    }
    return applied;
  });
}

async function apply(tx: Tx, m: Migration): Promise<void> {
  for (const statement of m.statements) await tx.query(statement);
  await tx.query(`INSERT INTO ${S}.migrations (version, name, applied_at) VALUES ($1, $2, $3)`, [m.version, m.name, Date.now()]);
}
