import type * as B from '../bind/bound.js';

/**
 * Planner rewrites: each is a named function from a bound expression to an equivalent one,
 * applied bottom-up by `mapQuery`. A rewrite never changes the result of a query.
 */
export type Rewrite = (e: B.BExpr) => B.BExpr;

/** `if(c, a, b)` is the dialect's shorthand for `CASE WHEN c THEN a ELSE b END`. */
export const ifToCase: Rewrite = (e) => {
  if (e.kind !== 'Call' || e.fn !== 'if') return e;
  const [when, then, otherwise] = e.args as [B.BExpr, B.BExpr, B.BExpr];
  return { kind: 'Case', operand: null, whens: [{ when, then }], else: otherwise, type: e.type, span: e.span };
};

/**
 * `count(DISTINCT t.id)` is `count(t.id)` when no join multiplies the rows of t's scope: ids
 * are unique per tenant (the primary key is tenant + id) and never null. Typical after
 * semi-joins removed the fan-out, and it spares PostgreSQL a sort or hash per group.
 */
export function distinctIdCount(idColumn: string, multiplyingScopes: ReadonlySet<number>): Rewrite {
  return (e) => {
    if (e.kind !== 'Call' || e.fn !== 'count' || !e.distinct) return e;
    const arg = e.args[0];
    if (arg?.kind !== 'Column' || arg.hops.length !== 0 || arg.column !== idColumn || multiplyingScopes.has(arg.scope)) return e;
    return { ...e, distinct: false };
  };
}

/**
 * `SELECT DISTINCT` is redundant when the select list holds the FROM object's own id and no
 * join multiplies its rows (to-one joins match at most one row): every row is already unique,
 * and dropping DISTINCT lets a LIMIT stop early instead of de-duplicating every match first.
 */
export function distinctById(q: B.BoundQuery, idColumn: string, multiplyingScopes: ReadonlySet<number>): B.BoundQuery {
  if (!q.distinct || q.aggregated || multiplyingScopes.has(q.scope)) return q;
  const hasId = q.outputs.some((o) => o.expr.kind === 'Column' && o.expr.scope === q.scope && o.expr.hops.length === 0 && o.expr.column === idColumn);
  return hasId ? { ...q, distinct: false } : q;
}

/** Calls `f` on every top-level expression of a query (its subqueries are reached through them). */
export function forEachQueryExpr(q: B.BoundQuery, f: (e: B.BExpr) => void): void {
  q.outputs.forEach((o) => f(o.expr));
  if (q.where) f(q.where);
  q.groupBy.forEach(f);
  if (q.having) f(q.having);
  q.orderBy.forEach((o) => f(o.expr));
}

/** Applies `rewrite` bottom-up; nodes whose subtree did not change are reused, not copied. */
export function mapQuery(q: B.BoundQuery, rewrite: Rewrite): B.BoundQuery {
  return new Mapper(rewrite).query(q);
}

export function mapExpr(e: B.BExpr, rewrite: Rewrite): B.BExpr {
  return new Mapper(rewrite).expr(e);
}

/**
 * `items` with `f` applied to each, in order and once (a rewrite may number new scopes as it
 * goes): the same array when no item changed, a new one allocated only from the first change.
 */
function mapList<T>(items: readonly T[], f: (x: T) => T): readonly T[] {
  for (let i = 0; i < items.length; i++) {
    const first = f(items[i]!);
    if (first === items[i]) continue;
    const out = items.slice(0, i);
    out.push(first);
    for (let j = i + 1; j < items.length; j++) out.push(f(items[j]!));
    return out;
  }
  return items;
}

type CaseWhen = B.BCase['whens'][number];

/**
 * One walk of a rewrite. Most walks change nothing (few queries hold an `if` or a count of
 * distinct ids), so nothing is allocated until a node changes: no closure per node, no copied
 * child lists.
 */
