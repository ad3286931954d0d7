import type * as B from '../bind/bound.js';
import { forEachBoundChild, isAggregateCall } from '../bind/exprs.js';
import type { Catalog } from '../catalog/types.js';
import type { DiagnosticBag } from '../diagnostics/diagnostic.js';
import type { Span } from '../diagnostics/span.js';
import { forEachQueryExpr, mapExpr, mapQuery } from './rewrites.js';

/**
 * `fanout: 'exact'`: aggregates over one-to-many relations computed without multiplication.
 *
 * The service's semantics join one row per child, so in
 * `SELECT name, COUNT(contacts.id), SUM(opportunities.amount) FROM account GROUP BY name` every
 * contact is paired with every opportunity and both numbers come out multiplied. Under this
 * option an aggregate counts each record once per group, among the rows the query keeps:
 *
 * - An aggregate over a relation's column (`SUM(opportunities.amount)`) becomes the parent's
 *   aggregate of a correlated subquery per parent row, `SUM((SELECT sum(x.amount) FROM
 *   opportunity x WHERE x.account = p.id AND ...))`; COUNT sums per-parent counts, AVG divides the
 *   summed sums by the summed counts, MIN and MAX take the extreme of the per-parent extremes.
 *   An aggregate over the parent's own columns reads the parent's rows, each once.
 * - A WHERE condition on one relation (`contacts.status = 'active'`) keeps the parents with some
 *   child that satisfies it (or, when the condition is true on no child at all, as on the fan-out's
 *   row of NULLs, the parents without children), and limits that relation's aggregates to the
 *   children that satisfy it — exactly which rows of the fan-out would have survived.
 *
 * What has no single exact reading is refused with FANOUT_EXACT_UNSUPPORTED, never guessed: a
 * one-to-many column outside an aggregate (grouping by a child column), one condition or one
 * aggregate spanning two relations, an aggregate over a relation reached through a to-one hop
 * (`account.contacts` from opportunities: two opportunities of one account would count its
 * contacts twice), and a DISTINCT aggregate over a relation next to duplicate-sensitive ones. A query without one-to-many relations, or whose aggregates are all
 * MIN, MAX or DISTINCT, is left exactly as it is.
 */
export function exactAggregates(q: B.BoundQuery, catalog: Catalog, bag: DiagnosticBag, nextScope: () => number): B.BoundQuery {
  // Subqueries of the user's own first, so a correlated subquery built below is never revisited.
  const inner = mapQuery(q, (e) => {
    if (e.kind === 'Exists' || e.kind === 'Subquery' || e.kind === 'InSubquery') {
      const query = exactAggregates(e.query, catalog, bag, nextScope);
      return query === e.query ? e : ({ ...e, query } as B.BExpr);
    }
    return e;
  });
  return new Exact(inner, catalog, bag, nextScope).query();
}

/** A one-to-many relation reached from the query's scope: the hops up to and including the first virtual one. */
interface Relation {
  readonly key: string;
  /** As the user wrote it: `contacts`, `account.contacts`. */
  readonly name: string;
  /** To-one hops before the virtual one (the parent the children belong to). */
  readonly prefix: readonly B.Hop[];
  readonly hop: B.Hop;
  /** Slug of the object the virtual hop leaves from. */
  readonly parent: string;
}

const AGGREGATE_NAMES: Record<string, string> = { count: 'COUNT', sum: 'SUM', avg: 'AVG', min: 'MIN', max: 'MAX' };

class Exact {
  private failed = false;

  constructor(
    private readonly q: B.BoundQuery,
    private readonly catalog: Catalog,
    private readonly bag: DiagnosticBag,
    private readonly nextScope: () => number,
  ) {}

