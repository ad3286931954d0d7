import type * as B from '../bind/bound.js';
import type { Catalog, ColumnDef } from '../catalog/types.js';
import { OqlError } from '../diagnostics/diagnostic.js';
import { didYouMean } from '../diagnostics/suggest.js';
import { ConditionBuilder } from './conditions.js';
import { emitFor, emptyToNull, limitsOf, readFields, target, type CompiledFilter, type Target } from './filter.js';
import { SPAN, columnNode } from './paths.js';
import { clockCutoff } from './sync-cutoff.js';
import { DELETED_AT_KEY, DELETED_KEY, withTombstones } from './tombstones.js';
import { Problems, at, get, has, isPlainObject, kindOf } from './problems.js';
import { TOKEN_TTL_MS, readToken, requestHash, signToken, type TokenPayload } from './token.js';
import { binary, epochOf, int8, isNull, logical, text } from './values.js';

export interface ConnectorOptions {
  readonly catalog: Catalog;
  readonly slug: string;
  readonly orgId: string;
  /** Signs next_token (HMAC-SHA256); at least 16 bytes, the same on every server. */
  readonly tokenSecret: string | Uint8Array;
  /**
   * The current instant: token expiry, and the `now` of the sync cutoff. Default: this host's
   * clock for tokens and the database's clock for the cutoff (the clock the writes are stamped by).
   */
  readonly now?: number | Date;
  /** Records per page. Default and maximum 3000 (docs/limits.md). */
  readonly pageSize?: number;
  /**
   * Records stamped at or after now − syncLagMs wait for the next sync, as do those of write
   * transactions still open when a sync starts (docs/connector.md). Default 5000.
   */
  readonly syncLagMs?: number;
}

export const MAX_CONNECTOR_PAGE_SIZE = 3000;
export const DEFAULT_SYNC_LAG_MS = 5000;
/** Key of the sync position in `compileConnectorPage`'s columns (never a field slug). */
export const SYNC_KEY = '$sync_key';

interface Page {
  readonly compiled: CompiledFilter;
  readonly includeDeleted: boolean;
  readonly pageSize: number;
  readonly hash: string;
  readonly cutoff: number | null;
  readonly hasKey: boolean;
  readonly idKey: string;
  readonly now: number;
}

function nowOf(now: number | Date | undefined): number {
  const ms = now === undefined ? Date.now() : now instanceof Date ? now.getTime() : now;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) throw OqlError.plain('INVALID_OPTIONS', `now must be a Date or epoch milliseconds, not ${String(now)}`);
  return ms;
}

function pageSizeOf(v: number | undefined): number {
  const n = v ?? MAX_CONNECTOR_PAGE_SIZE;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > MAX_CONNECTOR_PAGE_SIZE) {
    throw OqlError.plain('INVALID_OPTIONS', `pageSize must be a whole number from 1 to ${MAX_CONNECTOR_PAGE_SIZE}, not ${String(v)}`);
  }
  return n;
}

function lagOf(v: number | undefined): number {
  const n = v ?? DEFAULT_SYNC_LAG_MS;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw OqlError.plain('INVALID_OPTIONS', `syncLagMs must be a whole number of milliseconds, not ${String(v)}`);
  return n;
}

const isTime = (c: ColumnDef | undefined): c is ColumnDef => c !== undefined && (c.type === 'datetime' || c.type === 'date') && c.column !== null;

/** The sync timestamp, and the start of the sync (the `gte` value, epoch ms) when it is filtered. */
interface SyncField {
  readonly def: ColumnDef;
  readonly filtered: boolean;
  readonly from: number | null;
}

/**
 * The timestamp the pages are ordered by: the field of the first top-level `gte` condition on
 * a date/datetime of the object itself (the incremental-sync filter), else `updated_at`.
 */
function syncField(catalog: Catalog, slug: string, filter: unknown): SyncField | null {
  const columns = catalog.objects.get(slug)!.columns;
  const and = isPlainObject(filter) ? get(filter, 'and') : undefined;
  if (Array.isArray(and)) {
    for (const c of and) {
      const leaf = ConditionBuilder.leafOf(c);
      const def = leaf && leaf.operator === 'gte' ? columns.get(leaf.field) : undefined;
      if (isTime(def)) return { def, filtered: true, from: epochOf(leaf!.value) };
    }
  }
  const updated = columns.get('updated_at');
  return isTime(updated) ? { def: updated, filtered: false, from: null } : null;
}

