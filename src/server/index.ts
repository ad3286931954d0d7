/**
 * oql/server: the CRM data service over HTTP, built on the oql library. `oql serve` runs it;
 * `createServer` builds it for embedding and tests.
 */
export { createServer, type OqlServer, type CreateServerOptions, type PublicUrlOptions } from './app.js';
export type { ServerOptions, ServerConfig, LogOptions } from './config.js';
export type { ServiceContext, RouteAuth } from './context.js';
export { openServiceDb, serviceDbOf, ensureCatalogTables, loadDemoData, DEMO_ORG, type DatabaseOptions } from './database.js';
export { envelopeFor, sendError } from './plugins/envelope.js';
export { createApiKey, issueApiKey, verifyApiKey, storeApiKey, listApiKeys, revokeApiKey, parseApiKeysEnv, hashApiKey, ApiKeyVerifier, type NewApiKey, type ApiKeyInfo } from './store/api-keys.js';
export { recordToolCall, listToolLogs, type ToolCall, type ToolLog } from './store/tool-logs.js';
export { createServiceSchema, SERVICE_SCHEMA } from './store/schema.js';
export { tokenSecret, settingOrCreate } from './store/settings.js';
export { ROLES, isRole, type Role, type Principal, type AuthResolver, type ServiceDb, type ServiceTx } from './types.js';
export { oauthPlugin, authorizationServerMetadata, protectedResourceMetadata, workspaceUrls, verifyAccessToken, revokeToken, oauthAuthResolver, DEFAULT_LIMITS, type OAuthOptions, type OAuthLimits, type WorkspaceUrls, type VerifyOptions } from './oauth/index.js';
export type { OAuthServerOptions } from './oauth/plugin.js';
export { createWorkspace, resolveWorkspace, listWorkspaces, parseWorkspacesEnv, type Workspace } from './store/workspaces.js';
