import type { FastifyInstance } from 'fastify';
import { toEnvelope } from '../../query/envelope.js';
import { contextOf } from '../context.js';
import { SLUG_PARAM } from '../openapi/path-params.js';
import { EXAMPLES } from '../openapi/examples.js';
import { ref } from '../openapi/response-schemas.js';
import { BODY_ERRORS, errors, HEAVY_ERRORS, PATH_ERRORS, success } from '../openapi/responses.js';

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
    include_deleted: {
      type: 'boolean', default: false,
      description: 'true: records deleted since the sync start come as tombstones {id, is_deleted: true, deleted_at, updated_at} in the same order, and live records carry is_deleted false and deleted_at null. The sync must follow updated_at. Send the same value on every page of a sync.',
    },
  },
  examples: [
    { query: { fields: ['name', 'email', 'updated_at'], filter: { and: [{ field: 'updated_at', operator: 'gte', value: 1735689600000 }] } }, next_token: null },
    { query: { fields: ['name', 'updated_at'], filter: { and: [{ field: 'updated_at', operator: 'gte', value: 1735689600000 }] } }, next_token: null, include_deleted: true },
  ],
} as const;

/** Connector records with token pagination and incremental sync, and the entities of both connector families (docs/connector.md). */
export async function connectorRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { slug: string }; Body: unknown }>('/api/v1/flowconnector/objects/:slug/records', {
    schema: {
      operationId: 'getConnectorRecords', summary: 'Records page by page with an opaque next_token; incremental by updated_at', tags: ['connectors'], params: SLUG_PARAM, body: CONNECTOR_BODY,
      description: 'Pages of up to 3000 records in updated_at order. Send the next_token of each page, unchanged and with the same fields, filter and include_deleted, until it is null. With include_deleted, deletions come as tombstones in the same order.',
      response: {
        200: success('One page and the token of the next (null after the last).', {
          type: 'object', required: ['records', 'next_token'], additionalProperties: false,
          properties: { records: { type: 'array', items: ref('ConnectorRecord') }, next_token: { type: ['string', 'null'] } },
        }, EXAMPLES.connectorPage),
        ...errors('invalidToken', ...PATH_ERRORS, 'objectDenied', 'recordTooLarge', 'tooCostly', ...HEAVY_ERRORS, ...BODY_ERRORS),
      },
    },
  }, async (request) => toEnvelope(await app.oql.ops.connector(contextOf(request), request.params.slug, request.body)));

  for (const family of ['flowconnector', 'syncconnector'] as const) {
    app.post(`/api/v1/${family}/objects/list/`, {
      schema: {
        operationId: family === 'flowconnector' ? 'listFlowconnectorEntities' : 'listSyncconnectorEntities', summary: `The objects as ${family} entities`, tags: ['connectors'],
        response: {
          200: success("The entities the caller's role may read; entity_identifier is the slug of the other endpoints.", { type: 'array', items: ref('Entity') }, EXAMPLES.entities),
          ...errors('malformedJson', 'tooLarge', 'notJson'),
        },
      },
    }, async (request) => toEnvelope(app.oql.ops.entities(contextOf(request))));
    app.get<{ Params: { slug: string } }>(`/api/v1/${family}/objects/:slug`, {
      schema: {
        operationId: family === 'flowconnector' ? 'getFlowconnectorEntity' : 'getSyncconnectorEntity', summary: `One ${family} entity with its fields`, tags: ['connectors'], params: SLUG_PARAM,
        response: { 200: success('The entity with its fields.', ref('EntitySchema'), EXAMPLES.entitySchema), ...errors(...PATH_ERRORS, 'objectDenied') },
      },
    }, async (request) => toEnvelope(app.oql.ops.entitySchema(contextOf(request), request.params.slug, family === 'flowconnector' ? 'flow' : 'sync')));
  }
}
