import type { FastifyInstance } from 'fastify';
import { toEnvelope } from '../../query/envelope.js';
import { contextOf } from '../context.js';
import { SLUG_PARAM } from '../openapi/path-params.js';
import { EXAMPLES } from '../openapi/examples.js';
import { ref } from '../openapi/response-schemas.js';
import { errors, PATH_ERRORS, success } from '../openapi/responses.js';

/** Objects in the service's own payload shape, which loadCatalog reads back. */
export async function objectRoutes(app: FastifyInstance): Promise<void> {
  app.post('/api/v1/org/objects/list', {
    schema: {
      operationId: 'listObjects', summary: 'The objects the key may read, with their columns', tags: ['objects'],
      response: {
        200: success("The objects the caller's role may read, in catalog order.", { type: 'array', items: ref('CrmObject') }, EXAMPLES.objects),
        ...errors('malformedJson', 'tooLarge', 'notJson'),
      },
    },
  }, async (request) => toEnvelope(app.oql.ops.objects(contextOf(request))));

  app.get<{ Params: { slug: string } }>('/api/v1/org/objects/:slug/', {
    schema: {
      operationId: 'getObject', summary: 'One object with its columns', tags: ['objects'], params: SLUG_PARAM,
      response: { 200: success('The object with its columns.', ref('CrmObject'), EXAMPLES.object), ...errors(...PATH_ERRORS, 'objectDenied') },
    },
  }, async (request) => toEnvelope(app.oql.ops.object(contextOf(request), request.params.slug)));
}
