import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { KEYS, startChangesService } from '../changes/support.js';

/**
 * Closing the service answers its long-polls at once (clients ask again elsewhere), answers every
 * request it is answering, then ends the connections left at once: one that sent half a request and went quiet no longer holds the close until Node's header
 * timeout sweeps it (which would answer it 408 first).
 */

function open(port: number): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (data += chunk));
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('error', () => {});
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

describe('closing the service', () => {
  it('answers the long-poll in flight at once, and ends a connection holding half a request without waiting for its timeout', async () => {
    const h = await startChangesService('pglite');
    let closing: Promise<void> | undefined;
    try {
      const port = Number(new URL(h.baseUrl).port);
      const half = await open(port);
      half.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      const head = await h.call('GET', '/api/v1/changes/head', { key: KEYS.acmeAdmin });
      expect(head.status, head.text).toBe(200);
      const watcher = h.server.service.ops.feed.watcher;
      const polling = h.call('GET', `/api/v1/changes?after=${head.json.data.cursor}&wait=30`, { key: KEYS.acmeAdmin });
      const deadline = Date.now() + 30_000;
      while (watcher.waiting === 0) {
        if (Date.now() > deadline) throw new Error('the long-poll never waited');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      closing = h.close();
      // Its wait ended with the close, not with its 30 s.
      expect(watcher.waiting).toBe(0);
      const answer = await polling;
      expect(answer.status, answer.text).toBe(200);
      expect(answer.json.data.changes).toEqual([]);
      await closing;
      await half.closed;
      // Ended by the close, not swept by the header timeout, which would have sent a 408 first.
      expect(half.received()).toBe('');
    } finally {
      await (closing ?? h.close());
    }
  });
});
