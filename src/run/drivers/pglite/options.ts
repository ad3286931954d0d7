import { runtimeError } from '../../errors.js';
import type { ProcessOptions, QueryResult } from './process-client.js';
import { checkTimeout } from '../../transaction.js';
import { DEFAULT_PREPARED_STATEMENTS } from '../pool.js';

/** The options and shapes of EmbeddedDatabase (supervisor.ts), and the checks of those options. */

export type EmbeddedExtension = 'pg_trgm';
const EXTENSIONS: readonly EmbeddedExtension[] = ['pg_trgm'];

export interface EmbeddedDatabaseOptions {
  /** The directory PGlite keeps its files in (created when missing). Exclusive with `memory`. */
  readonly dataDir?: string;
  /** A temporary directory, removed on close: nothing is kept. */
  readonly memory?: boolean;
  /**
   * Extensions to load. Default true: pg_trgm, as a directory whose tables carry trigram indexes
   * cannot be written without it, whatever this start asked for.
   */
  readonly extensions?: readonly EmbeddedExtension[] | boolean;
  /**
   * Statements the connection runs before it takes calls, again after every restart: session
   * settings (`SET TimeZone = 'UTC'`), which a new process would otherwise not have.
   */
  readonly sessionSql?: string;
  /** Each statement's budget in milliseconds, unless a call gives its own. Default 5000. */
  readonly timeoutMs?: number;
  /** How long a call waits for a database being reopened before SERVICE_UNAVAILABLE. Default 10000. */
  readonly restartWaitMs?: number;
  /**
   * How long a read (`read()`) of one tenant may hold the connection while another tenant's call
   * waits for it: past it the read is stopped as at its budget (QUERY_TIMEOUT, the process is
   * replaced). Alone, a read has its whole budget. Default 500.
   */
  readonly sliceMs?: number;
  /**
   * Bounds each start of the process (an empty directory is initialised first: seconds, or minutes
   * on a machine busy with other work). Default 300000.
   */
  readonly openTimeoutMs?: number;
  /**
   * The database process's JavaScript heap in MB, where result rows are built. A result that needs
   * more kills that process (the call rejects, the process is replaced), not the service. Default 1024.
   */
  readonly maxHeapMb?: number;
  /**
   * Named statements the process keeps for reads (`read()`, unless `named: false`), by organization and
   * text, as the PostgreSQL pool keeps them per connection (../prepared.ts). Default
   * DEFAULT_PREPARED_STATEMENTS; 0 reads every statement unnamed.
   */
  readonly preparedStatements?: number;
  /** Restarts and failures, for the service's log. */
  readonly onEvent?: (event: EmbeddedDatabaseEvent) => void;
}

export type EmbeddedDatabaseEvent =
  | { readonly type: 'restarting'; readonly reason: 'timeout' | 'crash'; readonly tenant: string | undefined; readonly error: Error }
  | { readonly type: 'restarted'; readonly durationMs: number; /** The new process had warmed its code up (it was the spare, and ready). */ readonly warm: boolean }
  | { readonly type: 'checkpoint'; /** The write-ahead log since the last checkpoint, which a restart would have replayed. */ readonly walBytes: number }
  | { readonly type: 'spare-ready'; /** Statements and milliseconds of the spare's warm-up. */ readonly statements: number; readonly warmUpMs: number }
  | { readonly type: 'restart-failed'; readonly error: Error; readonly retryInMs: number };

export interface CallOptions {
  /** The statement's budget in milliseconds (each statement of a transaction has its own). */
  readonly timeoutMs?: number;
  /** Whose turn the call takes in the queue; calls without one share a turn. */
  readonly tenant?: string;
}

/** A transaction's connection (`transaction(fn)` hands it to `fn`); PGlite's Transaction in shape. */
export interface EmbeddedTx {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: { timeoutMs?: number }): Promise<QueryResult<T>>;
  exec(sql: string, options?: { timeoutMs?: number }): Promise<QueryResult[]>;
  /**
   * The transaction's last statement and its COMMIT, in one message to the process. Nothing may
   * be sent in the transaction after it. When the statement fails, the process rolls back and its
   * error is thrown; nothing of the transaction is kept.
   */
  commitWith<T = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: { timeoutMs?: number }): Promise<QueryResult<T>>;
  /** Rolls back now; `transaction` then answers fn's value without committing. */
  rollback(): Promise<void>;
}

