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
  const m = (e: B.BExpr): B.BExpr => mapExpr(e, rewrite);
  // Each item's expression is rewritten once: a rewrite may number new scopes as it goes.
  const item = <T extends { readonly expr: B.BExpr }>(o: T): T => {
    const expr = m(o.expr);
    return expr === o.expr ? o : { ...o, expr };
  };
  const outputs = sameArray(q.outputs, q.outputs.map(item));
  const where = q.where && m(q.where);
  const groupBy = sameArray(q.groupBy, q.groupBy.map(m));
  const having = q.having && m(q.having);
  const orderBy = sameArray(q.orderBy, q.orderBy.map(item));
  if (outputs === q.outputs && where === q.where && groupBy === q.groupBy && having === q.having && orderBy === q.orderBy) return q;
  return { ...q, outputs, where, groupBy, having, orderBy };
}

function sameArray<T>(before: readonly T[], after: readonly T[]): readonly T[] {
  for (let i = 0; i < before.length; i++) if (before[i] !== after[i]) return after;
  return before;
}

function changed(before: readonly B.BExpr[], after: readonly B.BExpr[]): boolean {
  return sameArray(before, after) !== before;
}

export function mapExpr(e: B.BExpr, rewrite: Rewrite): B.BExpr {
  const m = (x: B.BExpr): B.BExpr => mapExpr(x, rewrite);
  let out: B.BExpr = e;
  switch (e.kind) {
    case 'Call': {
      const args = e.args.map(m);
      if (changed(e.args, args)) out = { ...e, args };
      break;
    }
    case 'Unary':
    case 'IsNull':
    case 'IsEmpty':
    case 'Cast': {
      const operand = m(e.operand);
      if (operand !== e.operand) out = { ...e, operand } as B.BExpr;
      break;
    }
    case 'Binary': {
      const left = m(e.left);
      const right = m(e.right);
      if (left !== e.left || right !== e.right) out = { ...e, left, right };
      break;
    }
    case 'Logical': {
      const operands = e.operands.map(m);
      if (changed(e.operands, operands)) out = { ...e, operands };
      break;
    }
    case 'Between': {
      const [operand, low, high] = [m(e.operand), m(e.low), m(e.high)];
      if (operand !== e.operand || low !== e.low || high !== e.high) out = { ...e, operand, low, high };
      break;
    }
    case 'Like': {
      const [operand, pattern] = [m(e.operand), m(e.pattern)];
      if (operand !== e.operand || pattern !== e.pattern) out = { ...e, operand, pattern };
      break;
    }
    case 'InList': {
      const operand = m(e.operand);
      const items = e.items.map(m);
      if (operand !== e.operand || changed(e.items, items)) out = { ...e, operand, items };
      break;
    }
    case 'InSubquery': {
      const operand = m(e.operand);
      const query = mapQuery(e.query, rewrite);
      if (operand !== e.operand || query !== e.query) out = { ...e, operand, query };
      break;
    }
    case 'Exists':
    case 'Subquery': {
      const query = mapQuery(e.query, rewrite);
      if (query !== e.query) out = { ...e, query } as B.BExpr;
      break;
    }
    case 'Case': {
      const operand = e.operand && m(e.operand);
      const whens = e.whens.map((w) => {
        const [when, then] = [m(w.when), m(w.then)];
        return when === w.when && then === w.then ? w : { when, then };
      });
      const otherwise = e.else && m(e.else);
      if (operand !== e.operand || sameArray(e.whens, whens) !== e.whens || otherwise !== e.else) out = { ...e, operand, whens, else: otherwise };
      break;
    }
    case 'Array': {
      const items = e.items.map(m);
      if (changed(e.items, items)) out = { ...e, items };
      break;
    }
    case 'AtTimeZone': {
      const [operand, zone] = [m(e.operand), m(e.zone)];
      if (operand !== e.operand || zone !== e.zone) out = { ...e, operand, zone };
      break;
    }
    case 'RowCompare': {
      const [left, right] = [e.left.map(m), e.right.map(m)];
      if (changed(e.left, left) || changed(e.right, right)) out = { ...e, left, right };
      break;
    }
    default:
      break;
  }
  return rewrite(out);
}
