import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Database } from '../../run/database.js';
import type { Lease, LeaseStore } from './leases.js';
import { SERVICE_SCHEMA } from '../migrations.js';
import { storedKey } from './stored-key.js';

const S = SERVICE_SCHEMA;

/** How often held leases are renewed, at most; a lease is renewed at least three times per TTL. */
export const DEFAULT_RENEW_EVERY_MS = 2_000;
/** Dead rows of keys nobody asks for again are swept this often. */
const SWEEP_EVERY_MS = 60_000;
/** Released leases not carried by an acquire within this long are deleted on their own. */
const RELEASE_WITHIN_MS = 20;

export interface PostgresLeaseStoreOptions {
  /** Renewal period ceiling. Default 2 s. */
  readonly renewEveryMs?: number | undefined;
  /** Told when a renewal finds a lease gone (it expired before it could be renewed: the event loop stalled past its TTL). */
  readonly onLost?: ((key: string) => void) | undefined;
  /** Told when a renewal or a release cannot reach the database; the leases then expire by themselves. */
  readonly onError?: ((error: unknown) => void) | undefined;
}

interface Held {
  readonly key: string;
  readonly ttlMs: number;
}

/** A released lease whose row is still there, and who waits for it to go. */
interface Released extends Held {
  /** When it was released (Date.now()). */
  readonly at: number;
  readonly waiters: Array<() => void>;
}

/**
 * Concurrency leases in PostgreSQL, shared by every instance on one database (oql_service.leases,
 * migration 5).
 *
 * - `acquire` is one statement, `oql_service.acquire_lease`, atomic across instances: callers of
 *   one key queue on a transaction-scoped advisory lock, drop that key's expired leases, count,
 *   and insert. Nothing outlives the statement's own transaction, so it is safe behind PgBouncer in
 *   transaction mode (no session advisory lock, no session setting).
 * - Leases held by this instance are renewed together, one UPDATE per period (a third of the
 *   shortest TTL held, at most `renewEveryMs`): a lease lives as long as its request, however long,
 *   and one whose instance died expires within its TTL of the last renewal.
 * - `release` deletes the row: the next `acquire` of this instance carries it (the function deletes
 *   it before it counts, in the same round trip), or, when none comes within a few milliseconds, one
 *   DELETE for everything released meanwhile. It resolves once the row is gone (or another request
 *   of this instance took it over, below), so a caller need not wait for it before answering its
 *   request. `close` deletes every lease this instance holds.
 * - An `acquire` of a key that this instance released a lease of moments ago, whose row is still
 *   there, takes that row over without a statement: the slot was counted, stays counted and is
 *   held again, so the budget is the same on every instance. A principal whose requests follow
 *   each other, as a client's do on a keep-alive connection, pays the lease's round trip once.
 *
 * Expiry is the database's clock, so instances whose clocks differ agree.
 */
export class PostgresLeaseStore implements LeaseStore {
  /** This process's name in the leases table: host, pid and a random part (pids repeat across restarts). */
  readonly holder = `${hostname().slice(0, 64)}:${process.pid}:${randomBytes(6).toString('base64url')}`;
  private readonly mine = new Map<string, Held>();
  private dueAt = Infinity;
  private timer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;
  private sweptAt = Date.now();
  private closed = false;
  /** Released leases whose rows are still there and that no statement is deleting yet: an acquire of their key may take them over. */
  private readonly releasing = new Map<string, Released>();
  /** Released leases a statement in flight is deleting, and who waits for them to go. */
  private readonly deleting = new Map<string, Array<() => void>>();
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly renewEveryMs: number;

  constructor(private readonly db: Database, private readonly options: PostgresLeaseStoreOptions = {}) {
    this.renewEveryMs = options.renewEveryMs ?? DEFAULT_RENEW_EVERY_MS;
  }

  async acquire(key: string, max: number, ttlMs: number): Promise<Lease | null> {
    if (this.closed) throw new Error('the lease store is closed');
    if (!Number.isSafeInteger(max) || max < 0) throw new RangeError(`max must be a whole number of at least 0, not ${String(max)}`);
    if (!Number.isSafeInteger(ttlMs) || ttlMs < 100 || ttlMs > 2_147_483_647) throw new RangeError(`ttlMs must be whole milliseconds from 100, not ${String(ttlMs)}`);
    const again = this.takeOver(key);
    if (again) return again;
    // Every released lease whose row may still be there, those a DELETE in flight is deleting as
    // well: this statement deletes them before it counts, so none of them is counted against the key.
    this.claim();
    const carried = [...this.deleting.keys()];
    let rows: { id: string | number | null }[];
    try {
      ({ rows } = await this.db.query<{ id: string | number | null }>(
        `SELECT ${S}.acquire_lease($1, $2, $3, $4, $5::bigint[]) AS id`, [storedKey(key), max, ttlMs, this.holder, carried]));
    } catch (e) {
      this.unclaim(carried);
      throw e;
    }
    this.released(carried);
    const id = rows[0]?.id;
    if (id === null || id === undefined) return null;
    return this.hold(String(id), key, ttlMs);
  }

