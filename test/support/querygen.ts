import fc from 'fast-check';
import type { Catalog, ColumnDef, LogicalType, ObjectDef } from '../../src/catalog/types.js';
import type { FixtureName, Row } from '../../fixtures/index.js';

/**
 * Random VALID queries of the object query language, driven by a catalog, as fast-check
 * arbitraries. Each query comes as a structured form (`GenQuery`, read by the reference
 * evaluator in refeval.ts) and its text (`printQuery`). Nothing here imports compiler code:
 * only catalog *types*, which describe the schema.
 *
 * Shrinking: every optional part is an `fc.option` (shrinks to absent), lists shrink to their
 * minimum, `fc.oneof` alternatives are ordered simplest first, and AND/OR may hold a single
 * operand, so a failing WHERE tree shrinks to the subtree that fails: a failing query typically
 * shrinks to one or two select items and one predicate.
 */

// ---------------------------------------------------------------- structured form

export type CmpOp = '=' | '<>' | '!=' | '<' | '<=' | '>' | '>=';
export type AggFn = 'count' | 'sum' | 'avg' | 'min' | 'max';

export interface Hop {
  readonly via: string;
  readonly kind: 'to-one' | 'virtual';
  readonly object: string;
}

/** A column path. `up` 0 is the scope it is written in, 1 the enclosing query (correlation). */
export interface ColRef {
  readonly up: 0 | 1;
  readonly hops: readonly Hop[];
  /** Object owning the column, after the hops. */
  readonly object: string;
  readonly column: string;
  readonly type: LogicalType;
  /** Written with the scope name in front (`a.owner.name`); always true for up = 1. */
  readonly qualify: boolean;
}

export type Lit =
  | { readonly t: 'str'; readonly v: string }
  | { readonly t: 'num'; readonly v: string }
  | { readonly t: 'bool'; readonly v: boolean; readonly style: '01' | 'kw' }
  | { readonly t: 'null' };

export interface Agg {
  readonly fn: AggFn;
  readonly distinct: boolean;
  /** null: count(*). */
  readonly arg: ColRef | null;
}

/** FROM of a subquery. */
export interface SubFrom {
  readonly object: string;
  readonly alias: string | null;
}

export type Pred =
  | { readonly k: 'and' | 'or'; readonly args: readonly Pred[] }
  | { readonly k: 'not'; readonly arg: Pred }
  /** `(p) IS [NOT] NULL` */
  | { readonly k: 'isnullp'; readonly arg: Pred; readonly neg: boolean }
  | { readonly k: 'cmp'; readonly col: ColRef; readonly op: CmpOp; readonly rhs: Lit; readonly flip: boolean }
  | { readonly k: 'cmpcol'; readonly col: ColRef; readonly op: CmpOp; readonly rhs: ColRef }
  | { readonly k: 'like'; readonly col: ColRef; readonly neg: boolean; readonly ci: boolean; readonly pattern: string }
  | { readonly k: 'in'; readonly col: ColRef; readonly neg: boolean; readonly items: readonly Lit[] }
  | { readonly k: 'between'; readonly col: ColRef; readonly neg: boolean; readonly lo: Lit; readonly hi: Lit }
  | { readonly k: 'isnull'; readonly col: ColRef; readonly neg: boolean }
  /** `col && ARRAY[...]`, negated as `NOT (col && ARRAY[...])`. */
  | { readonly k: 'overlap'; readonly col: ColRef; readonly neg: boolean; readonly items: readonly string[] }
  /** `col = ARRAY[NULL]` (empty) or `col <> ARRAY[NULL]` (not empty). */
  | { readonly k: 'empty'; readonly col: ColRef; readonly neg: boolean }
  /** `[NOT] EXISTS (SELECT .. FROM child WHERE child.via = outer.id [AND where])`. */
  | {
      readonly k: 'exists';
      readonly neg: boolean;
      readonly from: SubFrom;
      /** The child's to-one column holding the outer row's id. */
      readonly via: string;
      readonly select: '1' | 'id' | '*';
      /** 0: `x.via = o.id`, 1: `o.id = x.via`, 2: `via = o.id` (unqualified inner column). */
      readonly corr: 0 | 1 | 2;
      readonly where: Pred | null;
    }
  /** `col [NOT] IN (SELECT x.column FROM object x [WHERE where])`. */
  | { readonly k: 'insub'; readonly col: ColRef; readonly neg: boolean; readonly from: SubFrom; readonly column: string; readonly where: Pred | null }
  /** HAVING only: `agg op literal`. */
  | { readonly k: 'hcmp'; readonly agg: Agg; readonly op: CmpOp; readonly rhs: Lit };

export type ItemExpr = { readonly k: 'col'; readonly col: ColRef } | { readonly k: 'agg'; readonly agg: Agg };

export interface Item {
  readonly e: ItemExpr;
  readonly alias: string | null;
}

export type GroupKey = { readonly k: 'item'; readonly index: number; readonly style: 'expr' | 'alias' | 'ordinal' } | { readonly k: 'col'; readonly col: ColRef };

export type OrderRef =
  | { readonly k: 'item'; readonly index: number; readonly style: 'expr' | 'alias' | 'ordinal' }
  | { readonly k: 'col'; readonly col: ColRef }
  | { readonly k: 'agg'; readonly agg: Agg };

export interface OrderKey {
  readonly ref: OrderRef;
  readonly dir: 'ASC' | 'DESC' | null;
  readonly nulls: 'FIRST' | 'LAST' | null;
}

export interface GenQuery {
  readonly fixture: FixtureName;
  readonly object: string;
  readonly alias: string | null;
  readonly aliasAs: boolean;
  readonly distinct: boolean;
  /** `SELECT *` (items then lists every non-virtual column, in catalog order). */
  readonly star: boolean;
  readonly items: readonly Item[];
  readonly where: Pred | null;
  readonly groupBy: readonly GroupKey[];
  readonly having: Pred | null;
  readonly orderBy: readonly OrderKey[];
  readonly limit: number;
  readonly offset: number | null;
  readonly upper: boolean;
}

// ---------------------------------------------------------------- options

