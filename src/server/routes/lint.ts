import type { FastifyInstance } from 'fastify';
import { lint } from '../../lint/lint.js';
import { toEnvelope } from '../../run/envelope.js';
import { parse } from '../../syntax/parse.js';
import { contextOf } from '../context.js';
import { ERROR_RESPONSE } from './schemas.js';

const POSITION = {
  type: 'object',
  required: ['start', 'end', 'line', 'column', 'endLine', 'endColumn'],
  description: 'offsets into the query (UTF-16 code units, as JavaScript strings count) and 1-based line and column',
  properties: {
    start: { type: 'integer' }, end: { type: 'integer' },
    line: { type: 'integer' }, column: { type: 'integer' }, endLine: { type: 'integer' }, endColumn: { type: 'integer' },
  },
} as const;

const DIAGNOSTIC = {
  type: 'object',
  required: ['code', 'severity', 'message', 'span'],
  additionalProperties: false,
  properties: {
    code: { type: 'string', description: 'stable; oql explain CODE describes it' },
    severity: { type: 'string', enum: ['error', 'warning'] },
    message: { type: 'string' },
    hint: { type: 'string', description: 'what to write instead' },
    span: POSITION,
    fix: {
      type: 'object',
      required: ['range', 'text'],
      description: 'replace query.slice(range[0], range[1]) with text: the correction that keeps what the query means',
      properties: { range: { type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 2 }, text: { type: 'string' } },
    },
  },
} as const;

/**
 * Lint (diagnostics without running), for editors such as the console's playground: every error
 * and warning of the library's `lint` with its span, hint and fix, in source order. The request
 * slug may be left out: it is then the query's own top-level FROM.
 */
export async function lintRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Body: { query: string; slug?: string } }>('/api/v1/reports/lint', {
    schema: {
      summary: 'Check an analytics query without running it: every diagnostic with its span, hint and fix', tags: ['reports'],
      body: {
        type: 'object',
        required: ['query'],
        additionalProperties: false,
        properties: {
          query: { type: 'string', maxLength: 100_000, description: 'the query text, as it would be sent to reports/execute' },
          slug: { type: 'string', minLength: 1, maxLength: 200, description: 'the request slug; default: the top-level FROM of the query' },
        },
      },
      response: {
        200: {
          type: 'object',
          required: ['success', 'data'],
          properties: {
            success: { type: 'boolean', const: true },
            data: {
              type: 'object',
              required: ['slug', 'diagnostics', 'error_count', 'warning_count'],
              properties: {
                slug: { type: ['string', 'null'], description: 'the slug the query was checked against (null: it does not parse far enough to say)' },
                diagnostics: { type: 'array', items: DIAGNOSTIC },
                error_count: { type: 'integer', description: 'reports/execute refuses the query when this is above 0' },
                warning_count: { type: 'integer' },
              },
            },
          },
        },
        400: ERROR_RESPONSE, 401: ERROR_RESPONSE, 403: ERROR_RESPONSE,
      },
    },
  }, async (request) => {
    const ctx = contextOf(request);
    const { query } = request.body;
    const slug = request.body.slug ?? fromObject(query);
    // Lint reads no data, but its hints name fields: an object the role may not use is 403, as its details are.
    if (slug !== null) app.oql.policy.checkObject(ctx, slug);
    const diagnostics = lint(query, { catalog: app.oql.catalog, slug: slug ?? '' });
    const errors = diagnostics.filter((d) => d.severity === 'error').length;
    return toEnvelope({ slug, diagnostics, error_count: errors, warning_count: diagnostics.length - errors });
  });
}

/** The top-level FROM object of a query that parses; null when it does not (lint then says why). */
function fromObject(query: string): string | null {
  try {
    return parse(query).from.object.name;
  } catch {
    return null;
  }
}
