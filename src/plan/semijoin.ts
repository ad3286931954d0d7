import type * as B from '../bind/bound.js';
import { forEachBoundChild, isAggregateCall } from '../bind/exprs.js';
import { correlatedExists } from '../bind/exists.js';
import type { Catalog } from '../catalog/types.js';
import { forEachQueryExpr, mapExpr } from './rewrites.js';

/**
 * Virtual relation → semi-join. `WHERE contacts.status = 'active'` means "one row per
 * matching contact" (a fan-out LEFT JOIN). When the query cannot tell duplicates apart
 * (SELECT DISTINCT, or only COUNT(DISTINCT ..), MIN and MAX), the same rows come from
 * `EXISTS (SELECT 1 FROM contact c WHERE c.account = t0.id AND c.status = 'active')`, which
 * never multiplies rows and turns an OR across two relations into two semi-joins instead of
 * a cross product.
 *
 * The rewrite applies to one virtual relation P of the top-level query only when all of
 * these hold, which together make it exact:
 * 1. the query is insensitive to row multiplicity (above);
 * 2. P is used only in WHERE, and only as a direct child column (`contacts.status`, no hops
 *    after it);
 * 3. the smallest WHERE subtree S holding every use of P uses no other relation path, and the
 *    way from the WHERE root down to S passes only AND and OR (monotone, so "some fan-out row
 *    satisfies WHERE" equals WHERE with S replaced by "some child satisfies S");
 * 4. S is null-rejecting in P: built with AND/OR from comparisons, LIKE, IN, BETWEEN, && and
 *    IS NOT NULL whose P operand is a bare column. A parent without children gets one row of
 *    NULLs under fan-out; S is never true on it, so dropping that row changes nothing.
 */
export function semiJoinVirtualFilters(q: B.BoundQuery, catalog: Catalog, nextScope: () => number): B.BoundQuery {
  if (!q.where || !multiplicityInsensitive(q)) return q;
  const uses = rewritableUses(q);
  if (uses.size === 0) return q;

  let where = q.where;
  for (const hop of uses.values()) {
    const key: PathKey = { scope: q.scope, via: hop.via };
    const subtree = smallestCover(where, key);
    if (!subtree || !monotonePath(where, subtree) || !onlyThisPath(subtree, key) || !nullRejecting(subtree, key)) continue;
    const rel = catalog.objects.get(q.object)?.columns.get(hop.via)?.relation;
    if (rel?.kind !== 'virtual') continue;
    const scope = nextScope();
    const inner = rescope(subtree, key, scope);
    const parentId = column(q.scope, q.object, catalog.mapping.idColumn, 'id', subtree.span);
    const exists = correlatedExists({ scope, object: hop.object, via: rel.via }, parentId, inner, subtree.span);
    where = replace(where, subtree, exists);
  }
  return where === q.where ? q : { ...q, where };
}

function column(scope: number, object: string, col: string, logical: B.BColumn['logical'], span: B.BExpr['span']): B.BColumn {
  return { kind: 'Column', scope, hops: [], object, column: col, logical, type: 'text', span };
}

/**
 * One virtual relation of a scope, as its uses are written: a column of that scope through
 * exactly that one hop. Compared field by field, not as a `scope:via` string built again for
 * every column on every walk; and the walks below stop at their answer.
 */
interface PathKey {
  readonly scope: number;
  readonly via: string;
}

function isUse(c: B.BColumn, key: PathKey): boolean {
  return c.scope === key.scope && c.hops.length === 1 && c.hops[0]!.via === key.via;
}

/** True when `test` holds for `e` or a node under it (not inside subqueries); stops at the first. */
function some(e: B.BExpr, test: (e: B.BExpr) => boolean): boolean {
  if (test(e)) return true;
  let found = false;
  forEachBoundChild(e, (c) => {
    if (!found && some(c, test)) found = true;
  });
  return found;
}

/**
 * The one-to-many relations of the query's own scope that may become semi-joins, keyed by
 * path: every use anywhere in the query, subqueries included, must be a direct child column
 * (`contacts.status`, not `contacts.owner.name`) in the query's own WHERE.
 */
