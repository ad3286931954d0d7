import type { FastifyInstance } from 'fastify';
import { toEnvelope } from '../../query/envelope.js';
import { contextOf } from '../context.js';
import { EXAMPLES } from '../openapi/examples.js';
import { ref } from '../openapi/response-schemas.js';
import { BODY_ERRORS, errors, LIGHT_ERRORS, success } from '../openapi/responses.js';

const LOGS_BODY = {
  type: ['object', 'null'],
  properties: {
    pointer: { type: ['string', 'null'], maxLength: 1024, description: "the previous response's data.next, unchanged; omit for the first page" },
    tool_name: { type: 'string', minLength: 1, maxLength: 200, description: 'only calls of this tool' },
    user_id: { type: 'string', minLength: 1, maxLength: 200, description: 'only calls by this user' },
    since: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'only calls at or after this time (Unix epoch milliseconds)' },
    until: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'only calls before this time (Unix epoch milliseconds)' },
  },
  // The first page of one tool's calls in one day (the example's pointer is null: no page before it).
  examples: [{ pointer: null, tool_name: 'execute_query', since: 1795564800000, until: 1795651200000 }],
} as const;

interface LogsBody {
  readonly pointer?: string | null;
  readonly tool_name?: string;
  readonly user_id?: string;
  readonly since?: number;
  readonly until?: number;
}

/** MCP tool-call logs: superadmins only, by API key, OAuth token holding records:read or console session; optionally filtered. */
export async function toolLogRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Body: LogsBody | null | undefined }>('/api/v1/org/tool/mcp/logs/list/', {
    config: { auth: 'any' },
    schema: {
      operationId: 'listToolLogs', summary: 'List the organization\'s MCP tool calls, newest first, optionally of one tool, one user or a time range', tags: ['tool logs'], body: LOGS_BODY,
      description: 'For superadmins, by API key, OAuth access token holding records:read (the calls carry their queries\' texts and values) or console session. Pages grow from 200 entries by 200 up to 3000; send data.next as pointer until it is null. The body may be left out for the first page. Filters narrow every page; send the same ones with each pointer to go on with the same listing.',
      response: {
        200: success('One page of tool calls, newest first, and the pointer of the next (null after the last).', {
          type: 'object', required: ['logs', 'next'], additionalProperties: false,
          properties: { logs: { type: 'array', items: ref('ToolLog') }, next: { type: ['string', 'null'] } },
        }, EXAMPLES.toolLogs),
        ...errors('superadminOnly', 'invalidPointer', ...LIGHT_ERRORS, ...BODY_ERRORS),
      },
    },
  }, async (request) => {
    const body = request.body ?? {};
    return toEnvelope(await app.oql.ops.toolLogs(contextOf(request), body.pointer, {
      toolName: body.tool_name, userId: body.user_id, since: body.since, until: body.until,
    }));
  });
}
