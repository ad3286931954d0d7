import { entities, entitySchema } from '../catalog/entities.js';
import { catalogPayload, objectPayload } from '../catalog/payload-out.js';
import type { Catalog } from '../catalog/types.js';
import { connectorRecords, filterRecords } from '../run/filter.js';
import { bulkCreate, bulkUpsert, deleteRecords, getRecord, restoreRecord, updateRecord } from '../records/index.js';
import { cursorOf, type ChangeLog, type ChangeSurface } from './changes/log.js';
import type { ChangeFeed, ChangesRequest } from './changes/feed.js';
import type { Database } from '../run/database.js';
import { count, execute, type QueryRequest } from '../run/execute.js';
import type { ServerConfig } from './config.js';
import type { Policy, RequestContext } from './policy.js';
import { listToolLogs, type ListToolLogsOptions } from './store/tool-logs.js';

/** The tool-log listing's optional narrowing: one tool, one user, a time range. */
export type ToolLogFilters = Pick<ListToolLogsOptions, 'toolName' | 'userId' | 'since' | 'until'>;

const WRITE_TIMEOUT_MS = 30_000;

/** The surfaces a write can come through; a console session's writes are the console's whatever it says. */
export type WriteSurface = Exclude<ChangeSurface, 'system'>;

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
    private readonly changeLog: ChangeLog,
    readonly feed: ChangeFeed,
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

  private writeContext(ctx: RequestContext, slug: string, surface: WriteSurface) {
    this.policy.checkObject(ctx, slug);
    // A console session acts through the REST API; its changes say so.
    const actor = { user_id: ctx.principal.userId, surface: ctx.principal.via === 'session' ? 'console' as const : surface };
    // Writes carry validated records, not a caller's query: a longer budget than reads, still one.
    return {
      catalog: this.catalog, orgId: ctx.org, userId: ctx.principal.userId, maxRecords: this.config.maxBulkRecords,
      timeoutMs: Math.max(this.policy.timeoutMs, WRITE_TIMEOUT_MS), changes: this.changeLog.sink(actor),
    };
  }

  /** A write through the policy point; once it has committed, the readers waiting on its organization wake. */
  private write<T>(ctx: RequestContext, fn: () => Promise<T>): Promise<T> {
    return this.policy.admit(ctx, 'light', fn).then((result) => {
      this.feed.watcher.committed(ctx.org);
      return result;
    });
  }

  bulkCreate(ctx: RequestContext, slug: string, records: unknown, surface: WriteSurface = 'rest') {
    const wctx = this.writeContext(ctx, slug, surface);
    return this.write(ctx, () => bulkCreate(this.db, slug, records, wctx));
  }

  bulkUpsert(ctx: RequestContext, slug: string, body: unknown, surface: WriteSurface = 'rest') {
    const wctx = this.writeContext(ctx, slug, surface);
    return this.write(ctx, () => bulkUpsert(this.db, slug, body, wctx));
  }

  getRecord(ctx: RequestContext, slug: string, id: string) {
    // A read: the read budget, which is also the read role's own timeout (one statement there).
    const { userId: _u, changes: _c, ...rctx } = { ...this.writeContext(ctx, slug, 'rest'), timeoutMs: this.policy.timeoutMs };
    return this.policy.admit(ctx, 'light', () => getRecord(this.primaryReadDb, slug, id, rctx));
  }

  updateRecord(ctx: RequestContext, slug: string, id: string, patch: unknown, surface: WriteSurface = 'rest') {
    const wctx = this.writeContext(ctx, slug, surface);
    return this.write(ctx, () => updateRecord(this.db, slug, id, patch, wctx));
  }

  // ---- The record lifecycle: admins and above ----

  async deleteRecord(ctx: RequestContext, slug: string, id: string, surface: WriteSurface = 'rest') {
    this.policy.checkRole(ctx, 'admin', 'delete records');
    const wctx = this.writeContext(ctx, slug, surface);
    const [deleted] = await this.write(ctx, () => deleteRecords(this.db, slug, [id], wctx));
    return deleted!;
  }

  bulkDelete(ctx: RequestContext, slug: string, body: unknown, surface: WriteSurface = 'rest') {
    this.policy.checkRole(ctx, 'admin', 'delete records');
    const wctx = this.writeContext(ctx, slug, surface);
    const ids = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { ids?: unknown }).ids : undefined;
    return this.write(ctx, async () => ({ records: await deleteRecords(this.db, slug, ids, wctx) }));
  }

  restoreRecord(ctx: RequestContext, slug: string, id: string, surface: WriteSurface = 'rest') {
    this.policy.checkRole(ctx, 'admin', 'restore records');
    const wctx = this.writeContext(ctx, slug, surface);
    return this.write(ctx, () => restoreRecord(this.db, slug, id, wctx));
  }

  // ---- The change log ----

  /** A page of the organization's changes after a cursor; with `wait`, a long-poll. */
  changes(ctx: RequestContext, request: ChangesRequest, signal?: AbortSignal, maxLimit?: number) {
    return this.feed.read(ctx, this.feed.parse(ctx, request, maxLimit), signal);
  }

  /**
   * The MCP tool's read: no wait, and the tools' caps (mcpMaxRows changes, mcpMaxBytes of JSON), cut
   * from the end with `truncated` and a next_cursor that goes on from the last change kept.
   */
  async changesForTool(ctx: RequestContext, request: ChangesRequest) {
    const parsed = this.feed.parse(ctx, { ...request, wait: undefined });
    const limit = Math.min(parsed.limit, this.config.mcpMaxRows);
    const page = await this.feed.read(ctx, { ...parsed, limit });
    const max = Math.min(this.config.mcpMaxBytes, this.config.maxResponseBytes);
    const changes = [...page.changes];
    let truncated: 'rows' | 'bytes' | undefined = limit < parsed.limit && page.has_more ? 'rows' : undefined;
    let bytes = changes.reduce((sum, c) => sum + Buffer.byteLength(JSON.stringify(c)) + 1, 0);
    while (changes.length > 0 && bytes > max) {
      bytes -= Buffer.byteLength(JSON.stringify(changes.pop())) + 1;
      truncated = 'bytes';
    }
    const next = changes.length > 0 ? changes[changes.length - 1]!.cursor : request.after === undefined || request.after === '' ? cursorOf(parsed.after) : String(request.after);
    return { changes, next_cursor: next, has_more: page.has_more || changes.length < page.changes.length, ...(truncated ? { truncated } : {}) };
  }

  /** The cursor of the organization's newest change: where a consumer starts to get only what comes next. */
  async changesHead(ctx: RequestContext) {
    return { cursor: cursorOf(await this.feed.head(ctx)) };
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

  /** The data-sync form (4.15) lists the fields a sync with include_deleted adds; the flow form (4.13) is as it was. */
  entitySchema(ctx: RequestContext, slug: string, form: 'flow' | 'sync' = 'flow') {
    this.policy.checkObject(ctx, slug);
    return entitySchema(this.catalog, slug, { lifecycleFields: form === 'sync' });
  }

  // ---- Tool logs (4.16) ----

  toolLogs(ctx: RequestContext, pointer: string | null | undefined, filters: ToolLogFilters = {}) {
    this.policy.checkSuperadmin(ctx);
    return this.policy.admit(ctx, 'light', () => listToolLogs(this.db, { orgId: ctx.org, pointer, secret: this.tokenSecret, ...filters }));
  }
}
