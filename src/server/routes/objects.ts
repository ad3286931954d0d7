import type { FastifyInstance } from 'fastify';
import { catalogPayload, objectPayload } from '../../catalog/payload-out.js';
import { toEnvelope } from '../../run/envelope.js';
import { principalOf } from '../context.js';
import { checkObjectAccess, readableSlugs } from './access.js';
import { SLUG_PARAM } from './schemas.js';

/** Objects (4.6, 4.7) in the service's own payload shape, which loadCatalog reads back. */
export async function objectRoutes(app: FastifyInstance): Promise<void> {
  app.post('/api/v1/org/objects/list', {
    schema: { summary: 'The objects the key may read, with their columns (4.7)', tags: ['objects'] },
  }, async (request) => {
    const readable = readableSlugs(app.oql, principalOf(request));
    return toEnvelope(catalogPayload(app.oql.catalog).filter((o) => readable.has((o as { slug: string }).slug)));
  });

  app.get<{ Params: { slug: string } }>('/api/v1/org/objects/:slug/', {
    schema: { summary: 'One object with its columns (4.6)', tags: ['objects'], params: SLUG_PARAM },
  }, async (request) => {
    checkObjectAccess(app.oql, principalOf(request), request.params.slug);
    return toEnvelope(objectPayload(app.oql.catalog, request.params.slug) as object);
  });
}
