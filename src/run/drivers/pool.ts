import { pgTypes } from '../decode.js';
import { databaseError, timeoutError } from '../errors.js';
import { asDatabase, type Database, type ReadOptions, type Rows, type Statement, type Tx, type WriteOptions } from '../database.js';
import { TenantGate } from './gate.js';
import { assertSelect, readSettings, rowsOf, writeSettings } from './session.js';
import { ReadRoleChecks } from './read-role.js';
import { deallocateText, PreparedStatements, type Named } from './prepared.js';

/** What the driver needs of a node-postgres Pool (the library imports no driver). */
export interface PgPoolLike {
  connect(): Promise<PgClientLike>;
  query(text: string, params?: unknown[]): Promise<unknown>;
  end(): Promise<void>;
  /** node-postgres keeps the options and the Client class on the pool; cancels use them. */
  readonly options?: Record<string, unknown>;
  readonly Client?: new (options: Record<string, unknown>) => PgCancellerLike;
}

export interface PgClientLike {
  query(config: { text: string; values?: unknown[]; types?: unknown; queryMode?: 'extended' } | string, values?: unknown[]): Promise<{ rows: any[] }>;
  release(destroy?: boolean | Error): void;
  getTypeParser?: (oid: number, format?: string) => unknown;
  /**
   * node-postgres (8.23+) in pipeline mode: queries are written as they are made, without waiting
   * for the answers of the ones before, and answered in order.
   */
  readonly pipeline?: boolean;
  /** The transaction status of the last ReadyForQuery: 'I' idle, 'T' in a transaction, 'E' in a failed one. */
  getTransactionStatus?(): string | null;
  on?(event: 'error', listener: (err: Error) => void): unknown;
  removeListener?(event: 'error', listener: (err: Error) => void): unknown;
  readonly processID?: number;
  readonly secretKey?: number;
  readonly connection?: { stream?: { destroy(): void; cork?(): void; uncork?(): void }; parsedStatements?: Record<string, unknown> };
}

interface PgCancellerLike {
  readonly host: string;
  readonly port: number;
  readonly connection: {
    on(event: string, listener: (...args: unknown[]) => void): unknown;
    connect(portOrPath: number | string, host?: string): void;
    cancel(processID: number | undefined, secretKey: number | undefined): void;
  };
  connect?(): Promise<void>;
  query?(text: string): Promise<unknown>;
  end?(): Promise<void>;
  on?(event: 'error', listener: (err: Error) => void): unknown;
}

export interface PoolDatabaseOptions {
  /** Whether `close()` ends the pool. */
  readonly ownsPool: boolean;
  /** The pool's size, for the tenants' share. */
  readonly poolSize?: number;
  /** The share of the pool one tenant may hold at once (0 < share <= 1). Default 1: no limit. */
  readonly tenantShare?: number;
  /** How long a call may wait for its tenant's share before a 429. Default 10 s. */
  readonly maxTenantWaitMs?: number;
  /**
   * The pool connects as a read role whose defaults make every statement a bounded read
   * (./read-role.ts): each connection is checked once, and a read on one that carries them is its
   * statement alone, one round trip. Connections without them take the BEGIN/SET path.
   */
  readonly readRole?: boolean;
  /**
   * Named statements each connection keeps for reads (./prepared.ts). Default
   * DEFAULT_PREPARED_STATEMENTS; 0 sends every read unnamed.
   */
  readonly preparedStatements?: number;
}

/**
 * Named statements a connection keeps for reads, by default. With them a filter page costs
 * PostgreSQL a sixth less CPU and a read by id half (bench/RESULTS.md). The hostile neighbour was
 * measured with them before they became the default: a generic plan made no attack heavier within
 * its budget (bench:hostile, its heavier scenario: the other organization's p99 340 ms with them,
 * 423 ms without), and the suite's five runs in a row under load passed with them on
 * (docs/testing.md). Behind a pooler that cannot carry them they turn off by themselves at the
 * first read that meets it (./prepared.ts).
 */
export const DEFAULT_PREPARED_STATEMENTS = 100;

/**
 * Queries made by `send` on a pipelined connection, corked so that they go out in one write rather
 * than one each: a system call is a good part of a short statement's cost.
 */
function inOneWrite<T>(client: PgClientLike, send: () => T): T {
  const stream = client.connection?.stream;
  stream?.cork?.();
  try {
    return send();
  } finally {
    stream?.uncork?.();
  }
}

