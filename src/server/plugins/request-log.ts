import type { FastifyInstance } from 'fastify';

/**
 * One log line per request, when it is answered: request id, method, route pattern, status and
 * duration. Headers (the Authorization key) and bodies (records) are never logged, and the route
 * pattern is logged rather than the URL so record ids stay out of the logs as well.
 */
export function installRequestLog(app: FastifyInstance): void {
  // At debug level only: lets an operator (and the shutdown test) see a request arrive.
  // Hooks that call `done`, not async ones: on every request, a promise each is not free.
  app.addHook('onRequest', (request, _reply, done) => {
    request.log.debug({ method: request.method, route: request.routeOptions.url ?? null }, 'request received');
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    void reply.header('x-request-id', request.id);
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info({
      method: request.method,
      route: request.routeOptions.url ?? null,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
    }, 'request');
    done();
  });
}