export interface Features {
  aggregates: boolean;
  having: boolean;
  orderBy: boolean;
  distinct: boolean;
  offset: boolean;
  exists: boolean;
  inSubquery: boolean;
  virtualPaths: boolean;
  /** `= ARRAY[NULL]` / `<> ARRAY[NULL]`. */
  emptyArray: boolean;
  /** `NOT (p)` and `(p) IS [NOT] NULL` over whole predicates. */
  negation: boolean;
  /** `x IN (list)` leaves. */
  inList: boolean;
  /** `NOT IN`. */
  notIn: boolean;
  /** `SELECT *`. */
  star: boolean;
  /** NULL literals in comparisons and IN lists. */
  nullLiterals: boolean;
  /** ORDER BY an aggregate that is not selected. */
  orderByAggregates: boolean;
  /** DISTINCT inside sum/avg/count. */
  distinctAggregates: boolean;
}

export const ALL_FEATURES: Features = {
  aggregates: true,
  having: true,
  orderBy: true,
  distinct: true,
  offset: true,
  exists: true,
  inSubquery: true,
  virtualPaths: true,
  emptyArray: true,
  negation: true,
  inList: true,
  notIn: true,
  star: true,
  nullLiterals: true,
  orderByAggregates: true,
  distinctAggregates: true,
};

export interface GenOptions {
  features?: Partial<Features>;
  /** Depth of AND/OR/NOT nesting in WHERE. Default 3. */
  maxDepth?: number;
  /** Most relation hops in a generated path. Default 2. */
  maxHops?: number;
  /** Choices of LIMIT. */
  limits?: readonly number[];
  /**
   * Avoid forms that trip compiler bugs already reported (the 'known compiler bugs' tests in
   * test/props/oracles.ts), so the oracles keep hunting for new ones. Default true.
   */
  avoidKnownBugs?: boolean;
}

/** One catalog with literal pools drawn from its data (so equality predicates hit rows). */
export interface GenSchema {
  readonly fixture: FixtureName;
  readonly catalog: Catalog;
  /** `object.column` → distinct non-null sample values from the data. */
  readonly pools: ReadonlyMap<string, readonly unknown[]>;
}

/** Samples up to `perColumn` distinct values of every column, deterministically. */
export function buildSchema(fixture: FixtureName, catalog: Catalog, rows: ReadonlyMap<string, readonly Row[]>, perColumn = 24): GenSchema {
  const pools = new Map<string, unknown[]>();
  for (const obj of catalog.objects.values()) {
    const data = rows.get(obj.slug) ?? [];
    for (const col of obj.columns.values()) {
      const phys = col.type === 'id' ? catalog.mapping.idColumn : col.column;
      if (phys === null) continue;
      const seen = new Map<string, unknown>();
      const step = Math.max(1, Math.floor(data.length / (perColumn * 3)));
      for (let i = 0; i < data.length && seen.size < perColumn; i += step) {
        const v = data[i]![phys];
        if (v === null || v === undefined) continue;
        seen.set(JSON.stringify(v), v);
      }
      pools.set(`${obj.slug}.${col.slug}`, [...seen.values()]);
    }
  }
  return { fixture, catalog, pools };
}

// ---------------------------------------------------------------- catalog helpers

const NUMERIC: ReadonlySet<LogicalType> = new Set(['number', 'integer', 'currency']);
const EPOCH: ReadonlySet<LogicalType> = new Set(['date', 'datetime']);
const TEXTISH: ReadonlySet<LogicalType> = new Set(['text', 'email', 'phone', 'url', 'enum', 'relation', 'id']);

export function isNumberFamily(t: LogicalType): boolean {
  return NUMERIC.has(t) || EPOCH.has(t);
}

export function isTextFamily(t: LogicalType): boolean {
  return TEXTISH.has(t);
}

/** Comparable with `=`/`<`: scalar, not multiselect/json/virtual. */
function isScalar(t: LogicalType): boolean {
  return isNumberFamily(t) || isTextFamily(t) || t === 'boolean';
}

function family(t: LogicalType): 'num' | 'text' | 'bool' | 'other' {
  if (isNumberFamily(t)) return 'num';
  if (isTextFamily(t)) return 'text';
  if (t === 'boolean') return 'bool';
  return 'other';
}

interface PathInfo {
  readonly hops: readonly Hop[];
  readonly owner: ObjectDef;
  readonly col: ColumnDef;
}

const pathCache = new WeakMap<Catalog, Map<string, PathInfo[][]>>();

/** Every column path from `object`, by number of hops (0..maxHops). */
function pathsByDepth(catalog: Catalog, object: string, virtual: boolean, maxHops = 2): PathInfo[][] {
  let perCatalog = pathCache.get(catalog);
  if (!perCatalog) pathCache.set(catalog, (perCatalog = new Map()));
  const key = `${object}|${virtual}|${maxHops}`;
  const hit = perCatalog.get(key);
  if (hit) return hit;
  const out: PathInfo[][] = [];
  let frontier: { hops: Hop[]; obj: ObjectDef }[] = [{ hops: [], obj: catalog.objects.get(object)! }];
  for (let depth = 0; depth <= maxHops; depth++) {
    const level: PathInfo[] = [];
    const next: { hops: Hop[]; obj: ObjectDef }[] = [];
    for (const { hops, obj } of frontier) {
      for (const col of obj.columns.values()) {
        if (col.type !== 'virtual') level.push({ hops, owner: obj, col });
        const rel = col.relation;
        if (!rel) continue;
        if (rel.kind === 'virtual' && !virtual) continue;
        const target = catalog.objects.get(rel.object);
        if (target) next.push({ hops: [...hops, { via: col.slug, kind: rel.kind, object: rel.object }], obj: target });
      }
    }
    out.push(level);
    frontier = next;
  }
  perCatalog.set(key, out);
  return out;
}

// ---------------------------------------------------------------- scopes

interface Scope {
  readonly schema: GenSchema;
  readonly object: ObjectDef;
  /** The name paths may be qualified with: the FROM alias, else the slug. */
  readonly name: string;
  readonly outer: Scope | null;
  readonly features: Features;
  readonly avoidKnownBugs: boolean;
  /** Subquery nesting left. */
  readonly subDepth: number;
  readonly maxDepth: number;
  readonly maxHops: number;
}

