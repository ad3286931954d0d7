import type * as B from './bound.js';

const AGGREGATES = new Set(['count', 'sum', 'avg', 'min', 'max']);

export function isAggregateCall(e: B.BExpr): boolean {
  return e.kind === 'Call' && AGGREGATES.has(e.fn);
}

/** True when `e` contains an aggregate of its own query (subqueries aggregate for themselves). */
export function isAggregate(e: B.BExpr): boolean {
  if (isAggregateCall(e)) return true;
  let found = false;
  forEachBoundChild(e, (c) => {
    if (!found && isAggregate(c)) found = true;
  });
  return found;
}

/** Calls `visit` on each child expression of `e`; subqueries are not entered. */
export function forEachBoundChild(e: B.BExpr, visit: (c: B.BExpr) => void): void {
  switch (e.kind) {
    case 'Call':
      e.args.forEach(visit);
      return;
    case 'Unary':
    case 'IsNull':
    case 'IsEmpty':
    case 'Cast':
      visit(e.operand);
      return;
    case 'Binary':
      visit(e.left);
      visit(e.right);
      return;
    case 'Logical':
      e.operands.forEach(visit);
      return;
    case 'Between':
      [e.operand, e.low, e.high].forEach(visit);
      return;
    case 'Like':
      [e.operand, e.pattern].forEach(visit);
      return;
    case 'InList':
      [e.operand, ...e.items].forEach(visit);
      return;
    case 'InSubquery':
      visit(e.operand);
      return;
    case 'Case':
      if (e.operand) visit(e.operand);
      e.whens.forEach((w) => {
        visit(w.when);
        visit(w.then);
      });
      if (e.else) visit(e.else);
      return;
    case 'Array':
      e.items.forEach(visit);
      return;
    case 'AtTimeZone':
      visit(e.operand);
      visit(e.zone);
      return;
    default:
      return;
  }
}

/** Structural equality ignoring spans: GROUP BY matching and ORDER BY of selected items. */
export function sameExpr(a: B.BExpr, b: B.BExpr): boolean {
  return canonical(a) === canonical(b);
}

const cache = new WeakMap<object, string>();

export function canonical(e: unknown): string {
  if (e === null || typeof e !== 'object') return JSON.stringify(e) ?? 'undefined';
  const hit = cache.get(e);
  if (hit !== undefined) return hit;
  let out: string;
  if (Array.isArray(e)) out = `[${e.map(canonical).join(',')}]`;
  else {
    const parts: string[] = [];
    for (const [k, v] of Object.entries(e)) if (k !== 'span') parts.push(`${k}:${canonical(v)}`);
    out = `{${parts.join(',')}}`;
  }
  cache.set(e, out);
  return out;
}
