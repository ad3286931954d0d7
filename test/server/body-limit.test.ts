import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type OqlServer } from '../../src/server/index.js';
import { API_KEYS_ENV, KEYS, expectEnvelope, type Answer } from './support.js';

/**
 * A body over the limit is refused with the 413 envelope, and every client reads it: the server
 * reads the rest of the body and throws it away before it would close (a lingering close), so a
 * client still writing gets no reset. Node's http.request writes its whole body before it reads,
 * which is where a plain close showed as EPIPE.
 */

const LIMIT = 5 * 1024 * 1024;
const PATH = '/api/v1/org/objects/lead/record/bulk_create';
const HEADERS = { authorization: `Bearer ${KEYS.acmeAdmin}`, 'content-type': 'application/json' };

let server: OqlServer;
let port: number;

beforeAll(async () => {
  server = await createServer({ memory: true, apiKeys: API_KEYS_ENV, env: {}, log: false });
  await server.app.listen({ port: 0, host: '127.0.0.1' });
  port = (server.app.server.address() as AddressInfo).port;
}, 180_000);

afterAll(async () => {
  await server?.close();
});

/** A JSON array of records, `bytes` long. */
function body(bytes: number): Buffer {
  const record = Buffer.from('{"name":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},');
  const out = Buffer.alloc(bytes, record);
  out[0] = '['.charCodeAt(0);
  return out;
}

function answerOf(status: number, headers: IncomingHttpHeaders | Headers, text: string): Answer {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status, headers: headers instanceof Headers ? headers : new Headers(headers as Record<string, string>), text, json };
}

interface Sent {
  readonly answer?: Answer;
  readonly error?: NodeJS.ErrnoException;
  readonly reusedSocket: boolean;
}

/** One POST through http.request; `chunks` are written one after another (chunked when no length is given). */
function post(chunks: readonly Buffer[], options: { length?: number; agent?: Agent } = {}): Promise<Sent> {
  return new Promise((done) => {
    const headers: Record<string, string | number> = { ...HEADERS };
    if (options.length !== undefined) headers['content-length'] = options.length;
    let answer: Answer | undefined;
    let error: NodeJS.ErrnoException | undefined;
    // Settled when the request is over, so an error after the answer (EPIPE while still writing) counts too.
    let ended = false;
    let answered = false;
    const settle = () => {
      if ((ended || error) && (answered || error)) done({ answer, error, reusedSocket: req.reusedSocket });
    };
    const req = request({ host: '127.0.0.1', port, path: PATH, method: 'POST', headers, agent: options.agent ?? false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => {
        answer = answerOf(res.statusCode!, res.headers, text);
        answered = true;
        settle();
      });
    });
    req.on('error', (e) => {
      error = e;
      settle();
    });
    req.on('finish', () => {
      ended = true;
      settle();
    });
    void (async () => {
      for (const chunk of chunks) {
        if (req.destroyed) return;
        if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
      }
      req.end();
    })();
  });
}

describe('a body over the limit', () => {
  it('reaches http.request as the 413 envelope, 10 times in a row', async () => {
    const big = body(4 * LIMIT);
    for (let i = 0; i < 10; i++) {
      const sent = await post([big], { length: big.length });
      expect(sent.error, `attempt ${i + 1}`).toBeUndefined();
      expectEnvelope(sent.answer!, 413, 'PAYLOAD_TOO_LARGE');
    }
  });

  it('reaches http.request as the 413 envelope when sent chunked, without a length, 10 times in a row', async () => {
    const chunk = body(256 * 1024);
    const chunks = Array.from({ length: 80 }, () => chunk);
    for (let i = 0; i < 10; i++) {
      const sent = await post(chunks);
      expect(sent.error, `attempt ${i + 1}`).toBeUndefined();
      expectEnvelope(sent.answer!, 413, 'PAYLOAD_TOO_LARGE');
    }
  });

  it('reaches fetch as the 413 envelope, 10 times in a row', async () => {
    const big = body(4 * LIMIT);
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`http://127.0.0.1:${port}${PATH}`, { method: 'POST', headers: HEADERS, body: big });
      expectEnvelope(answerOf(res.status, res.headers, await res.text()), 413, 'PAYLOAD_TOO_LARGE');
    }
  });

  it('leaves the connection open for the next request', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const big = body(LIMIT + 1024 * 1024);
      const first = await post([big], { length: big.length, agent });
      expectEnvelope(first.answer!, 413, 'PAYLOAD_TOO_LARGE');
      const next = await post([Buffer.from('[{"name":"After a refusal"}]')], { length: 28, agent });
      expect(next.answer?.status, next.answer?.text).toBe(200);
      expect(next.reusedSocket).toBe(true);
    } finally {
      agent.destroy();
    }
  });

  /** Resolves on the request's next 'drain' or its 'close', and leaves no listener behind for the other. */
  const drainedOrClosed = (req: ReturnType<typeof request>) => new Promise<void>((resolve) => {
    const settle = () => {
      req.off('drain', settle);
      req.off('close', settle);
      resolve();
    };
    req.once('drain', settle);
    req.once('close', settle);
  });

  it('is read only up to a bound: a client that keeps sending is cut off', async () => {
    const chunk = body(4 * 1024 * 1024);
    // 256 MiB offered, chunked; the server stops reading after 64 MiB, answers and closes.
    const chunks = Array.from({ length: 64 }, () => chunk);
    let written = 0;
    await new Promise<void>((done) => {
      const req = request({ host: '127.0.0.1', port, path: PATH, method: 'POST', headers: HEADERS, agent: false });
      req.on('response', (res) => res.resume());
      req.on('error', () => {});
      req.on('close', () => done());
      void (async () => {
        for (const c of chunks) {
          if (req.destroyed) return;
          written += c.length;
          if (!req.write(c)) await drainedOrClosed(req);
        }
        req.end();
      })();
    });
    // Read up to the bound (64 MiB), then cut off well before the end.
    expect(written).toBeGreaterThan(64 * 1024 * 1024);
    expect(written).toBeLessThan(chunks.length * chunk.length);
  }, 60_000);
});
