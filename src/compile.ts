import { bind } from './bind/bind.js';
import type { Catalog } from './catalog/types.js';
import { DiagnosticBag, OqlError, type Diagnostic } from './diagnostics/diagnostic.js';
import { emitCount, emitQuery, type EmittedSql } from './emit/emit.js';
import { plan, type LogicalPlan } from './plan/plan.js';
import { parseInto, type SyntaxLimits } from './syntax/parse.js';
import { validate, type ValidateOptions } from './validate/validate.js';

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

/** The caller may not read an object the query touches: there is nothing to run (service 4.8). */
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
  const bag = new DiagnosticBag(text);
  const ast = parseInto(text, bag, options);
  if (!ast) return { plan: null, diagnostics: bag.items };
  validate(ast, bag, options);
  const bound = bind(ast, bag, options);
  // In source order, so the error a user sees first is the first one in their text.
  const diagnostics = bag.items.slice().sort((a, b) => a.span.start - b.span.start || a.span.end - b.span.end);
  if (!bound || bag.hasErrors) return { plan: null, diagnostics };
  return { plan: plan(bound, options.catalog, { semiJoins: options.semiJoins ?? true }), diagnostics };
}

interface CacheEntry {
  readonly plan: LogicalPlan;
  readonly query: EmittedSql;
  count: EmittedSql | null;
  readonly columns: readonly OutputColumn[];
  readonly warnings: readonly Diagnostic[];
}

const CACHE_SIZE = 1000;
const cache = new Map<string, CacheEntry>();

function cacheKey(text: string, o: CompileOptions): string {
  return `${o.catalog.version}\u0000${o.slug}\u0000${o.maxLimit ?? ''}\u0000${o.maxSelectItems ?? ''}\u0000${o.maxPathDepth ?? ''}\u0000${o.maxLength ?? ''}\u0000${o.maxNesting ?? ''}\u0000${o.maxTreeDepth ?? ''}\u0000${o.now === undefined ? 0 : 1}\u0000${o.semiJoins === false ? 0 : 1}\u0000${text}`;
}

/** Empties the compiled-query cache (tests and catalog reloads). */
export function clearCompileCache(): void {
  cache.clear();
}

function entryFor(text: string, options: CompileOptions): CacheEntry {
  const useCache = options.cache !== false;
  const key = useCache ? cacheKey(text, options) : '';
  const hit = useCache ? cache.get(key) : undefined;
  if (hit) {
    // Refresh recency: Map iteration order is insertion order, so re-insert on use.
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const { plan: p, diagnostics } = check(text, options);
  if (!p) throw new OqlError(diagnostics, text);
  // Emit with placeholder tenant and NOW(); they are filled in per call.
  const query = emitQuery(p, { orgId: '', ...(options.now === undefined ? {} : { now: new Date(0) }) });
  const entry: CacheEntry = {
    plan: p,
    query,
    count: null,
    columns: p.query.outputs.map((o) => ({ key: o.key, type: o.type })),
    warnings: diagnostics.filter((d) => d.severity === 'warning'),
  };
  if (useCache) {
    cache.set(key, entry);
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  }
  return entry;
}

function toDate(now: Date | number | string): Date {
  const d = now instanceof Date ? now : new Date(now);
  if (Number.isNaN(d.getTime())) throw OqlError.plain('INVALID_OPTIONS', `now is not a valid instant: ${String(now)}`, 'pass a Date, epoch milliseconds or an ISO 8601 string');
  return d;
}

function restricted(entry: CacheEntry, options: CompileOptions): RestrictedQuery | null {
  if (options.access === undefined) return null;
  const allowed = new Set(options.access);
  const denied = entry.plan.objects.filter((o) => !allowed.has(o));
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
  if (typeof options.orgId !== 'string' || options.orgId.length === 0) {
    throw OqlError.plain('INVALID_OPTIONS', 'orgId must be a non-empty string', 'pass the tenant of the caller, e.g. { orgId: "org_acme" }');
  }
}

/**
 * Compiles a query to parameterized PostgreSQL for one tenant. Throws OqlError (with every
 * diagnostic) when the query is not valid.
 */
export function compile(text: string, options: CompileOptions): CompileResult {
  checkOrg(options);
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

/** Compiles the count of a query's rows, respecting its LIMIT (service 4.9). */
export function compileCount(text: string, options: CompileOptions): CompiledCount | RestrictedQuery {
  checkOrg(options);
  const entry = entryFor(text, options);
  const denied = restricted(entry, options);
  if (denied) return denied;
  entry.count ??= emitCount(entry.plan, { orgId: '', ...(options.now === undefined ? {} : { now: new Date(0) }) });
  return { kind: 'query', sql: entry.count.sql, params: bindParams(entry.count, options), warnings: entry.warnings };
}

/** The logical plan of a query, for tools and tests; throws OqlError like `compile`. */
export function planOf(text: string, options: CheckOptions): LogicalPlan {
  const { plan: p, diagnostics } = check(text, options);
  if (!p) throw new OqlError(diagnostics, text);
  return p;
}
