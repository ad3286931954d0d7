import { withAuditFields } from '../catalog/audit-fields.js';
import { DEMO_ORG, loadDemoData } from '../demo/seed.js';
import { addMissingAuditColumns } from '../records/audit-columns.js';
import { addLifecycleColumns } from '../records/lifecycle.js';
import { ChangeFeed } from './changes/feed.js';
import { ChangeLog } from './changes/log.js';
import { Maintenance } from './changes/maintenance.js';
import { ChangeWatcher } from './changes/watcher.js';
import { WebhookSender } from './webhooks/sender.js';
import { listeningSql, WebhookStore } from './webhooks/store.js';
import { Webhooks } from './webhooks/webhooks.js';
import { openDatabase, openReadDatabase, openReadSessions, type ReadDatabase, type ReadSessions } from '../run/open.js';
import { routeReads } from '../run/routed.js';
import type { ReadRole } from '../run/drivers/read-role.js';
import { prepareSyntaxErrors } from '../syntax/parse.js';
import { ensureCatalogTables } from './catalog-tables.js';
import { checkRoleAccess, DEFAULT_EMBEDDED_TIMEOUT_MS, DEFAULT_QUERY_TIMEOUT_MS, resolveConfig, type ServerOptions } from './config.js';
import type { ServiceContext } from './context.js';
import type { LeaseStore } from './shared-state/leases.js';
import { leaseStoreFor } from './shared-state/stores.js';
import { migrate, SERVICE_SCHEMA } from './migrations.js';
import { TableStatistics } from './table-statistics.js';
import { Operations } from './operations.js';
import { Policy } from './policy.js';
import { ApiKeyVerifier, countApiKeys, createApiKey, parseApiKeysEnv, storeApiKey } from './store/api-keys.js';
import { tokenSecret } from './store/settings.js';
import { bootstrapWorkspaces, parseWorkspacesEnv } from './store/workspaces.js';

const EMBEDDED_COOL_DOWN_MS = 10_000;

export interface OpenedService extends ServiceContext {
  /** The key created for org_demo on an empty database (`createFirstKey`), shown once. */
  readonly firstKey: string | undefined;
  /** Rows of demo data loaded at this start (0 when the tables already held data). */
  readonly demoRows: number;
  /** What the start noticed but let pass (a unique index that could not be built). */
  readonly warnings: readonly string[];
  /** Audit columns added to tables made before every object carried them. */
  readonly auditColumns: readonly string[];
  /**
   * The --read-database pool: its URL without the password, and what its role carries (whether
   * its reads are one statement, and the ALTER ROLE that would make them so).
   */
  readonly reads: { readonly label: string; readonly role: ReadRole } | undefined;
  /**
   * Without --read-database, on a PostgreSQL the service opened: the pool of read-only sessions its
   * reads take, one statement each (`db`), or why there is none (`refused`: a pooler that does not
   * carry the start-up option). Undefined when not tried (OQL_READ_SESSIONS=0, embedded, a given db).
   */
  readonly readSessions: ReadSessions | undefined;
  /** The purge of deleted records and the pruning of old changes (every few minutes by itself). */
  readonly maintenance: Maintenance;
  /** Closes the database when it was opened here. */
  close(): Promise<void>;
}

/** How often an instance purges and prunes. */
const MAINTENANCE_EVERY_MS = 5 * 60_000;
/** How often an instance on PostgreSQL looks for other instances' changes while a reader waits. */
const WATCH_POLL_MS = 250;

/**
 * Everything the surfaces share, without any of them: opens the database, runs the migrations,
 * creates any missing catalog table (refusing one that does not match the catalog), bootstraps
 * keys, workspaces and demo data, and builds the policy point and the operations. `createServer`
 * puts the HTTP hosts on top of it; `oql mcp --stdio` serves its tools from it alone.
 */