  /** A lease of this instance, held from now until released. */
  private hold(leaseId: string, key: string, ttlMs: number): Lease {
    this.mine.set(leaseId, { key, ttlMs });
    this.schedule();
    let released: Promise<void> | undefined;
    return {
      release: () => (released ??= new Promise<void>((resolve) => {
        this.mine.delete(leaseId);
        this.releasing.set(leaseId, { key, ttlMs, at: Date.now(), waiters: [resolve] });
        this.flushSoon();
      })),
    };
  }

  /**
   * A lease of `key` this instance released moments ago, taken over while its row is still there:
   * released within a third of its TTL, so that row has not expired (it was renewed at most a
   * third of the TTL before its release) and every instance still counts it.
   */
  private takeOver(key: string): Lease | null {
    const now = Date.now();
    for (const [id, r] of this.releasing) {
      if (r.key !== key || now - r.at >= r.ttlMs / 3) continue;
      this.releasing.delete(id);
      for (const resolve of r.waiters) resolve();
      return this.hold(id, key, r.ttlMs);
    }
    return null;
  }

  /** The released leases a statement is about to delete: no acquire may take them over from now on. */
  private claim(): string[] {
    const ids = [...this.releasing.keys()];
    for (const id of ids) {
      this.deleting.set(id, this.releasing.get(id)!.waiters);
      this.releasing.delete(id);
    }
    return ids;
  }

  /** The statement that was to delete these failed: the next acquire or flush deletes them. */
  private unclaim(ids: readonly string[]): void {
    for (const id of ids) {
      const waiters = this.deleting.get(id);
      if (!waiters) continue;
      this.deleting.delete(id);
      // Released at time 0: too long ago to be taken over.
      this.releasing.set(id, { key: '', ttlMs: 0, at: 0, waiters });
    }
    this.flushSoon();
  }

  /** The rows of these released leases are gone: their waiters may go on. */
  private released(ids: readonly string[]): void {
    for (const id of ids) {
      for (const resolve of this.deleting.get(id) ?? []) resolve();
      this.deleting.delete(id);
    }
  }

  private flushSoon(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flush();
    }, RELEASE_WITHIN_MS);
    this.flushTimer.unref();
  }

  /** Deletes every released lease still there, in one statement. */
  private async flush(): Promise<void> {
    const ids = this.claim();
    if (ids.length === 0) return;
    try {
      await this.db.query(`DELETE FROM ${S}.leases WHERE id = ANY($1::bigint[]) AND holder = $2`, [ids, this.holder]);
    } catch (e) {
      // Not renewed any more: they expire within their TTL.
      this.options.onError?.(e);
    }
    this.released(ids);
  }

  async held(key: string): Promise<number> {
    const { rows } = await this.db.query<{ n: number | string }>(
      `SELECT count(*)::int AS n FROM ${S}.leases WHERE key = $1 AND expires_at > clock_timestamp()`, [storedKey(key)]);
    return Number(rows[0]?.n ?? 0);
  }

  /** Leases this instance holds now (for logs and tests). */
  get holding(): number {
    return this.mine.size;
  }

  /** Renews every lease held now, at once (the timer calls it; tests may too). */
  renew(): Promise<void> {
    this.renewing ??= this.renewOnce().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.flushTimer);
    this.timer = undefined;
    this.flushTimer = undefined;
    await this.renewing?.catch(() => {});
    this.mine.clear();
    await this.db.query(`DELETE FROM ${S}.leases WHERE holder = $1`, [this.holder]).catch((e) => this.options.onError?.(e));
    this.claim();
    this.released([...this.deleting.keys()]);
  }

  private period(): number {
    let shortest = Infinity;
    for (const h of this.mine.values()) shortest = Math.min(shortest, h.ttlMs);
    return Math.max(50, Math.min(this.renewEveryMs, Math.floor(shortest / 3)));
  }

  /**
   * One timer while anything is held, none when idle (an idle instance writes nothing); brought
   * forward when a lease with a shorter TTL arrives.
   */
  private schedule(): void {
    if (this.closed || this.mine.size === 0) return;
    const due = Date.now() + this.period();
    if (this.timer && this.dueAt <= due) return;
    clearTimeout(this.timer);
    this.dueAt = due;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.dueAt = Infinity;
      void this.renew().finally(() => this.schedule());
    }, due - Date.now());
    this.timer.unref();
  }

  private async renewOnce(): Promise<void> {
    const ids = [...this.mine.keys()];
    if (ids.length === 0) return;
    try {
      const { rows } = await this.db.query<{ id: string | number }>(
        `UPDATE ${S}.leases SET expires_at = clock_timestamp() + ttl_ms * interval '1 millisecond'
          WHERE id = ANY($1::bigint[]) AND holder = $2 RETURNING id`, [ids, this.holder]);
      const alive = new Set(rows.map((r) => String(r.id)));
      for (const id of ids) {
        const h = this.mine.get(id);
        // Released while the renewal ran, or gone: a lease that expired is not taken back, since
        // another instance may have counted its slot free meanwhile.
        if (h && !alive.has(id)) {
          this.mine.delete(id);
          this.options.onLost?.(h.key);
        }
      }
      if (Date.now() - this.sweptAt >= SWEEP_EVERY_MS) {
        this.sweptAt = Date.now();
        await this.db.query(`DELETE FROM ${S}.leases WHERE expires_at < clock_timestamp() - interval '1 minute'`);
      }
    } catch (e) {
      this.options.onError?.(e);
    }
  }
}