function colArb(scope: Scope, accept: (c: ColumnDef) => boolean, opts: { virtual?: boolean; up?: 0 | 1; maxHops?: number } = {}): fc.Arbitrary<ColRef> | null {
  const up = opts.up ?? 0;
  const s = up === 1 ? scope.outer! : scope;
  // Outer references stay on to-one paths: a virtual hop written inside a subquery would fan out the outer query.
  const virtual = (opts.virtual ?? true) && s.features.virtualPaths && up === 0;
  const levels = pathsByDepth(s.schema.catalog, s.object.slug, virtual, Math.min(opts.maxHops ?? 2, scope.maxHops)).map((l) => l.filter((p) => accept(p.col)));
  const weights = [12, 5, 2];
  const alts: { arbitrary: fc.Arbitrary<PathInfo>; weight: number }[] = [];
  levels.forEach((l, depth) => {
    if (l.length > 0) alts.push({ arbitrary: fc.constantFrom(...l), weight: weights[depth] ?? 1 });
  });
  if (alts.length === 0) return null;
  // Inside a subquery a qualified path's first name is a FROM name before it is a column (as in
  // PostgreSQL), so a path starting with a relation named like an outer scope must be qualified.
  const outerNames: string[] = [];
  for (let o = s.outer; o; o = o.outer) outerNames.push(o.name);
  return fc.tuple(fc.oneof(...alts), up === 1 ? fc.constant(true) : fc.boolean()).map(([p, qualify]) => ({
    up,
    hops: p.hops,
    object: p.owner.slug,
    column: p.col.slug,
    type: p.col.type,
    qualify: qualify || (p.hops.length > 0 && outerNames.includes(p.hops[0]!.via)),
  }));
}

// ---------------------------------------------------------------- literals

const DAY = 86_400_000;
const FROM = Date.UTC(2023, 0, 1);
const TO = Date.UTC(2026, 0, 1);
const ODD_STRINGS = ['', 'zzz', "O'Brien", 'Zürich', 'a', 'Acme', '100% sure', 'under_score', 'back\\slash', '日本', '😀'];

function pool(schema: GenSchema, object: string, column: string): unknown[] {
  return [...(schema.pools.get(`${object}.${column}`) ?? [])];
}

function fromPool<T>(values: readonly T[], fallback: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return values.length > 0 ? fc.oneof({ arbitrary: fc.constantFrom(...values), weight: 3 }, { arbitrary: fallback, weight: 1 }) : fallback;
}

const centsText = fc.integer({ min: -100_000, max: 10_000_000 }).map((c) => (c % 100 === 0 ? String(c / 100) : (c / 100).toFixed(2)));

/** A literal of the column's type; `null` literals only when `withNull`. */
function litArb(scope: Scope, col: ColRef, withNull = false): fc.Arbitrary<Lit> {
  const schema = scope.schema;
  const t = col.type;
  let base: fc.Arbitrary<Lit>;
  if (t === 'boolean') {
    base = fc.record({ t: fc.constant('bool' as const), v: fc.boolean(), style: fc.constantFrom('01' as const, 'kw' as const) });
  } else if (NUMERIC.has(t)) {
    const values = pool(schema, col.object, col.column).map((v) => String(v));
    const ints = fc.integer({ min: -5, max: t === 'integer' ? 1000 : 100_000 }).map(String);
    base = fromPool(values, fc.oneof(ints, centsText, fc.constantFrom('0', '1e3', '99999999999999999999'))).map((v) => ({ t: 'num' as const, v }));
  } else if (EPOCH.has(t)) {
    const values = pool(schema, col.object, col.column).map((v) => String(v));
    const synthetic =
      t === 'date'
        ? fc.integer({ min: 0, max: Math.floor((TO - FROM) / DAY) }).map((d) => String(FROM + d * DAY))
        : fc.integer({ min: FROM, max: TO }).map(String);
    base = fromPool(values, synthetic).map((v) => ({ t: 'num' as const, v }));
  } else if (t === 'enum') {
    const options = schema.catalog.objects.get(col.object)!.columns.get(col.column)!.options ?? [];
    base = fc.oneof({ arbitrary: fc.constantFrom(...options), weight: 9 }, { arbitrary: fc.constant('no_such_option'), weight: 1 }).map((v) => ({ t: 'str' as const, v }));
  } else {
    let values: string[];
    if (t === 'relation') {
      const target = schema.catalog.objects.get(col.object)!.columns.get(col.column)!.relation!.object;
      values = pool(schema, target, 'id').map(String);
    } else values = pool(schema, col.object, col.column).map(String);
    base = fromPool(values, fc.constantFrom(...ODD_STRINGS)).map((v) => ({ t: 'str' as const, v }));
  }
  return withNull && scope.features.nullLiterals ? fc.oneof({ arbitrary: base, weight: 12 }, { arbitrary: fc.constant({ t: 'null' as const }), weight: 1 }) : base;
}

/** LIKE patterns cut from real values: `%mid%`, `pre%`, `%suf`, `_` for one character, or exact. */
function likePatternArb(scope: Scope, col: ColRef): fc.Arbitrary<string> {
  const values = pool(scope.schema, col.object, col.column).map(String);
  const source = values.length > 0 ? fc.constantFrom(...values) : fc.constantFrom(...ODD_STRINGS);
  return fc
    .tuple(source, fc.nat(), fc.nat(), fc.constantFrom('mid', 'pre', 'suf', 'one', 'exact', 'all'), fc.constantFrom('keep', 'keep', 'upper', 'lower'))
    .map(([s, a, b, shape, letterCase]) => {
      const chars = [...s];
      const i = chars.length ? a % chars.length : 0;
      const j = chars.length ? i + 1 + (b % Math.max(1, Math.min(4, chars.length - i))) : 0;
      const mid = chars.slice(i, j).join('');
      let p: string;
      switch (shape) {
        case 'mid':
          p = `%${mid}%`;
          break;
        case 'pre':
          p = `${chars.slice(0, j).join('')}%`;
          break;
        case 'suf':
          p = `%${chars.slice(i).join('')}`;
          break;
        case 'one':
          p = chars.map((c, k) => (k === i ? '_' : c)).join('');
          break;
        case 'all':
          p = '%';
          break;
        default:
          p = s;
      }
      // Changed case tells ILIKE from LIKE.
      if (letterCase === 'upper') p = p.toUpperCase();
      if (letterCase === 'lower') p = p.toLowerCase();
      // A trailing backslash would escape nothing; PostgreSQL versions disagree on what that means.
      return p.replace(/\\+$/, '');
    });
}

// ---------------------------------------------------------------- predicates

const CMP_OPS: readonly CmpOp[] = ['=', '<>', '<', '<=', '>', '>=', '!='];

