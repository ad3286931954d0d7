import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance } from 'fastify';
import { settingOrCreate } from '../service/store/settings.js';
import { bootstrapWorkspaces, type Workspace } from '../service/store/workspaces.js';
import type { ServiceDb } from '../service/types.js';
import { authorizeRoutes } from './authorize.js';
import { ClientMetadataDocuments, type ClientMetadataOptions } from './client-metadata.js';
import { oauthError, trimSlash, type OAuthContext } from './context.js';
import { mergeLimits, type OAuthLimits } from './limits.js';
import { SignInGuard } from './sign-in.js';
import type { AttemptStore } from '../service/shared-state/attempts.js';
import { attemptStoreFor } from '../service/shared-state/stores.js';
import { metadataRoutes } from './metadata.js';
import { registerRoutes } from './register.js';
import { tokenRoutes } from './token.js';
import { randomBytes } from 'node:crypto';
import { publicUrl } from '../rules.js';
import { OqlError } from '../diagnostics/diagnostic.js';

export interface OAuthOptions {
  readonly db: ServiceDb;
  /** Public URL of the main host; a function when it is known only once the server listens. */
  readonly baseUrl: string | (() => string);
  /** Public URL of the MCP host (the `resource` of a workspace is `{mcpUrl}/<subdomain>/mcp`). */
  readonly mcpUrl: string | (() => string);
  /** Lifetime of an authorization code. Default 60 seconds. */
  readonly codeTtlSeconds?: number | undefined;
  /** Lifetime of an access token (`expires_in`). Default 3600 seconds. */
  readonly accessTokenTtlSeconds?: number | undefined;
  /** Lifetime of a refresh token; each rotation starts a new one. Default 30 days. */
  readonly refreshTokenTtlSeconds?: number | undefined;
  /** Attempt limits, per endpoint; unnamed ones keep their defaults. */
  readonly limits?: Partial<OAuthLimits> | undefined;
  /** Workspaces to create on start when missing (`OQL_WORKSPACES`). */
  readonly workspaces?: readonly Workspace[] | undefined;
  /**
   * Where attempts are counted, shared with the console's sign-in form when the server passes
   * it. Default: in the database when it is PostgreSQL (shared by every instance on it), else in
   * this process.
   */
  readonly attempts?: AttemptStore | undefined;
  /** The clock in epoch milliseconds (tests of expiry). */
  readonly now?: (() => number) | undefined;
  /** `resource_name` of the protected-resource metadata. */
  readonly resourceName?: string | undefined;
  /** Fetching Client ID Metadata Documents: limits, and loopback http for tests. */
  readonly clientMetadata?: ClientMetadataOptions | undefined;
}

export const DEFAULT_CODE_TTL_SECONDS = 60;
export const DEFAULT_ACCESS_TOKEN_TTL_SECONDS = 3600;
export const DEFAULT_REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw OqlError.plain('INVALID_OPTIONS', `${name} must be a positive whole number of seconds, not ${String(value)}`);
  return value;
}

function urlGetter(name: string, value: string | (() => string)): () => string {
  const check = (url: string): string => publicUrl(name, url);
  if (typeof value === 'string') {
    const fixed = check(value);
    return () => fixed;
  }
  return () => check(value());
}

/**
 * The authorization server as one Fastify plugin for the main host: metadata, registration,
 * authorization (consent page) and token endpoints of every workspace. Registered without
 * fastify-plugin, it is encapsulated: its form-body parser and OAuth-shaped error handler apply to
 * its own routes only. Its tables come from the service's migration list (src/service/migrations.ts).
 */
export async function oauthPlugin(app: FastifyInstance, options: OAuthOptions): Promise<void> {
  const { db } = options;
  await bootstrapWorkspaces(db, options.workspaces ?? []);
  let secret: Promise<string> | undefined;
  const limits = mergeLimits(options.limits);
  const attempts = options.attempts ?? attemptStoreFor(db, options.now ?? Date.now);
  const ctx: OAuthContext = {
    db,
    baseUrl: urlGetter('baseUrl', options.baseUrl),
    mcpUrl: urlGetter('mcpUrl', options.mcpUrl),
    now: options.now ?? Date.now,
    codeTtlSeconds: positive('codeTtlSeconds', options.codeTtlSeconds, DEFAULT_CODE_TTL_SECONDS),
    lifetimes: {
      accessSeconds: positive('accessTokenTtlSeconds', options.accessTokenTtlSeconds, DEFAULT_ACCESS_TOKEN_TTL_SECONDS),
      refreshSeconds: positive('refreshTokenTtlSeconds', options.refreshTokenTtlSeconds, DEFAULT_REFRESH_TOKEN_TTL_SECONDS),
    },
    limits,
    attempts,
    signIn: new SignInGuard(attempts, limits.signIn),
    // Kept in the database: consent forms stay valid across restarts and across servers sharing it.
    csrfSecret: () => (secret ??= settingOrCreate(db, 'oauth_csrf_secret', () => randomBytes(32).toString('base64url'))),
    resourceName: options.resourceName ?? 'OQL CRM data',
    clientMetadata: new ClientMetadataDocuments(options.clientMetadata, options.now ?? Date.now),
  };

  await app.register(formbody, { bodyLimit: 16 * 1024 });
  // Out of the service's OpenAPI document: these endpoints are described by their RFC 8414
  // metadata, and take no API key.
  app.addHook('onRoute', (route) => {
    route.schema = { ...(route.schema ?? {}), hide: true } as typeof route.schema;
  });

  // OAuth clients read {error, error_description}; nothing of an internal error reaches them.
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'OAuth endpoint failed');
      return oauthError(reply, 500, 'server_error', 'the authorization server failed; try again');
    }
    if (status === 413) return oauthError(reply, 413, 'invalid_request', 'the request body is too large');
    if (status === 415) return oauthError(reply, 415, 'invalid_request', 'unsupported content type: registration takes application/json, the token endpoint application/x-www-form-urlencoded');
    const register = request.url.includes('/oauth/register');
    return oauthError(reply, 400, register ? 'invalid_client_metadata' : 'invalid_request',
      register ? 'the request body must be a JSON object of client metadata' : 'the request could not be read');
  });

  metadataRoutes(app, ctx);
  registerRoutes(app, ctx);
  authorizeRoutes(app, ctx);
  tokenRoutes(app, ctx);
}

/** What `createServer` takes for the authorization server, beyond the database and the URLs. */
export interface OAuthServerOptions {
  /** Workspaces to create on start, `acme=org_acme,globex=org_globex`. Default: OQL_WORKSPACES. */
  readonly workspaces?: string | undefined;
  /** Lifetimes, limits and clock of the authorization server. */
  readonly oauth?: Pick<OAuthOptions, 'codeTtlSeconds' | 'accessTokenTtlSeconds' | 'refreshTokenTtlSeconds' | 'limits' | 'now' | 'resourceName' | 'clientMetadata'> | undefined;
}