export async function openService(options: ServerOptions & { workspaces?: string } = {}): Promise<OpenedService> {
  const config = resolveConfig(options);
  const bootstrapKeys = config.apiKeys === undefined ? [] : parseApiKeysEnv(config.apiKeys);
  const workspaces = parseWorkspacesEnv(options.workspaces ?? (options.env ?? process.env)['OQL_WORKSPACES'] ?? '');
  const ownsDb = options.db === undefined;
  const db = options.db ?? (await openDatabase({ ...options, embeddedSliceMs: config.embeddedSliceMs, preparedStatements: config.preparedStatements }));
  let reader: ReadDatabase | undefined;
  let sessions: ReadSessions | undefined;
  try {
    prepareSyntaxErrors();
    // Every object carries the audit fields the contract shows on every record, declared or not.
    const catalog = withAuditFields(options.catalog ?? (await import('../demo/index.js')).loadFixtureCatalog('crm'));
    checkRoleAccess(config.roleAccess, catalog);
    await migrate(db);
    // Catalog-dependent, so not an entry of the fixed migration list: idempotent, run at every start.
    const auditColumns = await addMissingAuditColumns(db, catalog);
    const { warnings } = await ensureCatalogTables(db, catalog, { searchIndexes: options.searchIndexes === true });
    await addLifecycleColumns(db, catalog);
    for (const k of bootstrapKeys) await storeApiKey(db, k.key, k);
    // The demo's data belongs to org_demo, reached through the workspace `demo`.
    await bootstrapWorkspaces(db, options.demo ? [...workspaces, { subdomain: 'demo', orgId: DEMO_ORG }] : workspaces);
    const demoRows = options.demo ? await loadDemoData(db, catalog, options.catalog === undefined) : 0;
    const firstKey = options.createFirstKey && (await countApiKeys(db)) === 0
      ? await createApiKey(db, { orgId: DEMO_ORG, role: 'superadmin', userId: 'u_demo_admin' })
      : undefined;
    const secret = await tokenSecret(db, config.tokenSecret);
    // PGlite runs no autovacuum: the service analyzes its tables itself, first once everything above is in.
    const statistics = db.kind === 'pglite' ? new TableStatistics(db, [catalog.mapping.schema, SERVICE_SCHEMA]) : undefined;
    await statistics?.check();
    statistics?.start(MAINTENANCE_EVERY_MS);
    const timeoutMs = config.queryTimeoutMs ?? (db.kind === 'pglite' ? DEFAULT_EMBEDDED_TIMEOUT_MS : DEFAULT_QUERY_TIMEOUT_MS);
    // Its role's statement_timeout must equal the service's for a read to be one statement.
    if (options.readDatabase !== undefined) reader = await openReadDatabase(options.readDatabase, { ...options, timeoutMs, preparedStatements: config.preparedStatements });
    // Otherwise reads take sessions of the primary that start read-only with that same timeout.
    else if (ownsDb && options.database !== undefined && config.readSessions) sessions = await openReadSessions(options.database, { ...options, timeoutMs, preparedStatements: config.preparedStatements });
    // The operations' database: its reads on those sessions (the same role, so connector pages too), the rest on the pool.
    const opsDb = sessions?.db ? routeReads(db, sessions.db) : db;
    const readDb = reader ? routeReads(db, reader.db) : opsDb;
    // A read role on the primary itself also serves the reads that must see the latest write.
    const primaryReadDb = reader && !reader.role.standby ? readDb : opsDb;
    const ownsLeases = options.leases === undefined;
    const leaseStore: LeaseStore = options.leases ?? leaseStoreFor(db);
    const policy = new Policy({ catalog, config, leases: leaseStore, timeoutMs, coolDownMs: db.kind === 'pglite' ? EMBEDDED_COOL_DOWN_MS : 0 });
    const changeLog = new ChangeLog(db, catalog, { timeoutMs, listening: listeningSql });
    // Only this process writes an embedded database: its own commits wake its readers, no polling.
    const watcher = new ChangeWatcher(changeLog, db.kind === 'pglite' ? null : WATCH_POLL_MS);
    const feed = new ChangeFeed(changeLog, watcher, catalog, config, policy);
    const maintenance = new Maintenance(db, catalog, changeLog, config);
    maintenance.start(MAINTENANCE_EVERY_MS);
    const sender = new WebhookSender(db, changeLog, {
      allowPrivate: config.webhookAllowPrivate, slotsPerOrg: config.webhookSlotsPerOrg, retryScale: config.webhookRetryScale,
      timeoutMs: config.webhookTimeoutMs, ...(options.webhookResolver ? { resolver: options.webhookResolver } : {}),
    });
    const webhooks = new Webhooks(new WebhookStore(db), sender, changeLog, catalog, config, policy);
    sender.start();
    const keys = new ApiKeyVerifier(db, config.apiKeyCacheMs);
    let closed: Promise<void> | undefined;
    return {
      db, readDb, catalog, config, policy, leases: leaseStore, tokenSecret: secret, maintenance,
      ops: new Operations(opsDb, readDb, primaryReadDb, catalog, config, policy, secret, keys, changeLog, feed, webhooks, statistics),
      keys,
      firstKey, demoRows, warnings, auditColumns,
      reads: reader && { label: reader.db.label, role: reader.role },
      readSessions: sessions,
      close() {
        closed ??= (async () => {
          watcher.close();
          await sender.stop();
          await maintenance.stop();
          await statistics?.stop();
          if (ownsLeases) await leaseStore.close().catch(() => {});
          await reader?.db.close().catch(() => {});
          await sessions?.db?.close().catch(() => {});
          if (ownsDb) await db.close();
        })();
        return closed;
      },
    };
  } catch (e) {
    await reader?.db.close().catch(() => {});
    await sessions?.db?.close().catch(() => {});
    if (ownsDb) await db.close().catch(() => {});
    throw e;
  }
}