function rewritableUses(q: B.BoundQuery): Map<string, B.Hop> {
  const candidates = new Map<string, B.Hop>();
  const disqualified = new Set<string>();
  const firstHopKey = (c: B.BColumn): string | null => (c.scope === q.scope && c.hops[0]?.kind === 'virtual' ? `${c.scope}:${c.hops[0].via}` : null);
  const visit = (e: B.BExpr, inWhere: boolean): void => {
    if (e.kind === 'Column') {
      const key = firstHopKey(e);
      if (key && inWhere && e.hops.length === 1) candidates.set(key, e.hops[0]!);
      else if (key) disqualified.add(key);
      // A virtual hop after a to-one hop (`account.contacts.x`) is not rewritten at all.
      return;
    }
    if (e.kind === 'Exists' || e.kind === 'Subquery' || e.kind === 'InSubquery') {
      if (e.kind === 'InSubquery') visit(e.operand, inWhere);
      forEachQueryExpr(e.query, (x) => visit(x, false));
      return;
    }
    forEachBoundChild(e, (c) => visit(c, inWhere));
  };
  q.outputs.forEach((o) => visit(o.expr, false));
  if (q.where) visit(q.where, true);
  q.groupBy.forEach((g) => visit(g, false));
  if (q.having) visit(q.having, false);
  q.orderBy.forEach((o) => visit(o.expr, false));
  for (const key of disqualified) candidates.delete(key);
  return candidates;
}


function mentions(e: B.BExpr, key: PathKey): boolean {
  return some(e, (x) => x.kind === 'Column' && isUse(x, key));
}

function multiplicityInsensitive(q: B.BoundQuery): boolean {
  if (q.distinct) return true;
  if (!q.aggregated) return false;
  const counts = (x: B.BExpr): boolean => isAggregateCall(x) && x.kind === 'Call' && !(x.fn === 'min' || x.fn === 'max' || x.distinct);
  return !q.outputs.some((o) => some(o.expr, counts)) && !(q.having && some(q.having, counts)) && !q.orderBy.some((o) => some(o.expr, counts));
}

/** The deepest node whose subtree holds every use of `key`, descending only through AND/OR. */
function smallestCover(e: B.BExpr, key: PathKey): B.BExpr | null {
  if (!mentions(e, key)) return null;
  if (e.kind === 'Logical') {
    const holders = e.operands.filter((o) => mentions(o, key));
    if (holders.length === 1) return smallestCover(holders[0]!, key) ?? e;
  }
  return e;
}

function monotonePath(root: B.BExpr, target: B.BExpr): boolean {
  if (root === target) return true;
  if (root.kind !== 'Logical') return false;
  return root.operands.some((o) => monotonePath(o, target));
}

function onlyThisPath(e: B.BExpr, key: PathKey): boolean {
  return !some(e, (x) => (x.kind === 'Column' && x.hops.length > 0 && !isUse(x, key)) || x.kind === 'Exists' || x.kind === 'Subquery' || x.kind === 'InSubquery');
}

function isPath(e: B.BExpr, key: PathKey): boolean {
  return e.kind === 'Column' && isUse(e, key);
}

/** The comparisons that are never TRUE with a NULL operand. */
const NULL_REJECTING_OPS: ReadonlySet<string> = new Set(['=', '<>', '<', '<=', '>', '>=', '&&']);

/** True when `e` is never TRUE while every column of `key` is NULL. */
function nullRejecting(e: B.BExpr, key: PathKey): boolean {
  switch (e.kind) {
    case 'Logical':
      return e.op === 'AND' ? e.operands.some((o) => nullRejecting(o, key)) : e.operands.every((o) => nullRejecting(o, key));
    case 'Binary':
      return NULL_REJECTING_OPS.has(e.op) && (isPath(e.left, key) || isPath(e.right, key));
    case 'Like':
    case 'InList':
    case 'Between':
      // NULL [NOT] LIKE / IN / BETWEEN ... is NULL either way.
      return isPath(e.operand, key);
    case 'IsNull':
      return e.negated && isPath(e.operand, key);
    default:
      return false;
  }
}

/** `subtree` with the relation's columns read from the semi-join's own scope. */
function rescope(subtree: B.BExpr, key: PathKey, scope: number): B.BExpr {
  return mapExpr(subtree, (x) => (x.kind === 'Column' && isUse(x, key) ? { ...x, scope, hops: [] } : x));
}

function replace(root: B.BExpr, target: B.BExpr, by: B.BExpr): B.BExpr {
  // mapExpr reuses unchanged nodes, so the target is still itself when the walk reaches it.
  return mapExpr(root, (x) => (x === target ? by : x));
}