function leafArbs(scope: Scope): fc.Arbitrary<Pred>[] {
  const f = scope.features;
  const out: fc.Arbitrary<Pred>[] = [];
  const scalar = colArb(scope, (c) => isScalar(c.type));
  if (scalar) {
    out.push(
      scalar.chain((col) =>
        fc.record({ k: fc.constant('cmp' as const), col: fc.constant(col), op: fc.constantFrom(...CMP_OPS), rhs: litArb(scope, col, true), flip: fc.boolean() }),
      ),
    );
    out.push(fc.record({ k: fc.constant('isnull' as const), col: colArb(scope, () => true)!, neg: fc.boolean() }));
    if (f.inList) out.push(
      scalar.chain((col) =>
        fc.record({
          k: fc.constant('in' as const),
          col: fc.constant(col),
          neg: f.notIn ? fc.boolean() : fc.constant(false),
          items: fc.array(litArb(scope, col, true), { minLength: 1, maxLength: 4 }),
        }),
      ),
    );
    out.push(
      scalar.chain((col) =>
        fc.record({ k: fc.constant('between' as const), col: fc.constant(col), neg: fc.boolean(), lo: litArb(scope, col), hi: litArb(scope, col) }),
      ),
    );
    const cmpcol = cmpColArb(scope, 0);
    if (cmpcol) out.push(cmpcol);
  }
  const text = colArb(scope, (c) => c.type === 'text' || c.type === 'email' || c.type === 'url' || c.type === 'phone' || c.type === 'enum');
  if (text) {
    out.push(
      text.chain((col) =>
        fc.record({ k: fc.constant('like' as const), col: fc.constant(col), neg: fc.boolean(), ci: fc.boolean(), pattern: likePatternArb(scope, col) }),
      ),
    );
  }
  const multi = colArb(scope, (c) => c.type === 'multiselect');
  if (multi) {
    out.push(
      multi.chain((col) => {
        const options = scope.schema.catalog.objects.get(col.object)!.columns.get(col.column)!.options ?? [];
        const item = fc.oneof({ arbitrary: fc.constantFrom(...options), weight: 9 }, { arbitrary: fc.constant('no_such_option'), weight: 1 });
        return fc.record({ k: fc.constant('overlap' as const), col: fc.constant(col), neg: fc.boolean(), items: fc.uniqueArray(item, { minLength: 1, maxLength: 3 }) });
      }),
    );
    if (f.emptyArray) out.push(fc.record({ k: fc.constant('empty' as const), col: multi, neg: fc.boolean() }));
  }
  if (scope.outer && outerReachable(scope)) {
    // Correlated comparison with a column of the enclosing query.
    const correlated = cmpColArb(scope, 1);
    if (correlated) out.push(correlated);
  }
  return out;
}

const FAMILIES = ['num', 'text', 'bool'] as const;

/** `col op other`, two columns of one family; `other` in this scope (up 0) or the enclosing one (up 1). */
function cmpColArb(scope: Scope, up: 0 | 1): fc.Arbitrary<Pred> | null {
  const pairs: fc.Arbitrary<Pred>[] = [];
  for (const fam of FAMILIES) {
    const left = colArb(scope, (c) => family(c.type) === fam, up === 1 ? { virtual: false, maxHops: 1 } : {});
    const right = colArb(scope, (c) => family(c.type) === fam, { up, virtual: false, maxHops: 1 });
    if (!left || !right) continue;
    pairs.push(fc.record({ k: fc.constant('cmpcol' as const), col: left, op: fc.constantFrom(...CMP_OPS), rhs: right }));
  }
  return pairs.length ? fc.oneof(...pairs) : null;
}

/** Whether the outer scope can be named from inside a subquery of `scope` (not shadowed by the inner FROM name). */
function outerReachable(scope: Scope): boolean {
  return scope.outer!.name !== scope.name;
}

const SUB_ALIASES = ['x', 'sub', 'c', 's2', 't0', 't1', 'q'];

function subAliasArb(scope: Scope, object: ObjectDef): fc.Arbitrary<string | null> {
  const taken = new Set([scope.name, ...scope.object.columns.keys(), ...object.columns.keys()]);
  const choices = SUB_ALIASES.filter((a) => !taken.has(a));
  const none = !taken.has(object.slug) && object.slug !== scope.name;
  return none ? fc.option(fc.constantFrom(...choices), { nil: null, freq: 4 }) : fc.constantFrom(...choices);
}

function subScope(scope: Scope, object: ObjectDef, alias: string | null): Scope {
  return { ...scope, object, name: alias ?? object.slug, outer: scope, subDepth: scope.subDepth - 1, maxDepth: Math.max(1, scope.maxDepth - 1) };
}

function existsArb(scope: Scope): fc.Arbitrary<Pred> | null {
  const catalog = scope.schema.catalog;
  const rels = [...scope.object.columns.values()].filter((c) => c.relation?.kind === 'virtual');
  if (rels.length === 0) return null;
  return fc.constantFrom(...rels).chain((rel) => {
    const r = rel.relation as { object: string; via: string };
    const child = catalog.objects.get(r.object)!;
    return subAliasArb(scope, child).chain((alias) =>
      fc.record({
        k: fc.constant('exists' as const),
        neg: fc.boolean(),
        from: fc.constant({ object: child.slug, alias }),
        via: fc.constant(r.via),
        select: fc.constantFrom('1' as const, 'id' as const, '*' as const),
        corr: fc.constantFrom(0 as const, 1 as const, 2 as const),
        where: fc.option(predArb(subScope(scope, child, alias)), { nil: null }),
      }),
    );
  });
}

function inSubArb(scope: Scope): fc.Arbitrary<Pred> | null {
  const catalog = scope.schema.catalog;
  const col = colArb(scope, (c) => c.relation?.kind === 'to-one' || c.type === 'id', { virtual: false, maxHops: 1 });
  if (!col) return null;
  return col.chain((c) => {
    const target = c.type === 'id' ? c.object : catalog.objects.get(c.object)!.columns.get(c.column)!.relation!.object;
    // What the subquery may select: the target's id, or any to-one column pointing at the target.
    const choices: { object: string; column: string }[] = [{ object: target, column: 'id' }];
    for (const o of catalog.objects.values()) {
      for (const oc of o.columns.values()) if (oc.relation?.kind === 'to-one' && oc.relation.object === target) choices.push({ object: o.slug, column: oc.slug });
    }
    return fc.constantFrom(...choices).chain((pick) => {
      const obj = catalog.objects.get(pick.object)!;
      return subAliasArb(scope, obj).chain((alias) => {
        const inner = subScope(scope, obj, alias);
        return fc.record({
          k: fc.constant('insub' as const),
          col: fc.constant(c),
          neg: scope.features.notIn ? fc.boolean() : fc.constant(false),
          from: fc.constant({ object: obj.slug, alias }),
          column: fc.constant(pick.column),
          where: fc.option(predArb(inner), { nil: null }),
        });
      });
    });
  });
}