/** The keys a record carries in a sync with include_deleted; no field of the object may take them. */
const LIFECYCLE_KEYS = ['is_deleted', 'deleted_at'];

/**
 * Whether the body asks for tombstones (`include_deleted`), and why it cannot when it cannot: a
 * deletion is placed in the sync by the updated_at it stamps, so the sync must follow updated_at.
 */
function readIncludeDeleted(body: unknown, t: Target, sync: SyncField | null, problems: Problems): boolean {
  const v = isPlainObject(body) && has(body, 'include_deleted') ? get(body, 'include_deleted') : undefined;
  if (v === undefined || v === false) return false;
  if (v !== true) {
    problems.add('INVALID_BODY', 'include_deleted', 'include_deleted', `include_deleted must be true or false, not ${kindOf(v)}`);
    return false;
  }
  const obj = t.catalog.objects.get(t.slug)!;
  const clash = LIFECYCLE_KEYS.find((k) => obj.columns.has(k));
  if (clash) {
    problems.add('INVALID_BODY', 'include_deleted', 'include_deleted', `object '${t.slug}' has a field '${clash}', which a sync with include_deleted sends for every record`);
  } else if (sync === null || sync.def.slug !== 'updated_at') {
    problems.add('INVALID_BODY', 'include_deleted', 'include_deleted', sync === null
      ? `object '${t.slug}' has no updated_at, the instant a deletion stamps, so a sync cannot place its deletions`
      : `a sync with include_deleted follows updated_at, the instant a deletion stamps, but this one follows '${sync.def.slug}' (the first gte condition on a date); put the updated_at condition first`);
  }
  return true;
}

/** A connector body read and checked, with its token; the cutoff is yet to be fixed. */
interface ReadBody {
  readonly t: Target;
  readonly pageSize: number;
  readonly lag: number;
  readonly now: number;
  readonly outputs: B.BoundOutput[];
  readonly where: B.BExpr | null;
  readonly sync: SyncField | null;
  readonly includeDeleted: boolean;
  readonly hash: string;
  readonly position: TokenPayload | null;
}

function readBody(body: unknown, options: ConnectorOptions): ReadBody {
  const t = target(options);
  const pageSize = pageSizeOf(options.pageSize);
  const lag = lagOf(options.syncLagMs);
  const now = nowOf(options.now);
  const problems = new Problems(t.slug);
  const query = isPlainObject(body) ? get(body, 'query') : undefined;
  if (!isPlainObject(query)) {
    problems.add('INVALID_BODY', isPlainObject(body) ? 'query' : '', 'query', isPlainObject(body) ? `query must be an object {fields, filter}, not ${query === undefined ? 'missing' : kindOf(query)}` : `the body must be an object {"query": {...}, "next_token": ...}, not ${kindOf(body)}`);
    problems.throwIfAny('Invalid request');
  }
  const q = query as Record<string, unknown>;
  for (const key of Object.keys(q)) {
    if (problems.full) break;
    if (key !== 'fields' && key !== 'filter') {
      problems.add('INVALID_BODY', at('query', key), key, () => {
        const hint = didYouMean(key, ['fields', 'filter']);
        return `'${key}' is not a key of query (they are fields and filter)${hint ? `; ${hint}` : ''}`;
      });
    }
  }
  const token = isPlainObject(body) && has(body, 'next_token') ? get(body, 'next_token') : null;
  if (token !== null && typeof token !== 'string') problems.add('INVALID_BODY', 'next_token', 'next_token', `next_token must be a string or null, not ${kindOf(token)}`);
  const fieldsValue = get(q, 'fields');
  const { outputs } = readFields(t, fieldsValue, 'query.fields', problems, true);
  const filterValue = get(q, 'filter');
  const where = filterValue === undefined ? null : new ConditionBuilder(t.catalog, t.slug, t.access, problems, limitsOf({})).flat(filterValue, 'query.filter');
  const sync = syncField(t.catalog, t.slug, filterValue);
  const includeDeleted = readIncludeDeleted(body, t, sync, problems);
  problems.throwIfAny('Invalid request');
  const hash = requestHash(options.orgId, t.slug, fieldsValue, filterValue ?? null, includeDeleted);
  const position: TokenPayload | null = typeof token === 'string' ? readToken(token, options.tokenSecret, hash, now, includeDeleted) : null;
  return { t, pageSize, lag, now, outputs, where, sync, includeDeleted, hash, position };
}

