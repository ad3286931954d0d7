import type { FastifyInstance } from 'fastify';

/**
 * One log line per request, when it is answered: request id, method, route pattern, status and
 * duration. Headers (the Authorization key) and bodies (records) are never logged, and the route
 * pattern is logged rather than the URL so record ids stay out of the logs as well.
 */
export function installRequestLog(app: FastifyInstance): void {
  // At debug level only: lets an operator (and the shutdown test) see a request arrive.
  app.addHook('onRequest', async (request) => {
    request.log.debug({ method: request.method, route: request.routeOptions.url ?? null }, 'request received');
  });
  app.addHook('onSend', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.info({
      method: request.method,
      route: request.routeOptions.url ?? null,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
    }, 'request');
  });
}
