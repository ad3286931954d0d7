import type { FastifyInstance } from 'fastify';
import { toEnvelope } from '../../run/envelope.js';
import { contextOf } from '../context.js';

const LOGS_BODY = {
  type: ['object', 'null'],
  properties: {
    pointer: { type: ['string', 'null'], maxLength: 1024, description: "the previous response's data.next, unchanged; omit for the first page" },
  },
} as const;

/** MCP tool-call logs (4.16): superadmins only, by API key or OAuth token. */
export async function toolLogRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Body: { pointer?: string | null } | null | undefined }>('/api/v1/org/tool/mcp/logs/list/', {
    config: { auth: 'any' },
    schema: { summary: 'List the organization\'s MCP tool calls, newest first (4.16)', tags: ['tool logs'], body: LOGS_BODY },
  }, async (request) => toEnvelope(await app.oql.ops.toolLogs(contextOf(request), request.body?.pointer)));
}
