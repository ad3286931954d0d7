import type { FastifyInstance, FastifyRequest } from 'fastify';
import { OqlError } from '../../diagnostics/diagnostic.js';
import type { RouteAuth } from '../context.js';
import type { AuthResolver, Principal } from '../../service/types.js';
import { sendError } from './envelope.js';
import { parseBearer } from '../../rules.js';


/**
 * Recognises a request without an Authorization header by something else it carries (the
 * console's session cookie): its principal, null when it carries nothing of the kind, or an
 * OqlError thrown when it does but may not act (an ended session, a change without its CSRF token).
 */
export type RequestResolver = (request: FastifyRequest) => Promise<Principal | null>;

/**
 * `Authorization: Bearer <token>` → the request's principal, through the resolvers in order (API
 * keys first, then OAuth tokens). Applies to every route of the instance it is installed on, except
 * those whose config says `auth: false`; a route with `auth: 'api_key'` (the default) refuses
 * OAuth principals, since an OAuth token is issued for the MCP resource only. A request without
 * any Authorization header may be a console session's (`session`).
 */
export function installAuth(app: FastifyInstance, resolvers: readonly AuthResolver[], session?: RequestResolver): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request, reply) => {
    const mode: RouteAuth = request.routeOptions.config?.auth ?? 'api_key';
    if (mode === false) return;
    const header = request.headers.authorization;
    const token = parseBearer(header);
    if (token === undefined) {
      // A console session acts as the API key it was signed in with, so it is accepted wherever the key would be.
      const principal = header === undefined && session ? await session(request) : null;
      if (principal !== null) {
        request.principal = principal;
        return;
      }
      return sendError(reply, OqlError.plain('UNAUTHENTICATED', 'missing bearer token', 'send Authorization: Bearer <API key>'));
    }
    for (const resolve of resolvers) {
      const principal = await resolve(token);
      if (principal === null) continue;
      if (mode === 'api_key' && principal.via === 'oauth') break;
      request.principal = principal;
      return;
    }
    return sendError(reply, OqlError.plain('UNAUTHENTICATED', 'the bearer token is not a valid API key', 'send a key of your organization, as made with oql keys create on the server (oql keys --help says how) or on the console\'s API access page'));
  });
}
