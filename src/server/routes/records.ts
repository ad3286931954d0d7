import type { FastifyInstance } from 'fastify';
import { toEnvelope } from '../../query/envelope.js';
import { contextOf } from '../context.js';
import { RECORD_PARAMS, SLUG_PARAM } from '../openapi/path-params.js';
import { EXAMPLES } from '../openapi/examples.js';
import { ref } from '../openapi/response-schemas.js';
import { BODY_ERRORS, errors, LIGHT_ERRORS, PATH_ERRORS, success } from '../openapi/responses.js';

const RECORD = { type: 'object', description: 'field slug → value; system fields are set by the server', additionalProperties: true } as const;

/**
 * Records (create, upsert, get, update) through the library's write path. The bulk size cap
 * sits in the schema, so an oversize batch is refused before anything is parsed further, in the
 * same envelope as the rest.
 */
export async function recordRoutes(app: FastifyInstance): Promise<void> {
  const { maxBulkRecords } = app.oql.config;
  app.post<{ Params: { slug: string }; Body: unknown[] }>('/api/v1/org/objects/:slug/record/bulk_create', {
    schema: {
      operationId: 'bulkCreateRecords', summary: 'Create records, all or none', tags: ['records'], params: SLUG_PARAM,
      description: 'Every value of every record is checked (types, formats, options, required columns, relations, unique values); one problem fails the call, lists every problem, and writes nothing.',
      body: { type: 'array', items: RECORD, maxItems: maxBulkRecords, description: `at most ${maxBulkRecords} records`, examples: [[{ name: 'Asha Rao', email: 'asha@example.com', status: 'active' }, { name: 'Bo Chen' }]] },
      response: {
        200: success('The records were created; their ids, in the order sent.', {
          type: 'object', required: ['message', 'ids'], additionalProperties: false,
          properties: { message: { type: 'string' }, ids: { type: 'array', items: { type: 'string' }, description: 'the new records\' ids, in the order of the records sent' } },
        }, EXAMPLES.bulkCreate),
        ...errors('validation', ...PATH_ERRORS, 'objectDenied', ...LIGHT_ERRORS, ...BODY_ERRORS),
      },
    },
  }, async (request) => toEnvelope(await app.oql.ops.bulkCreate(contextOf(request), request.params.slug, request.body)));

  app.post<{ Params: { slug: string }; Body: { values: unknown[] } }>('/api/v1/org/objects/:slug/record/bulk_upsert', {
    schema: {
      operationId: 'bulkUpsertRecords', summary: 'Create records without id, update records with one; each element on its own', tags: ['records'], params: SLUG_PARAM,
      description: 'An element that cannot be written (an unknown id, a bad value) fails alone, with an error_message in failed_records; the call still answers 200.',
      body: {
        type: 'object', required: ['values'],
        properties: { values: { type: 'array', items: RECORD, maxItems: maxBulkRecords, description: `at most ${maxBulkRecords} records` } },
        examples: [{ values: [{ name: 'B. Okafor' }, { id: 'org_acme_contact_10', name: 'C. Alvarez' }] }],
      },
      response: { 200: success('What became of each element.', ref('UpsertResult'), EXAMPLES.bulkUpsert), ...errors(...PATH_ERRORS, 'objectDenied', ...LIGHT_ERRORS, ...BODY_ERRORS) },
    },
  }, async (request) => toEnvelope(await app.oql.ops.bulkUpsert(contextOf(request), request.params.slug, request.body)));

  app.get<{ Params: { slug: string; id: string } }>('/api/v1/org/objects/:slug/record/:id', {
    schema: {
      operationId: 'getRecord', summary: 'Get one record', tags: ['records'], params: RECORD_PARAMS,
      response: { 200: success('The record, whole.', ref('Record'), EXAMPLES.record), ...errors('notFound', ...PATH_ERRORS, 'objectDenied', ...LIGHT_ERRORS) },
    },
  }, async (request) => toEnvelope(await app.oql.ops.getRecord(contextOf(request), request.params.slug, request.params.id)));

  app.put<{ Params: { slug: string; id: string }; Body: Record<string, unknown> }>('/api/v1/org/objects/:slug/record/:id', {
    schema: {
      operationId: 'updateRecord', summary: 'Update the fields sent of one record', tags: ['records'], params: RECORD_PARAMS,
      description: 'Only the fields sent change, with updated_at and updated_by.',
      body: { ...RECORD, examples: [{ name: 'Delta Contact 10', phone: '+912203442323' }] },
      response: { 200: success('The record after the update, whole.', ref('Record'), EXAMPLES.record), ...errors('updateValidation', 'notFound', ...PATH_ERRORS, 'objectDenied', ...LIGHT_ERRORS, ...BODY_ERRORS) },
    },
  }, async (request) => toEnvelope(await app.oql.ops.updateRecord(contextOf(request), request.params.slug, request.params.id, request.body)));

  app.delete<{ Params: { slug: string; id: string } }>('/api/v1/org/objects/:slug/record/:id', {
    schema: {
      operationId: 'deleteRecord', summary: 'Delete one record (admins)', tags: ['records'], params: RECORD_PARAMS,
      description: 'The record reads as absent everywhere from now on (get, update, filters, reports, counts, relations to it, the MCP tools) until it is restored; it is purged for good after OQL_PURGE_AFTER_DAYS (30 days by default). A change `deleted` is recorded with the write.',
      response: { 200: success('The record is deleted.', ref('DeletedRecord'), EXAMPLES.deleted), ...errors('notFound', 'adminOnly', ...PATH_ERRORS, 'objectDenied', ...LIGHT_ERRORS) },
    },
  }, async (request) => toEnvelope(await app.oql.ops.deleteRecord(contextOf(request), request.params.slug, request.params.id)));

  app.post<{ Params: { slug: string }; Body: { ids: string[] } }>('/api/v1/org/objects/:slug/record/bulk_delete', {
    schema: {
      operationId: 'bulkDeleteRecords', summary: 'Delete records, all or none (admins)', tags: ['records'], params: SLUG_PARAM,
      description: `Every id must name a live record of the object in your organization; otherwise NOT_FOUND names every id that does not, and nothing is deleted. At most ${maxBulkRecords} ids; an id sent twice is deleted once.`,
      body: {
        type: 'object', required: ['ids'], additionalProperties: false,
        properties: { ids: { type: 'array', minItems: 1, maxItems: maxBulkRecords, items: { type: 'string', minLength: 1, maxLength: 255 }, description: `the ids of the records to delete, at most ${maxBulkRecords}` } },
        examples: [{ ids: ['org_acme_contact_10', 'org_acme_contact_11'] }],
      },
      response: {
        200: success('Every record is deleted.', { type: 'object', required: ['records'], additionalProperties: false, properties: { records: { type: 'array', items: ref('DeletedRecord') } } }, EXAMPLES.bulkDeleted),
        ...errors('notFound', 'adminOnly', ...PATH_ERRORS, 'objectDenied', ...LIGHT_ERRORS, ...BODY_ERRORS),
      },
    },
  }, async (request) => toEnvelope(await app.oql.ops.bulkDelete(contextOf(request), request.params.slug, request.body)));

  app.post<{ Params: { slug: string; id: string } }>('/api/v1/org/objects/:slug/record/:id/restore', {
    schema: {
      operationId: 'restoreRecord', summary: 'Restore a deleted record (admins)', tags: ['records'], params: RECORD_PARAMS,
      description: 'The record comes back as it was when deleted, with updated_at and updated_by of the restore; a record that is not deleted (live, absent or purged) is NOT_FOUND, one whose unique value another record has taken since is VALIDATION_FAILED. A change `restored` is recorded with the write.',
      response: { 200: success('The record, whole, after the restore.', ref('Record'), EXAMPLES.record), ...errors('notFound', 'adminOnly', 'updateValidation', ...PATH_ERRORS, 'objectDenied', ...LIGHT_ERRORS) },
    },
  }, async (request) => toEnvelope(await app.oql.ops.restoreRecord(contextOf(request), request.params.slug, request.params.id)));
}
