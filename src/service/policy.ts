import { getHeapStatistics } from 'node:v8';
import type { Catalog } from '../catalog/types.js';
import { OqlError } from '../diagnostics/diagnostic.js';
import type { ReadLimits } from '../run/read.js';
import type { ServerConfig } from './config.js';
import type { LeaseStore } from './shared-state/leases.js';
import { roleAtMost } from './api-key-access.js';
import type { Principal, Role } from './types.js';

/**
 * The one policy point. Every surface — REST routes, MCP tools, the console — turns its
 * credential into a RequestContext and asks this module, and only this module: may the request
 * run now (the principal's concurrency budget, the heap), with which limits (time, bytes, rows,
 * cost), on which objects, and what error each refusal gets. The same request therefore gets the
 * same status and code on every surface.
 */

/**
 * The scope an OAuth access token needs for what shows records (src/oauth/scopes.ts, where the MCP
 * tools that read records need it too); the broadest scope, so no other implies it.
 */
export const READ_RECORDS_SCOPE = 'records:read';

/** Who is asking, built once per request from whichever credential arrived. */
export interface RequestContext {
  readonly principal: Principal;
  readonly org: string;
  readonly role: Role;
  /**
   * The owner of the concurrency budget: the user behind the credential in its organization. Two
   * keys of one user, or many OAuth clients one user registered, share it.
   */
  readonly budget: string;
}

export function requestContext(principal: Principal): RequestContext {
  return { principal, org: principal.orgId, role: principal.role, budget: `${principal.orgId}\u0000${principal.userId}` };
}

/**
 * Heavy: reports, filter and connector pages, the MCP query tools (the contract's "about 2"
 * concurrent analytics requests). Light: record reads and writes, tool logs.
 */
export type Weight = 'heavy' | 'light';

/**
 * How long a lease outlives an instance that died holding it: a killed instance's share of a
 * principal's budget comes back within this. Held leases are renewed three times within it.
 */
const LEASE_TTL_MS = 8_000;

export interface PolicyDeps {
  readonly catalog: Catalog;
  readonly config: ServerConfig;
  readonly leases: LeaseStore;
  /** The statement budget, the driver's default where the configuration names none. */
  readonly timeoutMs: number;
  /**
   * After a statement of an organization ran out its budget, its heavy requests are refused this
   * long (0: not at all, and heavy requests of one organization run side by side). On embedded
   * PGlite every timeout restarts the one database all tenants share, so there an organization
   * that sends a runaway query waits before the next, and its heavy requests take turns: the
   * database runs one statement at a time anyway, and a request that waited its turn is checked
   * for the cool-down again, so a batch of runaway queries sent at once costs one restart, not
   * one each. An organization that runs out its budget again within COOL_DOWN_MEMORY_MS of its
   * last cool-down waits three times as long as the last time, up to MAX_COOL_DOWN_MS: a tenant
   * that keeps sending runaway queries costs the others a restart every few minutes at most. On
   * PostgreSQL the statement is cancelled alone and the budgets are enough.
   */
  readonly coolDownMs: number;
}

/** How long an organization's last cool-down counts towards the length of its next. */
const COOL_DOWN_MEMORY_MS = 10 * 60_000;
/** The longest cool-down. */
const MAX_COOL_DOWN_MS = 5 * 60_000;

interface CoolDown {
  /** When its heavy requests may run again. */
  readonly until: number;
  /** How long this cool-down lasts. */
  readonly ms: number;
}

/** The refusal of an organization's heavy request while it cools down, `seconds` before it may run. */
export function coolingDown(seconds: number): OqlError {
  return OqlError.retryLater('TOO_MANY_REQUESTS', 'a query of your organization just ran out its time budget; its reports and pages wait a few seconds before the next one', seconds,
    'make the query cheaper before running it again: narrow the WHERE clause or lower the LIMIT');
}

export class Policy {
  /** Organization to the time its heavy requests may run again (embedded database only). */
  private readonly coolDown = new Map<string, CoolDown>();
  /** Organization to the end of its line of heavy requests (embedded database only). */
  private readonly turns = new Map<string, Promise<void>>();

  constructor(private readonly deps: PolicyDeps) {}

  get timeoutMs(): number {
    return this.deps.timeoutMs;
  }

  /** The limits of a read: its statement budget, the tenant's share of connections, bytes and cost. */
  readLimits(ctx: RequestContext, surface: 'rest' | 'mcp' = 'rest'): ReadLimits & { truncate: boolean } {
    const { config, catalog } = this.deps;
    return {
      timeoutMs: this.deps.timeoutMs,
      tenant: ctx.org,
      maxBytes: surface === 'mcp' ? Math.min(config.mcpMaxBytes, config.maxResponseBytes) : config.maxResponseBytes,
      ...(surface === 'mcp' ? { maxRows: config.mcpMaxRows } : {}),
      maxCost: config.maxQueryCost > 0 ? config.maxQueryCost : undefined,
      catalog,
      truncate: surface === 'mcp',
    };
  }

  /** The objects the principal may read, or undefined for all of them. */
  access(ctx: RequestContext): readonly string[] | undefined {
    return this.deps.config.roleAccess[ctx.role];
  }

  /** The catalog's objects the principal may read, in catalog order. */
  readable(ctx: RequestContext): Set<string> {
    const access = this.access(ctx);
    return new Set([...this.deps.catalog.objects.keys()].filter((slug) => access === undefined || access.includes(slug)));
  }

