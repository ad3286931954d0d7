import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';

/**
 * A request refused before its body was read (413 over the body limit, above all) must still
 * reach a client that writes its whole body before it reads (Node's http.request, often fetch).
 * Answering at once and closing makes the kernel answer the rest of the body with a reset, and
 * such a client gets EPIPE or ECONNRESET instead of the answer. So the rest of the body is read
 * and thrown away first, as nginx's lingering close does, and the answer follows; the connection
 * then stays open when the client wants it. A client that keeps sending past a bound (too many
 * bytes, too long, or a pause too long) gets the answer at that point and the connection closes.
 */

export interface LingerLimits {
  /** Bytes read and discarded at most. */
  readonly maxBytes: number;
  /** Time spent reading them at most. */
  readonly maxMs: number;
  /** Time without a byte at most. */
  readonly idleMs: number;
}

/** nginx's lingering_time and lingering_timeout, and a byte bound well above any body limit in use. */
export function lingerLimits(bodyLimit: number): LingerLimits {
  return { maxBytes: Math.max(64 * 1024 * 1024, 4 * bodyLimit), maxMs: 30_000, idleMs: 5_000 };
}

export function installLingeringClose(app: FastifyInstance, limits: LingerLimits): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    const raw = request.raw;
    // A hook that calls `done`: the usual request, read whole, passes without a promise.
    if (raw.complete || raw.destroyed || raw.readableEnded) return done(null, payload);
    // Fastify asks for the connection to close after a body it refused, as bytes of it may still
    // come; once they have all been read, the connection can serve the next request.
    void drain(raw, limits).then((whole) => {
      if (whole) reply.removeHeader('connection');
      done(null, payload);
    });
  });
}

/** Reads what is left of a request's body and discards it: true once it has all been read, false when a limit cut it short. */
function drain(raw: IncomingMessage, limits: LingerLimits): Promise<boolean> {
  return new Promise((resolve) => {
    let read = 0;
    let idle: NodeJS.Timeout | undefined;
    const finish = (whole: boolean) => {
      clearTimeout(idle);
      clearTimeout(total);
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('close', onClose);
      // Past a limit nothing more is read: the answer goes out and the connection closes.
      if (!whole) raw.pause();
      resolve(whole);
    };
    const onEnd = () => finish(true);
    const onClose = () => finish(raw.complete);
    const total = setTimeout(() => finish(false), limits.maxMs);
    const restartIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => finish(false), limits.idleMs);
    };
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > limits.maxBytes) finish(false);
      else restartIdle();
    };
    restartIdle();
    raw.on('data', onData);
    raw.once('end', onEnd);
    raw.once('close', onClose);
  });
}