export interface EmbeddedDatabaseStats {
  readonly state: 'ready' | 'restarting' | 'closed';
  /** Processes replaced since open, after a timeout or a crash. */
  readonly restarts: number;
  /** Checkpoints made because the write-ahead log had grown (a restart replays what came after the last one). */
  readonly checkpoints: number;
  /** The tenant whose call holds the connection now ('' for the service's own calls) and for how long (ms); undefined when it is free. */
  readonly holder: { readonly tenant: string; readonly forMs: number } | undefined;
  /** Calls waiting for the connection. */
  readonly queued: number;
  /** The first open (process start and PGlite open), ms. */
  readonly openMs: number;
  /** The last replacement, from the kill to the new process's first readiness, ms. */
  readonly lastRestartMs: number | undefined;
  /** Per tenant ('' for calls without one), since open: where its calls spent their time. */
  readonly tenants: Readonly<Record<string, EmbeddedTenantStats>>;
}

export interface EmbeddedTenantStats {
  /** Calls that got the connection. */
  readonly calls: number;
  /** Their time waiting in the queue for it, in total and the longest, ms. */
  readonly waitMs: number;
  readonly maxWaitMs: number;
  /** Their time holding it (the statement, or a transaction from its turn to its end), ms. */
  readonly holdMs: number;
  readonly maxHoldMs: number;
}

/** The options, checked and with their defaults. */
export interface EmbeddedSettings {
  readonly memory: boolean;
  readonly extensions: readonly EmbeddedExtension[];
  readonly sessionSql: string | undefined;
  readonly timeoutMs: number;
  readonly restartWaitMs: number;
  readonly sliceMs: number;
  readonly openTimeoutMs: number;
  readonly maxHeapMb: number;
  readonly preparedStatements: number;
  readonly onEvent: ((event: EmbeddedDatabaseEvent) => void) | undefined;
}

const DEFAULTS = { timeoutMs: 5_000, restartWaitMs: 10_000, sliceMs: 500, openTimeoutMs: 300_000, maxHeapMb: 1024 } as const;

export function checkOptions(options: EmbeddedDatabaseOptions): EmbeddedSettings {
  const memory = options.memory === true;
  if (memory && options.dataDir !== undefined) {
    throw runtimeError('INVALID_OPTIONS', '--data-dir and --memory exclude each other', { hint: 'drop --memory to keep data in the directory' });
  }
  if (!memory && (typeof options.dataDir !== 'string' || options.dataDir === '')) {
    throw runtimeError('INVALID_OPTIONS', 'the embedded database needs a data directory or memory: true', { hint: 'for example --data-dir ./.oql-data, or --memory' });
  }
  const extensions = options.extensions === undefined || options.extensions === true ? EXTENSIONS : options.extensions === false ? [] : options.extensions;
  for (const name of extensions) {
    if (!EXTENSIONS.includes(name)) {
      throw runtimeError('INVALID_OPTIONS', `the embedded database has no extension '${String(name)}'`, { hint: `available: ${EXTENSIONS.join(', ')}` });
    }
  }
  if (options.sessionSql !== undefined && typeof options.sessionSql !== 'string') {
    throw runtimeError('INVALID_OPTIONS', 'sessionSql must be a string of SQL statements');
  }
  return {
    memory,
    extensions,
    sessionSql: options.sessionSql,
    timeoutMs: checkTimeout(options.timeoutMs ?? DEFAULTS.timeoutMs),
    restartWaitMs: whole('restartWaitMs', options.restartWaitMs ?? DEFAULTS.restartWaitMs, 1),
    sliceMs: whole('sliceMs', options.sliceMs ?? DEFAULTS.sliceMs, 1),
    openTimeoutMs: whole('openTimeoutMs', options.openTimeoutMs ?? DEFAULTS.openTimeoutMs, 1),
    maxHeapMb: whole('maxHeapMb', options.maxHeapMb ?? DEFAULTS.maxHeapMb, 64),
    preparedStatements: whole('preparedStatements', options.preparedStatements ?? DEFAULT_PREPARED_STATEMENTS, 0),
    onEvent: options.onEvent,
  };
}

/** A whole number from `min` up to the largest timer delay Node takes. */
function whole(name: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > 2_147_483_647) {
    throw runtimeError('INVALID_OPTIONS', `${name} must be a whole number between ${min} and 2147483647, not ${String(value)}`);
  }
  return value;
}

export function processOptions(settings: EmbeddedSettings): Omit<ProcessOptions, 'dataDir'> {
  return { extensions: settings.extensions, openTimeoutMs: settings.openTimeoutMs, maxHeapMb: settings.maxHeapMb, sessionSql: settings.sessionSql };
}