class Mapper {
  readonly expr = (e: B.BExpr): B.BExpr => this.rewrite(this.children(e));
  private readonly item = <T extends { readonly expr: B.BExpr }>(o: T): T => {
    const expr = this.expr(o.expr);
    return expr === o.expr ? o : { ...o, expr };
  };
  private readonly when = (w: CaseWhen): CaseWhen => {
    const when = this.expr(w.when);
    const then = this.expr(w.then);
    return when === w.when && then === w.then ? w : { when, then };
  };

  constructor(private readonly rewrite: Rewrite) {}

  query(q: B.BoundQuery): B.BoundQuery {
    const outputs = mapList(q.outputs, this.item);
    const where = q.where && this.expr(q.where);
    const groupBy = mapList(q.groupBy, this.expr);
    const having = q.having && this.expr(q.having);
    const orderBy = mapList(q.orderBy, this.item);
    if (outputs === q.outputs && where === q.where && groupBy === q.groupBy && having === q.having && orderBy === q.orderBy) return q;
    return { ...q, outputs, where, groupBy, having, orderBy };
  }

  /** `e` with its children rewritten (itself when none changed); the node itself not yet. */
  private children(e: B.BExpr): B.BExpr {
    const m = this.expr;
    switch (e.kind) {
      case 'Call': {
        const args = mapList(e.args, m);
        return args === e.args ? e : { ...e, args };
      }
      case 'Unary':
      case 'IsNull':
      case 'IsEmpty':
      case 'Cast': {
        const operand = m(e.operand);
        return operand === e.operand ? e : ({ ...e, operand } as B.BExpr);
      }
      case 'Binary': {
        const left = m(e.left);
        const right = m(e.right);
        return left === e.left && right === e.right ? e : { ...e, left, right };
      }
      case 'Logical': {
        const operands = mapList(e.operands, m);
        return operands === e.operands ? e : { ...e, operands };
      }
      case 'Between': {
        const operand = m(e.operand);
        const low = m(e.low);
        const high = m(e.high);
        return operand === e.operand && low === e.low && high === e.high ? e : { ...e, operand, low, high };
      }
      case 'Like': {
        const operand = m(e.operand);
        const pattern = m(e.pattern);
        return operand === e.operand && pattern === e.pattern ? e : { ...e, operand, pattern };
      }
      case 'InList': {
        const operand = m(e.operand);
        const items = mapList(e.items, m);
        return operand === e.operand && items === e.items ? e : { ...e, operand, items };
      }
      case 'InSubquery': {
        const operand = m(e.operand);
        const query = this.query(e.query);
        return operand === e.operand && query === e.query ? e : { ...e, operand, query };
      }
      case 'Exists':
      case 'Subquery': {
        const query = this.query(e.query);
        return query === e.query ? e : ({ ...e, query } as B.BExpr);
      }
      case 'Case': {
        const operand = e.operand && m(e.operand);
        const whens = mapList(e.whens, this.when);
        const otherwise = e.else && m(e.else);
        return operand === e.operand && whens === e.whens && otherwise === e.else ? e : { ...e, operand, whens, else: otherwise };
      }
      case 'Array': {
        const items = mapList(e.items, m);
        return items === e.items ? e : { ...e, items };
      }
      case 'AtTimeZone': {
        const operand = m(e.operand);
        const zone = m(e.zone);
        return operand === e.operand && zone === e.zone ? e : { ...e, operand, zone };
      }
      case 'RowCompare': {
        const left = mapList(e.left, m);
        const right = mapList(e.right, m);
        return left === e.left && right === e.right ? e : { ...e, left, right };
      }
      case 'InGroup': {
        const operand = m(e.operand);
        const member = m(e.member);
        if (member.kind !== 'Column') throw new Error('rewrite invariant: the member of InGroup stays a column');
        return operand === e.operand && member === e.member ? e : { ...e, operand, member };
      }
      default:
        return e;
    }
  }
}
