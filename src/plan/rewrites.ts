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

export function mapQuery(q: B.BoundQuery, rewrite: Rewrite): B.BoundQuery {
  const m = (e: B.BExpr): B.BExpr => mapExpr(e, rewrite);
  return {
    ...q,
    outputs: q.outputs.map((o) => ({ ...o, expr: m(o.expr) })),
    where: q.where && m(q.where),
    groupBy: q.groupBy.map(m),
    having: q.having && m(q.having),
    orderBy: q.orderBy.map((o) => ({ ...o, expr: m(o.expr) })),
  };
}

export function mapExpr(e: B.BExpr, rewrite: Rewrite): B.BExpr {
  const m = (x: B.BExpr): B.BExpr => mapExpr(x, rewrite);
  let out: B.BExpr;
  switch (e.kind) {
    case 'Call':
      out = { ...e, args: e.args.map(m) };
      break;
    case 'Unary':
      out = { ...e, operand: m(e.operand) };
      break;
    case 'IsNull':
    case 'IsEmpty':
      out = { ...e, operand: m(e.operand) };
      break;
    case 'Cast':
      out = { ...e, operand: m(e.operand) };
      break;
    case 'Binary':
      out = { ...e, left: m(e.left), right: m(e.right) };
      break;
    case 'Logical':
      out = { ...e, operands: e.operands.map(m) };
      break;
    case 'Between':
      out = { ...e, operand: m(e.operand), low: m(e.low), high: m(e.high) };
      break;
    case 'Like':
      out = { ...e, operand: m(e.operand), pattern: m(e.pattern) };
      break;
    case 'InList':
      out = { ...e, operand: m(e.operand), items: e.items.map(m) };
      break;
    case 'InSubquery':
      out = { ...e, operand: m(e.operand), query: mapQuery(e.query, rewrite) };
      break;
    case 'Exists':
      out = { ...e, query: mapQuery(e.query, rewrite) };
      break;
    case 'Subquery':
      out = { ...e, query: mapQuery(e.query, rewrite) };
      break;
    case 'Case':
      out = { ...e, operand: e.operand && m(e.operand), whens: e.whens.map((w) => ({ when: m(w.when), then: m(w.then) })), else: e.else && m(e.else) };
      break;
    case 'Array':
      out = { ...e, items: e.items.map(m) };
      break;
    case 'AtTimeZone':
      out = { ...e, operand: m(e.operand), zone: m(e.zone) };
      break;
    default:
      out = e;
  }
  return rewrite(out);
}
