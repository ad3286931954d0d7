import type { FastifyInstance } from 'fastify';
import type { QueryRequest } from '../../run/execute.js';
import { toEnvelope } from '../../run/envelope.js';
import { contextOf } from '../context.js';

const REPORT_BODY = {
  type: 'object',
  required: ['query', 'slug'],
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 100_000, description: 'one SELECT in the object query language, ending with LIMIT' },
    slug: { type: 'string', minLength: 1, maxLength: 200, description: 'the top-level FROM object of the query' },
  },
} as const;

/**
 * Analytics (4.8, 4.9) through the service's operations: the policy point admits each principal's
 * heavy requests (429 beyond its budget), bounds time (504), bytes and planner cost, and a query
 * touching an object the role may not read returns nothing with a message.
 */
export async function reportRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Body: QueryRequest }>('/api/v1/reports/execute', {
    schema: { summary: 'Run an analytics query (4.8)', tags: ['reports'], body: REPORT_BODY },
  }, async (request) => toEnvelope(await app.oql.ops.execute(contextOf(request), request.body)));
  app.post<{ Body: QueryRequest }>('/api/v1/reports/count', {
    schema: { summary: 'Count the rows an analytics query produces, up to its LIMIT (4.9)', tags: ['reports'], body: REPORT_BODY },
  }, async (request) => toEnvelope(await app.oql.ops.count(contextOf(request), request.body)));
}
