import type { AddressInfo } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, type AuthInfo } from '@modelcontextprotocol/server';
import { requestContext } from '../service/policy.js';
import { oauthError, trimSlash, workspaceUrls } from '../oauth/context.js';
import { protectedResourceMetadata } from '../oauth/metadata.js';
import { missingScopes, SCOPES } from '../oauth/scopes.js';
import type { Workspace } from '../service/operations.js';
import type { Principal } from '../service/types.js';
import { buildMcpServer } from './tools.js';
import { INVALID_REQUEST, jsonRpcError, MAX_JSON_DEPTH, nestsDeeperThan, PARSE_ERROR } from './jsonrpc.js';
import { parseBearer } from '../rules.js';

/**
 * The hosted MCP endpoint of every workspace, mounted on the MCP host's Fastify instance:
 *
 *   POST {mcp_url}/<subdomain>/mcp                                  Streamable HTTP (stateless)
 *   GET  {mcp_url}/<subdomain>/.well-known/oauth-protected-resource  RFC 9728 metadata
 *   GET  {mcp_url}/.well-known/oauth-protected-resource/<subdomain>/mcp   the same, at RFC 9728's path-inserted location
 *
 * The SDK's `createMcpHandler` serves each request with a fresh server built for the caller, so
 * nothing lives between requests: any number of MCP hosts can share one database. Nothing else on
 * this host is an OAuth endpoint; `/.well-known/oauth-authorization-server`, `/authorize`, `/token`
 * and `/register` fall through to the host's 404.
 */
export interface McpRoutesOptions {
  /** Public URL of the main host (the issuer of each workspace lives there). */
  readonly baseUrl: () => string;
  /** Public URL of this host: a workspace's resource is `{mcpUrl}/<subdomain>/mcp`. */
  readonly mcpUrl: () => string;
  /**
   * Also accept an API key of the workspace's organization as the bearer token (for clients
   * configured with a static header). Default true.
   */
  readonly acceptApiKeys?: boolean | undefined;
  /** The principal of an OAuth access token issued for this resource of the workspace, or null. */
  readonly verifyAccessToken: (token: string, audience: { readonly resource: string; readonly workspace: string }) => Promise<Principal | null>;
  /** The principal of a live API key, or null. */
  readonly verifyApiKey: (key: string) => Promise<Principal | null>;
}


