import type { FastifyInstance } from 'fastify';
import { bulkCreate, bulkUpsert, getRecord, updateRecord } from '../../records/index.js';
import { toEnvelope } from '../../run/envelope.js';
import { principalOf } from '../context.js';
import { RECORD_PARAMS, SLUG_PARAM } from './schemas.js';
import { checkObjectAccess } from './access.js';

const RECORD = { type: 'object', description: 'field slug → value; system fields are set by the server', additionalProperties: true } as const;

/**
 * Records (4.1–4.4) through the library's write path. The bulk size cap sits in the schema, so an
 * oversize batch is refused before anything is parsed further, in the same envelope as the rest.
 */
export async function recordRoutes(app: FastifyInstance): Promise<void> {
  const { maxBulkRecords } = app.oql.config;
  const context = (request: { principal: unknown } & Parameters<typeof principalOf>[0], slug: string) => {
    const principal = principalOf(request);
    checkObjectAccess(app.oql, principal, slug);
    return { catalog: app.oql.catalog, orgId: principal.orgId, userId: principal.userId, maxRecords: maxBulkRecords };
  };

  app.post<{ Params: { slug: string }; Body: unknown[] }>('/api/v1/org/objects/:slug/record/bulk_create', {
    schema: {
      summary: 'Create records, all or none (4.1)', tags: ['records'], params: SLUG_PARAM,
      body: { type: 'array', items: RECORD, maxItems: maxBulkRecords, description: `at most ${maxBulkRecords} records` },
    },
  }, async (request) => toEnvelope(await bulkCreate(app.oql.db, request.params.slug, request.body, context(request, request.params.slug))));

  app.post<{ Params: { slug: string }; Body: { values: unknown[] } }>('/api/v1/org/objects/:slug/record/bulk_upsert', {
    schema: {
      summary: 'Create records without id, update records with one; each element on its own (4.2)', tags: ['records'], params: SLUG_PARAM,
      body: {
        type: 'object', required: ['values'],
        properties: { values: { type: 'array', items: RECORD, maxItems: maxBulkRecords, description: `at most ${maxBulkRecords} records` } },
      },
    },
  }, async (request) => toEnvelope(await bulkUpsert(app.oql.db, request.params.slug, request.body, context(request, request.params.slug))));

  app.get<{ Params: { slug: string; id: string } }>('/api/v1/org/objects/:slug/record/:id', {
    schema: { summary: 'Get one record (4.3)', tags: ['records'], params: RECORD_PARAMS },
  }, async (request) => {
    const { catalog, orgId } = context(request, request.params.slug);
    return toEnvelope(await getRecord(app.oql.db, request.params.slug, request.params.id, { catalog, orgId }));
  });

  app.put<{ Params: { slug: string; id: string }; Body: Record<string, unknown> }>('/api/v1/org/objects/:slug/record/:id', {
    schema: { summary: 'Update the fields sent of one record (4.4)', tags: ['records'], params: RECORD_PARAMS, body: RECORD },
  }, async (request) => toEnvelope(await updateRecord(app.oql.db, request.params.slug, request.params.id, request.body, context(request, request.params.slug))));
}