/**
 * A read in one round trip: its settings, the statement and ROLLBACK written at once on a
 * pipelined connection. The ROLLBACK runs whatever became of the others (in a failed transaction
 * too), so the connection is idle again at the end; if it is not, it is not given back to the pool.
 * The error reported is the first one: the settings', else the statement's.
 */
async function pipelinedRead(client: PgClientLike, state: { broken: boolean }, settings: string,
  statement: Parameters<PgClientLike['query']>[0]): Promise<Rows> {
  const [opened, read, ended] = await Promise.allSettled(inOneWrite(client, () => [client.query(settings), client.query(statement), client.query('ROLLBACK')]));
  if (ended.status === 'rejected' || (client.getTransactionStatus && client.getTransactionStatus() !== 'I')) state.broken = true;
  if (opened.status === 'rejected') throw opened.reason;
  if (read.status === 'rejected') throw read.reason;
  return { rows: read.value.rows as Record<string, unknown>[] };
}

/** After the statement's budget: a protocol cancel this much later, and the connection dropped later still. */
const CANCEL_AFTER_MS = 250;
const DROP_AFTER_MS = 750;

/**
 * A node-postgres Pool. Each read checks a connection out and runs BEGIN READ ONLY with its
 * settings (one simple-protocol text), the statement (extended protocol: exactly one statement),
 * and ROLLBACK. On a pool in pipeline mode, the three are written at once and the server answers
 * them in order: one round trip, on the error path too (a ROLLBACK ends a failed transaction as
 * well as a good one). Without pipeline mode, they wait on each other: three. On a pool of a read
 * role, or of sessions that start read-only (`openReadSessions`), whose defaults carry those
 * settings, the statement alone.
 *
 * A write opens its transaction with BEGIN and its settings in one text; in pipeline mode that
 * text goes out in the write of its first statements, so a write takes a round trip per statement
 * (statements that wait on no answer of each other, `Tx.queries`, one for all of them) and its
 * last statement goes out with the COMMIT (`commitWith`; with the statements before it that wait
 * on no answer, `commitAll`).
 *
 * The statement's budget holds even when the backend never looks at its cancel flag (a LIKE over
 * megabytes of text does not): statement_timeout first; a protocol cancel shortly after; then the
 * connection is dropped and destroyed, and the call answers 504 at most about a second after
 * its budget. The backend itself stops at its next interrupt check; its connection is gone from
 * the pool already.
 */
