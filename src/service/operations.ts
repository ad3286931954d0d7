import { entities, entitySchema } from '../catalog/entities.js';
import { catalogPayload, objectPayload } from '../catalog/payload-out.js';
import type { Catalog } from '../catalog/types.js';
import { connectorRecords, filterRecords } from '../run/filter.js';
import { bulkCreate, bulkUpsert, getRecord, updateRecord } from '../records/index.js';
import type { Database } from '../run/database.js';
import { count, execute, type QueryRequest } from '../run/execute.js';
import type { ServerConfig } from './config.js';
import type { Policy, RequestContext } from './policy.js';
import { listToolLogs, type ListToolLogsOptions } from './store/tool-logs.js';

/** The tool-log listing's optional narrowing: one tool, one user, a time range. */
export type ToolLogFilters = Pick<ListToolLogsOptions, 'toolName' | 'userId' | 'since' | 'until'>;

const WRITE_TIMEOUT_MS = 30_000;

/**
 * The service's operations, each once: the policy point's admission and limits around one library
 * call. REST routes, MCP tools and the console call these and only render the result, so a
 * request gets the same answer, status and code on every surface.
 *
 * Reports and filters read from `readDb`, which may be a replica (docs/fleet.md). Get-one reads
 * the primary, where the caller's own writes are (`primaryReadDb`: the read role's pool when it is
 * on the primary, so the read is one statement), and so do connector pages, with the role that
 * writes: a page read behind a replica's replay could miss a record stamped before the sync's
 * cutoff, which no later page would deliver, and the cutoff looks for open writes among the
 * primary's sessions, which a read role may not see.
 */
export class Operations {
  constructor(
    private readonly db: Database,
    private readonly readDb: Database,
    private readonly primaryReadDb: Database,
    private readonly catalog: Catalog,
    private readonly config: ServerConfig,
    readonly policy: Policy,
    private readonly tokenSecret: string,
  ) {}

  // ---- Analytics (4.8, 4.9) ----

  execute(ctx: RequestContext, request: QueryRequest, surface: 'rest' | 'mcp' = 'rest') {
    return this.policy.admit(ctx, 'heavy', () => execute(this.readDb, request, this.runOptions(ctx, surface)));
  }

  count(ctx: RequestContext, request: QueryRequest) {
    return this.policy.admit(ctx, 'heavy', () => count(this.readDb, request, this.runOptions(ctx, 'rest')));
  }

  private runOptions(ctx: RequestContext, surface: 'rest' | 'mcp') {
    const access = this.policy.access(ctx);
    return {
      catalog: this.catalog, orgId: ctx.org, limiter: false as const, ...this.policy.readLimits(ctx, surface),
      ...(access === undefined ? {} : { access }),
    };
  }

  // ---- Filter and connector (4.5, 4.11) ----

  filter(ctx: RequestContext, slug: string, body: unknown, surface: 'rest' | 'mcp' = 'rest') {
    this.policy.checkObject(ctx, slug);
    const access = this.policy.access(ctx);
    return this.policy.admit(ctx, 'heavy', () => filterRecords(this.readDb, body, {
      catalog: this.catalog, slug, orgId: ctx.org, ...this.policy.readLimits(ctx, surface),
      ...(access === undefined ? {} : { access }),
    }));
  }

  connector(ctx: RequestContext, slug: string, body: unknown) {
    this.policy.checkObject(ctx, slug);
    const { maxRows: _rows, truncate: _t, ...limits } = this.policy.readLimits(ctx);
    return this.policy.admit(ctx, 'heavy', () => connectorRecords(this.db, body, {
      catalog: this.catalog, slug, orgId: ctx.org, tokenSecret: this.tokenSecret, ...limits,
    }));
  }

  // ---- Records (4.1 to 4.4) ----

  private writeContext(ctx: RequestContext, slug: string) {
    this.policy.checkObject(ctx, slug);
    // Writes carry validated records, not a caller's query: a longer budget than reads, still one.
    return { catalog: this.catalog, orgId: ctx.org, userId: ctx.principal.userId, maxRecords: this.config.maxBulkRecords, timeoutMs: Math.max(this.policy.timeoutMs, WRITE_TIMEOUT_MS) };
  }

  bulkCreate(ctx: RequestContext, slug: string, records: unknown) {
    const wctx = this.writeContext(ctx, slug);
    return this.policy.admit(ctx, 'light', () => bulkCreate(this.db, slug, records, wctx));
  }

  bulkUpsert(ctx: RequestContext, slug: string, body: unknown) {
    const wctx = this.writeContext(ctx, slug);
    return this.policy.admit(ctx, 'light', () => bulkUpsert(this.db, slug, body, wctx));
  }

  getRecord(ctx: RequestContext, slug: string, id: string) {
    // A read: the read budget, which is also the read role's own timeout (one statement there).
    const { userId: _u, ...rctx } = { ...this.writeContext(ctx, slug), timeoutMs: this.policy.timeoutMs };
    return this.policy.admit(ctx, 'light', () => getRecord(this.primaryReadDb, slug, id, rctx));
  }

  updateRecord(ctx: RequestContext, slug: string, id: string, patch: unknown) {
    const wctx = this.writeContext(ctx, slug);
    return this.policy.admit(ctx, 'light', () => updateRecord(this.db, slug, id, patch, wctx));
  }

  // ---- Objects and entities (4.6, 4.7, 4.12 to 4.15): the catalog, no database ----

  objects(ctx: RequestContext) {
    const readable = this.policy.readable(ctx);
    return catalogPayload(this.catalog, { orgId: ctx.org }).filter((o) => readable.has((o as { slug: string }).slug));
  }

  object(ctx: RequestContext, slug: string) {
    this.policy.checkObject(ctx, slug);
    return objectPayload(this.catalog, slug, { orgId: ctx.org }) as object;
  }

  entities(ctx: RequestContext) {
    const readable = this.policy.readable(ctx);
    return entities(this.catalog).filter((e) => readable.has(e.entity_identifier));
  }

  entitySchema(ctx: RequestContext, slug: string) {
    this.policy.checkObject(ctx, slug);
    return entitySchema(this.catalog, slug);
  }

  // ---- Tool logs (4.16) ----

  toolLogs(ctx: RequestContext, pointer: string | null | undefined, filters: ToolLogFilters = {}) {
    this.policy.checkToolLogs(ctx);
    return this.policy.admit(ctx, 'light', () => listToolLogs(this.db, { orgId: ctx.org, pointer, secret: this.tokenSecret, maxPageBytes: this.config.maxToolLogPageBytes, ...filters }));
  }
}