/**
 * The page's bound query. `cutoff` is the largest sync timestamp it may deliver (inclusive):
 * fixed on the first page of a sync and carried in its tokens; null without a sync timestamp.
 */
function buildPage(r: ReadBody, cutoff: number | null): Page & { bound: B.BoundQuery } {
  const { t, position } = r;
  const obj = t.catalog.objects.get(t.slug)!;
  const idDef = [...obj.columns.values()].find((c) => c.type === 'id')!;
  const id = columnNode(0, { hops: [], object: t.slug }, idDef);
  const ts = r.sync ? columnNode(0, { hops: [], object: t.slug }, r.sync.def) : null;

  // Records come ordered by (timestamp, id) with empty timestamps last; a filtered sync field
  // (gte) has none. The position is a row comparison, one range of the (tenant, timestamp, id) index.
  const parts: B.BExpr[] = r.where ? [r.where] : [];
  if (ts && cutoff !== null) {
    const nulls = !r.sync!.filtered;
    const [key, lastId] = position?.k ?? [null, null];
    if (position && key === null) {
      parts.push(isNull(ts), binary('>', id, text(lastId!)));
    } else {
      const dated: B.BExpr[] = [binary('<=', ts, int8(cutoff))];
      if (position) dated.unshift({ kind: 'RowCompare', op: '>', left: [ts, id], right: [int8(key!), text(lastId!)], type: 'boolean', span: SPAN });
      parts.push(nulls ? logical('OR', [logical('AND', dated), isNull(ts)]) : logical('AND', dated));
    }
  } else if (position) {
    parts.push(binary('>', id, text(position.k[1])));
  }
  const seen = new Set<string>();
  const outs: B.BoundOutput[] = [{ key: idDef.slug, expr: id, type: idDef.type, span: SPAN }];
  seen.add(idDef.slug);
  for (const o of r.outputs) if (!seen.has(o.key)) (seen.add(o.key), outs.push(o));
  if (ts) outs.push({ key: SYNC_KEY, expr: ts, type: r.sync!.def.type, span: SPAN });
  const bound: B.BoundQuery = {
    kind: 'Query',
    scope: 0,
    object: t.slug,
    distinct: false,
    outputs: outs,
    where: parts.length ? logical('AND', parts) : null,
    groupBy: [],
    having: null,
    orderBy: [...(ts ? [{ expr: ts, direction: 'ASC' as const, nulls: 'LAST' as const }] : []), { expr: id, direction: 'ASC', nulls: null }],
    // One more than a page: whether it comes back says if there is a next page.
    limit: int8(r.pageSize + 1),
    offset: null,
    aggregated: false,
    span: SPAN,
  };
  return {
    bound, compiled: undefined as unknown as CompiledFilter, includeDeleted: r.includeDeleted, pageSize: r.pageSize, hash: r.hash, cutoff, hasKey: ts !== null, idKey: idDef.slug, now: r.now,
  };
}

function page(r: ReadBody, cutoff: number | null, options: ConnectorOptions): Page {
  const p = buildPage(r, cutoff);
  const live = emitFor(p.bound, options.catalog, options.orgId);
  if (!r.includeDeleted) return { ...p, compiled: live };
  // include_deleted is refused without an updated_at sync, which always has a cutoff.
  const window = { from: r.sync!.from, position: r.position?.k ?? null, cutoff: cutoff!, nullsLast: !r.sync!.filtered };
  return { ...p, compiled: withTombstones(live, options.catalog, r.t.slug, window, r.pageSize + 1) };
}

/**
 * The SQL of one connector page (docs/connector.md): `pageSize + 1` rows ordered by the sync
 * timestamp and id, after the position of `next_token`. The last column (key `$sync_key`)
 * is the timestamp the next token is made from; with `include_deleted`, two more follow it
 * (./tombstones.ts).
 */
export function compileConnectorPage(body: unknown, options: ConnectorOptions): CompiledFilter {
  const r = readBody(body, options);
  const cutoff = r.position?.c ?? (r.sync ? clockCutoff(r.now, r.lag) : null);
  return page(r, cutoff, options).compiled;
}

