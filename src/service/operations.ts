import { entities, entitySchema } from '../catalog/entities.js';
import { catalogPayload, objectPayload } from '../catalog/payload-out.js';
import type { Catalog } from '../catalog/types.js';
import { connectorRecords, filterRecords } from '../query/filter.js';
import { bulkCreate, bulkUpsert, deleteRecords, getRecord, restoreRecord, updateRecord } from '../records/index.js';
import type { ChangeSink } from '../records/changes.js';
import { cursorOf, type ChangeLog, type ChangeSurface } from './changes/log.js';
import type { ChangeFeed, ChangesRequest } from './changes/feed.js';
import type { Webhooks } from './webhooks/webhooks.js';
import type { TableStatistics } from './table-statistics.js';
import type { Database } from '../run/database.js';
import { count, execute, type QueryRequest } from '../query/execute.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { lint } from '../lint/lint.js';
import { parse } from '../syntax/parse.js';
import type { ServerConfig } from './config.js';
import type { Policy, RequestContext } from './policy.js';
import { checkMayManage, checkNewKey, keyCursorOf, keyNotFound, keyNotRollable, keyScope, ownerOfNewKey, readKeyCursor } from './api-key-access.js';
import { getApiKey, issueApiKeyWithinCaps, listApiKeys, rollApiKey, verifyApiKey, type ApiKeyInfo, type ApiKeyVerifier, type KeyCaps } from './store/api-keys.js';
import { listToolLogs, recordToolCall, type ListToolLogsOptions, type ToolCall } from './store/tool-logs.js';
import { listWorkspaces, resolveWorkspace, type Workspace } from './store/workspaces.js';
import { createSession, endSession, pruneSessions, resolveSession, type NewSession, type Session, type SessionLifetimes } from './store/console-sessions.js';
import type { Principal, Role } from './types.js';

export { ROLL_GRACE_MS, type ApiKeyInfo } from './store/api-keys.js';
export type { ToolCall } from './store/tool-logs.js';
export type { Workspace } from './store/workspaces.js';
export { DEFAULT_SESSION_LIFETIMES, type NewSession, type Session, type SessionLifetimes } from './store/console-sessions.js';

/** A new key as a caller asks for it (the owner defaults to the caller). */
export interface NewKeyRequest {
  readonly name: string;
  readonly role: Role;
  readonly expiresAt: number | null;
  readonly userId?: string | undefined;
}

