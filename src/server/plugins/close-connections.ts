import type { FastifyInstance } from 'fastify';
import type { ServerResponse } from 'node:http';

/**
 * On close, the server stops accepting and waits for the requests it is answering; Fastify then
 * closes the idle keep-alive connections. A connection that carries no answer but is not idle
 * either (a client that sent part of a request and went quiet, or hung up in a way the socket has
 * not yet seen) would keep the close waiting until Node's header timeout sweeps it, a minute or
 * more. So once the server closes and no request is being answered, every connection left is
 * ended: a request in flight is always answered first.
 */
export function closeConnectionsWhenAnswered(app: FastifyInstance): void {
  const answering = new Set<ServerResponse>();
  let closing = false;
  const endIfAnswered = () => {
    if (closing && answering.size === 0) app.server.closeAllConnections();
  };
  app.server.on('request', (_request, response: ServerResponse) => {
    answering.add(response);
    response.once('close', () => {
      answering.delete(response);
      endIfAnswered();
    });
  });
  app.addHook('preClose', async () => {
    closing = true;
    // After Fastify's own close has begun: connections opened before it still get its 503.
    setImmediate(endIfAnswered);
  });
}
