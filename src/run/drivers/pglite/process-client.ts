import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { TEXT_PARSERS } from '../../decode.js';
import type { Named, PreparingClient } from '../prepared.js';

/**
 * One PGlite process (src/run/drivers/pglite/pglite-process.js) seen from the service: start it, send it
 * one statement at a time, and kill it. What to do when a statement runs too long or the process
 * dies is EmbeddedDatabase's business (supervisor.ts); this file only speaks the process's
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

type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: Record<string, unknown>; broken?: boolean };

/** The process could not end a read's transaction (its ROLLBACK failed): its connection is in an unknown state. */
export class ConnectionBroken extends Error {
  override readonly name = 'ConnectionBroken';
}

export interface ProcessOptions {
  readonly dataDir: string;
  readonly extensions: readonly string[];
  /** Bounds the start (process, PGlite, initdb of an empty directory). */
  readonly openTimeoutMs: number;
  /** Statements run on the connection before it takes calls (session settings). */
  readonly sessionSql: string | undefined;
  /** The process's JavaScript heap (rows are built there): past it that process dies, not the service. */
  readonly maxHeapMb: number;
}

/** The process stopped (killed, crashed, closed) before it answered: the statement's fate is unknown. */
export class ProcessGone extends Error {
  override readonly name = 'ProcessGone';

  constructor(
    message: string,
    /** The process ran out of its heap: building the statement's result did it. */
    readonly outOfMemory = false,
  ) {
    super(message);
  }
}

/** The types the service decodes (TEXT_PARSERS): the process sends their text. */
const RAW_OIDS = Object.keys(TEXT_PARSERS).map(Number);

/**
 * The process's script, beside this module: src/run/drivers/pglite/ under vitest and tsx, dist/ in the
 * package (tsup builds it there under the same name). A CommonJS bundle has no import.meta.url.
 */
function processScript(): string {
  const here = typeof import.meta.url === 'string' ? import.meta.url : pathToFileURL(__filename).href;
  return fileURLToPath(new URL('./pglite-process.js', here));
}

/** An error from the process, rebuilt with the fields callers read (code, constraint, ...). */
function rebuildError(fields: Record<string, unknown>): Error {
  const err = new Error(String(fields['message'] ?? 'unknown error'));
  for (const [key, value] of Object.entries(fields)) {
    if (key !== 'message') Object.defineProperty(err, key, { value, enumerable: key !== 'name', writable: true, configurable: true });
  }
  return err;
}

/** Rows as PGlite in this process would give them with TEXT_PARSERS: objects, our types decoded. */
function decodeResult(wire: WireResult): QueryResult {
  const names = wire.fields.map((f) => f.name);
  const parsers = wire.fields.map((f) => TEXT_PARSERS[f.dataTypeID]);
  // Object.fromEntries, as PGlite builds rows: a repeated name keeps its last value.
  const rows = wire.rows.map((values) =>
    Object.fromEntries(values.map((v, i) => [names[i], v === null || parsers[i] === undefined ? v : parsers[i]!(v as string)])),
  );
  return wire.affectedRows === undefined ? { rows, fields: wire.fields } : { rows, fields: wire.fields, affectedRows: wire.affectedRows };
}

/** A process with PGlite open; `warmStatements`: the statements a spare ran to warm its code up before (0: it opened cold). */
export interface Opened {
  readonly child: PgliteProcess;
  readonly openMs: number;
  readonly warmStatements: number;
}

/** A process that has loaded PGlite and waits for a directory to open (PgliteProcess.spare). */
export interface SpareProcess {
  /** Opens `dataDir` in the process; once only. */
  open(dataDir: string): Promise<Opened>;
  /**
   * Resolves when the spare has warmed its WebAssembly up on a throwaway database (see warmUp in
   * ./pglite-process.js); stays pending when it was called to open first, or failed to warm up.
   */
  readonly warmed: Promise<{ statements: number; ms: number }>;
  /** Ends the process unused. */
  discard(): Promise<void>;
}

/** What V8 prints before it ends a process that ran out of its heap. */
const OUT_OF_MEMORY = /JavaScript heap out of memory|Reached heap limit/;
/** How much of the process's standard error is kept, to tell why it ended. */
const STDERR_KEPT = 8192;

/** A started process, the end of what it wrote to standard error, and its end. */
interface Child {
  readonly child: ChildProcess;
  stderr(): string;
  /** Resolves once the process has ended and its standard error has been read to the end. */
  readonly closed: Promise<void>;
}

/** Every process started and not yet ended: killed when the service exits (PgliteProcess.killAll). */
const live = new Set<ChildProcess>();