/** A WHERE tree: AND/OR/NOT/(p) IS NULL over leaves, at most `scope.maxDepth` deep. */
export function predArb(scope: Scope): fc.Arbitrary<Pred> {
  const leaves = leafArbs(scope);
  const extra: fc.Arbitrary<Pred>[] = [];
  if (scope.subDepth > 0) {
    const ex = scope.features.exists ? existsArb(scope) : null;
    const ins = scope.features.inSubquery ? inSubArb(scope) : null;
    if (ex) extra.push(ex);
    if (ins) extra.push(ins);
  }
  const leaf = fc.oneof(...leaves.map((arbitrary) => ({ arbitrary, weight: 4 })), ...extra.map((arbitrary) => ({ arbitrary, weight: 3 })));
  const { pred } = fc.letrec<{ pred: Pred; and: Pred; or: Pred; not: Pred; isnullp: Pred }>((tie) => ({
    pred: fc.oneof(
      { maxDepth: scope.maxDepth, depthIdentifier: `pred${scope.subDepth}`, withCrossShrink: true },
      { arbitrary: leaf, weight: 5 },
      { arbitrary: tie('and'), weight: 2 },
      { arbitrary: tie('or'), weight: 2 },
      { arbitrary: tie('not'), weight: scope.features.negation ? 1 : 0 },
      { arbitrary: tie('isnullp'), weight: scope.features.negation ? 1 : 0 },
    ),
    // One operand is allowed (printed as the operand alone): array shrinking then reduces a
    // failing AND/OR to the operand that fails, which a minimum of two would not allow.
    and: fc.array(tie('pred'), { minLength: 1, maxLength: 3 }).map((args) => ({ k: 'and' as const, args })),
    or: fc.array(tie('pred'), { minLength: 1, maxLength: 3 }).map((args) => ({ k: 'or' as const, args })),
    not: tie('pred').map((arg) => ({ k: 'not' as const, arg })),
    isnullp: fc.tuple(tie('pred'), fc.boolean()).map(([arg, neg]) => ({ k: 'isnullp' as const, arg, neg })),
  }));
  return pred;
}

// ---------------------------------------------------------------- select lists

const OUTPUT_ALIASES = ['k0', 'k1', 'k2', 'c0', 'c1', 'c2', 'total', 'n', 'x_val', 'agg_1', 't0', 'q'];

function aggArb(scope: Scope): fc.Arbitrary<Agg> {
  const numeric = colArb(scope, (c) => isNumberFamily(c.type));
  // min/max(boolean) is the known bug 'minMaxBoolean'.
  const ordered = colArb(scope, (c) => isNumberFamily(c.type) || isTextFamily(c.type) || (!scope.avoidKnownBugs && c.type === 'boolean'));
  const any = colArb(scope, (c) => c.type !== 'json');
  const alts: fc.Arbitrary<Agg>[] = [fc.constant({ fn: 'count' as const, distinct: false, arg: null })];
  const distinct = scope.features.distinctAggregates ? fc.constantFrom(false, false, true) : fc.constant(false);
  if (any) alts.push(fc.record({ fn: fc.constant('count' as const), distinct, arg: any }));
  if (numeric) alts.push(fc.record({ fn: fc.constantFrom('sum' as const, 'avg' as const), distinct, arg: numeric }));
  if (ordered) alts.push(fc.record({ fn: fc.constantFrom('min' as const, 'max' as const), distinct: fc.constant(false), arg: ordered }));
  return fc.oneof(...alts);
}

/** The output key of an unaliased column item. */
export function pathText(col: ColRef): string {
  return [...col.hops.map((h) => h.via), col.column].join('.');
}

function itemKey(item: Item): string | null {
  if (item.alias) return item.alias;
  return item.e.k === 'col' ? pathText(item.e.col) : null;
}

/** Gives aliases where keys would clash (or are required), so the select list is valid. */
function fixAliases(items: Item[], scope: Scope): Item[] {
  const used = new Set<string>();
  const columns = new Set(scope.object.columns.keys());
  let n = 0;
  const fresh = (): string => {
    while (used.has(`a${n}`) || columns.has(`a${n}`)) n++;
    return `a${n++}`;
  };
  return items.map((it) => {
    let alias = it.alias;
    if (alias !== null && (used.has(alias) || columns.has(alias))) alias = fresh();
    if (alias === null && it.e.k === 'agg') alias = fresh();
    const key = alias ?? itemKey(it)!;
    if (used.has(key)) alias = fresh();
    used.add(alias ?? key);
    return { e: it.e, alias };
  });
}

const LIMITS = [1, 2, 3, 7, 20, 100, 10_000];

function rootScope(schema: GenSchema, object: ObjectDef, alias: string | null, o: Required<GenOptions> & { features: Features }): Scope {
  return { schema, object, name: alias ?? object.slug, outer: null, features: o.features, avoidKnownBugs: o.avoidKnownBugs, subDepth: 1, maxDepth: o.maxDepth, maxHops: o.maxHops };
}

function resolve(options: GenOptions): Required<GenOptions> & { features: Features } {
  return {
    features: { ...ALL_FEATURES, ...options.features },
    maxDepth: options.maxDepth ?? 3,
    maxHops: options.maxHops ?? 2,
    limits: options.limits ?? LIMITS,
    avoidKnownBugs: options.avoidKnownBugs ?? true,
  };
}

const FROM_ALIASES = ['a', 'o', 'r', 'base', 't0', 't1', 'c0'];

function fromAliasArb(schema: GenSchema, object: ObjectDef): fc.Arbitrary<string | null> {
  const taken = new Set<string>([...object.columns.keys(), ...schema.catalog.objects.keys()]);
  const choices = FROM_ALIASES.filter((a) => !taken.has(a));
  return fc.option(fc.constantFrom(...choices), { nil: null, freq: 3 });
}

