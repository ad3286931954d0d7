/** The authorization server of the service (docs/oauth.md): plugin, metadata builders and token checks. */
export { oauthPlugin, DEFAULT_ACCESS_TOKEN_TTL_SECONDS, DEFAULT_CODE_TTL_SECONDS, DEFAULT_REFRESH_TOKEN_TTL_SECONDS, type OAuthOptions } from './plugin.js';
export { authorizationServerMetadata, protectedResourceMetadata, type ProtectedResourceInput } from './metadata.js';
export { workspaceUrls, type WorkspaceUrls } from './context.js';
export { DEFAULT_LIMITS, type Limit, type OAuthLimits } from './limits.js';
export { oauthAuthResolver, pruneExpired, revokeToken, verifyAccessToken, type VerifyOptions } from './store.js';
