import type { FastifyInstance } from 'fastify';
import { OqlError } from '../../diagnostics/diagnostic.js';
import { errorEnvelope } from '../../run/envelope.js';

/** `GET /health`: 200 when the database answers, 503 otherwise. */
export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/health', {
    config: { auth: false },
    schema: { summary: 'Liveness: the server runs and its database answers', tags: ['service'] },
  }, async (_request, reply) => {
    try {
      await app.oql.db.query('SELECT 1');
      return { success: true, data: { status: 'ok' } };
    } catch {
      const envelope = errorEnvelope(OqlError.plain('DATABASE_ERROR', 'the database does not answer'));
      return reply.code(503).send(envelope);
    }
  });
}
