import type { Catalog } from '../catalog/types.js';
import type { ConcurrencyLimiter } from '../run/limiter.js';
import type { ServerConfig } from '../service/config.js';
import type { ApiKeyVerifier } from '../service/store/api-keys.js';
import type { Principal, ServiceDb } from '../service/types.js';

/** What every route needs, decorated on the Fastify instances as `oql`. */
export interface ServiceContext {
  readonly db: ServiceDb;
  readonly catalog: Catalog;
  readonly config: ServerConfig;
  /** One per server: the per-key budget of concurrent analytics queries. */
  readonly limiter: ConcurrencyLimiter;
  readonly tokenSecret: string;
  /** API keys verified recently, so a request does not wait on the database to authenticate. */
  readonly keys: ApiKeyVerifier;
}

/** How a route accepts callers: API keys only (default), any resolver's principal, or no one needed. */
export type RouteAuth = 'api_key' | 'any' | false;

declare module 'fastify' {
  interface FastifyInstance {
    oql: ServiceContext;
  }
  interface FastifyRequest {
    /** Set by the auth hook on every authenticated route. */
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
}

/** The objects a principal may read, or undefined for all of them. */
export function accessOf(ctx: ServiceContext, principal: Principal): readonly string[] | undefined {
  return ctx.config.roleAccess[principal.role];
}

/** The principal of an authenticated route (the auth hook guarantees one). */
export function principalOf(request: { principal: Principal | null }): Principal {
  if (request.principal === null) throw new Error('route reached without a principal');
  return request.principal;
}