/** One page of the key listing: at most `limit` keys, after the page that gave `cursor`. */
export interface KeyPageRequest {
  readonly limit: number;
  readonly cursor?: string | undefined;
}

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
 * primary's sessions, which a read role may not see. With read-only sessions of `--database`
 * (run/open.ts, openReadSessions) every read of `db` is one statement on them: the same role.
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
    private readonly keys: ApiKeyVerifier,
    private readonly changeLog: ChangeLog,
    readonly feed: ChangeFeed,
    /** Webhook endpoints: admins and above, each call through the policy point. */
    readonly webhooks: Webhooks,
    /** The embedded database's planner statistics, told of every write (PostgreSQL keeps its own). */
    private readonly statistics?: TableStatistics,
  ) {}

  // ---- Analytics: execute and count ----

  /** `onColumns` is told the output keys in select-list order (for CSV, which writes rows without keys). */
  execute(ctx: RequestContext, request: QueryRequest, surface: 'rest' | 'mcp' = 'rest', onColumns?: (keys: readonly string[]) => void) {
    return this.policy.admit(ctx, 'heavy', () => execute(this.readDb, request, { ...this.runOptions(ctx, surface), ...(onColumns === undefined ? {} : { onColumns }) }));
  }

  count(ctx: RequestContext, request: QueryRequest) {
    return this.policy.admit(ctx, 'heavy', () => count(this.readDb, request, this.runOptions(ctx, 'rest')));
  }

  private runOptions(ctx: RequestContext, surface: 'rest' | 'mcp') {
    const access = this.policy.access(ctx);
    return {
      catalog: this.catalog, orgId: ctx.org, limiter: false as const, maxCompileMs: this.config.maxCompileMs, ...this.policy.readLimits(ctx, surface),
      ...(access === undefined ? {} : { access }),
    };
  }

  // ---- Lint: every diagnostic of a text, nothing run ----

  /**
   * Lint for the REST route and the MCP tool alike: one rule of access (an object the role may not
   * use is 403, since hints name its fields) and the caller's budget. Lint runs no statement, but
   * it is CPU on the caller's text, so it is admitted like a record request: the light budget, in
   * which an editor linting as its user types fits, and never in the organization's line for the
   * database. The slug may be left out: it is then the query's own top-level FROM.
   */
  lint(ctx: RequestContext, request: { readonly query: string; readonly slug?: string | undefined }): Promise<{ slug: string | null; diagnostics: Diagnostic[] }> {
    return this.policy.admit(ctx, 'light', async () => {
      const slug = request.slug ?? fromObject(request.query);
      if (slug !== null) this.policy.checkObject(ctx, slug);
      return { slug, diagnostics: lint(request.query, { catalog: this.catalog, slug: slug ?? '', maxCompileMs: this.config.maxCompileMs }) };
    });
  }

  // ---- Filter and connector pages ----

  /** `onColumns` is told the page's keys in `fields` order (for CSV). */
  filter(ctx: RequestContext, slug: string, body: unknown, surface: 'rest' | 'mcp' = 'rest', onColumns?: (keys: readonly string[]) => void) {
    this.policy.checkObject(ctx, slug);
    const access = this.policy.access(ctx);
    return this.policy.admit(ctx, 'heavy', () => filterRecords(this.readDb, body, {
      catalog: this.catalog, slug, orgId: ctx.org, ...this.policy.readLimits(ctx, surface), onColumns,
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

  // ---- Records: bulk create, bulk upsert, get, update ----

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

  /**
   * A write through the policy point; once it has committed, the readers waiting on its
   * organization wake, and the webhook sender looks for work if the write's changes have an endpoint
   * to go to (a look is a statement: a service without endpoints is not sent one per write).
   */
  private write<T>(ctx: RequestContext, changes: ChangeSink, fn: () => Promise<T>): Promise<T> {
    return this.policy.admit(ctx, 'light', fn).then((result) => {
      this.feed.watcher.committed(ctx.org);
      if (changes.listened !== false) this.webhooks.sender.poke();
      this.statistics?.poke();
      return result;
    });
  }

  bulkCreate(ctx: RequestContext, slug: string, records: unknown, surface: WriteSurface = 'rest') {
    const wctx = this.writeContext(ctx, slug, surface);
    return this.write(ctx, wctx.changes, () => bulkCreate(this.db, slug, records, wctx));
  }

  bulkUpsert(ctx: RequestContext, slug: string, body: unknown, surface: WriteSurface = 'rest') {
    const wctx = this.writeContext(ctx, slug, surface);
    return this.write(ctx, wctx.changes, () => bulkUpsert(this.db, slug, body, wctx));
  }

  getRecord(ctx: RequestContext, slug: string, id: string) {
    // A read: the read budget, which is also the read role's own timeout (one statement there).
    this.policy.checkObject(ctx, slug);
    const rctx = { catalog: this.catalog, orgId: ctx.org, timeoutMs: this.policy.timeoutMs };
    return this.policy.admit(ctx, 'light', () => getRecord(this.primaryReadDb, slug, id, rctx));
  }

  updateRecord(ctx: RequestContext, slug: string, id: string, patch: unknown, surface: WriteSurface = 'rest') {
    const wctx = this.writeContext(ctx, slug, surface);
    return this.write(ctx, wctx.changes, () => updateRecord(this.db, slug, id, patch, wctx));
  }

  // ---- The record lifecycle: admins and above ----

  async deleteRecord(ctx: RequestContext, slug: string, id: string, surface: WriteSurface = 'rest') {
    this.policy.checkRole(ctx, 'admin', 'delete records');
    const wctx = this.writeContext(ctx, slug, surface);
    const [deleted] = await this.write(ctx, wctx.changes, () => deleteRecords(this.db, slug, [id], wctx));
    return deleted!;
  }

  bulkDelete(ctx: RequestContext, slug: string, body: unknown, surface: WriteSurface = 'rest') {
    this.policy.checkRole(ctx, 'admin', 'delete records');
    const wctx = this.writeContext(ctx, slug, surface);
    const ids = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { ids?: unknown }).ids : undefined;
    return this.write(ctx, wctx.changes, async () => ({ records: await deleteRecords(this.db, slug, ids, wctx) }));
  }

  restoreRecord(ctx: RequestContext, slug: string, id: string, surface: WriteSurface = 'rest') {
    this.policy.checkRole(ctx, 'admin', 'restore records');
    const wctx = this.writeContext(ctx, slug, surface);
    return this.write(ctx, wctx.changes, () => restoreRecord(this.db, slug, id, wctx));
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

  // ---- Objects and entities: the catalog, no database ----

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

  /** The syncconnector form lists the fields a sync with include_deleted adds; the flowconnector form is as it was. */
  entitySchema(ctx: RequestContext, slug: string, form: 'flow' | 'sync' = 'flow') {
    this.policy.checkObject(ctx, slug);
    return entitySchema(this.catalog, slug, { lifecycleFields: form === 'sync' });
  }

  // ---- Tool logs ----

  toolLogs(ctx: RequestContext, pointer: string | null | undefined, filters: ToolLogFilters = {}) {
    this.policy.checkToolLogs(ctx);
    return this.policy.admit(ctx, 'light', () => listToolLogs(this.db, { orgId: ctx.org, pointer, secret: this.tokenSecret, maxPageBytes: this.config.maxToolLogPageBytes, ...filters }));
  }

  /** Logs one MCP tool call to its organization's log (after the call: no admission of its own). */
  recordToolCall(call: ToolCall): Promise<string> {
    return recordToolCall(this.db, call, this.config.maxToolLogEntryBytes);
  }

  // ---- Liveness ----

  /**
   * Whether the database answers within `timeoutMs`, asked outside every tenant's queue (the
   * drivers keep their own connection for it), so it answers while tenants saturate their shares.
   */
  databaseAnswers(timeoutMs: number): Promise<boolean> {
    return this.db.ping(timeoutMs);
  }

  // ---- Workspaces ----

  /** The workspace a path names (its subdomain), or null. */
  workspace(subdomain: string): Promise<Workspace | null> {
    return resolveWorkspace(this.db, subdomain);
  }

  /** The workspaces of an organization, by subdomain. */
  async workspacesOf(orgId: string): Promise<Workspace[]> {
    return (await listWorkspaces(this.db)).filter((w) => w.orgId === orgId);
  }

  // ---- Console sessions (kept in the database, so every instance knows every session) ----

  /**
   * Who an API key offered at the console's sign-in (or to `oql mcp --stdio`) is: its principal,
   * or null for a key that is unknown, revoked or expired, read from the database (never from the
   * key cache).
   */
  principalOfKey(apiKey: string, now: number): Promise<Principal | null> {
    return verifyApiKey(this.db, apiKey, now);
  }

  /**
   * A new console session for a key's principal, in place of the browser's `previous` one; the
   * key's oldest sessions past `maxPerKey` end, and expired sessions are deleted on the way.
   */
  async startConsoleSession(principal: Principal, o: { readonly previous: string | undefined; readonly now: number; readonly lifetimes: SessionLifetimes; readonly maxPerKey: number }): Promise<NewSession> {
    if (o.previous !== undefined) await endSession(this.db, o.previous);
    await pruneSessions(this.db, o.now);
    return createSession(this.db, principal, o.now, o.lifetimes, o.maxPerKey);
  }

  /** The live session of a cookie's token (its idle deadline moved on), or null. */
  consoleSession(token: string, now: number, lifetimes: SessionLifetimes): Promise<Session | null> {
    return resolveSession(this.db, token, now, lifetimes);
  }

  /** Ends a console session (sign-out); whether there was one. */
  endConsoleSession(token: string): Promise<boolean> {
    return endSession(this.db, token);
  }

  // ---- API keys of the caller's organization (src/service/api-key-access.ts decides who may do what) ----

  /**
   * One page of the keys the caller may see, newest first, revoked and expired ones included, and
   * the cursor of the next page (null after the last).
   */
  listKeys(ctx: RequestContext, page: KeyPageRequest): Promise<{ keys: ApiKeyInfo[]; next: string | null }> {
    const after = page.cursor === undefined ? undefined : readKeyCursor(page.cursor);
    return this.policy.admit(ctx, 'light', async () => {
      const keys = await listApiKeys(this.db, { ...keyScope(ctx.principal), revoked: true, newestFirst: true, limit: page.limit + 1, after });
      const shown = keys.slice(0, page.limit);
      const last = shown[shown.length - 1];
      return { keys: shown, next: keys.length > page.limit && last !== undefined ? keyCursorOf(last) : null };
    });
  }

  /** A new key within the caller's role and the key caps; the key itself is in this answer only. */
  createKey(ctx: RequestContext, k: NewKeyRequest): Promise<{ key: ApiKeyInfo; secret: string }> {
    const p = ctx.principal;
    const now = Date.now();
    const name = checkNewKey(k.name, k.expiresAt, now);
    const owner = ownerOfNewKey(p, k.role, k.userId);
    return this.policy.admit(ctx, 'light', async () => {
      const made = await issueApiKeyWithinCaps(this.db, { orgId: p.orgId, role: k.role, userId: owner, name, expiresAt: k.expiresAt, createdBy: p.userId }, this.keyCaps(), now);
      return { key: (await getApiKey(this.db, p.orgId, made.id))!, secret: made.key };
    });
  }

  /** The configured caps on live keys per user and per organization. */
  private keyCaps(): KeyCaps {
    return { perUser: this.config.maxKeysPerUser, perOrg: this.config.maxKeysPerOrg };
  }

  /** A new key in place of a live one, which keeps working for the grace period. */
  rollKey(ctx: RequestContext, id: string): Promise<{ key: ApiKeyInfo; secret: string; previous: ApiKeyInfo }> {
    return this.policy.admit(ctx, 'light', async () => {
      const p = ctx.principal;
      const old = await this.manageableKey(ctx, id);
      const issued = await rollApiKey(this.db, old.id, { orgId: p.orgId, by: p.userId, caps: this.keyCaps() });
      if (!issued) throw keyNotRollable(old.id);
      // The old key's cached verdict may outlive its new expiry.
      this.keys.forgetKey(old.id);
      const [key, previous] = await Promise.all([getApiKey(this.db, p.orgId, issued.id), getApiKey(this.db, p.orgId, old.id)]);
      return { key: key!, secret: issued.key, previous: previous! };
    });
  }

  /** Revokes a key (a revoked one stays as it is) and answers it as it now stands. */
  revokeKey(ctx: RequestContext, id: string): Promise<ApiKeyInfo> {
    return this.policy.admit(ctx, 'light', async () => {
      const p = ctx.principal;
      const key = await this.manageableKey(ctx, id);
      if (key.revokedAt === null) await this.keys.revoke(key.id, { by: p.userId, orgId: p.orgId });
      return (await getApiKey(this.db, p.orgId, key.id))!;
    });
  }

  /** The one access rule of a key named by id: in the caller's organization, and theirs to manage. */
  private async manageableKey(ctx: RequestContext, id: string): Promise<ApiKeyInfo> {
    const key = await getApiKey(this.db, ctx.principal.orgId, id);
    if (!key) throw keyNotFound(id);
    checkMayManage(ctx.principal, key);
    return key;
  }
}

/** The top-level FROM object of a query that parses; null when it does not (lint then says why). */
function fromObject(query: string): string | null {
  try {
    return parse(query).from.object.name;
  } catch {
    return null;
  }
}
