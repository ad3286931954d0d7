import { databaseError, runtimeError } from './errors.js';
import { pgTypes, TEXT_PARSERS } from './decode.js';

/**
 * What `execute` and `count` need of a connection: node-postgres (Pool, Client, PoolClient) or
 * PGlite; the result must have `rows`. Typed loosely so that any `query` returning a promise fits.
 */
export interface Queryable {
  query(text: string, params?: unknown[]): Promise<unknown>;
}

export const DEFAULT_TIMEOUT_MS = 20_000;

export interface TransactionOptions {
  /** statement_timeout in milliseconds. Default 20000. */
  readonly timeoutMs?: number;
}

export interface ReadOnlyResult {
  readonly rows: Record<string, unknown>[];
}

// ---- What kind of connection this is, told by shape (the library imports no driver). ----

interface PgliteLike {
  transaction<T>(fn: (tx: PgliteTx) => Promise<T>): Promise<T>;
  exec(text: string): Promise<unknown>;
}
interface PgliteTx {
  query(text: string, params?: unknown[], options?: { parsers?: Record<number, (text: string) => unknown> }): Promise<{ rows: any[] }>;
  exec(text: string): Promise<unknown>;
  rollback(): Promise<void>;
  readonly closed: boolean;
}
interface PgPoolLike {
  connect(): Promise<PgClientLike & { release(destroy?: boolean | Error): void }>;
}
interface PgClientLike {
  query(config: { text: string; values?: unknown[]; types?: unknown; queryMode?: 'extended' }): Promise<{ rows: any[] }>;
  getTypeParser?: (oid: number, format?: string) => unknown;
  on?(event: 'error', listener: (err: Error) => void): unknown;
  removeListener?(event: 'error', listener: (err: Error) => void): unknown;
}

function isPglite(db: object): db is PgliteLike & Queryable {
  const d = db as Partial<PgliteLike> & { waitReady?: unknown };
  return typeof d.transaction === 'function' && typeof d.exec === 'function' && 'waitReady' in d;
}

/** A pg Pool checks clients out; a pg Client has `connect` too, but no pool counters. */
function isPgPool(db: object): db is PgPoolLike & Queryable {
  const d = db as { connect?: unknown; release?: unknown; totalCount?: unknown; idleCount?: unknown };
  return typeof d.connect === 'function' && typeof d.release !== 'function' && (typeof d.totalCount === 'number' || typeof d.idleCount === 'number');
}

/** node-postgres Client or PoolClient: `query` takes a config object with per-query parsers. */
function isPgClient(db: object): db is PgClientLike & Queryable {
  const d = db as { getTypeParser?: unknown; setTypeParser?: unknown };
  return typeof d.getTypeParser === 'function' && typeof d.setTypeParser === 'function';
}

export function checkTimeout(timeoutMs: number | undefined): number {
  const ms = timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 1 || ms > 2_147_483_647) {
    throw runtimeError('INVALID_OPTIONS', `timeoutMs must be a number of milliseconds between 1 and 2147483647, not ${String(timeoutMs)}`);
  }
  return Math.round(ms);
}

/** Session settings for one transaction; SET takes no parameters, so the timeout is a checked integer. */
function settings(timeoutMs: number): string[] {
  return [`SET LOCAL statement_timeout = ${timeoutMs}`, "SET LOCAL TimeZone = 'UTC'", "SET LOCAL DateStyle = 'ISO, YMD'"];
}

// Calls on one connection (not a pool) must not interleave their BEGIN ... ROLLBACK; reads and
// record writes share this one queue per connection.
const queues = new WeakMap<object, Promise<unknown>>();

export function serialised<T>(db: object, fn: () => Promise<T>): Promise<T> {
  const previous = queues.get(db) ?? Promise.resolve();
  const next = previous.then(fn, fn);
  queues.set(db, next.catch(() => undefined));
  return next;
}

/**
 * Runs one statement in a READ ONLY transaction with a statement timeout, UTC time zone and ISO
 * dates, and decodes with our parsers where the driver allows. Errors come out as OqlError.
 *
 * Only a statement starting with SELECT is sent. The transaction always ends in ROLLBACK: a
 * read-only transaction has nothing to commit, and a rollback also undoes any session setting the
 * statement changed (`set_config(..., false)`), so a pooled connection goes back as it came. The
 * statement is sent with the extended protocol, which takes exactly one statement:
 * `SELECT 1; COMMIT; INSERT ...` is rejected, not split.
 *
 * The timeout bounds the statement only, not the wait for a pooled connection or for PGlite's
 * lock. PGlite cannot enforce it at all: its Postgres runs on the JS thread, so no timer fires
 * while a statement runs. Timeouts need a server.
 *
 * Internal: `execute` and `count` are the public entry points; tests call this directly to prove
 * that the database refuses writes even if the compiler emitted one.
 */