/** Connector dates and datetimes as ISO 8601 UTC with milliseconds; they round-trip to the epoch. */
function isoTimes(records: Record<string, unknown>[], columns: readonly { key: string; type: string }[]): void {
  const times = columns.filter((c) => (c.type === 'datetime' || c.type === 'date') && c.key !== SYNC_KEY).map((c) => c.key);
  for (const r of records) {
    for (const k of times) {
      const v = r[k];
      if (typeof v === 'number' && Number.isFinite(v)) {
        const d = new Date(v);
        r[k] = Number.isNaN(d.getTime()) ? v : d.toISOString();
      }
    }
  }
}

/**
 * A connector request read and checked, before its page can be built: a sync's first page needs
 * the cutoff, which only the database knows (src/run/connector.ts reads it); later pages carry it
 * in their token.
 */
export interface ConnectorRequest {
  /** The cutoff a token carries, or null when there is none to keep. */
  readonly fixedCutoff: number | null;
  /** Whether the first page of a sync needs the database's cutoff. */
  readonly needsCutoff: boolean;
  readonly lag: number;
  /** The caller's pinned `now`, or null to take the database's clock. */
  readonly now: number | null;
  /** The page's statement for a cutoff, and how its rows become the response. */
  page(cutoff: number | null): ConnectorPage;
}

export interface ConnectorPage {
  readonly compiled: CompiledFilter;
  /**
   * The response from the page's decoded rows. `cutShort`: the database returned fewer rows than
   * it had (the byte ceiling): the next token continues after the last record returned.
   */
  finish(records: Record<string, unknown>[], cutShort: boolean): { records: Record<string, unknown>[]; next_token: string | null };
}

/**
 * The records of a page with include_deleted: a tombstone `{id, is_deleted: true, deleted_at,
 * updated_at}` for each deleted record, and each live record with `is_deleted: false` and
 * `deleted_at: null` after its fields, so that a destination that merges columns by id clears
 * both when a record is restored.
 */
function lifecycleRecords(rows: Record<string, unknown>[], idKey: string): Record<string, unknown>[] {
  const iso = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? new Date(v).toISOString() : null);
  return rows.map((row) => {
    if (row[DELETED_KEY] === true) return { [idKey]: row[idKey], is_deleted: true, deleted_at: iso(row[DELETED_AT_KEY]), updated_at: iso(row[SYNC_KEY]) };
    const rec: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(row)) if (k !== SYNC_KEY && k !== DELETED_KEY && k !== DELETED_AT_KEY) rec[k] = v;
    rec['is_deleted'] = false;
    rec['deleted_at'] = null;
    return rec;
  });
}

export function connectorRequest(body: unknown, options: ConnectorOptions): ConnectorRequest {
  const r = readBody(body, options);
  const fixedCutoff = r.position?.c ?? null;
  return {
    fixedCutoff,
    needsCutoff: r.position === null && r.sync !== null,
    lag: r.lag,
    now: options.now === undefined ? null : r.now,
    page(cutoff) {
      const p = page(r, cutoff, options);
      return {
        compiled: p.compiled,
        finish(decoded, cutShort) {
          const records = emptyToNull(decoded);
          const more = records.length > p.pageSize || cutShort;
          if (records.length > p.pageSize) records.length = p.pageSize;
          let next: string | null = null;
          const last = records[records.length - 1];
          if (more && last) {
            const key = p.hasKey ? (last[SYNC_KEY] as number | null) : null;
            const payload: TokenPayload = { v: 1, r: p.hash, k: [key, last[p.idKey] as string], c: p.cutoff, x: p.now + TOKEN_TTL_MS };
            next = signToken(p.includeDeleted ? { ...payload, d: 1 } : payload, options.tokenSecret);
          }
          if (p.includeDeleted) {
            const out = lifecycleRecords(records, p.idKey);
            isoTimes(out.filter((r) => r['is_deleted'] === false), p.compiled.columns);
            return { records: out, next_token: next };
          }
          if (p.hasKey) for (const rec of records) delete rec[SYNC_KEY];
          isoTimes(records, p.compiled.columns);
          return { records, next_token: next };
        },
      };
    },
  };
}
