import { getHeapStatistics } from 'node:v8';
import type { Catalog } from '../catalog/types.js';
import { OqlError } from '../diagnostics/diagnostic.js';
import type { ReadLimits } from '../run/read.js';
import type { ServerConfig } from './config.js';
import type { LeaseStore } from './leases.js';
import type { Principal, Role } from './types.js';

/**
 * The one policy point. Every surface — REST routes, MCP tools, the console — turns its
 * credential into a RequestContext and asks this module, and only this module: may the request
 * run now (the principal's concurrency budget, the heap), with which limits (time, bytes, rows,
 * cost), on which objects, and what error each refusal gets. The same request therefore gets the
 * same status and code on every surface.
 */

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
   * After a statement of a principal ran out its budget, its heavy requests wait this long (0:
   * not at all). On embedded PGlite every timeout restarts the one database all tenants share,
   * so there a principal that keeps sending runaway queries is slowed down; on PostgreSQL the
   * statement is cancelled alone and the budget of concurrent requests is enough.
   */
  readonly coolDownMs: number;
}

export class Policy {
  private readonly coolDown = new Map<string, number>();

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

  /** The tool-log listing is the Superadmin role's (contract 5.1). */
  checkSuperadmin(ctx: RequestContext): void {
    if (ctx.role !== 'superadmin') throw OqlError.plain('PERMISSION_DENIED', 'only the Superadmin role may list tool logs');
  }

  /**
   * Runs `fn` within the principal's budget: refused with 503 while the heap is near its limit,
   * with 429 and Retry-After when the principal already has its requests of this weight running
   * (on any instance), or while it cools down after a statement that ran out its budget.
   */
  async admit<T>(ctx: RequestContext, weight: Weight, fn: () => Promise<T>): Promise<T> {
    this.checkHeap();
    const until = this.coolDown.get(ctx.budget);
    if (weight === 'heavy' && until !== undefined) {
      const wait = until - Date.now();
      if (wait > 0) {
        throw OqlError.retryLater('TOO_MANY_REQUESTS', 'a query of yours just ran out its time budget; heavy requests wait a few seconds before the next one', wait / 1000,
          'make the query cheaper before running it again: narrow the WHERE clause or lower the LIMIT');
      }
      this.coolDown.delete(ctx.budget);
    }
    const max = weight === 'heavy' ? this.deps.config.maxConcurrentReports : this.deps.config.maxConcurrentRequests;
    const lease = await this.deps.leases.acquire(`${weight}\u0000${ctx.budget}`, max, LEASE_TTL_MS);
    if (lease === null) {
      throw OqlError.retryLater('TOO_MANY_REQUESTS',
        weight === 'heavy' ? 'too many concurrent analytics requests are running; retry later' : 'too many concurrent requests are running; retry later', 1,
        `at most ${max} ${weight === 'heavy' ? 'reports, filter or connector pages' : 'record requests'} run at once per user, across all of its keys and clients; wait for one to finish`);
    }
    try {
      return await fn();
    } catch (e) {
      if (e instanceof OqlError && e.code === 'QUERY_TIMEOUT' && this.deps.coolDownMs > 0) this.coolDown.set(ctx.budget, Date.now() + this.deps.coolDownMs);
      throw e;
    } finally {
      // Not waited for: the answer need not wait for the slot's row to go (a shared store deletes
      // it with its next statement, and this instance's next acquire never counts it).
      void lease.release().catch(() => {});
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
