import type { FastifyInstance } from 'fastify';
import type { QueryRequest } from '../../query/execute.js';
import { toEnvelope } from '../../query/envelope.js';
import { contextOf } from '../context.js';
import { EXAMPLES } from '../openapi/examples.js';
import { BODY_ERRORS, errors, HEAVY_ERRORS, success, successOrCsv } from '../openapi/responses.js';
import { answerFormat, answerIn, csvExample } from '../csv.js';

const REPORT_BODY = {
  type: 'object',
  required: ['query', 'slug'],
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 100_000, description: 'one SELECT in the object query language, ending with LIMIT' },
    slug: { type: 'string', minLength: 1, maxLength: 200, description: 'the top-level FROM object of the query' },
  },
  examples: [{ query: "SELECT owner.name AS owner, COUNT(id) AS n FROM account WHERE industry = 'retail' GROUP BY owner.name ORDER BY n DESC LIMIT 10", slug: 'account' }],
} as const;

/** A report to run: the rows may come as CSV. */
const EXECUTE_BODY = {
  ...REPORT_BODY,
  properties: { ...REPORT_BODY.properties, format: { type: 'string', enum: ['json', 'csv'], description: 'csv: the rows as CSV (as Accept: text/csv asks); default json' } },
} as const;

const RESTRICTED = 'A query that reads an object the caller\'s role may not read answers no rows and a message instead of running.';

/**
 * Analytics (execute and count) through the service's operations: the policy point admits each
 * principal's heavy requests (429 beyond its budget), bounds time (504), bytes and planner cost,
 * and a query touching an object the role may not read returns nothing with a message.
 */
export async function reportRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Body: QueryRequest & { format?: unknown } }>('/api/v1/reports/execute', {
    schema: {
      operationId: 'executeReport', summary: 'Run an analytics query', tags: ['reports'], body: EXECUTE_BODY,
      description: `The query is compiled for the caller's organization and run read-only. Errors in the text come with span, hint and every diagnostic. ${RESTRICTED}`,
      response: {
        200: successOrCsv('The rows, keyed by the select-list aliases.', {
          type: 'object', required: ['records'], additionalProperties: false,
          properties: { records: { type: 'array', items: { $ref: 'Row#' } }, message: { type: 'string', description: 'set when the records are withheld' } },
        }, EXAMPLES.execute, csvExample(EXAMPLES.execute)),
        ...errors('queryText', 'invalidSlug', 'queryTooLarge', 'tooCostly', 'notAcceptable', 'badFormat', ...HEAVY_ERRORS, ...BODY_ERRORS),
      },
    },
  }, async (request, reply) => {
    const { format, ...body } = request.body;
    return answerIn(answerFormat(request, format), reply, 'report', (onColumns) => app.oql.ops.execute(contextOf(request), body, 'rest', onColumns));
  });
  app.post<{ Body: QueryRequest }>('/api/v1/reports/count', {
    schema: {
      operationId: 'countReport', summary: 'Count the rows an analytics query produces, up to its LIMIT', tags: ['reports'], body: REPORT_BODY,
      description: `Counting stops at the query's LIMIT: a count equal to it means at least that many. ${RESTRICTED}`,
      response: {
        200: success('How many rows the query produces, at most its LIMIT.', {
          type: 'object', required: ['count'], additionalProperties: false,
          properties: { count: { type: 'integer', minimum: 0 }, message: { type: 'string', description: 'set when the count is withheld (0)' } },
        }, EXAMPLES.count),
        ...errors('queryText', 'invalidSlug', 'tooCostly', ...HEAVY_ERRORS, ...BODY_ERRORS),
      },
    },
  }, async (request) => toEnvelope(await app.oql.ops.count(contextOf(request), request.body)));
}
