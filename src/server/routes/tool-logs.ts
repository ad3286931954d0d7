import type { FastifyInstance } from 'fastify';
import { toEnvelope } from '../../run/envelope.js';
import { contextOf } from '../context.js';
import { EXAMPLES } from './examples.js';
import { ref } from './response-schemas.js';
import { BODY_ERRORS, errors, LIGHT_ERRORS, success } from './responses.js';

const LOGS_BODY = {
  type: ['object', 'null'],
  properties: {
    pointer: { type: ['string', 'null'], maxLength: 1024, description: "the previous response's data.next, unchanged; omit for the first page" },
  },
  examples: [{ pointer: null }],
} as const;

/** MCP tool-call logs (4.16): superadmins only, by API key or OAuth token. */
export async function toolLogRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Body: { pointer?: string | null } | null | undefined }>('/api/v1/org/tool/mcp/logs/list/', {
    config: { auth: 'any' },
    schema: {
      operationId: 'listToolLogs', summary: 'List the organization\'s MCP tool calls, newest first (4.16)', tags: ['tool logs'], body: LOGS_BODY,
      description: 'For superadmins, by API key or OAuth access token. Pages grow from 200 entries by 200 up to 3000; send data.next as pointer until it is null. The body may be left out for the first page.',
      response: {
        200: success('One page of tool calls, newest first, and the pointer of the next (null after the last).', {
          type: 'object', required: ['logs', 'next'], additionalProperties: false,
          properties: { logs: { type: 'array', items: ref('ToolLog') }, next: { type: ['string', 'null'] } },
        }, EXAMPLES.toolLogs),
        ...errors('superadminOnly', 'invalidPointer', ...LIGHT_ERRORS, ...BODY_ERRORS),
      },
    },
  }, async (request) => toEnvelope(await app.oql.ops.toolLogs(contextOf(request), request.body?.pointer)));
}
