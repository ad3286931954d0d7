import type * as B from '../bind/bound.js';
import { forEachBoundChild } from '../bind/exprs.js';
import type { Catalog } from '../catalog/types.js';
import type { Span } from '../diagnostics/span.js';
import { forEachQueryExpr, mapExpr } from './rewrites.js';

/**
 * The one-to-many relations of one query scope, as `fanout: 'exact'` reads them (exact.ts):
 * which relation a column belongs to, reading a condition with some relations fixed to one
 * child each, and "some child satisfies ..." for the others.
 */

/** A one-to-many relation reached from the query's scope: the hops up to and including the first virtual one. */
export interface Relation {
  readonly key: string;
  /** As the user wrote it: `contacts`, `account.contacts`. */
  readonly name: string;
  /** To-one hops before the virtual one (the parent the children belong to). */
  readonly prefix: readonly B.Hop[];
  readonly hop: B.Hop;
  /** Slug of the object the virtual hop leaves from. */
  readonly parent: string;
}

/**
 * Where the columns of a condition are read: the query's own row in scope `parent` (its own
 * scope, or a copy of it in a subquery), and each fixed relation's child in the scope given.
 */
export interface Binding {
  readonly parent: number;
  readonly rels: ReadonlyMap<string, number>;
}

export class Relations {
  readonly root: Binding;

  constructor(
    private readonly q: B.BoundQuery,
    private readonly catalog: Catalog,
    private readonly nextScope: () => number,
  ) {
    this.root = { parent: q.scope, rels: new Map() };
  }

  of(c: B.BColumn): Relation | null {
    if (c.scope !== this.q.scope) return null;
    const i = c.hops.findIndex((h) => h.kind === 'virtual');
    if (i < 0) return null;
    const prefix = c.hops.slice(0, i);
    const parent = prefix.length === 0 ? this.q.object : prefix[prefix.length - 1]!.object;
    const path = c.hops.slice(0, i + 1).map((h) => h.via);
    return { key: path.join('/'), name: path.join('.'), prefix, hop: c.hops[i]!, parent };
  }

  /** Every column of the query's scope in `e`, correlated references inside subqueries included. */
  columns(e: B.BExpr, visit: (c: B.BColumn) => void): void {
    if (e.kind === 'Column') {
      visit(e);
      return;
    }
    if (e.kind === 'Exists' || e.kind === 'Subquery' || e.kind === 'InSubquery') {
      if (e.kind === 'InSubquery') this.columns(e.operand, visit);
      forEachQueryExpr(e.query, (x) => this.columns(x, visit));
      return;
    }
    forEachBoundChild(e, (x) => this.columns(x, visit));
  }

  /** The relations `e` reads, in order of first use. */
  in(e: B.BExpr): Map<string, Relation> {
    const found = new Map<string, Relation>();
    this.columns(e, (c) => {
      const r = this.of(c);
      if (r && !found.has(r.key)) found.set(r.key, r);
    });
    return found;
  }

  /** `e` read under `b`: a fixed relation's columns from its child's scope, the row's own from `b.parent`. */
  rebind(e: B.BExpr, b: Binding): B.BExpr {
    if (b.parent === this.q.scope && b.rels.size === 0) return e;
    return mapExpr(e, (x) => {
      if (x.kind !== 'Column' || x.scope !== this.q.scope) return x;
      const r = this.of(x);
      if (!r) return b.parent === this.q.scope ? x : { ...x, scope: b.parent };
      const scope = b.rels.get(r.key);
      if (scope === undefined) throw new Error(`exact invariant: ${r.name} is read but neither fixed nor quantified`);
      return { ...x, scope, hops: x.hops.slice(r.prefix.length + 1) };
    });
  }