  /**
   * An object the role may not read answers 403 on every endpoint that names it (records, filter,
   * connector, object and entity details, the MCP tools). Reports are the exception the contract
   * makes: they return no rows and a message (the compiler does that). An unknown slug is left
   * to the library, which answers 'Invalid slug' with the likely one.
   */
  checkObject(ctx: RequestContext, slug: string): void {
    const access = this.access(ctx);
    if (access === undefined || access.includes(slug) || !this.deps.catalog.objects.has(slug)) return;
    throw OqlError.plain('PERMISSION_DENIED', `the ${ctx.role} role may not use the object '${slug}'`,
      `the objects this role may use are: ${access.join(', ') || 'none'}`);
  }

  /** Endpoints that need `least` or a higher role (deleting and restoring records: admin). */
  checkRole(ctx: RequestContext, least: Role, what: string): void {
    if (roleAtMost(least, ctx.role)) return;
    throw OqlError.plain('PERMISSION_DENIED', `the ${ctx.role} role may not ${what}`, `${what} needs a key of the ${least} role or higher`);
  }

  /**
   * The tool-log listing is the Superadmin role's (docs/rest.md#authentication-and-roles), and it
   * shows the calls' queries with their literals, which are records: an OAuth token needs the
   * scope that reading records needs, as execute_query does.
   */
  checkToolLogs(ctx: RequestContext): void {
    if (ctx.role !== 'superadmin') throw OqlError.plain('PERMISSION_DENIED', 'only the Superadmin role may list tool logs');
    const scopes = ctx.principal.scopes;
    if (scopes !== undefined && !scopes.includes(READ_RECORDS_SCOPE)) {
      throw OqlError.plain('PERMISSION_DENIED', `this access token was not granted ${READ_RECORDS_SCOPE}, which listing tool logs needs: they hold the queries' texts and values`,
        `authorize again asking for the scope ${READ_RECORDS_SCOPE}`);
    }
  }

  /**
   * Runs `fn` within the principal's budget: refused with 503 while the heap is near its limit,
   * with 429 and Retry-After when the principal already has its requests of this weight running
   * (on any instance), or while it cools down after a statement that ran out its budget.
   */
  async admit<T>(ctx: RequestContext, weight: Weight, fn: () => Promise<T>): Promise<T> {
    this.checkHeap();
    if (weight === 'heavy') this.checkCoolDown(ctx);
    const max = weight === 'heavy' ? this.deps.config.maxConcurrentReports : this.deps.config.maxConcurrentRequests;
    const lease = await this.deps.leases.acquire(`${weight}\u0000${ctx.budget}`, max, LEASE_TTL_MS);
    if (lease === null) {
      throw OqlError.retryLater('TOO_MANY_REQUESTS',
        weight === 'heavy' ? 'too many concurrent analytics requests are running; retry later' : 'too many concurrent requests are running; retry later', 1,
        `at most ${max} ${weight === 'heavy' ? 'reports, filter or connector pages' : 'record requests'} run at once per user, across all of its keys and clients; wait for one to finish`);
    }
    try {
      if (weight === 'heavy' && this.deps.coolDownMs > 0) return await this.inTurn(ctx, fn);
      return await fn();
    } finally {
      // Not waited for: the answer need not wait for the slot's row to go (a shared store deletes
      // it with its next statement, and this instance's next acquire never counts it).
      void lease.release().catch(() => {});
    }
  }

  /** 429 while the organization cools down after a statement that ran out its budget. */
  private checkCoolDown(ctx: RequestContext): void {
    const last = this.coolDown.get(ctx.org);
    if (last === undefined) return;
    const wait = last.until - Date.now();
    if (wait > 0) throw coolingDown(wait / 1000);
    // Past it, and too long ago to lengthen the next one: forgotten.
    if (-wait > COOL_DOWN_MEMORY_MS) this.coolDown.delete(ctx.org);
  }

  /** Starts the organization's cool-down: the base length, or three times its last if that was recent. */
  private startCoolDown(ctx: RequestContext): void {
    const now = Date.now();
    const last = this.coolDown.get(ctx.org);
    const ms = last !== undefined && now - last.until <= COOL_DOWN_MEMORY_MS
      ? Math.min(MAX_COOL_DOWN_MS, last.ms * 3)
      : this.deps.coolDownMs;
    this.coolDown.set(ctx.org, { until: now + ms, ms });
  }

  /** Runs `fn` after the organization's earlier heavy requests, if it is not cooling down by then. */
  private async inTurn<T>(ctx: RequestContext, fn: () => Promise<T>): Promise<T> {
    const before = this.turns.get(ctx.org) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    const end = before.then(() => mine);
    this.turns.set(ctx.org, end);
    try {
      await before;
      this.checkCoolDown(ctx);
      return await fn();
    } catch (e) {
      if (e instanceof OqlError && e.code === 'QUERY_TIMEOUT') this.startCoolDown(ctx);
      throw e;
    } finally {
      done();
      if (this.turns.get(ctx.org) === end) this.turns.delete(ctx.org);
    }
  }

  /** New work is refused while the heap is close to its limit, rather than letting the process die. */
  private checkHeap(): void {
    const heap = getHeapStatistics();
    if (heap.used_heap_size > heap.heap_size_limit * this.deps.config.maxHeapRatio) {
      throw OqlError.retryLater('SERVICE_UNAVAILABLE', 'the service is short of memory and takes no new work for a moment', 5,
        'retry after the time Retry-After gives');
    }
  }
}
