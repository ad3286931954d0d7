import type { Catalog } from '../../catalog/types.js';
import { purgeDeleted } from '../../records/lifecycle.js';
import type { Database } from '../../run/database.js';
import type { ChangeLog } from './log.js';

const DAY_MS = 86_400_000;

export interface MaintenanceResult {
  /** Deleted records removed for good. */
  readonly purged: number;
  /** Changes removed past their retention. */
  readonly pruned: number;
}

/**
 * The log's and the lifecycle's background work: records deleted longer ago than the purge age
 * are purged (each a `purged` change), and changes older than the retention are pruned, both in
 * small transactions that never hold a lock long. Every instance of a fleet runs it; their
 * rounds skip the rows another holds, so running twice removes nothing twice.
 */
export class Maintenance {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<MaintenanceResult> | undefined;

  constructor(
    private readonly db: Database,
    private readonly catalog: Catalog,
    private readonly log: ChangeLog,
    private readonly settings: { purgeAfterDays: number; changesRetentionDays: number },
  ) {}

  /** One round now (`now` for tests that move the clock); a round already running is joined. */
  run(now = Date.now()): Promise<MaintenanceResult> {
    this.running ??= (async () => {
      try {
        const purged = this.catalog.mapping.softDeleteColumn === null ? 0 : await purgeDeleted(this.db, this.catalog, {
          deletedBefore: now - this.settings.purgeAfterDays * DAY_MS,
          changes: this.log.sink({ user_id: null, surface: 'system' }),
        });
        const pruned = await this.log.prune(now - this.settings.changesRetentionDays * DAY_MS);
        return { purged, pruned };
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** Runs a round every `everyMs`, the first after one interval; a failed round waits for the next. */
  start(everyMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.run().catch(() => {}), everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }
}
