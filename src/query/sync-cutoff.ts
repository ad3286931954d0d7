import { clockCutoff } from '../filter/sync-cutoff.js';
import type { Database } from '../run/database.js';
import { runReadOnly, type Queryable } from '../run/transaction.js';

/**
 * The database's clock, and the start of the oldest transaction of this database that holds a
 * transaction id (has written, or is about to), both in epoch ms. A transaction that writes only
 * after this statement took its snapshot of the backends gets its id, and so reads its write
 * clock, later: its stamps are not older than `now_ms`. The reader's own backend, read-only,
 * never counts. Nothing here is session state, so it holds behind PgBouncer's transaction mode.
 */
const ACTIVITY_SQL = `SELECT floor(extract(epoch FROM now()) * 1000)::bigint AS now_ms,
  (SELECT floor(extract(epoch FROM min(a.xact_start)) * 1000)::bigint
     FROM pg_catalog.pg_stat_activity a
    WHERE a.backend_xid IS NOT NULL AND a.pid <> pg_backend_pid() AND a.datname = current_database()) AS oldest_writer_ms`;

export interface CutoffInput {
  /** Records stamped within this many ms of now wait for the next sync. */
  readonly lag: number;
  /** The caller's `now` (epoch ms) when one was given; otherwise the database's clock is used. */
  readonly now: number | null;
}

/**
 * The last sync timestamp (inclusive) the first page of a sync may deliver: before
 * `now − lag`, and before the start of the oldest write transaction still open.
 *
 * Why that is enough (docs/connector.md): the record functions stamp `updated_at` with the
 * database's clock after their transaction takes an id (records/write.ts, `databaseClock`). A
 * row the page cannot see is either (a) written by a transaction that held an id when
 * ACTIVITY_SQL read the backends — stamped at or after that transaction's start, so after the cutoff — or (b) by
 * one that took its id later — stamped after this read's `now()`, so after the cutoff too. Every
 * other writer has committed before the page's own statement takes its snapshot (it runs after
 * this one), so the page sees its rows. Rows at or before the cutoff are therefore final when a
 * page is read, and a cursor past them skips nothing.
 */
export async function syncCutoff(db: Queryable | Database, input: CutoffInput, options: { timeoutMs: number; tenant?: string }): Promise<number> {
  const { rows } = await runReadOnly(db, ACTIVITY_SQL, [], options);
  const row = rows[0] ?? {};
  const byClock = clockCutoff(input.now ?? Number(row.now_ms), input.lag);
  const oldest = row.oldest_writer_ms === null || row.oldest_writer_ms === undefined ? Infinity : Number(row.oldest_writer_ms);
  return Math.min(byClock, oldest - 1);
}

