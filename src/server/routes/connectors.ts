import type { FastifyInstance } from 'fastify';
import { toEnvelope } from '../../run/envelope.js';
import { contextOf } from '../context.js';
import { SLUG_PARAM } from './schemas.js';

const CONNECTOR_BODY = {
  type: 'object',
  required: ['query'],
  properties: {
    query: {
      type: 'object',
      required: ['fields'],
      properties: {
        fields: { type: 'array', items: { type: 'string' }, description: 'fields to return (id always comes back)' },
        filter: {
          type: 'object',
          properties: {
            and: {
              type: 'array',
              items: { type: 'object', required: ['field', 'operator', 'value'], properties: { field: { type: 'string' }, operator: { type: 'string' }, value: {} } },
            },
          },
          description: 'incremental sync: {field: "updated_at", operator: "gte", value: <epoch ms>}',
        },
      },
    },
    next_token: { type: ['string', 'null'], description: "null first, then the previous page's next_token" },
  },
} as const;

/** Connector records with token pagination and incremental sync (4.11), and the entities of both connector families (4.12–4.15). */
export async function connectorRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { slug: string }; Body: unknown }>('/api/v1/flowconnector/objects/:slug/records', {
    schema: { summary: 'Records page by page with an opaque next_token; incremental by updated_at (4.11)', tags: ['connectors'], params: SLUG_PARAM, body: CONNECTOR_BODY },
  }, async (request) => toEnvelope(await app.oql.ops.connector(contextOf(request), request.params.slug, request.body)));

  for (const family of ['flowconnector', 'syncconnector'] as const) {
    const [listSection, schemaSection] = family === 'flowconnector' ? ['4.12', '4.13'] : ['4.14', '4.15'];
    app.post(`/api/v1/${family}/objects/list/`, {
      schema: { summary: `The objects as ${family} entities (${listSection})`, tags: ['connectors'] },
    }, async (request) => toEnvelope(app.oql.ops.entities(contextOf(request))));
    app.get<{ Params: { slug: string } }>(`/api/v1/${family}/objects/:slug`, {
      schema: { summary: `One ${family} entity with its fields (${schemaSection})`, tags: ['connectors'], params: SLUG_PARAM },
    }, async (request) => toEnvelope(app.oql.ops.entitySchema(contextOf(request), request.params.slug)));
  }
}
