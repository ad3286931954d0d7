/**
 * Concurrency leases: how many requests one principal has running, agreed on by every instance
 * that serves it. A lease is taken before a request reaches the database and given back when it
 * ends; one held by an instance that died expires by itself after `ttlMs` (holders renew it while
 * they run), so a killed instance never keeps a principal's budget.
 *
 * Two stores: in this process (one instance, or embedded PGlite, which is one process's database
 * anyway) and in PostgreSQL (a fleet of instances on one database).
 */
export interface Lease {
  /** Gives the slot back; calling it again does nothing. */
  release(): Promise<void>;
}

export interface LeaseStore {
  /** One of `max` slots of `key` for at most `ttlMs` unless renewed, or null when all are held. */
  acquire(key: string, max: number, ttlMs: number): Promise<Lease | null>;
  /** Slots of `key` held now (for tests and logs). */
  held(key: string): Promise<number>;
  close(): Promise<void>;
}

/** Leases of one process: a count per key. Nothing to expire: the process that holds them is this one. */
export class MemoryLeaseStore implements LeaseStore {
  private readonly counts = new Map<string, number>();

  async acquire(key: string, max: number): Promise<Lease | null> {
    const n = this.counts.get(key) ?? 0;
    if (n >= max) return null;
    this.counts.set(key, n + 1);
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        const left = (this.counts.get(key) ?? 1) - 1;
        if (left <= 0) this.counts.delete(key);
        else this.counts.set(key, left);
      },
    };
  }

  async held(key: string): Promise<number> {
    return this.counts.get(key) ?? 0;
  }

  async close(): Promise<void> {}
}
