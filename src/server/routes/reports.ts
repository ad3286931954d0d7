import type { FastifyInstance } from 'fastify';
import { count, execute, type QueryRequest } from '../../run/execute.js';
import { toEnvelope } from '../../run/envelope.js';
import { accessOf, principalOf } from '../context.js';

const REPORT_BODY = {
  type: 'object',
  required: ['query', 'slug'],
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 100_000, description: 'one SELECT in the object query language, ending with LIMIT' },
    slug: { type: 'string', minLength: 1, maxLength: 200, description: 'the top-level FROM object of the query' },
  },
} as const;

/**
 * Analytics (4.8, 4.9) through the library's execute/count: the server's one limiter caps each
 * key's concurrent queries (429), the statement timeout answers 504, and a query touching an
 * object the role may not read returns nothing with a message.
 */
export async function reportRoutes(app: FastifyInstance): Promise<void> {
  const options = (principal: ReturnType<typeof principalOf>) => {
    const access = accessOf(app.oql, principal);
    return {
      catalog: app.oql.catalog,
      orgId: principal.orgId,
      // The budget belongs to the key (or OAuth client), so two keys of one user do not share it.
      clientId: `${principal.via}:${principal.clientId ?? principal.userId}`,
      limiter: app.oql.limiter,
      timeoutMs: app.oql.config.queryTimeoutMs,
      ...(access === undefined ? {} : { access }),
    };
  };
  app.post<{ Body: QueryRequest }>('/api/v1/reports/execute', {
    schema: { summary: 'Run an analytics query (4.8)', tags: ['reports'], body: REPORT_BODY },
  }, async (request) => toEnvelope(await execute(app.oql.db, request.body, options(principalOf(request)))));
  app.post<{ Body: QueryRequest }>('/api/v1/reports/count', {
    schema: { summary: 'Count the rows an analytics query produces, up to its LIMIT (4.9)', tags: ['reports'], body: REPORT_BODY },
  }, async (request) => toEnvelope(await count(app.oql.db, request.body, options(principalOf(request)))));
}
