import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceDb } from '../service/types.js';
import { resolveWorkspace, type Workspace } from '../service/store/workspaces.js';
import type { ClientMetadataDocuments } from './client-metadata.js';
import type { AttemptStore } from '../service/shared-state/attempts.js';
import type { Limit, OAuthLimits } from './limits.js';
import type { SignInGuard } from './sign-in.js';
import type { TokenLifetimes } from './store.js';

/** What every OAuth endpoint module is given by the plugin. */
export interface OAuthContext {
  readonly db: ServiceDb;
  /** Public URL of the main host, without a trailing slash (metadata, issuer, form action). */
  baseUrl(): string;
  /** Public URL of the MCP host, without a trailing slash (the `resource` of each workspace). */
  mcpUrl(): string;
  now(): number;
  readonly codeTtlSeconds: number;
  readonly lifetimes: TokenLifetimes;
  readonly limits: OAuthLimits;
  /** Attempt counters: in the database when it is PostgreSQL, so a fleet shares them. */
  readonly attempts: AttemptStore;
  /** The key-guessing budget of the consent form. */
  readonly signIn: SignInGuard;
  /** The key that signs consent-form CSRF tokens. */
  csrfSecret(): Promise<string>;
  readonly resourceName: string;
  /** Client ID Metadata Documents fetched for URL-formatted client_ids, cached. */
  readonly clientMetadata: ClientMetadataDocuments;
}

export interface WorkspaceUrls {
  readonly issuer: string;
  readonly authorizationEndpoint: string;
  readonly tokenEndpoint: string;
  readonly registrationEndpoint: string;
  /** The MCP URL: the only `resource` a token of this workspace is issued for. */
  readonly resource: string;
  readonly protectedResourceMetadata: string;
  readonly authorizationServerMetadata: string;
}

export function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/** Every URL of one workspace, from the two public base URLs. */
export function workspaceUrls(baseUrl: string, mcpUrl: string, subdomain: string): WorkspaceUrls {
  const base = trimSlash(baseUrl);
  const mcp = trimSlash(mcpUrl);
  const api = `${base}/api/v1/${subdomain}/oauth`;
  return {
    issuer: `${base}/${subdomain}`,
    authorizationEndpoint: `${api}/authorize`,
    tokenEndpoint: `${api}/token`,
    registrationEndpoint: `${api}/register`,
    resource: `${mcp}/${subdomain}/mcp`,
    protectedResourceMetadata: `${mcp}/${subdomain}/.well-known/oauth-protected-resource`,
    authorizationServerMetadata: `${base}/.well-known/oauth-authorization-server/${subdomain}`,
  };
}

/**
 * An OAuth error in the shape of RFC 6749 section 5.2, not the service envelope: OAuth clients
 * parse `error` and `error_description`. Never cached (RFC 6749 section 5.1).
 */
export function oauthError(reply: FastifyReply, status: number, error: string, description: string): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').header('pragma', 'no-cache')
    .type('application/json; charset=utf-8').send({ error, error_description: description });
}

/** The workspace of the path, or a 404 workspace_not_found answer (and null). */
export async function workspaceOr404(ctx: OAuthContext, subdomain: string, reply: FastifyReply): Promise<Workspace | null> {
  const workspace = await resolveWorkspace(ctx.db, subdomain);
  if (!workspace) oauthError(reply, 404, 'workspace_not_found', `no workspace '${subdomain.slice(0, 63)}' exists`);
  return workspace;
}

/** Counts an attempt; when over the limit, answers 429 with Retry-After and returns false. */
export async function withinLimit(ctx: OAuthContext, reply: FastifyReply, keys: readonly string[], limit: Limit, what: string): Promise<boolean> {
  const verdict = await ctx.attempts.hit(keys, limit);
  if (verdict.ok) return true;
  reply.header('retry-after', String(verdict.retryAfter));
  oauthError(reply, 429, 'too_many_requests', `too many ${what} attempts; retry in ${verdict.retryAfter} seconds`);
  return false;
}

export function addressKey(endpoint: string, request: FastifyRequest): string {
  return `${endpoint}|ip|${request.ip}`;
}

export function clientKey(endpoint: string, workspace: string, clientId: string): string {
  return `${endpoint}|client|${workspace}|${clientId.slice(0, 200)}`;
}

/** A single string parameter: absent, or repeated (an ambiguity attackers use), is undefined. */
export function param(source: unknown, name: string): string | undefined {
  if (source === null || typeof source !== 'object') return undefined;
  const value = (source as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/** Whether a parameter was sent at all (even empty or repeated). */
export function present(source: unknown, name: string): boolean {
  return source !== null && typeof source === 'object' && Object.prototype.hasOwnProperty.call(source, name);
}
