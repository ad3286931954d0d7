import { TEXT_PARSERS } from '../../decode.js';
import { databaseError } from '../../errors.js';
import { asDatabase, type Database, type ReadOptions, type Rows, type Tx } from '../../database.js';
import { assertSelect, readSettings } from '../session.js';

/** What the driver needs of an in-thread PGlite instance. */
export interface PgliteLike {
  query<T>(sql: string, params?: unknown[], options?: { parsers?: Record<number, (text: string) => unknown> }): Promise<{ rows: T[] }>;
  exec(sql: string): Promise<unknown>;
  transaction<T>(fn: (tx: PgliteTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

interface PgliteTx {
  query<T>(sql: string, params?: unknown[], options?: { parsers?: Record<number, (text: string) => unknown> }): Promise<{ rows: T[] }>;
  exec(sql: string): Promise<unknown>;
  rollback(): Promise<void>;
}

/**
 * A PGlite instance on the caller's thread (a library user's). Its Postgres runs on the JS thread,
 * so no timer fires while a statement runs: statement_timeout is set but cannot end a runaway
 * statement. The service runs PGlite in a process of its own instead (./supervisor.ts), which can.
 */
export function pgliteDatabase(db: PgliteLike, label: string, close: () => Promise<void> = async () => {}): Database {
  return asDatabase({
    kind: 'pglite' as const,
    label,
    async query<T>(sql: string, params: readonly unknown[] = []): Promise<Rows<T>> {
      try {
        return await db.query<T>(sql, [...params]);
      } catch (e) {
        throw databaseError(e, 0);
      }
    },
    async read(sql: string, params: readonly unknown[], { timeoutMs, explain }: ReadOptions): Promise<Rows> {
      assertSelect(sql);
      try {
        // transaction() holds PGlite's lock from BEGIN to the end: calls on one instance queue.
        return await db.transaction(async (tx) => {
          // PGlite's transaction() has sent BEGIN; the settings follow it (READ ONLY as its own statement).
          await tx.exec(readSettings(timeoutMs).replace(/^BEGIN READ ONLY/, 'SET TRANSACTION READ ONLY'));
          const result = await tx.query<Record<string, unknown>>(explain ? `EXPLAIN (FORMAT JSON) ${sql}` : sql, [...params], { parsers: { ...TEXT_PARSERS } });
          await tx.rollback();
          return { rows: result.rows };
        });
      } catch (e) {
        throw databaseError(e, timeoutMs);
      }
    },
    transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
      return db.transaction((tx) => fn({ query: async <R>(sql: string, params: readonly unknown[] = []) => tx.query<R>(sql, [...params]) }));
    },
    async ping(): Promise<boolean> {
      return db.query('SELECT 1').then(() => true, () => false);
    },
    close,
  });
}