/** Starts a database process; it counts as live until it has ended. */
function spawn(options: Omit<ProcessOptions, 'dataDir'>, dataDir: string | null): Child {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    OQL_PGLITE_PROCESS: JSON.stringify({ dataDir, extensions: options.extensions, rawOids: RAW_OIDS, sessionSql: options.sessionSql, parent: process.pid }),
  };
  // The script needs no loader: whatever the service was started with (tsx, vitest) stays there.
  delete env['NODE_OPTIONS'];
  const child = fork(processScript(), [], {
    // --expose-gc: a spare frees its warm-up database's memory at once (see warmUp in the script).
    execArgv: [`--max-old-space-size=${options.maxHeapMb}`, '--expose-gc', ...wasmCompilerFlags(process.execArgv)],
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    env,
  });
  let tail = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-STDERR_KEPT);
  });
  // Not news on its own: a failed send or kill shows as the process's exit, which is listened to.
  child.on('error', () => {});
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  live.add(child);
  child.once('exit', () => live.delete(child));
  return { child, stderr: () => tail, closed };
}

/**
 * The service's own flags for V8's WebAssembly compilers (`--liftoff-only`, `--no-wasm-tier-up`,
 * `--wasm-lazy-compilation`...), which its database process takes too: that process is where
 * PGlite's WebAssembly runs. Nothing else of the service's command line goes there (a loader,
 * an inspector port, its heap size).
 */
export function wasmCompilerFlags(execArgv: readonly string[]): string[] {
  return execArgv.filter((a) => /^--(no-?)?(liftoff|wasm)([-_][\w-]*)?(=\S*)?$/.test(a));
}

/** Why a process ended, for the error its callers get. */
function exitReason(code: number | null, signal: NodeJS.Signals | null): string {
  return signal === null ? `exited (code ${code})` : `was ended by ${signal}`;
}

export class PgliteProcess {
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  private dead = false;
  /** Set by close(): the exit after PGlite closed is expected, not a death. */
  private closing = false;

  /**
   * The named statements of this process's one connection, for PreparedStatements (../prepared.ts),
   * which names the reads and decides which to keep: a name counts as parsed once a read was sent
   * with it (the process parses a name it has not met, and skips closing one it has not).
   */
  readonly statements: PreparingClient;
  private readonly parsed: Record<string, unknown> = {};

  /** Called once when the process dies on its own (a crash, an exit); not after kill() or close(). */
  onDeath: (error: ProcessGone) => void = () => {};

  /** The operating system's id of the process, for logs. */
  get pid(): number | undefined {
    return this.spawned.child.pid;
  }

  private constructor(private readonly spawned: Child) {
    this.statements = { connection: { parsedStatements: this.parsed } };
    spawned.child.on('message', this.onMessage);
    spawned.child.on('close', this.onClose);
  }

  /** Starts a process and waits until PGlite is open in it. */
  static start(options: ProcessOptions): Promise<Opened> {
    return PgliteProcess.opened(spawn(options, options.dataDir), options);
  }

  /**
   * A spare process: it loads PGlite and compiles it now, and opens a directory only when
   * `open` is called (a restart then waits for Postgres's start alone). It keeps the service from
   * exiting no more than a timer that is unref'd would.
   */
  static spare(options: Omit<ProcessOptions, 'dataDir'>): SpareProcess {
    const spawned = spawn(options, null);
    const { child } = spawned;
    const hold = (on: boolean) => {
      for (const handle of [child, child.channel, child.stderr] as ({ ref?(): void; unref?(): void } | null | undefined)[]) {
        if (on) handle?.ref?.();
        else handle?.unref?.();
      }
    };
    hold(false);
    const warmed = new Promise<{ statements: number; ms: number }>((resolve) => {
      const onWarm = (m: { type?: string; statements?: number; ms?: number }): void => {
        if (m?.type !== 'warm') return;
        child.off('message', onWarm);
        resolve({ statements: m.statements ?? 0, ms: m.ms ?? 0 });
      };
      child.on('message', onWarm);
      child.once('exit', () => child.off('message', onWarm));
    });
    return {
      warmed,
      open: (dataDir) => {
        hold(true);
        const opened = PgliteProcess.opened(spawned, { ...options, dataDir });
        try {
          child.send({ op: 'open', dataDir });
        } catch {
          // The process is gone: opened() hears its exit.
        }
        return opened;
      },
      discard: async () => {
        child.kill('SIGKILL');
        await spawned.closed;
      },
    };
  }

  /** Kills every process this service started, synchronously: at its exit, none may outlive it. */
  static killAll(): void {
    for (const child of live) child.kill('SIGKILL');
  }

