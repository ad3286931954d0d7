import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Loopback receivers and waits shared by the webhook tests. */

export interface Received {
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** A receiver on 127.0.0.1: answers each delivery as `answer` says, and wakes waiters by count. */
export class Receiver {
  readonly received: Received[] = [];
  /** The deliveries held unanswered, in arrival order, with the sender's port of each. */
  readonly hungRequests: (Received & { readonly port: number })[] = [];
  answer: (n: number) => number | 'hang' = () => 204;
  private readonly waiters: { n: number; resolve: () => void }[] = [];
  private readonly hanging: http.ServerResponse[] = [];
  private readonly hangWaiters: { n: number; resolve: () => void }[] = [];
  private server!: http.Server;
  url = '';

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        const n = this.received.length;
        const what = this.answer(n);
        if (what === 'hang') {
          this.hanging.push(res);
          this.hungRequests.push({ headers: req.headers as Record<string, string>, body, port: req.socket.remotePort ?? 0 });
          for (const w of [...this.hangWaiters]) if (this.hanging.length >= w.n) { this.hangWaiters.splice(this.hangWaiters.indexOf(w), 1); w.resolve(); }
          return;
        }
        if (what >= 200 && what < 300) this.received.push({ headers: req.headers as Record<string, string>, body });
        res.statusCode = what;
        res.end();
        for (const w of [...this.waiters]) if (this.received.length >= w.n) { this.waiters.splice(this.waiters.indexOf(w), 1); w.resolve(); }
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** Resolves once `n` deliveries were accepted; fails, saying how many came, after `ms`. */
  until(n: number, ms = 90_000): Promise<void> {
    if (this.received.length >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.received.length} of ${n} deliveries arrived within ${ms} ms`)), ms);
      this.waiters.push({ n, resolve: () => { clearTimeout(timer); resolve(); } });
    });
  }

  /** Resolves once `n` deliveries hang here unanswered. */
  untilHung(n: number): Promise<void> {
    if (this.hanging.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.hangWaiters.push({ n, resolve }));
  }

  release(): void {
    for (const res of this.hanging.splice(0)) { res.statusCode = 204; res.end(); }
  }

  get hung(): number {
    return this.hanging.length;
  }

  async stop(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** Asks `probe` again (a request to the service, which itself takes a moment) until it holds something; bounded. */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`never within ${ms} ms: ${what}`);
}

export const events = (r: Receiver) => r.received.map((x) => ({ id: x.headers['webhook-id']!, body: JSON.parse(x.body) }));

