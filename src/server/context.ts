import { requestContext, type RequestContext } from '../service/policy.js';
import type { SurfaceContext } from '../service/context.js';
import type { Principal } from '../service/types.js';

export type { ServiceContext, SurfaceContext } from '../service/context.js';

/** How a route accepts callers: API keys only (default), any resolver's principal, or no one needed. */
export type RouteAuth = 'api_key' | 'any' | false;

declare module 'fastify' {
  interface FastifyInstance {
    /** The operations and what a route needs to describe itself: nothing to reach around them with. */
    oql: SurfaceContext;
  }
  interface FastifyRequest {
    /** Set by the auth hook on every authenticated route. */
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
}

/** The request context of an authenticated route (the auth hook guarantees a principal). */
export function contextOf(request: { principal: Principal | null }): RequestContext {
  if (request.principal === null) throw new Error('route reached without a principal');
  return requestContext(request.principal);
}
