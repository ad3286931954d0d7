import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { TEXT_PARSERS } from '../decode.js';

/**
 * One PGlite worker thread (src/run/drivers/pglite-thread.js) seen from the main thread: start it, send
 * it one statement at a time, and kill it. What to do when a statement runs too long or the thread
 * dies is EmbeddedDatabase's business (pglite-worker.ts); this file only speaks the thread's
 * protocol.
 */

export interface Field {
  readonly name: string;
  readonly dataTypeID: number;
}

export interface QueryResult<T = Record<string, unknown>> {
  readonly rows: T[];
  readonly fields: readonly Field[];
  /** Rows an INSERT, UPDATE or DELETE changed. */
  readonly affectedRows?: number;
}

interface WireResult {
  readonly rows: unknown[][];
  readonly fields: Field[];
  readonly affectedRows?: number;
}

type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: Record<string, unknown> };

export interface ThreadOptions {
  readonly dataDir: string;
  readonly extensions: readonly string[];
  /** Bounds the start (thread, PGlite, initdb of an empty directory). */
  readonly openTimeoutMs: number;
  /** Statements run on the connection before it takes calls (session settings). */
  readonly sessionSql: string | undefined;
  /** The thread's JavaScript heap (rows are built there): past it the thread dies, not the process. */
  readonly maxHeapMb: number;
}

/** The thread stopped (killed, crashed, closed) before it answered: the statement's fate is unknown. */
export class ThreadGone extends Error {
  override readonly name = 'ThreadGone';

  /** The thread ran out of its heap: building the statement's result did it. */
  get outOfMemory(): boolean {
    return (this.cause as { code?: unknown } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
  }
}

/** The types the main thread decodes (TEXT_PARSERS): the thread sends their text. */
const RAW_OIDS = Object.keys(TEXT_PARSERS).map(Number);

/**
 * The thread's script, beside this module: src/run/drivers/ under vitest and tsx, dist/ in the package
 * (tsup builds it there under the same name). A CommonJS bundle has no import.meta.url.
 */
function threadScript(): URL {
  const here = typeof import.meta.url === 'string' ? import.meta.url : pathToFileURL(__filename).href;
  return new URL('./pglite-thread.js', here);
}

/** An error from the thread, rebuilt with the fields callers read (code, constraint, ...). */
function rebuildError(fields: Record<string, unknown>): Error {
  const err = new Error(String(fields['message'] ?? 'unknown error'));
  for (const [key, value] of Object.entries(fields)) {
    if (key !== 'message') Object.defineProperty(err, key, { value, enumerable: key !== 'name', writable: true, configurable: true });
  }
  return err;
}

/** Rows as PGlite on this thread would give them with TEXT_PARSERS: objects, our types decoded. */
function decodeResult(wire: WireResult): QueryResult {
  const names = wire.fields.map((f) => f.name);
  const parsers = wire.fields.map((f) => TEXT_PARSERS[f.dataTypeID]);
  // Object.fromEntries, as PGlite builds rows: a repeated name keeps its last value.
  const rows = wire.rows.map((values) =>
    Object.fromEntries(values.map((v, i) => [names[i], v === null || parsers[i] === undefined ? v : parsers[i]!(v as string)])),
  );
  return wire.affectedRows === undefined ? { rows, fields: wire.fields } : { rows, fields: wire.fields, affectedRows: wire.affectedRows };
}

/** A thread that has loaded PGlite and waits for a directory to open (PgliteThread.spare). */
export interface SpareThread {
  /** Opens `dataDir` in the thread; once only. */
  open(dataDir: string): Promise<{ thread: PgliteThread; openMs: number }>;
  /** Ends the thread unused. */
  discard(): Promise<void>;
}

function spawn(options: Omit<ThreadOptions, 'dataDir'>, dataDir: string | null): Worker {
  return new Worker(threadScript(), {
    workerData: { dataDir, extensions: options.extensions, rawOids: RAW_OIDS, sessionSql: options.sessionSql },
    // The script needs no loader: whatever the main thread was started with (tsx, vitest) stays there.
    execArgv: [],
    resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb },
  });
}

export class PgliteThread {
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  private dead = false;
  /** Set by close(): the thread's exit after it closed PGlite is expected, not a death. */
  private closing = false;

  /** Called once when the thread dies on its own (an uncaught error, an exit); not after kill() or close(). */
  onDeath: (error: ThreadGone) => void = () => {};

  private constructor(private readonly worker: Worker) {
    worker.on('message', this.onMessage);
    worker.on('error', this.onError);
    worker.on('messageerror', this.onError);
    worker.on('exit', this.onExit);
  }

