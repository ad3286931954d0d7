import type * as B from '../bind/bound.js';
import type { Catalog } from '../catalog/types.js';
import { forEachBoundChild as forEachChild } from '../bind/exprs.js';
import { distinctById, distinctIdCount, ifToCase, mapQuery } from './rewrites.js';
import { semiJoinVirtualFilters } from './semijoin.js';

/**
 * The logical plan: the bound query after rewrites, plus, for every scope (FROM item), the
 * tables it reads and how they join. Plain data: it names tables and columns physically, so
 * an emitter needs nothing else, and it says which guards (tenant, soft delete) each table
 * reference carries, so every table reference is visibly guarded.
 */
export interface LogicalPlan {
  readonly query: B.BoundQuery;
  /** Indexed by scope id. */
  readonly scopes: readonly ScopePlan[];
  /** Slugs of every object the query reads, for access control. */
  readonly objects: readonly string[];
  /** Physical column name of every referenced column, keyed `object.column` (built from `physical` when read). */
  readonly columns: Readonly<Record<string, string>>;
  /** Physical column name of every referenced column, by object slug, then column slug. */
  readonly physical: ReadonlyMap<string, ReadonlyMap<string, string>>;
  readonly schema: string;
  readonly tenantColumn: string;
  readonly softDeleteColumn: string | null;
}

export interface TableRef {
  readonly alias: string;
  readonly object: string;
  readonly table: string;
}

export interface JoinPlan extends TableRef {
  readonly kind: 'to-one' | 'virtual';
  /** Path key (see `pathKey`) of the hops this join ends. */
  readonly key: string;
  readonly fromAlias: string;
  /** `alias.onColumn = fromAlias.fromColumn` (physical names). */
  readonly fromColumn: string;
  readonly onColumn: string;
}

export interface ScopePlan {
  readonly from: TableRef;
  readonly joins: readonly JoinPlan[];
}

function joinAt(joins: readonly JoinPlan[], key: string): JoinPlan | undefined {
  for (const j of joins) if (j.key === key) return j;
  return undefined;
}

export function pathKey(hops: readonly B.Hop[], upTo = hops.length): string {
  let key = '';
  for (let i = 0; i < upTo; i++) key += `${i ? '/' : ''}${hops[i]!.via}`;
  return key;
}

export interface PlanOptions {
  /** Turn provably equivalent fan-out filters into semi-joins (default true). */
  readonly semiJoins?: boolean;
}

export function plan(bound: B.BoundQuery, catalog: Catalog, options: PlanOptions = {}): LogicalPlan {
  const semiJoins = options.semiJoins !== false;
  let query = bound;
  if (semiJoins) query = semiJoinVirtualFilters(query, catalog);
  // Joins depend only on column paths, which the expression rewrites below leave alone, so the
  // joins are planned first and every expression rewrite runs in one pass over the tree.
  const planner = new Planner(catalog);
  planner.query(query);
  const idColumn = catalog.mapping.idColumn;
  // The expression rewrites change only `if` calls and counts of distinct values, which the
  // planner's walk has just looked for: a query with none of them is not walked again.
  if (semiJoins) {
    const multiplying = planner.multiplying;
    if (planner.rewritable) {
      const countById = distinctIdCount(idColumn, multiplying);
      query = mapQuery(query, (e) => countById(ifToCase(e)));
    }
    query = distinctById(query, idColumn, multiplying);
  } else if (planner.rewritable) {
    query = mapQuery(query, ifToCase);
  }
  return new Plan(query, planner.scopes, sorted(planner.objects), planner.physical, catalog);
}

/**
 * The names in code-unit order, as `Array.prototype.sort` orders strings: by insertion when
 * there are few (a query reads a handful of objects), where the built-in sort's work area was
 * most of the garbage it made.
 */
function sorted(names: ReadonlySet<string>): string[] {
  const out = [...names];
  if (out.length > 16) return out.sort();
  for (let i = 1; i < out.length; i++) {
    const x = out[i]!;
    let j = i - 1;
    for (; j >= 0 && out[j]! > x; j--) out[j + 1] = out[j]!;
    out[j + 1] = x;
  }
  return out;
}

/**
 * The plan object. `columns` is a getter of the class, read from `physical`: a getter in an
 * object literal made per plan kept each plan (its physical names, and whatever its scope held)
 * alive past the compile, into the old generation.
 */
class Plan implements LogicalPlan {
  readonly schema: string;
  readonly tenantColumn: string;
  readonly softDeleteColumn: string | null;

  constructor(
    readonly query: B.BoundQuery,
    readonly scopes: readonly ScopePlan[],
    readonly objects: readonly string[],
    readonly physical: ReadonlyMap<string, ReadonlyMap<string, string>>,
    catalog: Catalog,
  ) {
    this.schema = catalog.mapping.schema;
    this.tenantColumn = catalog.mapping.tenantColumn;
    this.softDeleteColumn = catalog.mapping.softDeleteColumn;
  }

  get columns(): Record<string, string> {
    return columnsByKey(this.physical);
  }
}

function columnsByKey(physical: ReadonlyMap<string, ReadonlyMap<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [object, columns] of physical) for (const [column, name] of columns) out[`${object}.${column}`] = name;
  return out;
}

