import { bind } from './bind/bind.js';
import type { Catalog } from './catalog/types.js';
import { DiagnosticBag, OqlError, isOqlError, type Diagnostic } from './diagnostics/diagnostic.js';
import { countFromRows, emitCount, emitRows, type EmitOptions, type EmittedSql, type OrderCut } from './emit/emit.js';
import type { BoundQuery } from './bind/bound.js';
import { fanoutOf, withFanout, type FanoutMode } from './plan/fanout.js';
import { plan, type LogicalPlan } from './plan/plan.js';
import { parseInto, type SyntaxLimits } from './syntax/parse.js';
import { validate, type ValidateOptions } from './validate/validate.js';
import { requireTenant } from './rules.js';
import { CompileCache } from './compile-cache.js';

export type { FanoutMode } from './plan/fanout.js';

export interface CheckOptions extends SyntaxLimits, ValidateOptions {
  readonly catalog: Catalog;
  /** The request slug; the top-level FROM must name it. */
  readonly slug: string;
  /** Most relation hops in one dot path. Default 6. */
  readonly maxPathDepth?: number;
  /**
   * Plan filters on one-to-many relations as semi-joins where that provably gives the same
   * rows (see src/plan/semijoin.ts). Default true; false keeps the service's literal fan-out.
   */
  readonly semiJoins?: boolean;
  /** How aggregates treat one-to-many relations: the service's fan-out (default) or 'exact' (src/plan/fanout.ts). */
  readonly fanout?: FanoutMode;
  /**
   * Longest time in milliseconds the checks of one text may hold the thread before they stop with
   * COMPILE_BUDGET_EXCEEDED. Default 1,000 (DEFAULT_MAX_COMPILE_MS); Infinity for none.
   */
  readonly maxCompileMs?: number;
}

export interface CompileOptions extends CheckOptions {
  /** The caller's tenant: every table reference is restricted to it. */
  readonly orgId: string;
  /** Pins NOW() for reproducible reports (a Date, epoch milliseconds or an ISO string). */
  readonly now?: Date | number | string;
  /** The objects the caller may read; a query touching any other compiles to a restricted result. */
  readonly access?: Iterable<string>;
  /** Reuse compiled SQL for a repeated query text (default true). */
  readonly cache?: boolean;
}

export interface OutputColumn {
  /** Key of the value in result rows: the alias, or the path as written. */
  readonly key: string;
  /** Logical type of a plain column (`datetime`, `enum`...) or the value type of a computed one. */
  readonly type: string;
}

export interface CompiledQuery {
  readonly kind: 'query';
  readonly sql: string;
  readonly params: unknown[];
  readonly columns: readonly OutputColumn[];
  /** Warnings found while compiling (unknown enum options...). */
  readonly warnings: readonly Diagnostic[];
}

/** The caller may not read an object the query touches: nothing runs, and the answer is no rows and a message. */
export interface RestrictedQuery {
  readonly kind: 'restricted';
  readonly sql?: undefined;
  readonly message: string;
  /** The objects the caller may not read. */
  readonly objects: readonly string[];
  readonly columns: readonly OutputColumn[];
  readonly warnings: readonly Diagnostic[];
}

export type CompileResult = CompiledQuery | RestrictedQuery;

/** Everything before SQL: the checked, planned query, or every diagnostic. */
export interface Checked {
  readonly plan: LogicalPlan | null;
  readonly diagnostics: readonly Diagnostic[];
}

/** Runs every stage up to the plan and collects diagnostics; never throws for bad input. */
export function check(text: string, options: CheckOptions): Checked {
  fanoutOf(options);
  const bag = new DiagnosticBag(text, options.maxCompileMs);
  try {
    const ast = parseInto(text, bag, options);
    if (!ast) return { plan: null, diagnostics: bag.items };
    const withinCaps = validate(ast, bag, options);
    const bound = withinCaps ? bind(ast, bag, options) : null;
    bag.checkTime();
    const shaped = bound && !bag.hasErrors ? withFanout(bound, bag, options) : bound;
    const diagnostics = inSourceOrder(bag.items);
    if (!shaped || bag.hasErrors) return { plan: null, diagnostics };
    const planned = plan(shaped, options.catalog, { semiJoins: options.semiJoins ?? true });
    bag.checkTime();
    return { plan: planned, diagnostics };
  } catch (e) {
    if (isOqlError(e) && e.code === 'COMPILE_BUDGET_EXCEEDED') return { plan: null, diagnostics: inSourceOrder(e.diagnostics) };
    throw e;
  }
}

/** In source order, so the error a user sees first is the first one in their text. */
function inSourceOrder(items: readonly Diagnostic[]): Diagnostic[] {
  // Most texts have no diagnostic at all: a sort of nothing still made its work area.
  if (items.length < 2) return items.slice();
  return items.slice().sort((a, b) => a.span.start - b.span.start || a.span.end - b.span.end);
}

/**
 * What a compiled text keeps between calls: strings and a few small arrays, not the plan. A
 * service sends mostly new texts, so the cache is mostly full of entries that are never hit;
 * keeping their plans (about 10 KB each) alive promoted them to the old generation and made
 * every miss pay for major collections, a miss then costing more than no cache at all.
 */
interface CacheEntry {
  readonly query: EmittedSql;
  /** The count query; cut lazily from `query` (see OrderCut), or emitted from `plan`. */
  count: EmittedSql | null;
  readonly orderCut: OrderCut | null;
  /** Kept only when the count cannot be cut from the row query (ORDER BY with its own literals). */
  readonly plan: LogicalPlan | null;
  readonly objects: readonly string[];
  readonly columns: readonly OutputColumn[];
  readonly warnings: readonly Diagnostic[];
}

