import type { FastifyInstance } from 'fastify';
import { oauthError, workspaceOr404, workspaceUrls, type OAuthContext } from './context.js';
import { SCOPES } from './scopes.js';

/**
 * Authorization-server metadata of one workspace (RFC 8414). The issuer is exactly
 * `{base_url}/<subdomain>`: strict clients (oauth4webapi, the MCP SDK) compare it with the URL they
 * derived the metadata location from. Clients identify themselves by a Client ID Metadata Document
 * URL, or register (RFC 7591, kept for older clients); every authorization response names the
 * issuer (RFC 9207).
 */
export function authorizationServerMetadata(baseUrl: string, mcpUrl: string, subdomain: string) {
  const urls = workspaceUrls(baseUrl, mcpUrl, subdomain);
  return {
    issuer: urls.issuer,
    authorization_endpoint: urls.authorizationEndpoint,
    token_endpoint: urls.tokenEndpoint,
    registration_endpoint: urls.registrationEndpoint,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    scopes_supported: [...SCOPES],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}

export interface ProtectedResourceInput {
  readonly baseUrl: string;
  readonly mcpUrl: string;
  readonly subdomain: string;
  /** Shown by clients when asking the user; default "OQL CRM data (<subdomain>)". */
  readonly resourceName?: string | undefined;
}

/**
 * Protected-resource metadata (RFC 9728) of one workspace's MCP endpoint, for the MCP host to serve
 * at `{mcp_url}/<subdomain>/.well-known/oauth-protected-resource`.
 */
export function protectedResourceMetadata(input: ProtectedResourceInput) {
  const urls = workspaceUrls(input.baseUrl, input.mcpUrl, input.subdomain);
  return {
    resource: urls.resource,
    authorization_servers: [urls.issuer],
    bearer_methods_supported: ['header'],
    scopes_supported: [...SCOPES],
    resource_name: input.resourceName ?? `OQL CRM data (${input.subdomain})`,
  };
}

/** `GET /.well-known/oauth-authorization-server/<subdomain>` on the main host (RFC 8414 path insertion). */
export function metadataRoutes(app: FastifyInstance, ctx: OAuthContext): void {
  app.get<{ Params: { subdomain: string } }>('/.well-known/oauth-authorization-server/:subdomain', async (request, reply) => {
    const workspace = await workspaceOr404(ctx, request.params.subdomain, reply);
    if (!workspace) return reply;
    return reply.header('cache-control', 'public, max-age=300')
      .send(authorizationServerMetadata(ctx.baseUrl(), ctx.mcpUrl(), workspace.subdomain));
  });
  // Without a subdomain there is no issuer to describe: the metadata is per workspace.
  app.get('/.well-known/oauth-authorization-server', async (_request, reply) =>
    oauthError(reply, 404, 'workspace_not_found', 'authorization-server metadata is per workspace: /.well-known/oauth-authorization-server/<subdomain>'));
}
