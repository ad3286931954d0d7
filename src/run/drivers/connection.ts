import { pgTypes } from '../decode.js';
import { databaseError } from '../errors.js';
import { asDatabase, type Database, type Queryable, type ReadOptions, type Rows, type Tx } from '../database.js';
import { assertSelect, readSettings, readStatements, rowsOf } from './session.js';

// Calls on one connection must not interleave their BEGIN ... ROLLBACK: reads and writes share
// this one queue per connection.
const queues = new WeakMap<object, Promise<unknown>>();

function serialised<T>(db: object, fn: () => Promise<T>): Promise<T> {
  const previous = queues.get(db) ?? Promise.resolve();
  const next = previous.then(fn, fn);
  queues.set(db, next.catch(() => undefined));
  return next;
}

interface PgClientLike {
  query(config: { text: string; values?: unknown[]; types?: unknown; queryMode?: 'extended' }): Promise<{ rows: any[] }>;
  getTypeParser(oid: number, format?: string): unknown;
  setTypeParser(...args: unknown[]): unknown;
}

/** node-postgres Client or PoolClient: `query` takes a config object with per-query parsers. */
function isPgClient(db: object): db is PgClientLike & Queryable {
  const d = db as { getTypeParser?: unknown; setTypeParser?: unknown };
  return typeof d.getTypeParser === 'function' && typeof d.setTypeParser === 'function';
}

/**
 * One connection a caller owns (a pg Client, or any driver with `query`): calls are serialised.
 * The statement's budget is statement_timeout alone; the caller owns the connection, so it is
 * not dropped here.
 */
export function connectionDatabase(conn: Queryable): Database {
  const run = async (sql: string, params: readonly unknown[]): Promise<Record<string, unknown>[]> => rowsOf(await conn.query(sql, [...params]));
  const statement = async (sql: string, params: readonly unknown[]): Promise<Record<string, unknown>[]> => {
    if (!isPgClient(conn)) return run(sql, params);
    return (await conn.query({ text: sql, values: [...params], types: pgTypes(conn.getTypeParser.bind(conn)), queryMode: 'extended' })).rows;
  };
  return asDatabase({
    kind: 'connection' as const,
    label: 'a database connection',
    query: <T>(sql: string, params: readonly unknown[] = []) =>
      serialised(conn, async () => {
        try {
          return { rows: (await run(sql, params)) as T[] };
        } catch (e) {
          throw databaseError(e, 0);
        }
      }),
    read: (sql: string, params: readonly unknown[], { timeoutMs, explain }: ReadOptions): Promise<Rows> =>
      serialised(conn, async () => {
        assertSelect(sql);
        try {
          if (isPgClient(conn)) await run(readSettings(timeoutMs), []);
          else for (const s of readStatements(timeoutMs)) await run(s, []);
        } catch (e) {
          await run('ROLLBACK', []).catch(() => undefined);
          throw databaseError(e, timeoutMs);
        }
        try {
          return { rows: await statement(explain ? `EXPLAIN (FORMAT JSON) ${sql}` : sql, params) };
        } catch (e) {
          throw databaseError(e, timeoutMs);
        } finally {
          await run('ROLLBACK', []).catch(() => undefined);
        }
      }),
    transaction: <T>(fn: (tx: Tx) => Promise<T>): Promise<T> =>
      serialised(conn, async () => {
        const tx: Tx = { query: async <R>(sql: string, params: readonly unknown[] = []) => ({ rows: (await run(sql, params)) as R[] }) };
        await run('BEGIN', []);
        try {
          const result = await fn(tx);
          await run('COMMIT', []);
          return result;
        } catch (e) {
          await run('ROLLBACK', []).catch(() => undefined);
          throw e;
        }
      }),
    ping: (timeoutMs: number) => Promise.race([run('SELECT 1', []).then(() => true, () => false), new Promise<boolean>((r) => setTimeout(() => r(false), timeoutMs).unref?.())]),
    close: async () => {},
  });
}
