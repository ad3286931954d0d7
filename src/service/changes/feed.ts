import type { Catalog } from '../../catalog/types.js';
import { requireObject } from '../../catalog/entities.js';
import { OqlError } from '../../diagnostics/diagnostic.js';
import type { ServerConfig } from '../config.js';
import type { Policy, RequestContext } from '../policy.js';
import { cursorOf, positionOf, type ChangeLog, type ChangePage } from './log.js';
import type { ChangeWatcher } from './watcher.js';

export const MAX_CHANGES_LIMIT = 1000;
export const DEFAULT_CHANGES_LIMIT = 100;
export const MAX_WAIT_SECONDS = 30;
/** Less time than this left of a long-poll's wait ends it. */
const MIN_WAIT_MS = 5;

/** A read of the log as a surface asks for it; strings as they came in a query string. */
export interface ChangesRequest {
  readonly after?: unknown;
  /** Object slugs, as an array or comma-separated. Default: every object the caller's role may read. */
  readonly objects?: unknown;
  readonly limit?: unknown;
  /** Seconds to wait for a change when there is none yet (0 to 30). */
  readonly wait?: unknown;
}

export interface ReadRequest {
  readonly after: bigint;
  readonly objects: readonly string[];
  readonly limit: number;
  readonly waitMs: number;
}

/**
 * Reading the change log for a principal: its organization's changes of the objects its role may
 * read, with the long-poll's wait and the caps on readers that wait (per user and per
 * organization, on this instance). Waiting holds no database connection and no concurrency lease.
 */
export class ChangeFeed {
  private readonly perUser = new Map<string, number>();
  private readonly perOrg = new Map<string, number>();
  /** Reads woken readers are waiting on, by organization, cursor, limit and objects. */
  private readonly inFlight = new Map<string, Promise<ChangePage>>();

  constructor(
    private readonly log: ChangeLog,
    readonly watcher: ChangeWatcher,
    private readonly catalog: Catalog,
    private readonly config: ServerConfig,
    private readonly policy: Policy,
  ) {}

  /** Checks and completes a request: the cursor, the objects (each readable by the role), the limit, the wait. */
  parse(ctx: RequestContext, request: ChangesRequest, maxLimit = MAX_CHANGES_LIMIT): ReadRequest {
    const after = request.after === undefined || request.after === '' ? 0n : positionOf(request.after);
    const limit = whole(request.limit, 'limit', 1, maxLimit, Math.min(DEFAULT_CHANGES_LIMIT, maxLimit));
    const waitMs = whole(request.wait, 'wait', 0, MAX_WAIT_SECONDS, 0) * 1000;
    const readable = this.policy.readable(ctx);
    let objects: string[];
    if (request.objects === undefined || request.objects === '') objects = [...readable];
    else {
      const list = Array.isArray(request.objects) ? request.objects : String(request.objects).split(',');
      objects = [];
      for (const item of list) {
        const slug = String(item).trim();
        if (slug === '') continue;
        requireObject(this.catalog, slug);
        this.policy.checkObject(ctx, slug);
        objects.push(slug);
      }
      if (objects.length === 0) throw OqlError.plain('VALIDATION_FAILED', 'objects names no object', 'name object slugs separated by commas, or leave objects out for every object');
    }
    return { after, objects, limit, waitMs };
  }

  /** One page; with a wait, the first page that has a change, or an empty one when the wait ran out. */
  async read(ctx: RequestContext, request: ReadRequest, signal?: AbortSignal): Promise<ChangePage> {
    // A client gone before the first read is given nothing, and costs no read.
    if (signal?.aborted) return { changes: [], next_cursor: cursorOf(request.after), has_more: false };
    // Taken before each read: a commit through this instance after it ends the next wait at once.
    let seen = this.watcher.seen(ctx.org);
    const first = await this.page(ctx, request);
    if (first.changes.length > 0 || request.waitMs === 0) return first;
    return this.waiting(ctx, async () => {
      const deadline = Date.now() + request.waitMs;
      let page = first;
      let from = request.after;
      // A stopping service answers its long-polls with what they have, for clients to ask elsewhere.
      while (page.changes.length === 0 && !signal?.aborted && !this.watcher.stopped) {
        const left = deadline - Date.now();
        // A timer may end the wait a millisecond before the clock reaches the deadline: what is
        // left then is no wait worth another read.
        if (left < MIN_WAIT_MS) break;
        const head = await this.watcher.wait(ctx.org, from, left, signal, seen);
        if (head !== undefined && head > from) from = head;
        seen = this.watcher.seen(ctx.org);
        page = await this.sharedPage(ctx, request);
      }
      return page;
    });
  }

  /** The organization's head, as a cursor a consumer can start from. */
  head(ctx: RequestContext): Promise<bigint> {
    return this.policy.admit(ctx, 'light', () => this.log.head(ctx.org));
  }

  /**
   * Runs `fn` in one of the principal's waiting slots: TOO_MANY_WAITING when its user or its
   * organization already has the most long-polls and streams open here.
   */
  async waiting<T>(ctx: RequestContext, fn: () => Promise<T>): Promise<T> {
    const user = this.perUser.get(ctx.budget) ?? 0;
    const org = this.perOrg.get(ctx.org) ?? 0;
    if (user >= this.config.maxWaitingPerUser || org >= this.config.maxWaitingPerOrg) {
      const mine = user >= this.config.maxWaitingPerUser;
      throw OqlError.retryLater('TOO_MANY_WAITING',
        mine ? `you already have ${user} long-polls or change streams open` : `your organization already has ${org} long-polls or change streams open`, 5,
        `at most ${mine ? `${this.config.maxWaitingPerUser} per user` : `${this.config.maxWaitingPerOrg} per organization`} wait at once: share one stream between consumers, or close one first`);
    }
    this.perUser.set(ctx.budget, user + 1);
    this.perOrg.set(ctx.org, org + 1);
    try {
      return await fn();
    } finally {
      decrement(this.perUser, ctx.budget);
      decrement(this.perOrg, ctx.org);
    }
  }

  page(ctx: RequestContext, request: ReadRequest): Promise<ChangePage> {
    return this.policy.admit(ctx, 'light', () => this.log.read(ctx.org, request.after, request.objects, request.limit));
  }

  /**
   * The page of a reader a commit just woke. Readers woken by one commit mostly ask for the same
   * page: those of one organization asking at once for the same cursor, limit and objects share
   * one read instead of each running its own. The key holds the organization and the objects the
   * reader's role may read, so nothing crosses either. A reader that joined a read which failed
   * (the first reader's own budget, say) reads for itself.
   */
  private async sharedPage(ctx: RequestContext, request: ReadRequest): Promise<ChangePage> {
    const key = JSON.stringify([ctx.org, request.after.toString(), request.limit, [...request.objects].sort()]);
    const running = this.inFlight.get(key);
    if (running !== undefined) {
      try {
        return await running;
      } catch {
        return this.page(ctx, request);
      }
    }
    const read = this.page(ctx, request).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, read);
    return read;
  }
}

function decrement(map: Map<string, number>, key: string): void {
  const n = (map.get(key) ?? 1) - 1;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}

function whole(value: unknown, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw OqlError.plain('VALIDATION_FAILED', `${name} must be a whole number from ${min} to ${max}, not ${JSON.stringify(typeof value === 'string' ? value.slice(0, 40) : value)}`,
      `pass ${name}=${fallback === 0 ? max : fallback}, or leave it out`);
  }
  return n;
}