/** A plain (non-aggregate) query: columns and paths, optional DISTINCT, WHERE, ORDER BY. */
export function plainQueryArb(schema: GenSchema, options: GenOptions = {}): fc.Arbitrary<GenQuery> {
  const o = resolve(options);
  const objects = [...schema.catalog.objects.values()];
  return fc.constantFrom(...objects).chain((object) =>
    fromAliasArb(schema, object).chain((alias) => {
      const scope = rootScope(schema, object, alias, o);
      const col = colArb(scope, () => true)!;
      const item = fc.record({ e: col.map((c) => ({ k: 'col' as const, col: c })), alias: fc.option(fc.constantFrom(...OUTPUT_ALIASES), { nil: null, freq: 2 }) });
      return fc
        .record({
          star: o.features.star ? fc.constantFrom(false, false, false, false, false, true) : fc.constant(false),
          items: fc.array(item, { minLength: 1, maxLength: 4 }),
          distinct: o.features.distinct ? fc.constantFrom(false, false, false, true) : fc.constant(false),
          where: fc.option(predArb(scope), { nil: null, freq: 8 }),
          order: o.features.orderBy
            ? fc.array(
                fc.record({
                  ref: fc.oneof(
                    fc.record({ k: fc.constant('item' as const), index: fc.nat(7), style: fc.constantFrom('alias' as const, 'ordinal' as const, 'expr' as const) }),
                    colArb(scope, (c) => isScalar(c.type))!.map((c) => ({ k: 'col' as const, col: c })),
                  ),
                  dir: fc.constantFrom(null, 'ASC' as const, 'DESC' as const),
                  nulls: fc.constantFrom(null, null, 'FIRST' as const, 'LAST' as const),
                }),
                { maxLength: 3 },
              )
            : fc.constant<{ ref: OrderRef; dir: OrderKey['dir']; nulls: OrderKey['nulls'] }[]>([]),
          limit: fc.constantFrom(...o.limits),
          offset: o.features.offset ? fc.constantFrom(null, null, null, 0, 1, 5) : fc.constant(null),
          aliasAs: fc.boolean(),
          upper: fc.boolean(),
        })
        .map((r): GenQuery => {
          const items = r.star ? starItems(schema, object) : fixAliases(r.items, scope);
          const orderBy = r.order
            .map((k): OrderKey | null => {
              if (k.ref.k === 'item') {
                const index = k.ref.index % items.length;
                const it = items[index]!;
                // Only scalar outputs are ordered (array ordering is not what we test here).
                if (it.e.k === 'col' && !isScalar(it.e.col.type)) return null;
                const style = k.ref.style === 'alias' && !it.alias ? 'expr' : k.ref.style;
                if (r.star && style === 'expr') return { ...k, ref: { k: 'item', index, style: 'ordinal' } };
                return { ...k, ref: { k: 'item', index, style } };
              }
              return r.distinct || r.star ? null : k;
            })
            .filter((k): k is OrderKey => k !== null);
          return shownAsText({
            fixture: schema.fixture,
            object: object.slug,
            alias,
            aliasAs: r.aliasAs,
            distinct: r.distinct,
            star: r.star,
            items,
            where: r.where,
            groupBy: [],
            having: null,
            orderBy,
            limit: r.limit,
            offset: r.offset,
            upper: r.upper,
          });
        });
    }),
  );
}

function starItems(schema: GenSchema, object: ObjectDef): Item[] {
  return [...object.columns.values()]
    .filter((c) => c.type !== 'virtual')
    .map((c) => ({ e: { k: 'col' as const, col: { up: 0 as const, hops: [], object: object.slug, column: c.slug, type: c.type, qualify: false } }, alias: null }));
}

/** An aggregate query: group keys (selected), aggregates with aliases, optional HAVING and ORDER BY. */
export function aggQueryArb(schema: GenSchema, options: GenOptions = {}): fc.Arbitrary<GenQuery> {
  const o = resolve(options);
  const objects = [...schema.catalog.objects.values()];
  return fc.constantFrom(...objects).chain((object) =>
    fromAliasArb(schema, object).chain((alias) => {
      const scope = rootScope(schema, object, alias, o);
      const groupCol = colArb(scope, (c) => c.type !== 'json' && c.type !== 'multiselect')!;
      const agg = aggArb(scope);
      const hleaf = agg.chain((a) => {
        const lit: fc.Arbitrary<Lit> =
          a.fn === 'count' ? fc.integer({ min: 0, max: 6 }).map((n) => ({ t: 'num' as const, v: String(n) })) : litArb(scope, a.arg!);
        return fc.record({ k: fc.constant('hcmp' as const), agg: fc.constant(a), op: fc.constantFrom(...CMP_OPS), rhs: lit });
      });
      const { having } = fc.letrec<{ having: Pred }>((tie) => ({
        having: fc.oneof(
          { maxDepth: 2, depthIdentifier: 'having', withCrossShrink: true },
          { arbitrary: hleaf, weight: 4 },
          { arbitrary: fc.array(tie('having'), { minLength: 1, maxLength: 2 }).map((args) => ({ k: 'and' as const, args })), weight: 1 },
          { arbitrary: fc.array(tie('having'), { minLength: 1, maxLength: 2 }).map((args) => ({ k: 'or' as const, args })), weight: 1 },
          { arbitrary: tie('having').map((arg) => ({ k: 'not' as const, arg })), weight: 1 },
        ),
      }));
      return fc
        .record({
          keys: fc.array(fc.record({ col: groupCol, alias: fc.option(fc.constantFrom(...OUTPUT_ALIASES), { nil: null }), style: fc.constantFrom('expr' as const, 'alias' as const, 'ordinal' as const) }), { maxLength: 2 }),
          extraKeys: fc.array(groupCol, { maxLength: 1 }),
          aggs: fc.array(fc.record({ agg, alias: fc.option(fc.constantFrom(...OUTPUT_ALIASES), { nil: null }) }), { minLength: 1, maxLength: 3 }),
          aggFirst: fc.boolean(),
          where: fc.option(predArb(scope), { nil: null, freq: 3 }),
          having: o.features.having ? fc.option(having, { nil: null, freq: 2 }) : fc.constant(null),
          order: o.features.orderBy
            ? fc.array(
                fc.record({
                  ref: fc.oneof(
                    fc.record({ k: fc.constant('item' as const), index: fc.nat(7), style: fc.constantFrom('alias' as const, 'ordinal' as const, 'expr' as const) }),
                    ...(o.features.orderByAggregates ? [agg.map((a) => ({ k: 'agg' as const, agg: a }))] : []),
                  ),
                  dir: fc.constantFrom(null, 'ASC' as const, 'DESC' as const),
                  nulls: fc.constantFrom(null, null, 'FIRST' as const, 'LAST' as const),
                }),
                { maxLength: 3 },
              )
            : fc.constant<{ ref: OrderRef; dir: OrderKey['dir']; nulls: OrderKey['nulls'] }[]>([]),
          limit: fc.constantFrom(...o.limits),
          offset: o.features.offset ? fc.constantFrom(null, null, null, 0, 1, 5) : fc.constant(null),
          aliasAs: fc.boolean(),
          upper: fc.boolean(),
        })
        .map((r): GenQuery => {
          const keyItems: Item[] = r.keys.map((k) => ({ e: { k: 'col', col: k.col }, alias: k.alias }));
          const aggItems: Item[] = r.aggs.map((a) => ({ e: { k: 'agg', agg: a.agg }, alias: a.alias }));
          const items = fixAliases(r.aggFirst ? [...aggItems, ...keyItems] : [...keyItems, ...aggItems], scope);
          const groupBy: GroupKey[] = [];
          items.forEach((it, index) => {
            if (it.e.k !== 'col') return;
            const style = r.keys[r.aggFirst ? index - aggItems.length : index]!.style;
            groupBy.push({ k: 'item', index, style: style === 'alias' && !it.alias ? 'expr' : style });
          });
          for (const col of r.extraKeys) groupBy.push({ k: 'col', col });
          const orderBy = r.order
            .map((k): OrderKey | null => {
              if (k.ref.k !== 'item') return k;
              const index = k.ref.index % items.length;
              const it = items[index]!;
              return { ...k, ref: { k: 'item', index, style: k.ref.style === 'alias' && !it.alias ? 'ordinal' : k.ref.style } };
            })
            .filter((k): k is OrderKey => k !== null);
          return shownAsText({
            fixture: schema.fixture,
            object: object.slug,
            alias,
            aliasAs: r.aliasAs,
            distinct: false,
            star: false,
            items,
            where: r.where,
            groupBy,
            having: r.having,
            orderBy,
            limit: r.limit,
            offset: r.offset,
            upper: r.upper,
          });
        });
    }),
  );
}