/** Between 500 and 1,000 recently used texts (see CompileCache). */
const cache = new CompileCache<CacheEntry>(1000);

/** The options besides the text that change the compiled result ('' for the defaults). */
function optionsKey(o: CompileOptions): string {
  if (o.maxLimit === undefined && o.maxSelectItems === undefined && o.maxPathDepth === undefined && o.maxLength === undefined
    && o.maxNesting === undefined && o.maxTreeDepth === undefined && o.now === undefined && o.semiJoins !== false && o.fanout !== 'exact') return '';
  return `${o.maxLimit ?? ''},${o.maxSelectItems ?? ''},${o.maxPathDepth ?? ''},${o.maxLength ?? ''},${o.maxNesting ?? ''},${o.maxTreeDepth ?? ''},${o.now === undefined ? 0 : 1},${o.semiJoins === false ? 0 : 1},${o.fanout === 'exact' ? 1 : 0}`;
}

/** Empties the compiled-query cache (tests and catalog reloads). */
export function clearCompileCache(): void {
  cache.clear();
}

function placeholders(options: CompileOptions): EmitOptions {
  // Emit with placeholder tenant and NOW(); they are filled in per call.
  return options.now === undefined ? { orgId: '' } : { orgId: '', now: new Date(0) };
}

function entryFor(text: string, options: CompileOptions): CacheEntry {
  if (options.cache === false) return compileEntry(text, options);
  const bucketKey = `${options.catalog.version}\u0000${options.slug}\u0000${optionsKey(options)}`;
  const hit = cache.lookup(bucketKey, text);
  if (hit) return hit;
  const entry = compileEntry(text, options);
  cache.offer(bucketKey, text, entry);
  return entry;
}

function compileEntry(text: string, options: CompileOptions): CacheEntry {
  const { plan: p, diagnostics } = check(text, options);
  if (!p) throw new OqlError(diagnostics, text);
  const { query, orderCut } = emitRows(p, placeholders(options));
  // The writer builds the SQL by appending, a rope of hundreds of pieces; reading a character
  // makes V8 flatten it in place, so a cached entry keeps one string instead of the rope.
  query.sql.charCodeAt(0);
  return {
    query,
    count: null,
    orderCut,
    plan: orderCut ? null : p,
    objects: p.objects,
    columns: p.query.outputs.map((o) => ({ key: o.key, type: o.type })),
    warnings: diagnostics.filter((d) => d.severity === 'warning'),
  };
}

function toDate(now: Date | number | string): Date {
  const d = now instanceof Date ? now : new Date(now);
  if (Number.isNaN(d.getTime())) throw OqlError.plain('INVALID_OPTIONS', `now is not a valid instant: ${String(now)}`, 'pass a Date, epoch milliseconds or an ISO 8601 string');
  return d;
}

function restricted(entry: CacheEntry, options: CompileOptions): RestrictedQuery | null {
  if (options.access === undefined) return null;
  const allowed = new Set(options.access);
  const denied = entry.objects.filter((o) => !allowed.has(o));
  if (denied.length === 0) return null;
  return {
    kind: 'restricted',
    message: `You do not have access to ${denied.length === 1 ? 'object' : 'objects'} ${denied.map((d) => `'${d}'`).join(', ')}`,
    objects: denied,
    columns: entry.columns,
    warnings: entry.warnings,
  };
}

function bindParams(sql: EmittedSql, options: CompileOptions): unknown[] {
  const params = sql.params.slice();
  params[0] = options.orgId;
  if (sql.nowIndex >= 0 && options.now !== undefined) params[sql.nowIndex] = toDate(options.now).toISOString();
  return params;
}

function checkOrg(options: CompileOptions): void {
  requireTenant(options.orgId);
}

/**
 * Compiles a query to parameterized PostgreSQL for one tenant. Throws OqlError (with every
 * diagnostic) when the query is not valid.
 */
export function compile(text: string, options: CompileOptions): CompileResult {
  checkOrg(options);
  fanoutOf(options);
  const entry = entryFor(text, options);
  const denied = restricted(entry, options);
  if (denied) return denied;
  return { kind: 'query', sql: entry.query.sql, params: bindParams(entry.query, options), columns: entry.columns, warnings: entry.warnings };
}

export interface CompiledCount {
  readonly kind: 'query';
  readonly sql: string;
  readonly params: unknown[];
  readonly warnings: readonly Diagnostic[];
}

/** Compiles the count of a query's rows, respecting its LIMIT. */
export function compileCount(text: string, options: CompileOptions): CompiledCount | RestrictedQuery {
  checkOrg(options);
  fanoutOf(options);
  const entry = entryFor(text, options);
  const denied = restricted(entry, options);
  if (denied) return denied;
  entry.count ??= entry.orderCut ? countFromRows(entry.query, entry.orderCut) : emitCount(entry.plan!, placeholders(options));
  return { kind: 'query', sql: entry.count.sql, params: bindParams(entry.count, options), warnings: entry.warnings };
}

/** The logical plan of a query, for tools and tests; throws OqlError like `compile`. */
export function planOf(text: string, options: CheckOptions): LogicalPlan {
  const { plan: p, diagnostics } = check(text, options);
  if (!p) throw new OqlError(diagnostics, text);
  return p;
}

/**
 * A bound query made by another front end (the record filter, the connector) planned and emitted
 * for one tenant, through the same stages as a query text: front ends build, only this reaches
 * the emitter.
 */
export function compileBound(bound: BoundQuery, catalog: Catalog, orgId: string): { sql: string; params: unknown[]; columns: OutputColumn[] } {
  const emitted = emitRows(plan(bound, catalog), { orgId }).query;
  return { sql: emitted.sql, params: emitted.params, columns: bound.outputs.map((o) => ({ key: o.key, type: o.type })) };
}
