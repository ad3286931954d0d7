import { quoteQualified } from '../catalog/quote.js';
import type { Database } from '../run/database.js';

/**
 * Planner statistics for the embedded database. On PostgreSQL, autovacuum analyzes a table once
 * enough of it changed; PGlite runs no autovacuum and counts no changed rows, so its tables would
 * keep the planner's default guesses for as long as the data directory lives, and a join or a
 * correlated subquery can then be planned a hundred times slower than it runs with statistics
 * (a NOT EXISTS over a to-many chain of the helpdesk example: 11 s unanalyzed, 11 ms analyzed).
 *
 * The service does that bookkeeping itself, by size: a table of the given schemas that was never
 * analyzed and holds rows, or whose file grew or shrank by a tenth (and a page) since its last
 * ANALYZE, is analyzed. It looks when it opens (after any demo data is in), shortly after record
 * writes (`poke`), and every few minutes (`start`); one table at a time, each ANALYZE reading a
 * bounded sample.
 */

/** How long after a write the tables are looked at, so a burst of writes costs one look. */
const AFTER_WRITES_MS = 2_000;

interface TableSize {
  readonly schema: string;
  readonly name: string;
  readonly relpages: number;
  readonly reltuples: number;
  readonly pages: number;
}

export class TableStatistics {
  private timer: NodeJS.Timeout | undefined;
  private interval: NodeJS.Timeout | undefined;
  private running: Promise<string[]> | undefined;
  private stopped = false;

  constructor(private readonly db: Database, private readonly schemas: readonly string[], private readonly afterWritesMs = AFTER_WRITES_MS) {}

  /** The tables due an ANALYZE now. */
  async due(): Promise<TableSize[]> {
    const { rows } = await this.db.query<{ schema: string; name: string; relpages: number; reltuples: number; pages: string | number }>(
      `SELECT n.nspname AS schema, c.relname AS name, c.relpages, c.reltuples,
              pg_relation_size(c.oid) / current_setting('block_size')::int AS pages
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind = 'r' AND n.nspname = ANY($1::text[])
        ORDER BY n.nspname, c.relname`,
      [this.schemas],
    );
    return rows
      .map((r) => ({ schema: r.schema, name: r.name, relpages: Number(r.relpages), reltuples: Number(r.reltuples), pages: Number(r.pages) }))
      .filter((t) => (t.reltuples < 0 ? t.pages > 0 : Math.abs(t.pages - t.relpages) >= Math.max(1, t.relpages / 10)));
  }

  /** Analyzes every table that is due, one at a time; answers their names. A check already running is joined. */
  check(): Promise<string[]> {
    this.running ??= (async () => {
      try {
        const analyzed: string[] = [];
        for (const t of await this.due()) {
          if (this.stopped) break;
          await this.db.query(`ANALYZE ${quoteQualified(t.schema, t.name)}`);
          analyzed.push(`${t.schema}.${t.name}`);
        }
        return analyzed;
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** Looks every `everyMs` as well, for tables that grow without a record write (tool-log entries, changes). */
  start(everyMs: number): void {
    if (this.interval !== undefined) return;
    this.interval = setInterval(() => void this.check().catch(() => {}), everyMs);
    this.interval.unref();
  }

  /** Rows were written: look at the tables a moment later (a failed look waits for the next). */
  poke(): void {
    if (this.stopped || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.check().catch(() => {});
    }, this.afterWritesMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.interval);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }
}