/**
 * The first aliases, made once: the same strings every plan, so the emitter finds their quoted
 * form by a hash V8 has already computed, and no plan makes them again.
 */
const ALIASES: readonly string[] = Array.from({ length: 32 }, (_, n) => `t${n}`);

class Planner {
  readonly scopes: ScopePlan[] = [];
  readonly objects = new Set<string>();
  /**
   * By object, then column: no `object.column` string per reference. Such keys on a plain
   * object (the emitter read them back the same way) were a new string to flatten and
   * internalize on every store and every read, a tenth of a compile on texts of many catalogs.
   */
  readonly physical = new Map<string, Map<string, string>>();
  /** Scopes with a one-to-many join, whose rows it multiplies. */
  readonly multiplying = new Set<number>();
  /**
   * Whether the query holds a node the expression rewrites may change (an `if` call, a count
   * of distinct values), or a subquery reached twice, which is walked here once.
   */
  rewritable = false;
  private aliases = 0;
  /** `expr` bound once, for the child walk, instead of a closure per node. */
  private readonly visit = (e: B.BExpr): void => this.expr(e);

  constructor(private readonly catalog: Catalog) {}

  query(q: B.BoundQuery): void {
    // A subquery reached twice (a select item repeated by GROUP BY 1) is one scope: plan it once.
    if (this.scopes[q.scope]) {
      this.rewritable = true;
      return;
    }
    this.objects.add(q.object);
    this.scopes[q.scope] = { from: { alias: this.alias(), object: q.object, table: this.table(q.object) }, joins: [] };
    for (const o of q.outputs) this.expr(o.expr);
    if (q.where) this.expr(q.where);
    for (const g of q.groupBy) this.expr(g);
    if (q.having) this.expr(q.having);
    for (const o of q.orderBy) this.expr(o.expr);
  }

  private alias(): string {
    const n = this.aliases++;
    return n < ALIASES.length ? ALIASES[n]! : `t${n}`;
  }

  private table(slug: string): string {
    const o = this.catalog.objects.get(slug);
    return o ? o.table : slug;
  }

  private physicalName(object: string, column: string): string {
    const c = this.catalog.objects.get(object)?.columns.get(column);
    return c?.column ?? column;
  }

  /** One join per distinct path prefix, in order of first use, so the SQL is deterministic. */
  private column(c: B.BColumn): void {
    let columns = this.physical.get(c.object);
    if (columns === undefined) this.physical.set(c.object, (columns = new Map()));
    if (!columns.has(c.column)) columns.set(c.column, this.physicalName(c.object, c.column));
    const scope = this.scopes[c.scope]!;
    let fromAlias = scope.from.alias;
    let fromObject = scope.from.object;
    const joins = scope.joins as JoinPlan[];
    let key = '';
    for (let i = 0; i < c.hops.length; i++) {
      const hop = c.hops[i]!;
      key = i === 0 ? hop.via : `${key}/${hop.via}`; // pathKey(c.hops, i + 1), built up hop by hop
      let join = joinAt(joins, key);
      if (!join) {
        const toOne = hop.kind === 'to-one';
        join = {
          kind: hop.kind,
          key,
          alias: this.alias(),
          object: hop.object,
          table: this.table(hop.object),
          fromAlias,
          fromColumn: toOne ? this.physicalName(fromObject, hop.via) : this.catalog.mapping.idColumn,
          onColumn: toOne ? this.catalog.mapping.idColumn : this.physicalName(hop.object, this.virtualVia(fromObject, hop.via)),
        };
        joins.push(join);
        this.objects.add(hop.object);
        if (!toOne) this.multiplying.add(c.scope);
      }
      fromAlias = join.alias;
      fromObject = hop.object;
    }
  }

  private virtualVia(parent: string, via: string): string {
    const rel = this.catalog.objects.get(parent)?.columns.get(via)?.relation;
    if (rel?.kind !== 'virtual') throw new Error(`catalog invariant: ${parent}.${via} is not a virtual relation`);
    return rel.via;
  }

  private expr(e: B.BExpr): void {
    switch (e.kind) {
      case 'Column':
        this.column(e);
        return;
      case 'Exists':
      case 'Subquery':
        this.query(e.query);
        return;
      case 'InSubquery':
        this.expr(e.operand);
        this.query(e.query);
        return;
      case 'Call':
        if (e.fn === 'if' || (e.fn === 'count' && e.distinct)) this.rewritable = true;
        forEachChild(e, this.visit);
        return;
      default:
        forEachChild(e, this.visit);
    }
  }
}

/** The largest scope id in a query and its subqueries. */
export function maxScope(q: B.BoundQuery): number {
  let max = q.scope;
  const visit = (e: B.BExpr): void => {
    if (e.kind === 'Exists' || e.kind === 'Subquery' || e.kind === 'InSubquery') {
      max = Math.max(max, maxScope(e.query));
      if (e.kind !== 'InSubquery') return;
    }
    forEachChild(e, visit);
  };
  q.outputs.forEach((o) => visit(o.expr));
  if (q.where) visit(q.where);
  q.groupBy.forEach(visit);
  if (q.having) visit(q.having);
  q.orderBy.forEach((o) => visit(o.expr));
  return max;
}
