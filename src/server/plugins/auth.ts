import type { FastifyInstance } from 'fastify';
import { OqlError } from '../../diagnostics/diagnostic.js';
import type { RouteAuth } from '../context.js';
import type { AuthResolver } from '../../service/types.js';
import { sendError } from './envelope.js';
import { parseBearer } from '../../rules.js';


/**
 * `Authorization: Bearer <token>` → the request's principal, through the resolvers in order (API
 * keys first, then OAuth tokens). Applies to every route of the instance it is installed on, except
 * those whose config says `auth: false`; a route with `auth: 'api_key'` (the default) refuses
 * principals from other resolvers, since an OAuth token is issued for the MCP resource only.
 */
export function installAuth(app: FastifyInstance, resolvers: readonly AuthResolver[]): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request, reply) => {
    const mode: RouteAuth = request.routeOptions.config?.auth ?? 'api_key';
    if (mode === false) return;
    const header = request.headers.authorization;
    const token = parseBearer(header);
    if (token === undefined) {
      return sendError(reply, OqlError.plain('UNAUTHENTICATED', 'missing bearer token', 'send Authorization: Bearer <API key>'));
    }
    for (const resolve of resolvers) {
      const principal = await resolve(token);
      if (principal === null) continue;
      if (mode === 'api_key' && principal.via !== 'api_key') break;
      request.principal = principal;
      return;
    }
    return sendError(reply, OqlError.plain('UNAUTHENTICATED', 'the bearer token is not a valid API key', 'create one with oql keys create --org ORG --role ROLE'));
  });
}
