import type { FastifyInstance } from 'fastify';
import { OqlError } from '../../diagnostics/diagnostic.js';
import { errorEnvelope } from '../../query/envelope.js';

const HEALTH_TIMEOUT_MS = 2_000;

/** `GET /health`: 200 when the database answers (outside every tenant's queue), 503 otherwise. */
export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/health', {
    config: { auth: false },
    // Outside the OpenAPI document: a probe, not part of the API (docs/rest.md describes it).
    schema: { summary: 'Liveness: the server runs and its database answers', hide: true },
  }, async (_request, reply) => {
    if (await app.oql.ops.databaseAnswers(HEALTH_TIMEOUT_MS)) return { success: true, data: { status: 'ok' } };
    const envelope = errorEnvelope(OqlError.plain('DATABASE_ERROR', 'the database does not answer'));
    return reply.code(503).header('retry-after', '5').send(envelope);
  });
}
