import type { FastifyInstance } from 'fastify';
import { connectorRecords } from '../../filter/index.js';
import { toEnvelope } from '../../run/envelope.js';
import { principalOf } from '../context.js';
import { checkObjectAccess } from './access.js';
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

/** Connector records with token pagination and incremental sync (4.11). */
export async function connectorRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { slug: string }; Body: unknown }>('/api/v1/flowconnector/objects/:slug/records', {
    schema: { summary: 'Records page by page with an opaque next_token; incremental by updated_at (4.11)', tags: ['connectors'], params: SLUG_PARAM, body: CONNECTOR_BODY },
  }, async (request) => {
    const principal = principalOf(request);
    checkObjectAccess(app.oql, principal, request.params.slug);
    return toEnvelope(await connectorRecords(app.oql.db.raw, request.body, {
      catalog: app.oql.catalog,
      slug: request.params.slug,
      orgId: principal.orgId,
      tokenSecret: app.oql.tokenSecret,
      timeoutMs: app.oql.config.queryTimeoutMs,
    }));
  });
}