  /** `child.<its to-one column> = <the row in scope parent>.<prefix>.id`. */
  correlation(r: Relation, childScope: number, parentScope: number, span: Span): B.BExpr {
    const rel = this.catalog.objects.get(r.parent)?.columns.get(r.hop.via)?.relation;
    if (rel?.kind !== 'virtual') throw new Error(`catalog invariant: ${r.parent}.${r.hop.via} is not a virtual relation`);
    const { idColumn } = this.catalog.mapping;
    const child: B.BColumn = { kind: 'Column', scope: childScope, hops: [], object: r.hop.object, column: rel.via, logical: 'relation', type: 'text', span };
    const parent: B.BColumn = { kind: 'Column', scope: parentScope, hops: r.prefix, object: r.parent, column: idColumn, logical: 'id', type: 'text', span };
    return { kind: 'Binary', op: '=', left: child, right: parent, type: 'boolean', span };
  }

  /** The select item of an EXISTS subquery. */
  nothing(span: Span): B.BoundOutput {
    return { key: '1', expr: { kind: 'Null', type: 'null', span }, type: 'null', span };
  }

  /**
   * `e` (a condition, read for TRUE) with every relation of `free` replaced by "some child of
   * it, or the row of NULLs when there is none", the relations of `b.rels` fixed, the row read
   * from `b.parent`. A relation's children are never an empty set (the row of NULLs stands in),
   * so "some child" passes through AND to the operands that read it and through OR to every
   * operand; NOT is pushed down to the leaves first (De Morgan holds in three-valued logic).
   * What is left is a leaf, or a conjunction whose operands share relations: quantified one
   * relation at a time, nesting.
   */
  quantify(e: B.BExpr, free: ReadonlyMap<string, Relation>, b: Binding): B.BExpr {
    const here = [...this.in(e).values()].filter((r) => free.has(r.key));
    if (here.length === 0) return this.rebind(e, b);
    if (e.kind === 'Unary' && e.op === 'NOT') {
      const inner = e.operand;
      if (inner.kind === 'Logical') {
        const negated = inner.operands.map((o): B.BExpr => ({ kind: 'Unary', op: 'NOT', operand: o, type: 'boolean', span: o.span }));
        return this.quantify(logical(inner.op === 'AND' ? 'OR' : 'AND', negated, e.span), free, b);
      }
      if (inner.kind === 'Unary' && inner.op === 'NOT') return this.quantify(inner.operand, free, b);
    }
    if (e.kind === 'Logical' && e.op === 'OR') return logical('OR', e.operands.map((o) => this.quantify(o, free, b)), e.span);
    if (e.kind === 'Logical' && e.op === 'AND') {
      const parts = this.components(e.operands.flatMap(flattenAnd), free);
      if (parts.length > 1) return logical('AND', parts.map((p) => this.quantify(p.length === 1 ? p[0]! : logical('AND', p, e.span), free, b)), e.span);
    }
    return this.some(here[0]!, e, free, b);
  }

  /** The conjuncts of `e` that read `r`, or another relation read together with it. */
  connectedTo(r: Relation, e: B.BExpr): B.BExpr {
    const parts = this.components(flattenAnd(e), this.in(e));
    const part = parts.find((p) => p.some((x) => this.in(x).has(r.key)));
    if (!part) throw new Error(`exact invariant: the condition does not read ${r.name}`);
    return logical('AND', part, e.span);
  }

  /** The operands of a conjunction, grouped so that no two groups read a common relation of `free`. */
  private components(operands: readonly B.BExpr[], free: ReadonlyMap<string, Relation>): B.BExpr[][] {
    const groups: { rels: Set<string>; ops: B.BExpr[] }[] = [];
    for (const o of operands) {
      const rels = new Set([...this.in(o).keys()].filter((k) => free.has(k)));
      const joined = { rels, ops: [o] };
      for (let i = groups.length - 1; i >= 0; i--) {
        const g = groups[i]!;
        if (rels.size > 0 && [...g.rels].some((k) => rels.has(k))) {
          g.rels.forEach((k) => joined.rels.add(k));
          joined.ops.unshift(...g.ops);
          groups.splice(i, 1);
        }
      }
      groups.push(joined);
    }
    return groups.map((g) => g.ops);
  }