export async function mcpRoutes(app: FastifyInstance, options: McpRoutesOptions): Promise<void> {
  const ctx = app.oql;
  const acceptApiKeys = options.acceptApiKeys ?? true;

  const handler = createMcpHandler(({ authInfo }) => {
    const principal = authInfo?.extra?.['principal'] as Principal | undefined;
    // The route authenticates before the handler runs; a request without a principal never gets here.
    if (!principal) throw new Error('MCP request reached the handler without a principal');
    return buildMcpServer({
      ops: ctx.ops,
      catalog: ctx.catalog,
      request: requestContext(principal),
      onLogError: (error) => app.log.error({ errorName: (error as Error)?.name }, 'tool call could not be logged'),
    });
  }, {
    onerror: (error) => app.log.warn({ errorName: error.name, message: error.message.slice(0, 200) }, 'MCP request rejected'),
  });
  const node = toNodeHandler(handler, { maxRequestBodySize: ctx.config.bodyLimit });
  app.addHook('onClose', async () => {
    await handler.close();
  });

  const urlsOf = (subdomain: string) => workspaceUrls(options.baseUrl(), options.mcpUrl(), subdomain);

  /** The workspace of the path, or a 404 answer and null. */
  const workspaceOf = async (subdomain: string, reply: FastifyReply): Promise<Workspace | null> => {
    const workspace = await ctx.ops.workspace(subdomain);
    if (!workspace) oauthError(reply, 404, 'workspace_not_found', `no workspace '${subdomain.slice(0, 63)}' exists`);
    return workspace;
  };

  const authenticate = async (token: string, workspace: Workspace, resource: string): Promise<Principal | null> => {
    const viaToken = await options.verifyAccessToken(token, { resource, workspace: workspace.subdomain });
    if (viaToken) return viaToken.orgId === workspace.orgId ? viaToken : null;
    if (!acceptApiKeys) return null;
    const viaKey = await options.verifyApiKey(token);
    return viaKey && viaKey.orgId === workspace.orgId ? { ...viaKey, workspace: workspace.subdomain } : null;
  };

  const serve = async (request: FastifyRequest<{ Params: { subdomain: string } }>, reply: FastifyReply) => {
    const workspace = await workspaceOf(request.params.subdomain, reply);
    if (!workspace) return reply;
    const urls = urlsOf(workspace.subdomain);
    if (!originAllowed(request.headers.origin, request.headers.host, options.mcpUrl())) {
      return oauthError(reply, 403, 'forbidden_origin', 'requests from this Origin or Host are not accepted: the MCP endpoint serves agents, not web pages');
    }
    const header = request.headers.authorization;
    const token = parseBearer(header);
    const principal = token === undefined ? null : await authenticate(token, workspace, urls.resource);
    if (!principal) {
      // RFC 6750 section 3 and RFC 9728 section 5.1: the challenge points at the metadata, which
      // points at the authorization server; a presented token that failed also says so.
      const challenge = token === undefined
        ? `Bearer resource_metadata="${urls.protectedResourceMetadata}", scope="${SCOPES.join(' ')}"`
        : `Bearer error="invalid_token", error_description="the access token is invalid, expired, revoked or for another workspace", resource_metadata="${urls.protectedResourceMetadata}", scope="${SCOPES.join(' ')}"`;
      reply.header('www-authenticate', challenge);
      return oauthError(reply, 401, 'invalid_token', token === undefined
        ? 'this MCP endpoint needs a bearer token: follow resource_metadata in WWW-Authenticate to authorize'
        : 'the bearer token is not valid for this workspace');
    }
    if (nestsDeeperThan(request.body, MAX_JSON_DEPTH)) {
      return jsonRpcError(reply, 400, INVALID_REQUEST, `Invalid Request: the JSON nests deeper than ${MAX_JSON_DEPTH} levels`);
    }
    // One challenge naming every scope this request lacks (API keys carry no scopes: their role decides).
    const missing = principal.scopes === undefined ? [] : missingScopes(principal.scopes, request.body);
    if (missing.length > 0) {
      const needs = `this request needs the scope ${missing.join(' ')}, which the access token was not granted: authorize again asking for it`;
      reply.header('www-authenticate', `Bearer error="insufficient_scope", scope="${missing.join(' ')}", resource_metadata="${urls.protectedResourceMetadata}", error_description="${needs}"`);
      return oauthError(reply, 403, 'insufficient_scope', needs);
    }
    // The token itself stays here: tools see the principal only, so no log can hold it.
    const auth: AuthInfo = {
      token: '',
      clientId: principal.clientId ?? principal.userId,
      scopes: [...(principal.scopes ?? [])],
      resource: new URL(urls.resource),
      extra: { principal },
    };
    reply.hijack();
    await node(Object.assign(request.raw, { auth }), reply.raw, request.body);
    return reply;
  };

  app.route<{ Params: { subdomain: string } }>({ method: ['POST', 'GET', 'DELETE'], url: '/:subdomain/mcp', handler: serve });

  // A body that cannot be read gets a JSON-RPC error on this endpoint, as its clients expect; the
  // host's envelope stays for everything else.
  app.setErrorHandler((err, request, reply) => {
    const e = err as { code?: string; statusCode?: number };
    if (request.routeOptions.url === '/:subdomain/mcp') {
      if (err instanceof SyntaxError || e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || (e.statusCode === 400 && /JSON|prototype|constructor/i.test(String((err as Error).message)))) {
        return jsonRpcError(reply, 400, PARSE_ERROR, 'Parse error: the body is not valid JSON');
      }
      if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return jsonRpcError(reply, 413, INVALID_REQUEST, 'Invalid Request: the body is larger than this server accepts');
      if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return jsonRpcError(reply, 415, INVALID_REQUEST, 'Invalid Request: send Content-Type: application/json');
    }
    throw err;
  });

  const metadata = async (subdomain: string, reply: FastifyReply) => {
    const workspace = await workspaceOf(subdomain, reply);
    if (!workspace) return reply;
    return reply.header('cache-control', 'public, max-age=300').header('access-control-allow-origin', '*')
      .send(protectedResourceMetadata({ baseUrl: options.baseUrl(), mcpUrl: options.mcpUrl(), subdomain: workspace.subdomain }));
  };
  app.get<{ Params: { subdomain: string } }>('/:subdomain/.well-known/oauth-protected-resource',
    async (request, reply) => metadata(request.params.subdomain, reply));
  app.get<{ Params: { subdomain: string } }>('/.well-known/oauth-protected-resource/:subdomain/mcp',
    async (request, reply) => metadata(request.params.subdomain, reply));
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whether a host name is the MCP host's own (port-agnostic; the loopback names stand for each other). */
function sameHost(hostname: string, own: string): boolean {
  return hostname === own || (LOOPBACK.has(own) && LOOPBACK.has(hostname));
}

/**
 * DNS-rebinding protection. Browsers send Origin; agents do not. A page on another site must not
 * drive the endpoint with a token it got hold of, so an Origin naming another host is refused.
 * On a loopback deployment the Host header must name a loopback host as well: a rebound name
 * (evil.example resolving to 127.0.0.1) arrives with its own name as Host. Behind a proxy with a
 * public --mcp-url, Host is the proxy's business and is not checked.
 */
function originAllowed(origin: string | undefined, host: string | undefined, mcpUrl: string): boolean {
  let own: string;
  try {
    own = new URL(mcpUrl).hostname;
  } catch {
    return false;
  }
  if (LOOPBACK.has(own) && host !== undefined) {
    let hostname: string;
    try {
      hostname = new URL(`http://${host}`).hostname;
    } catch {
      return false;
    }
    if (!LOOPBACK.has(hostname)) return false;
  }
  if (origin === undefined) return true;
  try {
    return sameHost(new URL(origin).hostname, own);
  } catch {
    return false;
  }
}

/**
 * The URL a listening Fastify instance is reachable at, for metadata when no public URL was given:
 * an unspecified bind address (0.0.0.0, ::) is written as the loopback address.
 */
export function listeningUrl(app: FastifyInstance): string {
  const address = app.server.address() as AddressInfo | string | null;
  if (address === null || typeof address === 'string') throw new Error('the server is not listening on a TCP port yet');
  const host = address.address === '0.0.0.0' ? '127.0.0.1'
    : address.address === '::' ? '[::1]'
    : address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return trimSlash(`http://${host}:${address.port}`);
}
