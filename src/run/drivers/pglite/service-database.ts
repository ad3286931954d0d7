import { asDatabase, type Database, type ReadOptions, type Rows, type Tx, type WriteOptions } from '../../database.js';
import { databaseError } from '../../errors.js';
import type { EmbeddedDatabase } from './supervisor.js';
import { assertSelect, readSettings } from '../session.js';

/**
 * The service's embedded database behind the one database interface: EmbeddedDatabase (PGlite in
 * a process of its own, ./supervisor.ts) as a `Database`. What differs from PGlite on the
 * caller's thread (./in-thread.ts) is only what the process makes possible: every statement ends at its
 * budget, and each call takes its tenant's turn in the queue in front of the one connection.
 *
 *   const db = workerDatabase(await EmbeddedDatabase.open({ dataDir, sessionSql: EMBEDDED_SESSION_SQL }));
 */

/** Session settings every process of the service's database runs at its start: its writes and reads (SERVICE_READ_SETTINGS) rely on them. */
export const EMBEDDED_SESSION_SQL = "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'";

/**
 * A read's settings where every process of the database runs EMBEDDED_SESSION_SQL: its session
 * already holds the zone and the date style, and statement_timeout would do nothing (a statement
 * runs on the process's only thread, which no timer interrupts; the process's deadline is the
 * budget). Only READ ONLY is left: one statement where the full settings are four (on a read by
 * id, 630 against 665 us of the process's CPU).
 */
const SERVICE_READ_SETTINGS = 'SET TRANSACTION READ ONLY';

export function workerDatabase(db: EmbeddedDatabase): Database {
  return asDatabase({
    kind: 'pglite' as const,
    label: db.label,
    async query<T>(sql: string, params: readonly unknown[] = []): Promise<Rows<T>> {
      try {
        return await db.query<T>(sql, params);
      } catch (e) {
        throw databaseError(e, 0);
      }
    },
    async read(sql: string, params: readonly unknown[], { timeoutMs, tenant, explain }: ReadOptions): Promise<Rows> {
      assertSelect(sql);
      try {
        // One message to the process: BEGIN, the settings, the query and ROLLBACK run there in
        // sequence, the query as the organization's named statement of its text (an EXPLAIN, run
        // once a minute at most per text, unnamed).
        const settings = db.sessionSql === EMBEDDED_SESSION_SQL ? SERVICE_READ_SETTINGS : readSettings(timeoutMs).replace(/^BEGIN READ ONLY/, 'SET TRANSACTION READ ONLY');
        const { rows } = await db.read(settings, explain ? `EXPLAIN (FORMAT JSON) ${sql}` : sql, params, { tenant, timeoutMs, named: explain !== true });
        return { rows };
      } catch (e) {
        throw databaseError(e, timeoutMs);
      }
    },
    transaction<T>(fn: (tx: Tx) => Promise<T>, options: WriteOptions = {}): Promise<T> {
      return db.transaction((tx) => fn({ query: (sql, params = []) => tx.query(sql, params), commitWith: (sql, params = []) => tx.commitWith(sql, params) }),
        { tenant: options.tenant, timeoutMs: options.timeoutMs });
    },
    /**
     * Calls are served: the process is up, or being replaced while the calls waiting for it are
     * still within their wait (a timeout's restart does not make the service unavailable, only a
     * replacement that takes longer than callers wait). Nothing is queued behind tenants' calls to learn it.
     */
    async ping(): Promise<boolean> {
      return db.serving();
    },
    close: () => db.close(),
  });
}
