import type { FastifyReply } from 'fastify';

/**
 * What the MCP endpoint answers before the SDK sees a request: JSON-RPC errors (never the REST
 * envelope, never -32603) for bodies it cannot take.
 */

/** JSON nested deeper than this is refused before any recursive walk over it. */
export const MAX_JSON_DEPTH = 64;

/** Whether `value` nests objects or arrays deeper than `max`, found without recursion. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

/** A JSON-RPC error response with no id (the request's could not be read). */
export function jsonRpcError(reply: FastifyReply, status: number, code: number, message: string): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send({ jsonrpc: '2.0', id: null, error: { code, message } });
}