export function poolDatabase(pool: PgPoolLike, label: string, options: PoolDatabaseOptions): Database {
  const size = options.poolSize ?? 10;
  const share = options.tenantShare ?? 1;
  const gate = share >= 1 ? undefined : new TenantGate(Math.max(1, Math.floor(size * share)), options.maxTenantWaitMs ?? 10_000);
  let pinger: PgCancellerLike | undefined;
  const readRole = options.readRole ? new ReadRoleChecks() : undefined;
  const prepared = new PreparedStatements(options.preparedStatements ?? DEFAULT_PREPARED_STATEMENTS);

  /**
   * Runs `fn` on a pooled connection within the tenant's share. A read's budget counts from the
   * call, not from the moment it got a connection: waiting for the share takes at most half of it,
   * and `fn` is given what is left (at least a quarter), so the answer or the 504 comes within
   * about the budget of the request.
   */
  const withClient = async <T>(tenant: string | undefined, budgetMs: number | undefined,
    fn: (client: PgClientLike, state: { broken: boolean }, leftMs: number | undefined) => Promise<T>): Promise<T> => {
    const started = Date.now();
    const leave = gate ? await gate.enter(tenant, budgetMs === undefined ? undefined : budgetMs / 2) : () => {};
    try {
      let client: PgClientLike;
      try {
        client = await pool.connect();
      } catch (e) {
        throw databaseError(e, 0);
      }
      const state = { broken: false };
      // A connection that dies mid-query also emits 'error' on the client; unheard, that event would
      // crash the process. The failed query reports the problem; the listener only marks the client.
      const onError = (): void => {
        state.broken = true;
      };
      client.on?.('error', onError);
      // A wait under a second is not taken off: a connection is normally had at once, and the
      // statement then runs with the budget it was given, as its settings say.
      const waited = Date.now() - started;
      const leftMs = budgetMs === undefined || waited < 1000 ? budgetMs : Math.max(Math.round(budgetMs / 4), budgetMs - waited);
      try {
        return await fn(client, state, leftMs);
      } finally {
        client.removeListener?.('error', onError);
        // A connection that failed mid-transaction is destroyed rather than handed to the next caller.
        client.release(state.broken ? true : undefined);
      }
    } finally {
      leave();
    }
  };

  // The protocol's CancelRequest on a connection of its own, as node-postgres sends it, addressed
  // with the backend's key from the client's start-up.
  const cancel = (client: PgClientLike): void => {
    if (!pool.Client || !pool.options || client.processID === undefined) return;
    try {
      const canceller = new pool.Client(pool.options) as unknown as PgCancellerLike;
      const con = canceller.connection;
      con.on('error', () => {});
      con.on('connect', () => con.cancel(client.processID, client.secretKey));
      if (canceller.host.startsWith('/')) con.connect(`${canceller.host}/.s.PGSQL.${canceller.port}`);
      else con.connect(canceller.port, canceller.host);
    } catch {
      // The drop that follows ends it anyway.
    }
  };

  return asDatabase({
    kind: 'postgres' as const,
    label,
    readTrips: pool.options?.pipeline === true ? 1 : 3,
    async query<T>(sql: string, params: readonly unknown[] = []): Promise<Rows<T>> {
      try {
        return { rows: rowsOf(await pool.query(sql, [...params])) as T[] };
      } catch (e) {
        throw databaseError(e, 0);
      }
    },
    async read(sql: string, params: readonly unknown[], { timeoutMs, tenant, explain }: ReadOptions): Promise<Rows> {
      assertSelect(sql);
      return withClient(tenant, timeoutMs, async (client, state, leftMs) => {
        // The statement's own budget: what the wait for a connection left of the call's.
        const budget = leftMs ?? timeoutMs;
        let alone = false;
        if (readRole) {
          try {
            // The role's own timeout is the configured budget; a shorter one left after a wait is
            // enforced by the cancel and the drop below, so the read stays one statement.
            alone = await readRole.oneStatement(client, timeoutMs, (text) => client.query(text));
          } catch (e) {
            state.broken = true;
            throw databaseError(e, timeoutMs);
          }
        }
        let expired = false;
        const timers = [
          setTimeout(() => cancel(client), budget + CANCEL_AFTER_MS),
          setTimeout(() => {
            expired = true;
            state.broken = true;
            client.connection?.stream?.destroy();
          }, budget + DROP_AFTER_MS),
        ];
        const text = explain ? `EXPLAIN (FORMAT JSON) ${sql}` : sql;
        const attempt = async (named: Named | null): Promise<Rows> => {
          const statement = { text, values: [...params], types: pgTypes(client.getTypeParser?.bind(client)), queryMode: 'extended' as const, ...(named ? { name: named.name } : {}) };
          // Names this connection lets go of to keep its share: sent before the statement, in its write.
          const letGo = named && named.deallocate.length > 0 ? deallocateText(named.deallocate) : undefined;
          // Alone, the statement is its own read-only transaction with the role's timeout, zone and
          // date style; otherwise the transaction sets them, and ends in ROLLBACK, which also undoes
          // any session setting the statement changed (not a DEALLOCATE: that holds).
          if (alone) {
            if (letGo) await client.query(letGo);
            return { rows: (await client.query(statement)).rows as Record<string, unknown>[] };
          }
          const settings = letGo ? `${readSettings(budget)}; ${letGo}` : readSettings(budget);
          if (client.pipeline) return await pipelinedRead(client, state, settings, statement);
          await client.query(settings);
          const result = await client.query(statement);
          await client.query('ROLLBACK');
          return { rows: result.rows as Record<string, unknown>[] };
        };
        try {
          try {
            return await attempt(explain ? null : prepared.name(client, text, tenant));
          } catch (e) {
            // A name missing or taken on the server: connections are shared below this pool. Read again unnamed.
            if (!expired && prepared.lost(e)) return await attempt(null);
            throw e;
          }
        } catch (e) {
          if (expired) throw timeoutError(timeoutMs, e);
          if (!alone && !client.pipeline) {
            await client.query('ROLLBACK').catch(() => {
              state.broken = true;
            });
          }
          throw databaseError(e, timeoutMs);
        } finally {
          for (const t of timers) clearTimeout(t);
        }
      });
    },
    async transaction<T>(fn: (tx: Tx) => Promise<T>, options: WriteOptions = {}): Promise<T> {
      return withClient(options.tenant, undefined, async (client, state) => {
        const settings = writeSettings(options.timeoutMs);
        const openingText = settings ? `BEGIN; ${settings}` : 'BEGIN';
        // In pipeline mode the opening is not waited for: it goes out in the write of the first
        // statements, which fail if the opening did (and the opening's error is the one reported).
        let opening: Promise<unknown> | undefined;
        let begun = false;
        if (!client.pipeline) {
          await client.query(openingText);
          begun = true;
        }
        /** Sends what `queue` queries in one write, after the opening when it has not gone yet. */
        const send = <R>(queue: () => R): R => inOneWrite(client, () => {
          if (!begun) {
            begun = true;
            opening = client.query(openingText);
            opening.catch(() => {});
          }
          return queue();
        });
        const opened = async <R>(pending: Promise<R>): Promise<R> => {
          if (!opening) return pending;
          const [open, done] = await Promise.allSettled([opening, pending]);
          opening = undefined;
          if (open.status === 'rejected') throw open.reason;
          if (done.status === 'rejected') throw done.reason;
          return done.value;
        };
        let committed = false;
        const statement = (s: Statement) => client.query(s.sql, [...s.params]);
        /**
         * The answers of statements written at once, the first error thrown. With `ends`, the last
         * of them is the COMMIT and the transaction is over whatever became of the others (after a
         * failed statement the COMMIT answers ROLLBACK); its own answer is left out.
         */
        const answers = async (sent: Promise<{ rows: unknown[] }>[], ends: boolean): Promise<Rows[]> => {
          let settled: PromiseSettledResult<{ rows: unknown[] }>[];
          try {
            settled = await opened(Promise.allSettled(sent));
          } finally {
            if (ends) committed = true;
          }
          const failed = settled.find((r) => r.status === 'rejected');
          if (failed) throw failed.reason;
          const rows = settled.map((r) => ({ rows: (r as PromiseFulfilledResult<{ rows: Record<string, unknown>[] }>).value.rows }));
          return ends ? rows.slice(0, -1) : rows;
        };
        const commitAll = (statements: readonly Statement[]) => answers(send(() => [...statements.map(statement), client.query('COMMIT')]), true);
        const tx: Tx = {
          query: async <R>(sql: string, params: readonly unknown[] = []) => ({ rows: (await opened(send(() => client.query(sql, [...params])))).rows as R[] }),
          // Only a pipelined connection sends several statements without waiting: otherwise none, and callers send them one by one.
          ...(client.pipeline ? { queries: (statements: readonly Statement[]) => answers(send(() => statements.map(statement)), false), commitAll } : {}),
          commitWith: async <R>(sql: string, params: readonly unknown[] = []) => {
            if (client.pipeline) return (await commitAll([{ sql, params }]))[0] as Rows<R>;
            const last = await opened(client.query(sql, [...params]));
            await client.query('COMMIT');
            committed = true;
            return { rows: last.rows as R[] };
          },
        };
        let result: T;
        try {
          result = await fn(tx);
          // A transaction that sent nothing was never opened: there is nothing to end.
          if (!committed && begun) {
            await opened(Promise.resolve({ rows: [] }));
            await client.query('COMMIT');
          }
        } catch (e) {
          // The transaction is over already when commitWith ran, or was never opened: nothing to roll back.
          if (committed || !begun) throw e;
          await client.query('ROLLBACK').catch(() => {
            state.broken = true;
          });
          throw e;
        }
        return result;
      });
    },
    async ping(timeoutMs: number): Promise<boolean> {
      // Its own connection, outside the pool: /health answers while every pooled one is busy.
      const { Client, options: connectOptions } = pool;
      if (!Client || !connectOptions) return pool.query('SELECT 1').then(() => true, () => false);
      let timer: NodeJS.Timeout | undefined;
      const attempt = (async () => {
        if (!pinger) {
          // No statement_timeout startup parameter: PgBouncer refuses unknown ones, and the race
          // below bounds the wait anyway.
          const c = new Client({ ...connectOptions });
          c.on?.('error', () => {
            if (pinger === c) pinger = undefined;
          });
          await c.connect?.();
          pinger = c;
        }
        await pinger.query?.('SELECT 1');
        return true;
      })();
      const late = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      try {
        return await Promise.race([attempt, late]);
      } catch {
        const broken = pinger;
        pinger = undefined;
        await broken?.end?.().catch(() => {});
        return false;
      } finally {
        clearTimeout(timer);
      }
    },
    async close(): Promise<void> {
      const p = pinger;
      pinger = undefined;
      await p?.end?.().catch(() => {});
      if (options.ownsPool) await pool.end();
    },
  });
}
