import type * as B from '../bind/bound.js';
import { forEachBoundChild } from '../bind/exprs.js';
import type { Catalog } from '../catalog/types.js';
import type { DiagnosticBag, Fix } from '../diagnostics/diagnostic.js';
import type { LogicalPlan } from '../plan/plan.js';
import { pathKey } from '../plan/plan.js';
import type * as A from '../syntax/ast.js';

/**
 * Fan-out: a one-to-many (virtual) relation used in a query joins one row per child, so the
 * parent's rows are repeated. The service documents this, but SUM, AVG and COUNT
 * over the repeated rows give numbers that are silently too large. These rules read the plan
 * (after the planner turned what it could into semi-joins) and warn where rows are still
 * multiplied, with the rewrite that gives the true value.
 */

const DUPLICATE_SENSITIVE = new Set(['sum', 'avg', 'count']);

interface Relation {
  /** Path key of the virtual hop (`contacts`, `account/opportunities`). */
  readonly key: string;
  /** As the user would write it (`contacts`). */
  readonly name: string;
  readonly child: string;
}

interface ScopeFacts {
  readonly query: B.BoundQuery;
  readonly relations: readonly Relation[];
}

/** The virtual relation prefix of a column path: the hops up to and including the last virtual one. */
function grainOf(c: B.BColumn): string {
  let last = -1;
  c.hops.forEach((h, i) => {
    if (h.kind === 'virtual') last = i;
  });
  return last < 0 ? '' : pathKey(c.hops, last + 1);
}

function within(grain: string, key: string): boolean {
  return grain === key || grain.startsWith(`${key}/`);
}

/** Every column of `q`'s own scope in `e` (subqueries are other scopes). */
function columnsOf(e: B.BExpr, scope: number, out: B.BColumn[] = []): B.BColumn[] {
  if (e.kind === 'Column') {
    if (e.scope === scope) out.push(e);
    return out;
  }
  forEachBoundChild(e, (c) => columnsOf(c, scope, out));
  return out;
}

function aggregatesOf(e: B.BExpr, out: B.BCall[] = []): B.BCall[] {
  if (e.kind === 'Call' && (e.fn === 'sum' || e.fn === 'avg' || e.fn === 'count' || e.fn === 'min' || e.fn === 'max')) {
    out.push(e);
    return out;
  }
  forEachBoundChild(e, (c) => aggregatesOf(c, out));
  return out;
}

function subqueriesOf(e: B.BExpr, out: B.BoundQuery[] = []): B.BoundQuery[] {
  if (e.kind === 'Exists' || e.kind === 'Subquery' || e.kind === 'InSubquery') {
    out.push(e.query);
    if (e.kind === 'InSubquery') subqueriesOf(e.operand, out);
    return out;
  }
  forEachBoundChild(e, (c) => subqueriesOf(c, out));
  return out;
}

function ownExprs(q: B.BoundQuery): B.BExpr[] {
  return [...q.outputs.map((o) => o.expr), ...(q.where ? [q.where] : []), ...q.groupBy, ...(q.having ? [q.having] : []), ...q.orderBy.map((o) => o.expr)];
}

function allQueries(q: B.BoundQuery, out: B.BoundQuery[] = []): B.BoundQuery[] {
  out.push(q);
  for (const e of ownExprs(q)) for (const s of subqueriesOf(e)) allQueries(s, out);
  return out;
}

