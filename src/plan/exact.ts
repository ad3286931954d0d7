import type * as B from '../bind/bound.js';
import { forEachBoundChild, isAggregateCall } from '../bind/exprs.js';
import type { Catalog } from '../catalog/types.js';
import type { DiagnosticBag } from '../diagnostics/diagnostic.js';
import type { Span } from '../diagnostics/span.js';
import { Relations, logical, subquery, type Binding, type Relation } from './exact-relations.js';
import { forEachQueryExpr, mapQuery } from './rewrites.js';

/**
 * `fanout: 'exact'`: aggregates over one-to-many relations computed without multiplication.
 *
 * The service's semantics join one row per child, so in
 * `SELECT name, COUNT(contacts.id), SUM(opportunities.amount) FROM account GROUP BY name` every
 * contact is paired with every opportunity and both numbers come out multiplied. Under this
 * option an aggregate reads each record once per group, among the rows the query keeps: the
 * rows of the fan-out (each parent paired with one child of every relation the query uses, or
 * with the row of NULLs when it has none) for which WHERE is true.
 *
 * - WHERE keeps the parents that have such a row: each relation becomes "some child (or the row
 *   of NULLs) satisfies ..." (src/plan/exact-relations.ts), through AND, OR, NOT and conditions
 *   that read two relations at once.
 * - An aggregate over a relation reached directly (`SUM(opportunities.amount)`) becomes the
 *   parent's aggregate of a correlated subquery per parent row over the children that appear in
 *   a kept row: `SUM((SELECT sum(x.amount) FROM opportunity x WHERE x.account = p.id AND ...))`;
 *   COUNT sums per-parent counts, AVG divides the summed sums by the summed counts, MIN and MAX
 *   take the extreme of the per-parent extremes. Each parent is one row of its group, and each
 *   child has one parent, so every child is read once.
 * - An aggregate over a relation reached through a to-one hop (`COUNT(account.contacts.id)` from
 *   opportunities: two opportunities of a group may share an account) or with DISTINCT cannot
 *   be added up per parent: it is computed once per group over the children of the group's
 *   kept rows, found through `array_agg` of the group's ids (BInGroup).
 * - Aggregates over the parent's own columns read the parent's rows, each once: the rewritten
 *   query joins no relation any more.
 *
 * Refused with FANOUT_EXACT_UNSUPPORTED, because no single exact reading exists: a one-to-many
 * column outside an aggregate (the children become the rows, so COUNT(*) could count either),
 * one aggregate reading two relations (its values are pairs of children, and a pair with the
 * row of NULLs is no record), and an aggregate over a relation reached through a to-one hop that
 * also reads the query's own row (pairs again). A query without one-to-many relations, or whose
 * aggregates are all MIN, MAX or DISTINCT, is left as it is: the fan-out gives those exactly.
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

const AGGREGATE_NAMES: Record<string, string> = { count: 'COUNT', sum: 'SUM', avg: 'AVG', min: 'MIN', max: 'MAX' };

class Exact {
  private failed = false;
  private readonly rel: Relations;

  constructor(
    private readonly q: B.BoundQuery,
    private readonly catalog: Catalog,
    private readonly bag: DiagnosticBag,
    private readonly nextScope: () => number,
  ) {
    this.rel = new Relations(q, catalog, nextScope);
  }

  query(): B.BoundQuery {
    const q = this.q;
    if (!q.aggregated && q.groupBy.length === 0) return q;
    if (!this.anyRelation() || this.multiplicityInsensitive()) return q;

    // Grouping and plain select items must stay at the parent's grain.
    const outside = (e: B.BExpr): void => this.outsideAggregates(e, (c) => this.refuse(c.span,
      `'${this.show(c)}' is a column of the one-to-many relation ${this.rel.of(c)!.name} outside an aggregate: grouping or showing it makes the children the rows, and COUNT(*) or an aggregate of ${q.object} could then count either`,
      `query FROM ${c.object} instead, or leave fanout: 'exact' off for this query`));
    q.outputs.forEach((o) => outside(o.expr));
    q.groupBy.forEach(outside);
    if (q.having) outside(q.having);
    q.orderBy.forEach((o) => outside(o.expr));
    if (this.failed) return q;

    const aggregate = (e: B.BExpr): B.BExpr => (isAggregateCall(e) && e.kind === 'Call' ? this.aggregate(e) : e);
    const rewritten = mapQuery({ ...q, where: null }, aggregate);
    if (this.failed) return q;
    const where = q.where && this.rel.quantify(q.where, this.rel.in(q.where), this.rel.root);
    return { ...rewritten, where };
  }

  // ---- what the query reads

  private anyRelation(): boolean {
    let any = false;
    forEachQueryExpr(this.q, (e) => {
      if (!any && this.rel.in(e).size > 0) any = true;
    });
    return any;
  }

  /** MIN, MAX and DISTINCT aggregates cannot tell repeated rows apart: nothing to correct. */
  private multiplicityInsensitive(): boolean {
    let sensitive = false;
    const walk = (e: B.BExpr): void => {
      if (isAggregateCall(e) && e.kind === 'Call') {
        if (!(e.fn === 'min' || e.fn === 'max' || e.distinct)) sensitive = true;
      } else forEachBoundChild(e, walk);
    };
    this.q.outputs.forEach((o) => walk(o.expr));
    if (this.q.having) walk(this.q.having);
    this.q.orderBy.forEach((o) => walk(o.expr));
    return !sensitive;
  }

  private outsideAggregates(e: B.BExpr, visit: (c: B.BColumn) => void): void {
    if (isAggregateCall(e)) return;
    if (e.kind === 'Column') {
      if (this.rel.of(e)) visit(e);
      return;
    }
    if (e.kind === 'Exists' || e.kind === 'Subquery' || e.kind === 'InSubquery') {
      this.rel.columns(e, (c) => {
        if (this.rel.of(c)) visit(c);
      });
      return;
    }
    forEachBoundChild(e, (x) => this.outsideAggregates(x, visit));
  }

  // ---- aggregates

  private aggregate(a: B.BCall): B.BExpr {
    const rels = [...new Map(a.args.flatMap((x) => [...this.rel.in(x)])).values()];
    if (rels.length === 0) return a;
    const name = `${AGGREGATE_NAMES[a.fn] ?? a.fn}(${a.distinct ? 'DISTINCT ' : ''}${this.show(a.args[0] ?? a)})`;
    if (rels.length > 1) {
      this.refuse(a.span, `${name} reads two one-to-many relations (${rels.map((r) => r.name).join(' and ')}): its values are pairs of their children, which are no records to count once`,
        'aggregate each relation on its own');
      return a;
    }
    const r = rels[0]!;
    if (r.prefix.length > 0 && a.args.some((x) => this.readsOwnRow(x))) {
      const via = r.prefix.map((h) => h.via).join('.');
      this.refuse(a.span, `${name} reads both ${r.name} and the ${this.q.object} itself: several ${this.q.object} records can share one ${via}, so its values are pairs, which are no records to count once`,
        `aggregate ${r.name} alone, or query FROM ${r.parent} instead, where each ${r.parent} is one row`);
      return a;
    }
    const condition = this.q.where && this.rel.in(this.q.where).has(r.key) ? this.q.where : null;
    return a.distinct || r.prefix.length > 0 ? this.perGroup(a, r, condition) : this.perParent(a, r, condition);
  }

  /** A column of the query's own row (not of a one-to-many relation) in `e`. */
  private readsOwnRow(e: B.BExpr): boolean {
    let found = false;
    this.rel.columns(e, (c) => {
      if (!this.rel.of(c)) found = true;
    });
    return found;
  }

  /**
   * Which children of `r` an aggregate reads under `binding` (the child in its scope): those in
   * some kept row, that is WHERE with the child fixed and the other relations quantified.
   */
  private childFilter(r: Relation, condition: B.BExpr | null, binding: Binding): B.BExpr | null {
    if (!condition) return null;
    // Conjuncts sharing no relation with r hold on every kept row already.
    const part = this.rel.connectedTo(r, condition);
    const others = new Map(this.rel.in(part));
    others.delete(r.key);
    return this.rel.quantify(part, others, binding);
  }

  /** The aggregate of per-parent subqueries: the parent is one row of its group, each child has one parent. */
  private perParent(a: B.BCall, r: Relation, condition: B.BExpr | null): B.BExpr {
    const span = a.span;
    const per = (fn: B.FunctionName, type: B.ValueType): B.BSubquery => {
      const scope = this.nextScope();
      const binding: Binding = { parent: this.q.scope, rels: new Map([[r.key, scope]]) };
      const args = a.args.map((x) => this.rel.rebind(x, binding));
      const call: B.BCall = { kind: 'Call', fn, args, distinct: false, star: false, type, span };
      const filter = this.childFilter(r, condition, binding);
      const correlation = this.rel.correlation(r, scope, this.q.scope, span);
      const where = filter === null ? correlation : logical('AND', [correlation, filter], span);
      return { kind: 'Subquery', query: this.exactly(subquery(scope, r.hop.object, [{ key: fn, expr: call, type, span }], where, true, span)), type, span };
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
        throw new Error(`exact invariant: ${a.fn} is not an aggregate`);
    }
  }

  /**
   * One subquery per group: the aggregate over the children of `r` that appear in a kept row of
   * the group, `(SELECT agg(c.x) FROM child c WHERE EXISTS (SELECT FROM <object> s WHERE s.id =
   * ANY(array_agg(t.id)) AND c.<via> = s.<prefix>.id AND <c in a kept row of s>))`. Each child is
   * read once however many rows of the group reach it.
   */
  private perGroup(a: B.BCall, r: Relation, condition: B.BExpr | null): B.BExpr {
    const span = a.span;
    const childScope = this.nextScope();
    const rowScope = this.nextScope();
    const binding: Binding = { parent: rowScope, rels: new Map([[r.key, childScope]]) };
    const { idColumn } = this.catalog.mapping;
    const id = (scope: number): B.BColumn => ({ kind: 'Column', scope, hops: [], object: this.q.object, column: idColumn, logical: 'id', type: 'text', span });
    const member: B.BInGroup = { kind: 'InGroup', operand: id(rowScope), member: id(this.q.scope), type: 'boolean', span };
    const filter = this.childFilter(r, condition, binding);
    const rowWhere = logical('AND', [member, this.rel.correlation(r, childScope, rowScope, span), ...(filter ? [filter] : [])], span);
    const inGroup: B.BExists = { kind: 'Exists', type: 'boolean', span, query: subquery(rowScope, this.q.object, [this.rel.nothing(span)], rowWhere, false, span) };
    const call: B.BCall = { ...a, args: a.args.map((x) => this.rel.rebind(x, binding)) };
    const query = this.exactly(subquery(childScope, r.hop.object, [{ key: a.fn, expr: call, type: a.type, span }], inGroup, true, span));
    return { kind: 'Subquery', query, type: a.type, span };
  }

  /** A built aggregate subquery, itself exact: a relation of the child (`sites.assets`) fans out there too. */
  private exactly(sub: B.BoundQuery): B.BoundQuery {
    return exactAggregates(sub, this.catalog, this.bag, this.nextScope);
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