  query(): B.BoundQuery {
    const q = this.q;
    if (!q.aggregated && q.groupBy.length === 0) return q;
    if (!this.anyRelation() || this.multiplicityInsensitive()) return q;

    // Grouping and plain select items must stay at the parent's grain.
    const outside = (e: B.BExpr): void => this.outsideAggregates(e, (c) => this.refuse(c.span,
      `'${this.show(c)}' is a column of the one-to-many relation ${this.relationOf(c)!.name} outside an aggregate: grouping or showing it makes the children the rows, and exact aggregates need the parent's rows`,
      `query FROM ${c.object} instead, or leave fanout: 'exact' off for this query`));
    q.outputs.forEach((o) => outside(o.expr));
    q.groupBy.forEach(outside);
    if (q.having) outside(q.having);
    q.orderBy.forEach((o) => outside(o.expr));

    const { root, byRelation } = this.splitWhere();
    if (this.failed) return q;

    const aggregate = (e: B.BExpr): B.BExpr => (isAggregateCall(e) && e.kind === 'Call' ? this.aggregate(e, byRelation) : e);
    const rewritten = mapQuery({ ...q, where: null }, aggregate);
    if (this.failed) return q;

    const filters = [...root];
    for (const [key, { relation, condition }] of byRelation) filters.push(this.keeps(relation, condition, key));
    const where = filters.length === 0 ? null : filters.length === 1 ? filters[0]! : logical('AND', filters, q.where!.span);
    return { ...rewritten, where };
  }

  // ---- what the query reads

  private relationOf(c: B.BColumn): Relation | null {
    if (c.scope !== this.q.scope) return null;
    const i = c.hops.findIndex((h) => h.kind === 'virtual');
    if (i < 0) return null;
    const prefix = c.hops.slice(0, i);
    const parent = prefix.length === 0 ? this.q.object : prefix[prefix.length - 1]!.object;
    const path = c.hops.slice(0, i + 1).map((h) => h.via);
    return { key: path.join('/'), name: path.join('.'), prefix, hop: c.hops[i]!, parent };
  }

