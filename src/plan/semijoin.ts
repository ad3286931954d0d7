import type * as B from '../bind/bound.js';
import { forEachBoundChild, isAggregateCall, someBoundChild } from '../bind/exprs.js';
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
export function semiJoinVirtualFilters(q: B.BoundQuery, catalog: Catalog): B.BoundQuery {
  if (!q.where || !multiplicityInsensitive(q)) return q;
  const uses = rewritableUses(q);
  if (uses.candidates.size === 0) return q;

  // New scopes are numbered past the largest of the query, which the walk of uses measured.
  let next = uses.maxScope + 1;
  let where = q.where;
  for (const hop of uses.candidates.values()) {
    const key = new PathKey(q.scope, hop.via);
    const subtree = smallestCover(where, key);
    if (!subtree || !monotonePath(where, subtree) || !onlyThisPath(subtree, key) || !nullRejecting(subtree, key)) continue;
    const rel = catalog.objects.get(q.object)?.columns.get(hop.via)?.relation;
    if (rel?.kind !== 'virtual') continue;
    const scope = next++;
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
 * every column on every walk; its searches are bound once per relation, not a closure per
 * node or per call, and stop at their answer.
 */
class PathKey {
  constructor(
    readonly scope: number,
    readonly via: string,
  ) {}

  isUse(c: B.BColumn): boolean {
    return c.scope === this.scope && c.hops.length === 1 && c.hops[0]!.via === this.via;
  }

  /** Whether `e` or a node under it (not inside subqueries) is a use. */
  readonly mentionedIn = (e: B.BExpr): boolean => (e.kind === 'Column' ? this.isUse(e) : someBoundChild(e, this.mentionedIn));

  /** Whether `e` or a node under it is another relation path or a subquery. */
  readonly foreignIn = (e: B.BExpr): boolean => {
    if (e.kind === 'Column') return e.hops.length > 0 && !this.isUse(e);
    return e.kind === 'Exists' || e.kind === 'Subquery' || e.kind === 'InSubquery' || someBoundChild(e, this.foreignIn);
  };
}

/** True when `test` holds for `e` or a node under it (not inside subqueries); stops at the first. */
function some(e: B.BExpr, test: (e: B.BExpr) => boolean): boolean {
  return new Search(test).visit(e);
}

/** One walk of `some`: one closure for the walk, not one per node. */
class Search {
  readonly visit = (e: B.BExpr): boolean => this.test(e) || someBoundChild(e, this.visit);
  constructor(private readonly test: (e: B.BExpr) => boolean) {}
}

/**
 * The one-to-many relations of the query's own scope that may become semi-joins, keyed by
 * path: every use anywhere in the query, subqueries included, must be a direct child column
 * (`contacts.status`, not `contacts.owner.name`) in the query's own WHERE. The same walk
 * measures the largest scope of the query and its subqueries.
 */
function rewritableUses(q: B.BoundQuery): Uses {
  const uses = new Uses(q.scope);
  q.outputs.forEach((o) => uses.elsewhere(o.expr));
  if (q.where) uses.inWhere(q.where);
  q.groupBy.forEach(uses.elsewhere);
  if (q.having) uses.elsewhere(q.having);
  q.orderBy.forEach((o) => uses.elsewhere(o.expr));
  if (uses.disqualified) for (const via of uses.disqualified) uses.candidates.delete(via);
  return uses;
}

/** The walk of `rewritableUses`: one visitor in WHERE, one elsewhere, no closure per node. */
class Uses {
  /** By the relation's slug: every use is a column of the query's own scope. */
  readonly candidates = new Map<string, B.Hop>();
  /** Made at the first relation disqualified: most queries have none. */
  disqualified: Set<string> | null = null;
  maxScope: number;
  readonly inWhere = (e: B.BExpr): void => this.visit(e, true);
  readonly elsewhere = (e: B.BExpr): void => this.visit(e, false);

  constructor(private readonly scope: number) {
    this.maxScope = scope;
  }

  private visit(e: B.BExpr, inWhere: boolean): void {
    if (e.kind === 'Column') {
      const first = e.hops[0];
      if (e.scope !== this.scope || first === undefined || first.kind !== 'virtual') return;
      if (inWhere && e.hops.length === 1) this.candidates.set(first.via, first);
      // A virtual hop after a to-one hop (`account.contacts.x`) is not rewritten at all.
      else (this.disqualified ??= new Set()).add(first.via);
      return;
    }
    if (e.kind === 'Exists' || e.kind === 'Subquery' || e.kind === 'InSubquery') {
      if (e.kind === 'InSubquery') this.visit(e.operand, inWhere);
      if (e.query.scope > this.maxScope) this.maxScope = e.query.scope;
      forEachQueryExpr(e.query, this.elsewhere);
      return;
    }
    forEachBoundChild(e, inWhere ? this.inWhere : this.elsewhere);
  }
}


function mentions(e: B.BExpr, key: PathKey): boolean {
  return key.mentionedIn(e);
}

function multiplicityInsensitive(q: B.BoundQuery): boolean {
  if (q.distinct) return true;
  if (!q.aggregated) return false;
  const counts = (x: B.BExpr): boolean => isAggregateCall(x) && x.kind === 'Call' && !(x.fn === 'min' || x.fn === 'max' || x.distinct);
  return !q.outputs.some((o) => some(o.expr, counts)) && !(q.having && some(q.having, counts)) && !q.orderBy.some((o) => some(o.expr, counts));
}

/**
 * The deepest node whose subtree holds every use of `key`, descending only through AND/OR.
 * Each AND/OR on the way is asked only of its operands: it mentions the key when one of them
 * does, so no subtree is searched twice at one level.
 */
function smallestCover(root: B.BExpr, key: PathKey): B.BExpr | null {
  let at = root;
  while (at.kind === 'Logical') {
    let holder: B.BExpr | null = null;
    for (const o of at.operands) {
      if (!mentions(o, key)) continue;
      if (holder) return at;
      holder = o;
    }
    // No operand holds a use: only the root can be such a node (a holder below holds one).
    if (!holder) return null;
    at = holder;
  }
  return at !== root || mentions(at, key) ? at : null;
}

function monotonePath(root: B.BExpr, target: B.BExpr): boolean {
  if (root === target) return true;
  if (root.kind !== 'Logical') return false;
  return root.operands.some((o) => monotonePath(o, target));
}

function onlyThisPath(e: B.BExpr, key: PathKey): boolean {
  return !key.foreignIn(e);
}

function isPath(e: B.BExpr, key: PathKey): boolean {
  return e.kind === 'Column' && key.isUse(e);
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
  return mapExpr(subtree, (x) => (x.kind === 'Column' && key.isUse(x) ? { ...x, scope, hops: [] } : x));
}

/**
 * `root` with `target` replaced by `by`. The target is the smallest cover of a relation's uses,
 * reached from the root through AND and OR only (see `smallestCover`), and held once: only
 * those nodes are looked through, and only the ones on the way to it are copied.
 */
function replace(root: B.BExpr, target: B.BExpr, by: B.BExpr): B.BExpr {
  if (root === target) return by;
  if (root.kind !== 'Logical') return root;
  const operands = root.operands;
  for (let i = 0; i < operands.length; i++) {
    const o = operands[i]!;
    const r = replace(o, target, by);
    if (r === o) continue;
    const changed = operands.slice();
    changed[i] = r;
    return { ...root, operands: changed };
  }
  return root;
}
