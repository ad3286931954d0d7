import type { FastifyInstance } from 'fastify';
import { contextOf } from '../context.js';
import { SLUG_PARAM } from '../openapi/path-params.js';
import { EXAMPLES } from '../openapi/examples.js';
import { ref } from '../openapi/response-schemas.js';
import { BODY_ERRORS, errors, HEAVY_ERRORS, PATH_ERRORS, successOrCsv } from '../openapi/responses.js';
import { answerFormat, answerIn, csvExample, withoutFormat } from '../csv.js';

const CONDITION = {
  type: 'object',
  description: '{field, operator, value}, or a nested group with and / or arrays',
  additionalProperties: true,
} as const;

/** The body's outline; the library checks the rest (operators, types, fields) and lists every problem. */
export const FILTER_BODY = {
  type: 'object',
  required: ['query'],
  properties: {
    query: {
      type: 'object',
      properties: {
        fields: { type: 'array', items: { type: 'string' }, description: 'fields to return' },
        filters: {
          type: 'object',
          properties: { and: { type: 'array', items: CONDITION }, or: { type: 'array', items: CONDITION } },
          description: 'and: all conditions hold; or: at least one does; nested to any depth',
        },
        sort: {
          type: 'array',
          items: { type: 'object', properties: { field: { type: 'string' }, direction: { type: 'string', enum: ['asc', 'desc', 'ASC', 'DESC'] } } },
        },
        pagination: { type: 'object', properties: { page: { type: 'integer' }, page_size: { type: 'integer' } } },
      },
    },
    format: { type: 'string', enum: ['json', 'csv'], description: 'csv: the page as CSV (as Accept: text/csv asks); default json' },
  },
  examples: [{
    query: {
      fields: ['id', 'name', 'account.name'],
      filters: { and: [{ field: 'status', operator: 'eq', value: 'active' }, { or: [{ field: 'name', operator: 'ilike', value: '%delta%' }, { field: 'email', operator: 'ends_with', value: '@example.com' }] }] },
      sort: [{ field: 'name', direction: 'asc' }],
      pagination: { page: 1, page_size: 50 },
    },
  }],
} as const;

/** Filter records (docs/filter.md) through the service's operations. */
export async function filterRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { slug: string }; Body: unknown }>('/api/v1/org/objects/:slug/filter', {
    schema: {
      operationId: 'filterRecords', summary: 'Filter records with nested and/or conditions, sort and page numbers', tags: ['records'], params: SLUG_PARAM, body: FILTER_BODY,
      description: 'Every problem of the body (unknown fields, operators, values of the wrong type) is listed at once, each with its JSON path in meta_data. Fields may follow to-one relations (`account.name`).',
      response: {
        200: successOrCsv('One page of records: the requested fields of each, null for empty values.', {
          type: 'object', required: ['records'], additionalProperties: false, properties: { records: { type: 'array', items: ref('Row') } },
        }, EXAMPLES.filter, csvExample(EXAMPLES.filter)),
        ...errors('filterValidation', ...PATH_ERRORS, 'objectDenied', 'pageTooLarge', 'tooCostly', 'notAcceptable', 'badFormat', ...HEAVY_ERRORS, ...BODY_ERRORS),
      },
    },
  }, async (request, reply) => {
    const format = answerFormat(request, (request.body as { format?: unknown } | null)?.format);
    const body = withoutFormat(request.body);
    return answerIn(format, reply, request.params.slug, (onColumns) => app.oql.ops.filter(contextOf(request), request.params.slug, body, 'rest', onColumns));
  });
}