export async function runReadOnly(db: Queryable, sql: string, params: readonly unknown[], options: TransactionOptions = {}): Promise<ReadOnlyResult> {
  const timeoutMs = checkTimeout(options.timeoutMs);
  // The emitter writes SELECT and nothing else. Anything else (COMMIT, SET, INSERT) is a bug that
  // must not reach the connection, even though READ ONLY would stop the writes among them.
  if (!/^\s*SELECT\s/i.test(sql)) {
    throw runtimeError('QUERY_FAILED', 'the compiled statement is not a SELECT; it was not run', { status: 500 });
  }
  try {
    if (isPglite(db)) return await runPglite(db, sql, params, timeoutMs);
    if (isPgPool(db)) return await runPool(db, sql, params, timeoutMs);
    return await serialised(db, () => runOnConnection(db, sql, params, timeoutMs));
  } catch (e) {
    throw databaseError(e, timeoutMs);
  }
}

async function runPglite(db: PgliteLike, sql: string, params: readonly unknown[], timeoutMs: number): Promise<ReadOnlyResult> {
  // transaction() holds PGlite's lock from BEGIN to the end: calls on one instance queue.
  return db.transaction(async (tx) => {
    await tx.exec(['SET TRANSACTION READ ONLY', ...settings(timeoutMs)].join('; '));
    const result = await tx.query(sql, [...params], { parsers: { ...TEXT_PARSERS } });
    await tx.rollback();
    return { rows: result.rows as Record<string, unknown>[] };
  });
}

async function runPool(pool: PgPoolLike, sql: string, params: readonly unknown[], timeoutMs: number): Promise<ReadOnlyResult> {
  const client = await pool.connect();
  const state = { broken: false };
  try {
    return await runPgClient(client, sql, params, timeoutMs, state);
  } finally {
    // A connection that failed mid-transaction is destroyed rather than handed to the next caller.
    client.release(state.broken ? true : undefined);
  }
}

interface ConnectionState {
  broken: boolean;
}

async function runOnConnection(db: Queryable, sql: string, params: readonly unknown[], timeoutMs: number): Promise<ReadOnlyResult> {
  const state = { broken: false };
  if (isPgClient(db)) return runPgClient(db, sql, params, timeoutMs, state);
  // Any other driver: plain statements and its own parsing; decodeValue normalises afterwards.
  return inTransaction(state, () => db.query('BEGIN READ ONLY'), () => db.query('ROLLBACK'), async () => {
    for (const s of settings(timeoutMs)) await db.query(s);
    const result = (await db.query(sql, [...params])) as { rows?: unknown } | undefined;
    return { rows: Array.isArray(result?.rows) ? (result.rows as Record<string, unknown>[]) : [] };
  });
}

async function runPgClient(
  client: PgClientLike, sql: string, params: readonly unknown[], timeoutMs: number, state: ConnectionState,
): Promise<ReadOnlyResult> {
  // A connection that dies mid-query also emits 'error' on the client; unheard, that event would
  // crash the process. The failed query reports the problem; the listener only marks the client.
  const onError = (): void => {
    state.broken = true;
  };
  client.on?.('error', onError);
  try {
    // One round trip for BEGIN and the settings: the simple protocol takes several statements.
    const begin = () => client.query({ text: ['BEGIN READ ONLY', ...settings(timeoutMs)].join('; ') });
    return await inTransaction(state, begin, () => client.query({ text: 'ROLLBACK' }), async () => {
      const result = await client.query({
        text: sql,
        values: [...params],
        types: pgTypes(client.getTypeParser?.bind(client)),
        queryMode: 'extended',
      });
      return { rows: result.rows as Record<string, unknown>[] };
    });
  } finally {
    client.removeListener?.('error', onError);
  }
}

/**
 * BEGIN, body, ROLLBACK. When BEGIN or ROLLBACK fails the connection is unusable (`state.broken`);
 * the body's own error, if any, is the one reported.
 */
async function inTransaction<T>(
  state: ConnectionState, begin: () => Promise<unknown>, end: () => Promise<unknown>, body: () => Promise<T>,
): Promise<T> {
  try {
    await begin();
  } catch (e) {
    state.broken = true;
    // A failed BEGIN may still have opened the transaction (settings run after it): try to close it.
    await end().catch(() => undefined);
    throw e;
  }
  let result: T | undefined;
  let failure: { error: unknown } | undefined;
  try {
    result = await body();
  } catch (e) {
    failure = { error: e };
  }
  try {
    await end();
  } catch (e) {
    state.broken = true;
    failure ??= { error: e };
  }
  if (failure) throw failure.error;
  return result as T;
}
