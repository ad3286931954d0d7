import type { FastifyInstance } from 'fastify';
import { toEnvelope } from '../../run/envelope.js';
import { contextOf } from '../context.js';
import { SLUG_PARAM } from './schemas.js';

/** Objects (4.6, 4.7) in the service's own payload shape, which loadCatalog reads back. */
export async function objectRoutes(app: FastifyInstance): Promise<void> {
  app.post('/api/v1/org/objects/list', {
    schema: { summary: 'The objects the key may read, with their columns (4.7)', tags: ['objects'] },
  }, async (request) => toEnvelope(app.oql.ops.objects(contextOf(request))));

  app.get<{ Params: { slug: string } }>('/api/v1/org/objects/:slug/', {
    schema: { summary: 'One object with its columns (4.6)', tags: ['objects'], params: SLUG_PARAM },
  }, async (request) => toEnvelope(app.oql.ops.object(contextOf(request), request.params.slug)));
}