/** Plain and aggregate queries over any of the given schemas, capped at two fan-out joins. */
export function queryArb(schemas: readonly GenSchema[], options: GenOptions = {}): fc.Arbitrary<GenQuery> {
  const o = resolve(options);
  const perSchema = schemas.map((s) => (o.features.aggregates ? fc.oneof({ arbitrary: plainQueryArb(s, options), weight: 3 }, { arbitrary: aggQueryArb(s, options), weight: 2 }) : plainQueryArb(s, options)));
  return fc.oneof(...perSchema).filter((q) => virtualJoins(q) <= 2);
}

/** Makes fast-check show a query as its text in counterexamples (instead of the structure). */
export function shownAsText(q: GenQuery): GenQuery {
  Object.defineProperty(q, fc.toStringMethod, { value: () => `${q.fixture}: ${printQuery(q)}`, enumerable: false });
  return q;
}

// ---------------------------------------------------------------- analysis

/**
 * Column references of one scope found in `p`, written `level` subqueries deep below it: a
 * reference belongs to the scope when its `up` equals the nesting it is written at.
 */
export function predRefs(p: Pred | null, level: number, out: ColRef[] = []): ColRef[] {
  if (!p) return out;
  const add = (c: ColRef): void => {
    if (c.up === level) out.push(c);
  };
  switch (p.k) {
    case 'and':
    case 'or':
      p.args.forEach((a) => predRefs(a, level, out));
      break;
    case 'not':
    case 'isnullp':
      predRefs(p.arg, level, out);
      break;
    case 'cmpcol':
      add(p.col);
      add(p.rhs);
      break;
    case 'exists':
      predRefs(p.where, level + 1, out);
      break;
    case 'insub':
      add(p.col);
      predRefs(p.where, level + 1, out);
      break;
    case 'hcmp':
      if (level === 0 && p.agg.arg) out.push(p.agg.arg);
      break;
    default:
      add(p.col);
  }
  return out;
}

/** Every column reference of the query's own scope (outer references from subqueries included). */
export function scopeColumns(q: GenQuery): ColRef[] {
  const out: ColRef[] = [];
  const agg = (a: Agg): void => {
    if (a.arg) out.push(a.arg);
  };
  for (const it of q.items) {
    if (it.e.k === 'col') out.push(it.e.col);
    else agg(it.e.agg);
  }
  for (const g of q.groupBy) if (g.k === 'col') out.push(g.col);
  for (const k of q.orderBy) {
    if (k.ref.k === 'col') out.push(k.ref.col);
    if (k.ref.k === 'agg') agg(k.ref.agg);
  }
  predRefs(q.where, 0, out);
  predRefs(q.having, 0, out);
  return out;
}

export function hopKey(hops: readonly Hop[], upTo = hops.length): string {
  return hops
    .slice(0, upTo)
    .map((h) => h.via)
    .join('/');
}

/** Number of distinct fan-out (virtual) joins of the top-level scope. */
export function virtualJoins(q: GenQuery): number {
  const keys = new Set<string>();
  for (const c of scopeColumns(q)) c.hops.forEach((h, i) => h.kind === 'virtual' && keys.add(hopKey(c.hops, i + 1)));
  return keys.size;
}

export function hasVirtualPaths(q: GenQuery): boolean {
  return virtualJoins(q) > 0;
}

/** Whether any node satisfies `test` (subqueries included). */
export function somePred(p: Pred | null, test: (p: Pred) => boolean): boolean {
  if (!p) return false;
  if (test(p)) return true;
  switch (p.k) {
    case 'and':
    case 'or':
      return p.args.some((a) => somePred(a, test));
    case 'not':
    case 'isnullp':
      return somePred(p.arg, test);
    case 'exists':
    case 'insub':
      return somePred(p.where, test);
    default:
      return false;
  }
}

// ---------------------------------------------------------------- printing

function kw(q: { upper: boolean }, word: string): string {
  return q.upper ? word.toUpperCase() : word.toLowerCase();
}

export function printLit(l: Lit): string {
  switch (l.t) {
    case 'str':
      return `'${l.v.replace(/'/g, "''")}'`;
    case 'num':
      return l.v;
    case 'bool':
      return l.style === '01' ? (l.v ? '1' : '0') : l.v ? 'TRUE' : 'FALSE';
    case 'null':
      return 'NULL';
  }
}

interface PrintCtx {
  readonly upper: boolean;
  /** Scope names, innermost first. */
  readonly names: readonly string[];
}

function printCol(c: ColRef, ctx: PrintCtx): string {
  const path = pathText(c);
  return c.qualify || c.up > 0 ? `${ctx.names[c.up]}.${path}` : path;
}

function printAgg(a: Agg, ctx: PrintCtx): string {
  if (!a.arg) return 'count(*)';
  return `${a.fn}(${a.distinct ? `${kw(ctx, 'DISTINCT')} ` : ''}${printCol(a.arg, ctx)})`;
}

