import type { FastifyInstance } from 'fastify';
import { toEnvelope } from '../../run/envelope.js';
import { contextOf } from '../context.js';
import { RECORD_PARAMS, SLUG_PARAM } from './schemas.js';

const RECORD = { type: 'object', description: 'field slug → value; system fields are set by the server', additionalProperties: true } as const;

/**
 * Records (4.1–4.4) through the library's write path. The bulk size cap sits in the schema, so an
 * oversize batch is refused before anything is parsed further, in the same envelope as the rest.
 */
export async function recordRoutes(app: FastifyInstance): Promise<void> {
  const { maxBulkRecords } = app.oql.config;
  app.post<{ Params: { slug: string }; Body: unknown[] }>('/api/v1/org/objects/:slug/record/bulk_create', {
    schema: {
      summary: 'Create records, all or none (4.1)', tags: ['records'], params: SLUG_PARAM,
      body: { type: 'array', items: RECORD, maxItems: maxBulkRecords, description: `at most ${maxBulkRecords} records` },
    },
  }, async (request) => toEnvelope(await app.oql.ops.bulkCreate(contextOf(request), request.params.slug, request.body)));

  app.post<{ Params: { slug: string }; Body: { values: unknown[] } }>('/api/v1/org/objects/:slug/record/bulk_upsert', {
    schema: {
      summary: 'Create records without id, update records with one; each element on its own (4.2)', tags: ['records'], params: SLUG_PARAM,
      body: {
        type: 'object', required: ['values'],
        properties: { values: { type: 'array', items: RECORD, maxItems: maxBulkRecords, description: `at most ${maxBulkRecords} records` } },
      },
    },
  }, async (request) => toEnvelope(await app.oql.ops.bulkUpsert(contextOf(request), request.params.slug, request.body)));

  app.get<{ Params: { slug: string; id: string } }>('/api/v1/org/objects/:slug/record/:id', {
    schema: { summary: 'Get one record (4.3)', tags: ['records'], params: RECORD_PARAMS },
  }, async (request) => toEnvelope(await app.oql.ops.getRecord(contextOf(request), request.params.slug, request.params.id)));

  app.put<{ Params: { slug: string; id: string }; Body: Record<string, unknown> }>('/api/v1/org/objects/:slug/record/:id', {
    schema: { summary: 'Update the fields sent of one record (4.4)', tags: ['records'], params: RECORD_PARAMS, body: RECORD },
  }, async (request) => toEnvelope(await app.oql.ops.updateRecord(contextOf(request), request.params.slug, request.params.id, request.body)));
}
