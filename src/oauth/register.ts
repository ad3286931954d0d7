import type { FastifyInstance } from 'fastify';
import { addressKey, oauthError, withinLimit, workspaceOr404, type OAuthContext } from './context.js';
import { checkClientMetadata, MetadataError } from './client-checks.js';
import { insertClient, type ClientMetadata } from './store.js';

/**
 * Dynamic client registration (RFC 7591): public clients only. Kept for clients written before
 * Client ID Metadata Documents (./client-metadata.ts), which the MCP authorization revision of
 * 2026-07-28 prefers and which need no registration at all.
 */

/** `POST /api/v1/<subdomain>/oauth/register`: 201 with the client_id and the stored metadata. */
export function registerRoutes(app: FastifyInstance, ctx: OAuthContext): void {
  app.post<{ Params: { subdomain: string } }>('/api/v1/:subdomain/oauth/register', async (request, reply) => {
    if (!await withinLimit(ctx, reply, [addressKey('register', request)], ctx.limits.register, 'registration')) return reply;
    const workspace = await workspaceOr404(ctx, request.params.subdomain, reply);
    if (!workspace) return reply;
    let meta: ClientMetadata;
    try {
      meta = checkClientMetadata(request.body);
    } catch (e) {
      if (e instanceof MetadataError) return oauthError(reply, 400, e.error, e.message);
      throw e;
    }
    const client = await insertClient(ctx.db, workspace.subdomain, meta, ctx.now());
    return reply.code(201).header('cache-control', 'no-store').send({
      client_id: client.client_id,
      client_id_issued_at: Math.floor(client.created_at / 1000),
      client_name: client.client_name,
      redirect_uris: client.redirect_uris,
      grant_types: client.grant_types,
      response_types: client.response_types,
      token_endpoint_auth_method: client.token_endpoint_auth_method,
      ...(client.client_uri !== undefined ? { client_uri: client.client_uri } : {}),
      ...(client.application_type !== undefined ? { application_type: client.application_type } : {}),
    });
  });
}