  /**
   * Some child of `r`, or the row of NULLs when the row has none, satisfies `e`:
   * `EXISTS (child c WHERE corr AND e[c]) OR (NOT EXISTS (child WHERE corr) AND e[NULL])`; the
   * second half is left out when `e` can never be true on NULLs.
   */
  private some(r: Relation, e: B.BExpr, free: ReadonlyMap<string, Relation>, b: Binding): B.BExpr {
    const span = e.span;
    const rest = new Map(free);
    rest.delete(r.key);
    const scope = this.nextScope();
    const fixed: Binding = { parent: b.parent, rels: new Map([...b.rels, [r.key, scope]]) };
    const inner = this.quantify(e, rest, fixed);
    const some = this.exists(scope, r, logical('AND', [this.correlation(r, scope, b.parent, span), inner], span), span);
    const onNulls = this.quantify(this.nullRow(e, r.key), rest, b);
    if (neverTrue(onNulls)) return some;
    const emptyScope = this.nextScope();
    const none: B.BUnary = { kind: 'Unary', op: 'NOT', operand: this.exists(emptyScope, r, this.correlation(r, emptyScope, b.parent, span), span), type: 'boolean', span };
    return logical('OR', [some, logical('AND', [none, onNulls], span)], span);
  }

  private exists(scope: number, r: Relation, where: B.BExpr, span: Span): B.BExists {
    return { kind: 'Exists', type: 'boolean', span, query: subquery(scope, r.hop.object, [this.nothing(span)], where, false, span) };
  }

  /** `e` on a row without children of `r`: its columns (and those past it) are NULL. */
  private nullRow(e: B.BExpr, key: string): B.BExpr {
    return mapExpr(e, (x) => (x.kind === 'Column' && this.of(x)?.key === key ? ({ kind: 'Null', type: x.type, span: x.span } as B.BNull) : x));
  }
}

export function subquery(scope: number, object: string, outputs: B.BoundOutput[], where: B.BExpr, aggregated: boolean, span: Span): B.BoundQuery {
  return { kind: 'Query', scope, object, distinct: false, outputs, where, groupBy: [], having: null, orderBy: [], limit: null, offset: null, aggregated, span };
}

export function logical(op: 'AND' | 'OR', operands: B.BExpr[], span: Span): B.BExpr {
  return operands.length === 1 ? operands[0]! : { kind: 'Logical', op, operands, type: 'boolean', span };
}

function flattenAnd(e: B.BExpr): B.BExpr[] {
  return e.kind === 'Logical' && e.op === 'AND' ? e.operands.flatMap(flattenAnd) : [e];
}

/**
 * True when `e`, with a relation's columns replaced by NULL, can never be TRUE: an expression
 * that is NULL whatever else it reads (see alwaysNull), IS NOT NULL of one, and AND/OR of such.
 * Anything else (IS NULL, coalesce, CASE, a subquery) may be true on a parent without children.
 */
function neverTrue(e: B.BExpr): boolean {
  switch (e.kind) {
    case 'Logical':
      return e.op === 'AND' ? e.operands.some(neverTrue) : e.operands.every(neverTrue);
    case 'IsNull':
      return e.negated && alwaysNull(e.operand);
    default:
      return alwaysNull(e);
  }
}

/** Functions that answer NULL when an argument is NULL. */
const STRICT = new Set<B.FunctionName>(['lower', 'upper', 'trim', 'left', 'abs', 'round', 'date_trunc', 'to_timestamp', 'date_part']);

/** True when `e` is NULL on every row: NULL, or an operator or strict function of it. */
function alwaysNull(e: B.BExpr): boolean {
  switch (e.kind) {
    case 'Null':
      return true;
    case 'Binary':
      return alwaysNull(e.left) || alwaysNull(e.right);
    case 'Unary':
    case 'Cast':
    case 'AtTimeZone':
    case 'Like':
    case 'InList':
    case 'Between':
      return alwaysNull(e.operand);
    case 'Call':
      return STRICT.has(e.fn) && e.args.some(alwaysNull);
    default:
      return false;
  }
}
