import type { FastifyInstance } from 'fastify';
import { toEnvelope } from '../../query/envelope.js';
import { contextOf } from '../context.js';
import { EXAMPLES } from '../openapi/examples.js';
import { ref } from '../openapi/response-schemas.js';
import { BODY_ERRORS, errors, success } from '../openapi/responses.js';

const LINT_BODY = {
  type: 'object',
  required: ['query'],
  additionalProperties: false,
  properties: {
    query: { type: 'string', maxLength: 100_000, description: 'the query text, as it would be sent to reports/execute' },
    slug: { type: 'string', minLength: 1, maxLength: 200, description: 'the request slug; default: the top-level FROM of the query' },
  },
  examples: [{ query: 'SELECT id, nme FROM account' }],
} as const;

/**
 * Lint (diagnostics without running), for editors such as the console's playground: every error
 * and warning of the library's `lint` with its span, hint and fix, in source order. The request
 * slug may be left out: it is then the query's own top-level FROM.
 */
export async function lintRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Body: { query: string; slug?: string } }>('/api/v1/reports/lint', {
    schema: {
      operationId: 'lintReport', summary: 'Check an analytics query without running it', tags: ['reports'], body: LINT_BODY,
      description: 'Every diagnostic the query has, errors and warnings (fan-out, units, time zones, an unstable LIMIT), with its span, hint and, where one is known, the fix that keeps what the query means. Nothing is read from the database. A query over an object the role may not use is refused, since hints name its fields.',
      response: {
        200: success('Every diagnostic, in source order, and how many are errors and warnings. A query with problems is still a 200.', ref('LintResult'), EXAMPLES.lint),
        ...errors('bodySchema', 'objectDenied', 'tooManyLight', 'shortOfMemory', ...BODY_ERRORS),
      },
    },
  }, async (request) => {
    const { slug, diagnostics } = await app.oql.ops.lint(contextOf(request), request.body);
    const errors = diagnostics.filter((d) => d.severity === 'error').length;
    return toEnvelope({ slug, diagnostics, error_count: errors, warning_count: diagnostics.length - errors });
  });
}
