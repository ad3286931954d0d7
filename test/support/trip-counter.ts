import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a PostgreSQL server (or PgBouncer) that counts round trips from the
 * wire, outside the code under test. A trip is a burst of a client's messages written after the
 * server had answered it up to a ReadyForQuery, that is, after the client had waited; messages
 * written without waiting (a pipeline) are one trip.
 *
 * Trips are told per transaction: from a burst whose first statement starts with BEGIN, to the
 * burst on the same connection that carries its ROLLBACK or COMMIT. So whatever else the service
 * does on other connections meanwhile (a webhook sender's claims, a lease) does not count. On a
 * connection whose start-up asked for read-only sessions (`options` with
 * `default_transaction_read_only=on`), a statement outside BEGIN … is a transaction of its own, one
 * trip: the pool's own checks of a new connection (`SELECT 1`, its settings) are left out.
 */
export interface Transaction {
  /** The first statement's text, e.g. `BEGIN READ ONLY; SET LOCAL statement_timeout = 1500; …`. */
  readonly opening: string;
  /** A statement alone on a read-only session: its own transaction. */
  readonly alone: boolean;
  /** Every statement sent in it, in order. */
  readonly statements: readonly string[];
  readonly trips: number;
  /** Whether its ROLLBACK or COMMIT was seen. */
  readonly ended: boolean;
}

export interface TripCounter {
  /** `postgres://postgres@127.0.0.1:<proxy port>/<database>` */
  url(database?: string, user?: string): string;
  /** The transactions begun since the last `reset()`, in the order they began. */
  transactions(): Transaction[];
  reset(): void;
  close(): Promise<void>;
}

interface Open {
  opening: string;
  alone: boolean;
  statements: string[];
  trips: number;
  ended: boolean;
}

/**
 * The statements in `bytes` (whole messages): each Query ('Q') by its text, and each Execute ('E')
 * by the text its Bind ('B') names, from that statement's Parse ('P') here or earlier on the same
 * connection (`parsed`, by statement name; the unnamed one under '').
 */
function statementsOf(bytes: Buffer, typed: boolean, parsed: Map<string, string>): string[] {
  const out: string[] = [];
  let at = 0;
  let bound = '';
  if (!typed && bytes.length >= 4) at = bytes.readUInt32BE(0);
  while (bytes.length - at >= 5) {
    const type = bytes[at]!;
    const length = bytes.readUInt32BE(at + 1);
    const body = bytes.subarray(at + 5, at + 1 + length);
    if (type === 0x51) out.push(body.toString('utf8', 0, body.indexOf(0)));
    if (type === 0x50) {
      const nameEnd = body.indexOf(0);
      parsed.set(body.toString('utf8', 0, nameEnd), body.toString('utf8', nameEnd + 1, body.indexOf(0, nameEnd + 1)));
    }
    if (type === 0x42) {
      const portalEnd = body.indexOf(0);
      bound = body.toString('utf8', portalEnd + 1, body.indexOf(0, portalEnd + 1));
    }
    if (type === 0x45) out.push(parsed.get(bound) ?? `<statement ${bound}>`);
    at += 1 + length;
  }
  return out;
}

/** Whether a start-up message (length, protocol, then name and value pairs) asks for read-only sessions. */
function readOnlyStartup(bytes: Buffer): boolean {
  const fields = bytes.toString('utf8', 8, bytes.readUInt32BE(0)).split('\0');
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === 'options' && /(^|\s)-c\s*default_transaction_read_only=on\b/.test(fields[i + 1]!)) return true;
  }
  return false;
}

/** A new connection's own checks, which are not reads. */
const POOL_CHECKS = /^(?:SELECT 1$|SELECT current_user AS role\b)/;

/** Each message whole: the bytes of complete messages and the rest, to be completed by the next chunk. */
function whole(pending: Buffer, typed: boolean): [Buffer, Buffer] {
  let at = 0;
  if (!typed) {
    if (pending.length < 4 || pending.length < pending.readUInt32BE(0)) return [Buffer.alloc(0), pending];
    at = pending.readUInt32BE(0);
  }
  while (pending.length - at >= 5) {
    const length = pending.readUInt32BE(at + 1);
    if (pending.length - at < 1 + length) break;
    at += 1 + length;
  }
  return [pending.subarray(0, at), pending.subarray(at)];
}

export async function startTripCounter(upstream: { host: string; port: number }): Promise<TripCounter> {
  let seen: Open[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const backend = createConnection(upstream.port, upstream.host);
    sockets.add(client).add(backend);
    // Whether the server's last complete message was ReadyForQuery ('Z'): the client waits on it.
    let waiting = false;
    let fromServer: Buffer = Buffer.alloc(0);
    let fromClient: Buffer = Buffer.alloc(0);
    // The start-up message has no type byte.
    let started = false;
    let readOnly = false;
    const parsed = new Map<string, string>();
    let open: Open | undefined;
    client.on('data', (chunk) => {
      backend.write(chunk);
      const newTrip = waiting;
      waiting = false;
      const [done, rest] = whole(fromClient.length ? Buffer.concat([fromClient, chunk]) : chunk, started);
      const statements = done.length ? statementsOf(done, started, parsed) : [];
      if (done.length && !started) readOnly = readOnlyStartup(done);
      if (done.length) started = true;
      fromClient = rest;
      if (open && newTrip) open.trips++;
      for (const text of statements) {
        if (!open && /^\s*BEGIN\b/i.test(text)) {
          open = { opening: text, alone: false, statements: [], trips: 1, ended: false };
          seen.push(open);
        }
        if (!open) {
          if (readOnly && !POOL_CHECKS.test(text)) seen.push({ opening: text, alone: true, statements: [text], trips: 1, ended: true });
          continue;
        }
        open.statements.push(text);
        if (/^\s*(ROLLBACK|COMMIT)\b/i.test(text)) {
          open.ended = true;
          open = undefined;
        }
      }
    });
    backend.on('data', (chunk) => {
      client.write(chunk);
      const [done, rest] = whole(fromServer.length ? Buffer.concat([fromServer, chunk]) : chunk, true);
      fromServer = rest;
      // The last whole message decides; pg sends no SSL request here (no ssl in the URL), so every
      // message from the server is typed.
      let at = 0;
      while (at < done.length) {
        waiting = done[at] === 0x5a;
        at += 1 + done.readUInt32BE(at + 1);
      }
    });
    const end = (): void => {
      client.destroy();
      backend.destroy();
      sockets.delete(client);
      sockets.delete(backend);
    };
    client.on('close', end).on('error', end);
    backend.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (database = 'postgres', user = 'postgres') => `postgres://${user}@127.0.0.1:${port}/${database}`,
    transactions: () => seen.map((t) => ({ ...t, statements: [...t.statements] })),
    reset: () => {
      seen = [];
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
