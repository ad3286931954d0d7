import type * as B from './bound.js';

const AGGREGATES = new Set(['count', 'sum', 'avg', 'min', 'max']);

export function isAggregateCall(e: B.BExpr): boolean {
  return e.kind === 'Call' && AGGREGATES.has(e.fn);
}

/** True when `e` contains an aggregate of its own query (subqueries aggregate for themselves). */
export function isAggregate(e: B.BExpr): boolean {
  return isAggregateCall(e) || someBoundChild(e, isAggregate);
}

/** Whether `test` holds for a child expression of `e` (subqueries are not entered); stops at the first. */
export function someBoundChild(e: B.BExpr, test: (c: B.BExpr) => boolean): boolean {
  switch (e.kind) {
    case 'Call':
      return e.args.some(test);
    case 'Unary':
    case 'IsNull':
    case 'IsEmpty':
    case 'Cast':
    case 'InSubquery':
      return test(e.operand);
    case 'Binary':
      return test(e.left) || test(e.right);
    case 'Logical':
      return e.operands.some(test);
    case 'Between':
      return test(e.operand) || test(e.low) || test(e.high);
    case 'Like':
      return test(e.operand) || test(e.pattern);
    case 'InList':
      return test(e.operand) || e.items.some(test);
    case 'Case':
      return (e.operand !== null && test(e.operand)) || e.whens.some((w) => test(w.when) || test(w.then)) || (e.else !== null && test(e.else));
    case 'Array':
      return e.items.some(test);
    case 'AtTimeZone':
      return test(e.operand) || test(e.zone);
    case 'RowCompare':
      return e.left.some(test) || e.right.some(test);
    case 'InGroup':
      return test(e.operand) || test(e.member);
    default:
      return false;
  }
}

/** Kinds an expression that reads no row may be made of (with non-aggregate calls). */
const ROW_FREE = new Set<B.BExpr['kind']>(['Value', 'Null', 'Now', 'Call', 'Unary', 'Binary', 'Logical', 'IsNull', 'Case', 'Array', 'Cast', 'AtTimeZone']);

/**
 * True when `e` computes a value from no row: literals and NOW() through calls, arithmetic, CASE
 * and time zones (the start of this month in a zone, say), and not a lone literal or NOW(), which
 * cost nothing to read again.
 */
export function isRowFreeComputation(e: B.BExpr): boolean {
  return e.kind !== 'Value' && e.kind !== 'Null' && e.kind !== 'Now' && readsNoRow(e);
}

function readsNoRow(e: B.BExpr): boolean {
  if (!ROW_FREE.has(e.kind) || isAggregateCall(e)) return false;
  return !someBoundChild(e, (c) => !readsNoRow(c));
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
      visit(e.operand);
      visit(e.low);
      visit(e.high);
      return;
    case 'Like':
      visit(e.operand);
      visit(e.pattern);
      return;
    case 'InList':
      visit(e.operand);
      e.items.forEach(visit);
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
    case 'RowCompare':
      e.left.forEach(visit);
      e.right.forEach(visit);
      return;
    case 'InGroup':
      visit(e.operand);
      visit(e.member);
      return;
    default:
      return;
  }
}

/**
 * Structural equality ignoring spans: GROUP BY matching and ORDER BY of selected items.
 * Compares field by field and stops at the first difference; bound nodes are plain data.
 */
export function sameExpr(a: B.BExpr, b: B.BExpr): boolean {
  return a === b || (a.kind === b.kind && same(a, b));
}

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!same(a[i], b[i])) return false;
    return true;
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  if (ra.kind !== rb.kind) return false;
  for (const k in ra) {
    if (k === 'span') continue;
    if (!same(ra[k], rb[k])) return false;
  }
  return true;
}

const shapes = new WeakMap<B.BExpr, number>();

/**
 * A number that `sameExpr` expressions share: the kind, the operator, function or column, the
 * value, and the children's numbers. Looking an expression up among many by it, then comparing
 * only those of equal number, makes the lookup one comparison instead of one per candidate (a
 * GROUP BY of thousands of items against a HAVING of thousands of nodes). Kept per node, so a
 * tree costs one visit of each inner node however often its parts are asked for (a leaf is computed
 * again, in constant time).
 */
export function shapeOf(e: B.BExpr): number {
  let h = shapes.get(e);
  if (h !== undefined) return h;
  h = mix(textHash(e.kind), 0);
  const r = e as unknown as Record<string, unknown>;
  for (const k of ['op', 'fn', 'column', 'object', 'scope', 'value'] as const) {
    const v = r[k];
    // Numbers (every column's scope) hash as their decimal text without JSON.stringify, to the same number.
    if (v !== undefined) h = mix(h, textHash(typeof v === 'string' ? v : typeof v === 'number' ? String(v) : JSON.stringify(v)));
  }
  let children = 0;
  forEachBoundChild(e, (c) => {
    h = mix(h!, shapeOf(c));
    children++;
  });
  h = mix(h, children);
  // A leaf's number costs less to compute again than to keep: only inner nodes are remembered.
  if (children > 0) shapes.set(e, h);
  return h;
}

function mix(h: number, v: number): number {
  return Math.imul(h ^ v, 0x9e3779b1) ^ (h >>> 15);
}

function textHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h;
}