/** The virtual joins the plan still has in each scope, named as written. */
function facts(p: LogicalPlan): ScopeFacts[] {
  const out: ScopeFacts[] = [];
  for (const q of allQueries(p.query)) {
    const joins = p.scopes[q.scope]?.joins.filter((j) => j.kind === 'virtual') ?? [];
    if (joins.length === 0) continue;
    const relations = joins.map((j) => ({ key: j.key, name: j.key.replace(/\//g, '.'), child: j.object }));
    out.push({ query: q, relations });
  }
  return out;
}

export interface FanoutContext {
  readonly bag: DiagnosticBag;
  readonly catalog: Catalog;
  readonly ast: A.Select;
  readonly bound: B.BoundQuery;
  readonly plan: LogicalPlan;
}

/** The child object and back-reference column of a virtual relation column. */
function virtualOf(catalog: Catalog, object: string, column: string): { child: string; via: string } | null {
  const rel = catalog.objects.get(object)?.columns.get(column)?.relation;
  return rel?.kind === 'virtual' ? { child: rel.object, via: rel.via } : null;
}

export function fanoutRules(ctx: FanoutContext): void {
  const { bag, plan } = ctx;
  const src = bag.source;
  const show = (x: { span: B.BExpr['span'] }): string => src.slice(x.span.start, x.span.end);
  for (const f of facts(plan)) {
    const q = f.query;
    const top = q === plan.query;
    // Two independent relations: a cross product of their children.
    const independent = f.relations.filter((r) => !f.relations.some((o) => o !== r && within(r.key, o.key)));
    // With only MIN, MAX and COUNT(DISTINCT) the pairs change no number: nothing to say.
    const sensitive = !q.aggregated || ownExprs(q).some((e) => aggregatesOf(e).some((a) => DUPLICATE_SENSITIVE.has(a.fn) && !a.distinct));
    if (independent.length >= 2 && sensitive) {
      const cols = ownExprs(q).flatMap((e) => columnsOf(e, q.scope));
      const second = independent[1]!;
      const at = cols.find((c) => within(grainOf(c), second.key)) ?? cols[0]!;
      bag.warning(
        'FANOUT_CROSS_PRODUCT',
        at.span,
        `'${independent[0]!.name}' and '${second.name}' are both one-to-many relations of ${q.object}: each row is repeated once per pair of their children`,
        `read each relation in its own subquery, e.g. (SELECT COUNT(x.id) FROM ${second.child} x WHERE ...) per ${q.object}, or run one query per relation`,
      );
    }
    if (!q.aggregated) continue;
    const rewrite = top ? rewriteFix(ctx, q) : null;
    for (const e of [...q.outputs.map((o) => o.expr), ...(q.having ? [q.having] : []), ...q.orderBy.map((o) => o.expr)]) {
      for (const agg of aggregatesOf(e)) {
        if (!DUPLICATE_SENSITIVE.has(agg.fn) || agg.distinct) continue;
        const grains = agg.args.flatMap((a) => columnsOf(a, q.scope)).map(grainOf);
        const grain = grains.find((g) => g !== '') ?? '';
        // Relations on the argument's own path count its rows once each; every other one repeats them.
        const foreign = f.relations.filter((r) => !within(grain, r.key));
        if (foreign.length === 0) continue;
        const names = foreign.map((r) => `'${r.name}'`).join(' and ');
        const what = grain === '' ? `each ${q.object}` : `each ${grain.replace(/\//g, '.')} row`;
        bag.warning(
          'FANOUT_AGGREGATE',
          agg.span,
          `${show(agg)} counts ${what} once per child of ${names}, so the result is too large`,
          rewrite ? `rewrite each relation's aggregate as a subquery per ${q.object}: ${rewrite.text.length > 400 ? `${rewrite.text.slice(0, 397)}...` : rewrite.text}` : adviceFor(agg, grain, show, ctx.catalog, q.object, foreign[0]!),
          rewrite?.fix,
        );
      }
    }
  }
  orRule(ctx);
}

function adviceFor(agg: B.BCall, grain: string, show: (x: { span: B.BExpr['span'] }) => string, catalog: Catalog, object: string, multiplier: Relation): string {
  if (agg.fn === 'count' && grain === '') return `count each row once: COUNT(DISTINCT id) instead of ${show(agg)}`;
  // The relation that repeats the rows, read per parent: its own object and back-reference.
  const v = multiplier.key.includes('/') ? null : virtualOf(catalog, object, multiplier.key);
  const per = v ? `(SELECT COUNT(x.id) FROM ${v.child} x WHERE x.${v.via} = p.id), the outer object aliased FROM ${object} p` : `(SELECT COUNT(x.id) FROM ${multiplier.child} x WHERE ...) per ${object}`;
  return `read each one-to-many relation in its own correlated subquery, e.g. ${per}, or filter children with EXISTS instead of a dot path`;
}

/**
 * The whole-query rewrite when every use of a one-to-many relation in the top-level query is
 * the argument of SUM/COUNT/AVG: each becomes a correlated subquery per parent row, so no join
 * multiplies anything. Returns null when some use is elsewhere (a filter, a group key).
 */
function rewriteFix(ctx: FanoutContext, q: B.BoundQuery): { text: string; fix: Fix } | null {
  const { bag, catalog, ast } = ctx;
  const src = bag.source;
  const edits: { start: number; end: number; text: string }[] = [];
  // Uses of virtual paths outside rewritable aggregates make the rewrite unsafe.
  let ok = true;
  const rewritable = new Set<B.BExpr>();
  const visit = (e: B.BExpr, inAgg: boolean): void => {
    if (e.kind === 'Call' && DUPLICATE_SENSITIVE.has(e.fn) && !inAgg) {
      const arg = e.args[0];
      if (!e.distinct && arg?.kind === 'Column' && arg.scope === q.scope && arg.hops.length === 1 && arg.hops[0]!.kind === 'virtual') {
        rewritable.add(e);
        return;
      }
      e.args.forEach((a) => visit(a, true));
      return;
    }
    if (e.kind === 'Column' && e.scope === q.scope && e.hops.some((h) => h.kind === 'virtual')) ok = false;
    forEachBoundChild(e, (c) => visit(c, inAgg));
  };
  // A WHERE condition on one relation's children becomes EXISTS: it filters parents, not rows.
  const filters: { conj: B.BExpr; via: string }[] = [];
  const conjuncts = q.where ? (q.where.kind === 'Logical' && q.where.op === 'AND' ? q.where.operands : [q.where]) : [];
  for (const c of conjuncts) {
    const vias = new Set(columnsOf(c, q.scope).filter((x) => x.hops.some((h) => h.kind === 'virtual')).map((x) => (x.hops[0]!.kind === 'virtual' && x.hops.slice(1).every((h) => h.kind === 'to-one') ? x.hops[0]!.via : '')));
    if (vias.size === 0) visit(c, false);
    else if (vias.size === 1 && !vias.has('') && subqueriesOf(c).length === 0) filters.push({ conj: c, via: [...vias][0]! });
    else ok = false;
  }
  for (const e of [...q.outputs.map((o) => o.expr), ...q.groupBy, ...(q.having ? [q.having] : []), ...q.orderBy.map((o) => o.expr)]) visit(e, false);
  if (!ok || (rewritable.size === 0 && filters.length === 0)) return null;
  const parent = catalog.objects.get(q.object);
  const filterChildren = filters.map((f) => virtualOf(catalog, q.object, f.via)?.child ?? '');
  const corr = correlation(ctx, q, [...[...rewritable].map((agg) => ((agg as B.BCall).args[0] as B.BColumn).hops[0]!.object), ...filterChildren]);
  if (!corr) return null;
  const outer = corr.outer;
  if (corr.aliasAt !== null) edits.push({ start: corr.aliasAt, end: corr.aliasAt, text: ` ${outer}` });
  for (const f of filters) {
    const rel = virtualOf(catalog, q.object, f.via);
    const text = rel && existsText(src, f.conj, columnsOf(f.conj, q.scope), f.via, rel, outer);
    if (!text) return null;
    edits.push({ start: f.conj.span.start, end: f.conj.span.end, text });
  }
  const inner = ['x', 'c', 'child'].find((n) => n !== outer && !parent?.columns.has(n)) ?? 'x';
  for (const agg of rewritable) {
    const call = agg as B.BCall;
    const arg = call.args[0] as B.BColumn;
    const rel = virtualOf(catalog, q.object, arg.hops[0]!.via);
    if (!rel) return null;
    const sub = (fn: string): string => `(SELECT ${fn}(${inner}.${arg.column}) FROM ${rel.child} ${inner} WHERE ${inner}.${rel.via} = ${outer}.id)`;
    // SUM of per-parent sums and counts is the true total for any grouping of the parents.
    // AVG over all children of the group's parents: their total over their number (none: NULL, as AVG).
    const text = call.fn === 'avg'
      ? `CASE WHEN SUM(${sub('COUNT')}) > 0 THEN SUM(${sub('SUM')}) / SUM(${sub('COUNT')}) END`
      : `SUM(${sub(call.fn === 'sum' ? 'SUM' : 'COUNT')})`;
    edits.push({ start: call.span.start, end: call.span.end, text });
  }
  edits.sort((a, b) => b.start - a.start);
  let text = src;
  for (const e of edits) text = text.slice(0, e.start) + e.text + text.slice(e.end);
  return { text, fix: { range: [0, src.length], text } };
}

/** OR across two one-to-many relations: each side as EXISTS, so no join multiplies the rows. */
function orRule(ctx: FanoutContext): void {
  const { bag, bound: q } = ctx;
  if (!q.where || !q.aggregated) return;
  const visit = (e: B.BExpr): void => {
    if (e.kind === 'Logical' && e.op === 'OR') {
      const rels = e.operands.map((o) => new Set(columnsOf(o, q.scope).filter((c) => c.hops[0]?.kind === 'virtual').map((c) => c.hops[0]!.via)));
      const all = new Set(rels.flatMap((r) => [...r]));
      if (all.size >= 2) {
        const fix = existsFix(ctx, e, rels);
        bag.warning(
          'FANOUT_OR',
          e.span,
          `this OR reads the one-to-many relations ${[...all].map((r) => `'${r}'`).join(' and ')}: rows matching both are joined once per pair of children, and the aggregates count them that many times`,
          fix ? `test each side with EXISTS: ${fix.text}` : "test each side with EXISTS (SELECT 1 FROM child x WHERE x.parent = p.id AND ...), or add the two conditions' counts and subtract the rows matching both (inclusion-exclusion)",
          fix?.fix,
        );
        return;
      }
    }
    if (e.kind === 'Logical') e.operands.forEach(visit);
  };
  visit(q.where);
}

function existsFix(ctx: FanoutContext, e: B.BLogical, rels: readonly Set<string>[]): { text: string; fix: Fix } | null {
  const { bag, catalog, ast, bound: q } = ctx;
  const src = bag.source;
  const children = [...new Set(rels.flatMap((r) => [...r]))].map((via) => virtualOf(catalog, q.object, via)?.child ?? '');
  const corr = correlation(ctx, q, children);
  if (!corr) return null;
  const outer = corr.outer;
  const parts: string[] = [];
  for (let i = 0; i < e.operands.length; i++) {
    const o = e.operands[i]!;
    const r = [...rels[i]!];
    const cols = columnsOf(o, q.scope);
    if (r.length === 0) {
      if (cols.some((c) => c.hops.some((h) => h.kind === 'virtual'))) return null;
      parts.push(src.slice(o.span.start, o.span.end));
      continue;
    }
    if (r.length !== 1) return null;
    const rel = virtualOf(catalog, q.object, r[0]!);
    const text = rel && existsText(src, o, cols, r[0]!, rel, outer);
    if (!text) return null;
    parts.push(text);
  }
  const text = `(${parts.join(' OR ')})`;
  if (!corr.aliasAt) return { text, fix: { range: [e.span.start, e.span.end], text } };
  // The alias goes after the FROM object: one replacement from there to the end of the OR.
  const at = corr.aliasAt;
  return { text, fix: { range: [at, e.span.end], text: ` ${outer}${src.slice(at, e.span.start)}${text}` } };
}

/**
 * The name a correlated subquery uses for the outer row: the FROM alias, or the object's slug
 * when that is not also a column of a child object (`x.account = account.id` would read the
 * child's own column). Otherwise a new alias, to be inserted after the FROM object, as long as
 * no qualified name in the query uses the slug. Null when no safe name exists.
 */
function correlation(ctx: FanoutContext, q: B.BoundQuery, children: readonly string[]): { outer: string; aliasAt: number | null } | null {
  const { catalog, ast, bag } = ctx;
  const clashes = (name: string): boolean => children.some((c) => catalog.objects.get(c)?.columns.has(name) === true);
  const name = ast.from.alias?.name ?? ast.from.object.name;
  if (!clashes(name)) return { outer: name, aliasAt: null };
  if (ast.from.alias) return null;
  const parent = catalog.objects.get(q.object);
  const alias = ['p', 'parent', 'p1'].find((n) => !clashes(n) && !parent?.columns.has(n));
  if (!alias || new RegExp(`\\b${q.object}\\s*\\.`).test(bag.source)) return null;
  return { outer: alias, aliasAt: ast.from.object.span.end };
}

/**
 * `contacts.status = 'active'` as `EXISTS (SELECT 1 FROM contact x WHERE x.account = p.id AND
 * (x.status = 'active'))`: every column of the condition must be on the relation `via`.
 */
function existsText(src: string, cond: B.BExpr, cols: readonly B.BColumn[], via: string, rel: { child: string; via: string }, outer: string): string | null {
  let text = src.slice(cond.span.start, cond.span.end);
  const edits: { start: number; end: number; text: string }[] = [];
  for (const c of cols) {
    if (c.hops[0]?.via !== via || c.hops[0].kind !== 'virtual' || c.hops.slice(1).some((h) => h.kind === 'virtual')) return null;
    const path = src.slice(c.span.start, c.span.end);
    const at = path.indexOf(`${via}.`);
    if (at < 0) return null;
    edits.push({ start: c.span.start - cond.span.start, end: c.span.end - cond.span.start, text: `x.${path.slice(at + via.length + 1)}` });
  }
  for (const ed of edits.sort((a, b) => b.start - a.start)) text = text.slice(0, ed.start) + ed.text + text.slice(ed.end);
  return `EXISTS (SELECT 1 FROM ${rel.child} x WHERE x.${rel.via} = ${outer}.id AND (${text}))`;
}
