/**
 * oql/server: the CRM data service over HTTP, built on the oql library. `oql serve` runs it;
 * `createServer` builds it for embedding and tests.
 */
export { createServer, type OqlServer, type CreateServerOptions, type PublicUrlOptions, type ConsoleOptions } from './app.js';
export type { ServerOptions, ServerConfig, LogOptions } from '../service/config.js';
export type { ServiceContext, RouteAuth } from './context.js';
export { openDatabase, openReadDatabase, redact, type DatabaseOptions, type ReadDatabase } from '../run/open.js';
export type { ReadRole } from '../run/drivers/read-role.js';
export { MemoryLeaseStore, type Lease, type LeaseStore } from '../service/shared-state/leases.js';
export { PostgresLeaseStore, type PostgresLeaseStoreOptions } from '../service/shared-state/leases-pg.js';
export { MemoryAttemptStore, type AttemptStore, type Verdict } from '../service/shared-state/attempts.js';
export { PostgresAttemptStore } from '../service/shared-state/attempts-pg.js';
export { parseTrustProxy, type TrustProxy } from '../service/trust-proxy.js';
export { databaseOf } from '../run/database-of.js';
export type { Database } from '../run/database.js';
export { ensureCatalogTables } from '../service/catalog-tables.js';
export { loadDemoData, DEMO_ORG } from '../demo/seed.js';
export { envelopeFor, sendError } from './plugins/envelope.js';
export { createApiKey, issueApiKey, verifyApiKey, storeApiKey, listApiKeys, getApiKey, revokeApiKey, rollApiKey, ROLL_GRACE_MS, parseApiKeysEnv, hashApiKey, ApiKeyVerifier, type NewApiKey, type ApiKeyInfo } from '../service/store/api-keys.js';
export { recordToolCall, listToolLogs, type ToolCall, type ToolLog } from '../service/store/tool-logs.js';
export { migrate, MIGRATIONS, SERVICE_SCHEMA, type Migration } from '../service/migrations.js';
export { tokenSecret, settingOrCreate } from '../service/store/settings.js';
export { ROLES, isRole, type Role, type Principal, type AuthResolver, type ServiceDb, type ServiceTx } from '../service/types.js';
export { oauthPlugin, authorizationServerMetadata, protectedResourceMetadata, workspaceUrls, verifyAccessToken, revokeToken, oauthAuthResolver, DEFAULT_LIMITS, type OAuthOptions, type OAuthLimits, type WorkspaceUrls, type VerifyOptions } from '../oauth/index.js';
export type { OAuthServerOptions } from '../oauth/plugin.js';
export { createWorkspace, resolveWorkspace, listWorkspaces, parseWorkspacesEnv, type Workspace } from '../service/store/workspaces.js';