  /** Every column of this query's scope in `e`, correlated references inside subqueries included. */
  private columns(e: B.BExpr, visit: (c: B.BColumn) => void): void {
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

  private relationsIn(e: B.BExpr): Map<string, Relation> {
    const found = new Map<string, Relation>();
    this.columns(e, (c) => {
      const r = this.relationOf(c);
      if (r) found.set(r.key, r);
    });
    return found;
  }

  private anyRelation(): boolean {
    let any = false;
    forEachQueryExpr(this.q, (e) => {
      if (!any && this.relationsIn(e).size > 0) any = true;
    });
    return any;
  }

  /** MIN, MAX and DISTINCT aggregates cannot tell repeated rows apart: nothing to correct. */
  private multiplicityInsensitive(): boolean {
    let sensitive = false;
    this.eachAggregate((a) => {
      if (!(a.fn === 'min' || a.fn === 'max' || a.distinct)) sensitive = true;
    });
    return !sensitive;
  }

  private eachAggregate(visit: (a: B.BCall) => void): void {
    const walk = (e: B.BExpr): void => {
      if (isAggregateCall(e) && e.kind === 'Call') visit(e);
      else forEachBoundChild(e, walk);
    };
    this.q.outputs.forEach((o) => walk(o.expr));
    if (this.q.having) walk(this.q.having);
    this.q.orderBy.forEach((o) => walk(o.expr));
  }

  private outsideAggregates(e: B.BExpr, visit: (c: B.BColumn) => void): void {
    if (isAggregateCall(e)) return;
    if (e.kind === 'Column') {
      if (this.relationOf(e)) visit(e);
      return;
    }
    if (e.kind === 'Exists' || e.kind === 'Subquery' || e.kind === 'InSubquery') {
      this.columns(e, (c) => {
        if (this.relationOf(c)) visit(c);
      });
      return;
    }
    forEachBoundChild(e, (x) => this.outsideAggregates(x, visit));
  }

  // ---- WHERE

  /** Conditions on the parent alone, and per relation the AND of the conditions on it. */
  private splitWhere(): { root: B.BExpr[]; byRelation: Map<string, { relation: Relation; condition: B.BExpr }> } {
    const root: B.BExpr[] = [];
    const byRelation = new Map<string, { relation: Relation; condition: B.BExpr }>();
    const conjuncts = this.q.where === null ? [] : flattenAnd(this.q.where);
    for (const c of conjuncts) {
      const rels = [...this.relationsIn(c).values()];
      if (rels.length === 0) root.push(c);
      else if (rels.length > 1) {
        this.refuse(c.span,
          `this condition reads two one-to-many relations (${rels.map((r) => r.name).join(' and ')}): which pairs of their children it keeps has no exact reading`,
          'split it into conditions on one relation each (EXISTS per relation), or leave fanout: \'exact\' off for this query');
      } else {
        const r = rels[0]!;
        const before = byRelation.get(r.key);
        byRelation.set(r.key, { relation: r, condition: before ? logical('AND', [before.condition, c], c.span) : c });
      }
    }
    return { root, byRelation };
  }

  /**
   * The parents the fan-out would keep for a condition on one relation: those with a child that
   * satisfies it, and (when the condition can be true on the row of NULLs a parent without
   * children gets) the parents without children.
   */
  private keeps(r: Relation, condition: B.BExpr, key: string): B.BExpr {
    const span = condition.span;
    const some = this.exists(r, this.rescope(condition, key), span);
    const onNulls = mapExpr(condition, (x) => (x.kind === 'Column' && this.relationOf(x)?.key === key ? ({ kind: 'Null', type: x.type, span: x.span } as B.BNull) : x));
    if (neverTrueOnNulls(onNulls)) return some;
    const none: B.BUnary = { kind: 'Unary', op: 'NOT', operand: this.exists(r, null, span), type: 'boolean', span };
    return logical('OR', [some, logical('AND', [none, onNulls], span)], span);
  }

  private exists(r: Relation, condition: ((scope: number) => B.BExpr) | null, span: Span): B.BExists {
    const scope = this.nextScope();
    const where = condition === null ? this.correlation(r, scope, span) : logical('AND', [this.correlation(r, scope, span), condition(scope)], span);
    return { kind: 'Exists', type: 'boolean', span, query: subquery(scope, r.hop.object, [{ key: '1', expr: { kind: 'Null', type: 'null', span }, type: 'null', span }], where, false, span) };
  }

  /** `child.<its to-one column> = parent.id`, the parent read from the query's own scope. */
  private correlation(r: Relation, scope: number, span: Span): B.BExpr {
    const rel = this.catalog.objects.get(r.parent)?.columns.get(r.hop.via)?.relation;
    if (rel?.kind !== 'virtual') throw new Error(`catalog invariant: ${r.parent}.${r.hop.via} is not a virtual relation`);
    const { idColumn } = this.catalog.mapping;
    const child: B.BColumn = { kind: 'Column', scope, hops: [], object: r.hop.object, column: rel.via, logical: 'relation', type: 'text', span };
    const parent: B.BColumn = { kind: 'Column', scope: this.q.scope, hops: r.prefix, object: r.parent, column: idColumn, logical: 'id', type: 'text', span };
    return { kind: 'Binary', op: '=', left: child, right: parent, type: 'boolean', span };
  }

  /** `e` with the relation's columns read from a subquery's scope (a function of it, so each use gets its own). */
  private rescope(e: B.BExpr, key: string): (scope: number) => B.BExpr {
    return (scope) => mapExpr(e, (x) => {
      if (x.kind !== 'Column' || this.relationOf(x)?.key !== key) return x;
      return { ...x, scope, hops: x.hops.slice(this.relationOf(x)!.prefix.length + 1) };
    });
  }

  // ---- aggregates

  private aggregate(a: B.BCall, byRelation: Map<string, { relation: Relation; condition: B.BExpr }>): B.BExpr {
    const rels = [...new Map(a.args.flatMap((x) => [...this.relationsIn(x)])).values()];
    if (rels.length === 0) return a;
    const name = `${AGGREGATE_NAMES[a.fn] ?? a.fn}(${this.show(a.args[0] ?? a)})`;
    if (rels.length > 1) {
      this.refuse(a.span, `${name} reads two one-to-many relations (${rels.map((r) => r.name).join(' and ')}): each pair of their children would be one value`,
        'aggregate each relation on its own');
      return a;
    }
    if (a.distinct) {
      this.refuse(a.span, `${name} with DISTINCT cannot be added up per parent, and this query has aggregates that need exact counting`,
        'put the DISTINCT aggregate in a query of its own (it is exact without the option)');
      return a;
    }
    const r = rels[0]!;
    if (r.prefix.length > 0) {
      const via = r.prefix.map((h) => h.via).join('.');
      this.refuse(a.span, `${name} reaches ${r.name} through ${via}: several ${this.q.object} records can share one ${r.parent}, so its children cannot be added up per ${this.q.object}`,
        `query FROM ${r.parent} instead, where each ${r.parent} is one row`);
      return a;
    }
    const filter = byRelation.get(r.key)?.condition ?? null;
    const span = a.span;
    const per = (fn: B.FunctionName, type: B.ValueType): B.BSubquery => {
      const scope = this.nextScope();
      const args = a.args.map((x) => this.rescope(x, r.key)(scope));
      const call: B.BCall = { kind: 'Call', fn, args, distinct: false, star: false, type, span };
      const correlation = this.correlation(r, scope, span);
      const where = filter === null ? correlation : logical('AND', [correlation, this.rescope(filter, r.key)(scope)], span);
      const query = subquery(scope, r.hop.object, [{ key: fn, expr: call, type, span }], where, true, span);
      return { kind: 'Subquery', query, type, span };
    };
    const outer = (fn: B.FunctionName, arg: B.BExpr, type: B.ValueType): B.BCall => ({ kind: 'Call', fn, args: [arg], distinct: false, star: false, type, span });
    switch (a.fn) {
      case 'sum':
        return outer('sum', per('sum', a.type), a.type);
      case 'min':
      case 'max':
        return outer(a.fn, per(a.fn, a.type), a.type);
      case 'count': {
        // No rows at all (no GROUP BY): COUNT is 0, a SUM over nothing is NULL.
        const zero: B.BValue = { kind: 'Value', value: 0, pgType: 'int8', type: 'number', span };
        return { kind: 'Call', fn: 'coalesce', args: [outer('sum', per('count', 'number'), 'number'), zero], distinct: false, star: false, type: 'number', span };
      }
      case 'avg': {
        const total = outer('sum', per('sum', 'number'), 'number');
        const n = outer('sum', per('count', 'number'), 'number');
        const none: B.BExpr = { kind: 'Binary', op: '=', left: n, right: { kind: 'Value', value: 0, pgType: 'int8', type: 'number', span }, type: 'boolean', span };
        const ratio: B.BExpr = { kind: 'Binary', op: '/', left: total, right: n, type: 'number', span };
        return { kind: 'Case', operand: null, whens: [{ when: none, then: { kind: 'Null', type: 'number', span } }], else: ratio, type: 'number', span };
      }
      default:
        return a;
    }
  }

  // ---- diagnostics

  private refuse(span: Span, message: string, hint: string): void {
    this.failed = true;
    this.bag.error('FANOUT_EXACT_UNSUPPORTED', span, `fanout: 'exact': ${message}`, hint);
  }

  private show(e: { span: Span }): string {
    return this.bag.source.slice(e.span.start, e.span.end);
  }
}

function subquery(scope: number, object: string, outputs: B.BoundOutput[], where: B.BExpr, aggregated: boolean, span: Span): B.BoundQuery {
  return { kind: 'Query', scope, object, distinct: false, outputs, where, groupBy: [], having: null, orderBy: [], limit: null, offset: null, aggregated, span };
}

function logical(op: 'AND' | 'OR', operands: B.BExpr[], span: Span): B.BLogical {
  return { kind: 'Logical', op, operands, type: 'boolean', span };
}

function flattenAnd(e: B.BExpr): B.BExpr[] {
  return e.kind === 'Logical' && e.op === 'AND' ? e.operands.flatMap(flattenAnd) : [e];
}

/**
 * True when `e`, with the relation's columns replaced by NULL, can never be TRUE: comparisons,
 * LIKE, IN and BETWEEN on a NULL operand, IS NOT NULL of NULL, and AND/OR of such. Anything
 * else (IS NULL, coalesce, NOT, CASE) may be true on a parent without children.
 */
function neverTrueOnNulls(e: B.BExpr): boolean {
  switch (e.kind) {
    case 'Logical':
      return e.op === 'AND' ? e.operands.some(neverTrueOnNulls) : e.operands.every(neverTrueOnNulls);
    case 'Binary':
      return ['=', '<>', '<', '<=', '>', '>=', '&&'].includes(e.op) && (isNull(e.left) || isNull(e.right));
    case 'Like':
    case 'InList':
    case 'Between':
      return isNull(e.operand);
    case 'IsNull':
      return e.negated && isNull(e.operand);
    case 'Null':
      return true;
    default:
      return false;
  }
}

function isNull(e: B.BExpr): boolean {
  return e.kind === 'Null';
}