  /** Starts a thread and waits until PGlite is open in it. */
  static start(options: ThreadOptions): Promise<{ thread: PgliteThread; openMs: number }> {
    return PgliteThread.opened(spawn(options, options.dataDir), options);
  }

  /**
   * A spare thread: it loads PGlite and compiles it now, and opens a directory only when
   * `open` is called (a restart then waits for Postgres's start alone). It keeps no process alive.
   */
  static spare(options: Omit<ThreadOptions, 'dataDir'>): SpareThread {
    const worker = spawn(options, null);
    worker.unref();
    // Errors while it waits are its open's to report; until then nothing listens.
    const quiet = () => {};
    worker.on('error', quiet);
    return {
      open: (dataDir) => {
        worker.off('error', quiet);
        worker.ref();
        const opened = PgliteThread.opened(worker, { ...options, dataDir });
        worker.postMessage({ op: 'open', dataDir });
        return opened;
      },
      discard: async () => {
        await worker.terminate();
      },
    };
  }

  private static async opened(worker: Worker, options: ThreadOptions): Promise<{ thread: PgliteThread; openMs: number }> {
    let timer: NodeJS.Timeout | undefined;
    let onMessage: (m: { type: string; openMs?: number; error?: Record<string, unknown> }) => void = () => {};
    let onError: (e: Error) => void = () => {};
    let onExit: (code: number) => void = () => {};
    try {
      const openMs = await new Promise<number>((resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`PGlite did not open within ${options.openTimeoutMs} ms`)), options.openTimeoutMs);
        onMessage = (m) => (m.type === 'ready' ? resolve(m.openMs ?? 0) : reject(rebuildError(m.error ?? {})));
        onError = reject;
        onExit = (code) => reject(new Error(`the database thread exited while opening (code ${code})`));
        worker.on('message', onMessage);
        worker.on('error', onError);
        worker.on('exit', onExit);
      });
      return { thread: new PgliteThread(worker), openMs };
    } catch (e) {
      worker.on('error', () => {});
      await worker.terminate();
      throw e;
    } finally {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    }
  }

  query<T = Record<string, unknown>>(sql: string, params: readonly unknown[]): Promise<QueryResult<T>> {
    return this.send({ op: 'query', sql, params }).then((r) => decodeResult(r as WireResult) as QueryResult<T>);
  }

  exec(sql: string): Promise<QueryResult[]> {
    return this.send({ op: 'exec', sql }).then((r) => (r as WireResult[]).map(decodeResult));
  }

  /** Closes PGlite cleanly (its files are consistent afterwards), then ends the thread. */
  async close(timeoutMs: number): Promise<void> {
    this.closing = true;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.send({ op: 'close' }),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`PGlite did not close within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
      await this.kill();
    }
  }

  /** Ends the thread now, whatever it runs; resolves once it has stopped (its files are no longer written). */
  async kill(): Promise<void> {
    if (!this.dead) this.detach();
    this.dead = true;
    await this.worker.terminate();
    this.failPending(new ThreadGone('the database thread was stopped'));
  }

  private send(message: Record<string, unknown>): Promise<unknown> {
    if (this.dead) return Promise.reject(new ThreadGone('the database thread is not running'));
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      try {
        this.worker.postMessage({ id, ...message });
      } catch (e) {
        // A parameter that cannot be copied to the thread (a function, a symbol).
        this.pending.delete(id);
        reject(e as Error);
      }
    });
  }

  // Named, so that exactly these come off again: removeAllListeners() would also take the
  // listeners Node's Worker puts on itself to keep its message port referenced.
  private readonly onMessage = (m: Reply): void => this.settle(m);
  private readonly onError = (e: Error): void => this.die(new ThreadGone(`the database thread failed: ${e.message}`, { cause: e }));
  private readonly onExit = (code: number): void => this.die(new ThreadGone(`the database thread exited (code ${code})`));

  /** Stops listening to the thread, except for its errors while it is being stopped, which are not news. */
  private detach(): void {
    this.worker.off('message', this.onMessage);
    this.worker.off('error', this.onError);
    this.worker.off('messageerror', this.onError);
    this.worker.off('exit', this.onExit);
    this.worker.on('error', () => {});
  }

  private settle(reply: Reply): void {
    const call = this.pending.get(reply.id);
    if (!call) return;
    this.pending.delete(reply.id);
    if (reply.ok) call.resolve(reply.result);
    else call.reject(rebuildError(reply.error));
  }

  private die(error: ThreadGone): void {
    if (this.dead) return;
    this.dead = true;
    this.detach();
    void this.worker.terminate();
    this.failPending(error);
    if (!this.closing) this.onDeath(error);
  }

  private failPending(error: ThreadGone): void {
    for (const call of this.pending.values()) call.reject(error);
    this.pending.clear();
  }
}