  private static async opened(spawned: Child, options: ProcessOptions): Promise<Opened> {
    const { child } = spawned;
    let timer: NodeJS.Timeout | undefined;
    let onMessage: (m: { type: string; openMs?: number; warmStatements?: number; error?: Record<string, unknown> }) => void = () => {};
    let onClose: (code: number | null, signal: NodeJS.Signals | null) => void = () => {};
    try {
      const { openMs, warmStatements } = await new Promise<{ openMs: number; warmStatements: number }>((resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`PGlite did not open within ${options.openTimeoutMs} ms`)), options.openTimeoutMs);
        onMessage = (m) => {
          // A spare's warm-up that ended as the open came: news for `warmed`, not for the open.
          if (m.type === 'warm') return;
          if (m.type === 'ready') resolve({ openMs: m.openMs ?? 0, warmStatements: m.warmStatements ?? 0 });
          else reject(rebuildError(m.error ?? {}));
        };
        onClose = (code, signal) => reject(new Error(`the database process ${exitReason(code, signal)} while opening${lastLine(spawned.stderr())}`));
        child.on('message', onMessage);
        child.on('close', onClose);
      });
      return { child: new PgliteProcess(spawned), openMs, warmStatements };
    } catch (e) {
      child.kill('SIGKILL');
      await spawned.closed;
      throw e;
    } finally {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('close', onClose);
    }
  }

  /**
   * `begin`: the process runs BEGIN first, in the same message (a transaction's first statement).
   * `commit`: it runs COMMIT after the query, in the same message (a transaction's last statement);
   * when the query fails, ROLLBACK instead, and the query's error is answered. Either way the
   * transaction is over when this settles; ConnectionBroken when it could not be ended.
   */
  query<T = Record<string, unknown>>(sql: string, params: readonly unknown[], begin = false, commit = false): Promise<QueryResult<T>> {
    return this.send({ op: 'query', sql, params, begin, commit }).then((r) => decodeResult(r as WireResult) as QueryResult<T>);
  }

  /**
   * A whole read in one message: BEGIN, `settings`, the query and ROLLBACK, run by the process in
   * sequence (one crossing instead of four). `statement`: the name to read the query under and the
   * names to let go of first (PreparedStatements.name on `statements`); null reads it unnamed.
   * Rejects with the query's error after the process has rolled back, or with ConnectionBroken when
   * the rollback itself failed.
   */
  read<T = Record<string, unknown>>(settings: string, sql: string, params: readonly unknown[], statement: Named | null = null): Promise<QueryResult<T>> {
    if (statement !== null) this.parsed[statement.name] = true;
    return this.send({ op: 'read', settings, sql, params, statement: statement?.name ?? null, close: statement?.deallocate ?? [] })
      .then((r) => decodeResult(r as WireResult) as QueryResult<T>);
  }

  exec(sql: string, begin = false): Promise<QueryResult[]> {
    return this.send({ op: 'exec', sql, begin }).then((r) => (r as WireResult[]).map(decodeResult));
  }

  /** Closes PGlite cleanly (its files are consistent afterwards), then ends the process. */
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

  /** Ends the process now, whatever it runs; resolves once it has ended (its files are no longer written). */
  async kill(): Promise<void> {
    if (!this.dead) this.detach();
    this.dead = true;
    this.spawned.child.kill('SIGKILL');
    await this.spawned.closed;
    this.failPending(new ProcessGone('the database process was stopped'));
  }

  private send(message: Record<string, unknown>): Promise<unknown> {
    if (this.dead) return Promise.reject(new ProcessGone('the database process is not running'));
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      try {
        this.spawned.child.send({ id, ...message });
      } catch (e) {
        // A parameter that cannot be copied to the process (a function, a symbol).
        this.pending.delete(id);
        reject(e as Error);
      }
    });
  }

  private readonly onMessage = (m: Reply): void => this.settle(m);
  private readonly onClose = (code: number | null, signal: NodeJS.Signals | null): void => {
    const stderr = this.spawned.stderr();
    this.die(new ProcessGone(`the database process ${exitReason(code, signal)}${lastLine(stderr)}`, OUT_OF_MEMORY.test(stderr)));
  };

  private detach(): void {
    this.spawned.child.off('message', this.onMessage);
    this.spawned.child.off('close', this.onClose);
  }

  private settle(reply: Reply): void {
    const call = this.pending.get(reply.id);
    if (!call) return;
    this.pending.delete(reply.id);
    if (reply.ok) call.resolve(reply.result);
    else if (reply.broken === true) call.reject(new ConnectionBroken(`the database process could not end a transaction: ${String(reply.error['message'])}`));
    else call.reject(rebuildError(reply.error));
  }

  private die(error: ProcessGone): void {
    if (this.dead) return;
    this.dead = true;
    this.detach();
    this.spawned.child.kill('SIGKILL');
    this.failPending(error);
    if (!this.closing) this.onDeath(error);
  }

  private failPending(error: ProcessGone): void {
    for (const call of this.pending.values()) call.reject(error);
    this.pending.clear();
  }
}

/** The last line the process wrote to standard error (V8's reason when it aborts), for a message. */
function lastLine(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !/^#\s*$/.test(l));
  const fatal = lines.find((l) => /^(# )?(Fatal error|Check failed|FATAL ERROR)/.test(l));
  const line = fatal ?? lines.at(-1);
  return line === undefined ? '' : `: ${line.slice(0, 300)}`;
}
