import type { ChangeLog } from './log.js';

/**
 * Wakes the readers waiting for an organization's next change, holding no database connection
 * while they wait: one watcher per instance fans a commit out to its waiters in memory.
 *
 * A write through this instance wakes them at once (`committed`). A write through another instance
 * of a fleet is seen by polling the log's head, every `pollMs` and only while someone waits: a
 * plain SELECT, which passes through PgBouncer in transaction mode where LISTEN/NOTIFY does not. On
 * the embedded database no other process can write, so it never polls.
 */
export class ChangeWatcher {
  private readonly waiters = new Map<string, Map<(head?: bigint) => void, bigint>>();
  /** Commits through this instance, per organization: a reader's wait ends at once when one came after its page. */
  private readonly commits = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private closed = false;

  constructor(private readonly log: ChangeLog, private readonly pollMs: number | null) {}

  /** How many readers wait now, for the limits and for the bench. */
  get waiting(): number {
    let n = 0;
    for (const set of this.waiters.values()) n += set.size;
    return n;
  }

  /**
   * The organization's count of commits through this instance. A reader takes it before it reads a
   * page and passes it to `wait`: a commit between the page's read and the wait then ends the wait
   * at once, where waking only the readers already waiting would miss it (on the embedded database,
   * which is never polled, until the wait ran out).
   */
  seen(orgId: string): number {
    return this.commits.get(orgId) ?? 0;
  }

  /**
   * Resolves once the organization has a change after position `after` (at once for a commit through
   * this instance, within `pollMs` for one through another), after `ms`, or when `signal` aborts,
   * whichever is first; at once when this instance has committed for it since `seen` was taken.
   * Woken by the head poll, it resolves with the head seen: every change of the organization up to
   * it has committed (positions are taken in commit order), so a reader whose page after that
   * finds none of its objects' changes waits from the head on, rather than being woken by the same
   * head at every poll.
   */
  wait(orgId: string, after: bigint, ms: number, signal?: AbortSignal, seen?: number): Promise<bigint | undefined> {
    return new Promise((resolve) => {
      if (this.closed || signal?.aborted || (seen !== undefined && this.seen(orgId) !== seen)) return resolve(undefined);
      let set = this.waiters.get(orgId);
      if (!set) this.waiters.set(orgId, (set = new Map()));
      const done = (head?: bigint) => {
        clearTimeout(timeout);
        signal?.removeEventListener('abort', aborted);
        const s = this.waiters.get(orgId);
        s?.delete(done);
        if (s?.size === 0) this.waiters.delete(orgId);
        resolve(head);
      };
      const aborted = () => done();
      const timeout = setTimeout(aborted, ms);
      signal?.addEventListener('abort', aborted, { once: true });
      set.set(done, after);
      this.schedule();
    });
  }

  /** Closed: every wait ends at once, and readers stop waiting (the service is stopping). */
  get stopped(): boolean {
    return this.closed;
  }

  /** A write of the organization committed through this instance. */
  committed(orgId: string): void {
    this.commits.set(orgId, this.seen(orgId) + 1);
    const set = this.waiters.get(orgId);
    if (set) for (const wake of [...set.keys()]) wake();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    for (const set of [...this.waiters.values()]) for (const wake of [...set.keys()]) wake();
  }

  private schedule(): void {
    if (this.pollMs === null || this.timer !== undefined || this.closed || this.waiters.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.poll().finally(() => this.schedule());
    }, this.pollMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    if (this.polling || this.closed) return;
    this.polling = true;
    try {
      const heads = await this.log.heads([...this.waiters.keys()]);
      for (const [org, head] of heads) {
        const set = this.waiters.get(org);
        if (set) for (const [wake, after] of [...set]) if (head > after) wake(head);
      }
    } catch {
      // The database is away for a moment: the waiters time out and read again by themselves.
    } finally {
      this.polling = false;
    }
  }
}