function printPred(p: Pred, ctx: PrintCtx): string {
  const K = (w: string): string => kw(ctx, w);
  const sub = (x: Pred): string => (x.k === 'and' || x.k === 'or' ? `(${printPred(x, ctx)})` : printPred(x, ctx));
  switch (p.k) {
    case 'and':
    case 'or':
      return p.args.map(sub).join(` ${K(p.k)} `);
    case 'not':
      return `${K('NOT')} (${printPred(p.arg, ctx)})`;
    case 'isnullp':
      return `(${printPred(p.arg, ctx)}) ${K('IS')} ${p.neg ? `${K('NOT')} ` : ''}${K('NULL')}`;
    case 'cmp': {
      const col = printCol(p.col, ctx);
      const lit = printLit(p.rhs);
      return p.flip ? `${lit} ${flipOp(p.op)} ${col}` : `${col} ${p.op} ${lit}`;
    }
    case 'cmpcol':
      return `${printCol(p.col, ctx)} ${p.op} ${printCol(p.rhs, ctx)}`;
    case 'like':
      return `${printCol(p.col, ctx)} ${p.neg ? `${K('NOT')} ` : ''}${K(p.ci ? 'ILIKE' : 'LIKE')} ${printLit({ t: 'str', v: p.pattern })}`;
    case 'in':
      return `${printCol(p.col, ctx)} ${p.neg ? `${K('NOT')} ` : ''}${K('IN')} (${p.items.map(printLit).join(', ')})`;
    case 'between':
      return `${printCol(p.col, ctx)} ${p.neg ? `${K('NOT')} ` : ''}${K('BETWEEN')} ${printLit(p.lo)} ${K('AND')} ${printLit(p.hi)}`;
    case 'isnull':
      return `${printCol(p.col, ctx)} ${K('IS')} ${p.neg ? `${K('NOT')} ` : ''}${K('NULL')}`;
    case 'overlap': {
      const t = `${printCol(p.col, ctx)} && ${K('ARRAY')}[${p.items.map((i) => printLit({ t: 'str', v: i })).join(', ')}]`;
      return p.neg ? `${K('NOT')} (${t})` : t;
    }
    case 'empty':
      return `${printCol(p.col, ctx)} ${p.neg ? '<>' : '='} ${K('ARRAY')}[${K('NULL')}]`;
    case 'exists': {
      const inner = p.from.alias ?? p.from.object;
      const ictx: PrintCtx = { upper: ctx.upper, names: [inner, ...ctx.names] };
      const outerId = `${ctx.names[0]}.id`;
      const innerVia = p.corr === 2 ? p.via : `${inner}.${p.via}`;
      const corr = p.corr === 1 ? `${outerId} = ${innerVia}` : `${innerVia} = ${outerId}`;
      const where = p.where ? `${corr} ${K('AND')} (${printPred(p.where, ictx)})` : corr;
      return `${p.neg ? `${K('NOT')} ` : ''}${K('EXISTS')} (${K('SELECT')} ${p.select} ${K('FROM')} ${printFrom(p.from)} ${K('WHERE')} ${where})`;
    }
    case 'insub': {
      const inner = p.from.alias ?? p.from.object;
      const ictx: PrintCtx = { upper: ctx.upper, names: [inner, ...ctx.names] };
      const where = p.where ? ` ${K('WHERE')} ${printPred(p.where, ictx)}` : '';
      return `${printCol(p.col, ctx)} ${p.neg ? `${K('NOT')} ` : ''}${K('IN')} (${K('SELECT')} ${inner}.${p.column} ${K('FROM')} ${printFrom(p.from)}${where})`;
    }
    case 'hcmp':
      return `${printAgg(p.agg, ctx)} ${p.op} ${printLit(p.rhs)}`;
  }
}

function printFrom(f: SubFrom): string {
  return f.alias ? `${f.object} ${f.alias}` : f.object;
}

export function flipOp(op: CmpOp): CmpOp {
  switch (op) {
    case '<':
      return '>';
    case '>':
      return '<';
    case '<=':
      return '>=';
    case '>=':
      return '<=';
    default:
      return op;
  }
}

export function printItemExpr(e: ItemExpr, ctx: PrintCtx): string {
  return e.k === 'col' ? printCol(e.col, ctx) : printAgg(e.agg, ctx);
}

/** The query text. */
export function printQuery(q: GenQuery): string {
  const K = (w: string): string => kw(q, w);
  const name = q.alias ?? q.object;
  const ctx: PrintCtx = { upper: q.upper, names: [name] };
  const parts: string[] = [K('SELECT')];
  if (q.distinct) parts.push(K('DISTINCT'));
  parts.push(
    q.star
      ? '*'
      : q.items.map((it) => `${printItemExpr(it.e, ctx)}${it.alias ? ` ${K('AS')} ${it.alias}` : ''}`).join(', '),
  );
  parts.push(K('FROM'), q.object);
  if (q.alias) parts.push(...(q.aliasAs ? [K('AS'), q.alias] : [q.alias]));
  if (q.where) parts.push(K('WHERE'), printPred(q.where, ctx));
  const itemRef = (index: number, style: 'expr' | 'alias' | 'ordinal'): string => {
    const it = q.items[index]!;
    if (style === 'alias' && it.alias) return it.alias;
    if (style === 'ordinal') return String(index + 1);
    return printItemExpr(it.e, ctx);
  };
  if (q.groupBy.length) {
    parts.push(K('GROUP BY'), q.groupBy.map((g) => (g.k === 'item' ? itemRef(g.index, g.style) : printCol(g.col, ctx))).join(', '));
  }
  if (q.having) parts.push(K('HAVING'), printPred(q.having, ctx));
  if (q.orderBy.length) {
    const keys = q.orderBy.map((k) => {
      const ref = k.ref.k === 'item' ? itemRef(k.ref.index, k.ref.style) : k.ref.k === 'col' ? printCol(k.ref.col, ctx) : printAgg(k.ref.agg, ctx);
      return [ref, k.dir && K(k.dir), k.nulls && `${K('NULLS')} ${K(k.nulls)}`].filter(Boolean).join(' ');
    });
    parts.push(K('ORDER BY'), keys.join(', '));
  }
  parts.push(K('LIMIT'), String(q.limit));
  if (q.offset !== null) parts.push(K('OFFSET'), String(q.offset));
  return parts.join(' ');
}

/** Output keys, as the compiler's `columns[i].key` must report them. */
export function outputKeys(q: GenQuery): string[] {
  return q.items.map((it) => itemKey(it) ?? '?column?');
}
