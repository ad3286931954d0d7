import type { Catalog, LogicalType, ObjectDef } from '../../src/catalog/types.js';
import type { Row } from '../../fixtures/index.js';
import { hopKey, predRefs, scopeColumns, type Agg, type ColRef, type GenQuery, type Hop, type Item, type Lit, type Pred } from './querygen.js';

/**
 * A reference evaluator for the queries of querygen.ts, written from the language's rules
 * (docs/query-language.md) over the in-memory fixture rows. It shares no code with the
 * compiler: it reads the catalog only as a description of the schema.
 *
 * - Three-valued logic: predicates evaluate to true, false or null (unknown).
 * - Only the tenant's live rows exist: other tenants' and soft-deleted rows are invisible,
 *   also as targets of relations.
 * - A to-one path follows the relation to the live same-tenant record, else every field is NULL.
 * - A virtual path fans out: one row per matching live child; a parent without children keeps
 *   one row whose child fields are NULL. Each distinct path prefix is joined once per scope.
 * - Text sorts by code point (the C collation of the test databases).
 */

export type Value = string | number | boolean | readonly string[] | Readonly<Record<string, unknown>> | null;
type Tri = boolean | null;

export type CellKind = 'num' | 'approx' | 'text' | 'bool' | 'array' | 'json';

export interface RefDb {
  readonly catalog: Catalog;
  readonly rows: ReadonlyMap<string, readonly Row[]>;
  readonly live: Map<string, Map<string, Row[]>>;
  readonly byId: Map<string, Map<string, Row>>;
  readonly children: Map<string, Map<string, Row[]>>;
}

export function refDb(catalog: Catalog, rows: ReadonlyMap<string, readonly Row[]>): RefDb {
  const { tenantColumn, softDeleteColumn, idColumn } = catalog.mapping;
  const live = new Map<string, Map<string, Row[]>>();
  const byId = new Map<string, Map<string, Row>>();
  for (const obj of catalog.objects.values()) {
    const perTenant = new Map<string, Row[]>();
    const ids = new Map<string, Row>();
    for (const r of rows.get(obj.slug) ?? []) {
      if (softDeleteColumn !== null && r[softDeleteColumn] === true) continue;
      const t = String(r[tenantColumn]);
      let list = perTenant.get(t);
      if (!list) perTenant.set(t, (list = []));
      list.push(r);
      ids.set(`${t}\u0000${String(r[idColumn])}`, r);
    }
    live.set(obj.slug, perTenant);
    byId.set(obj.slug, ids);
  }
  return { catalog, rows, live, byId, children: new Map() };
}

// ---------------------------------------------------------------- values

function physical(db: RefDb, object: string, column: string): string {
  if (column === 'id') return db.catalog.mapping.idColumn;
  const c = db.catalog.objects.get(object)?.columns.get(column);
  if (!c || c.column === null) throw new Error(`refeval: no physical column for ${object}.${column}`);
  return c.column;
}

/** Code point order (UTF-8 byte order, the C collation), not UTF-16 code unit order. */
export function compareText(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    x = x >= 0xe000 ? x - 0x800 : x >= 0xd800 ? x + 0x2000 : x;
    y = y >= 0xe000 ? y - 0x800 : y >= 0xd800 ? y + 0x2000 : y;
    return x - y;
  }
  return a.length - b.length;
}

/** Orders two non-null scalars of one family. */
export function compareValues(a: Value, b: Value): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return Math.sign(compareText(a, b));
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  throw new Error(`refeval: cannot compare ${JSON.stringify(a)} with ${JSON.stringify(b)}`);
}

function litValue(l: Lit): Value {
  switch (l.t) {
    case 'str':
      return l.v;
    case 'num':
      return Number(l.v);
    case 'bool':
      return l.v;
    case 'null':
      return null;
  }
}

function compareOp(op: string, a: Value, b: Value): Tri {
  if (a === null || b === null) return null;
  const c = compareValues(a, b);
  switch (op) {
    case '=':
      return c === 0;
    case '<>':
    case '!=':
      return c !== 0;
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    case '>=':
      return c >= 0;
    default:
      throw new Error(`refeval: operator ${op}`);
  }
}

function and(xs: Tri[]): Tri {
  if (xs.includes(false)) return false;
  return xs.includes(null) ? null : true;
}

function or(xs: Tri[]): Tri {
  if (xs.includes(true)) return true;
  return xs.includes(null) ? null : false;
}

function not(x: Tri): Tri {
  return x === null ? null : !x;
}

/** `x IN (items)` with SQL's NULL rules. */
function inList(x: Value, items: readonly Value[]): Tri {
  if (x === null) return items.length === 0 ? false : null;
  let unknown = false;
  for (const i of items) {
    if (i === null) unknown = true;
    else if (compareValues(x, i) === 0) return true;
  }
  return unknown ? null : false;
}

const likeCache = new Map<string, RegExp>();

/** PostgreSQL LIKE: `%` any run, `_` one character, backslash escapes the next character. */
function likeRegex(pattern: string): RegExp {
  let re = likeCache.get(pattern);
  if (re) return re;
  let src = '^';
  const chars = [...pattern];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '\\' && i + 1 < chars.length) src += escapeRegex(chars[++i]!);
    else if (c === '%') src += '.*';
    else if (c === '_') src += '.';
    else src += escapeRegex(c);
  }
  re = new RegExp(`${src}$`, 'su');
  likeCache.set(pattern, re);
  return re;
}

function escapeRegex(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** Lower case one code point at a time, as PostgreSQL's towlower does (no length-changing mappings). */
function lowerChars(s: string): string {
  let out = '';
  for (const c of s) {
    const l = c.toLowerCase();
    out += [...l].length === 1 ? l : c;
  }
  return out;
}

// ---------------------------------------------------------------- joins

/** A scope's row: the base record under '' and every joined path's record (or null). */
interface Env {
  readonly row: ReadonlyMap<string, Row | null>;
  readonly outer: Env | null;
}

interface JoinStep {
  readonly key: string;
  readonly parent: string;
  readonly parentObject: string;
  readonly hop: Hop;
}

/** The joins of one scope, parents first; `refs` are exactly the references to that scope. */
function joinSteps(base: string, refs: readonly ColRef[]): JoinStep[] {
  const steps = new Map<string, JoinStep>();
  for (const c of refs) {
    let parentObject = base;
    c.hops.forEach((hop, i) => {
      const key = hopKey(c.hops, i + 1);
      if (!steps.has(key)) steps.set(key, { key, parent: hopKey(c.hops, i), parentObject, hop });
      parentObject = hop.object;
    });
  }
  return [...steps.values()].sort((a, b) => a.key.split('/').length - b.key.split('/').length);
}

function childrenOf(db: RefDb, tenant: string, object: string, via: string, parentId: string): readonly Row[] {
  const key = `${tenant}\u0000${object}\u0000${via}`;
  let index = db.children.get(key);
  if (!index) {
    index = new Map();
    const phys = physical(db, object, via);
    for (const r of db.live.get(object)?.get(tenant) ?? []) {
      const v = r[phys];
      if (v === null || v === undefined) continue;
      const k = String(v);
      let list = index.get(k);
      if (!list) index.set(k, (list = []));
      list.push(r);
    }
    db.children.set(key, index);
  }
  return index.get(parentId) ?? [];
}

function follow(db: RefDb, tenant: string, step: JoinStep, parent: Row): readonly (Row | null)[] {
  const { idColumn } = db.catalog.mapping;
  if (step.hop.kind === 'to-one') {
    const fk = parent[physical(db, step.parentObject, step.hop.via)];
    if (fk === null || fk === undefined) return [null];
    return [db.byId.get(step.hop.object)!.get(`${tenant}\u0000${String(fk)}`) ?? null];
  }
  const rel = db.catalog.objects.get(step.parentObject)!.columns.get(step.hop.via)!.relation as { via: string };
  const kids = childrenOf(db, tenant, step.hop.object, rel.via, String(parent[idColumn]));
  return kids.length > 0 ? kids : [null];
}

function expand(db: RefDb, tenant: string, base: readonly Row[], steps: readonly JoinStep[], outer: Env | null): Env[] {
  let rows: Map<string, Row | null>[] = base.map((r) => new Map([['', r]]));
  for (const step of steps) {
    const next: Map<string, Row | null>[] = [];
    for (const row of rows) {
      const parent = row.get(step.parent) ?? null;
      for (const target of parent ? follow(db, tenant, step, parent) : [null]) {
        const m = new Map(row);
        m.set(step.key, target);
        next.push(m);
      }
    }
    rows = next;
  }
  return rows.map((row) => ({ row, outer }));
}

// ---------------------------------------------------------------- evaluation

interface Ctx {
  readonly db: RefDb;
  readonly tenant: string;
  /** Uncorrelated IN-subquery results, computed once. */
  readonly subCache: Map<Pred, Value[]>;
}

function colValue(ctx: Ctx, env: Env, c: ColRef): Value {
  let e: Env = env;
  for (let i = 0; i < c.up; i++) e = e.outer!;
  const rec = e.row.get(hopKey(c.hops));
  if (rec === undefined) throw new Error(`refeval: path ${hopKey(c.hops)} was not joined`);
  if (rec === null) return null;
  const v = rec[physical(ctx.db, c.object, c.column)];
  return v === undefined ? null : (v as Value);
}

function evalPred(ctx: Ctx, p: Pred, env: Env, group: readonly Env[] | null): Tri {
  switch (p.k) {
    case 'and':
      return and(p.args.map((a) => evalPred(ctx, a, env, group)));
    case 'or':
      return or(p.args.map((a) => evalPred(ctx, a, env, group)));
    case 'not':
      return not(evalPred(ctx, p.arg, env, group));
    case 'isnullp': {
      const v = evalPred(ctx, p.arg, env, group);
      return p.neg ? v !== null : v === null;
    }
    case 'cmp':
      return compareOp(p.op, colValue(ctx, env, p.col), litValue(p.rhs));
    case 'cmpcol':
      return compareOp(p.op, colValue(ctx, env, p.col), colValue(ctx, env, p.rhs));
    case 'like': {
      const v = colValue(ctx, env, p.col);
      if (v === null) return null;
      const s = String(v);
      const r = p.ci ? likeRegex(lowerChars(p.pattern)).test(lowerChars(s)) : likeRegex(p.pattern).test(s);
      return p.neg ? !r : r;
    }
    case 'in': {
      const r = inList(colValue(ctx, env, p.col), p.items.map(litValue));
      return p.neg ? not(r) : r;
    }
    case 'between': {
      const v = colValue(ctx, env, p.col);
      const r = and([compareOp('>=', v, litValue(p.lo)), compareOp('<=', v, litValue(p.hi))]);
      return p.neg ? not(r) : r;
    }
    case 'isnull': {
      const v = colValue(ctx, env, p.col);
      return p.neg ? v !== null : v === null;
    }
    case 'overlap': {
      const v = colValue(ctx, env, p.col) as readonly string[] | null;
      if (v === null) return null;
      const r = v.some((x) => p.items.includes(x));
      return p.neg ? !r : r;
    }
    case 'empty': {
      const v = colValue(ctx, env, p.col) as readonly string[] | null;
      const r = v === null || v.length === 0;
      return p.neg ? !r : r;
    }
    case 'exists': {
      const outerId = String(env.row.get('')![ctx.db.catalog.mapping.idColumn]);
      const base = childrenOf(ctx.db, ctx.tenant, p.from.object, p.via, outerId);
      const inner = expand(ctx.db, ctx.tenant, base, joinSteps(p.from.object, predRefs(p.where, 0)), env);
      const r = inner.some((e) => (p.where ? evalPred(ctx, p.where, e, null) === true : true));
      return p.neg ? !r : r;
    }
    case 'insub': {
      const r = inList(colValue(ctx, env, p.col), subqueryValues(ctx, p, env));
      return p.neg ? not(r) : r;
    }
    case 'hcmp':
      if (!group) throw new Error('refeval: aggregate outside a group');
      return compareOp(p.op, aggValue(ctx, p.agg, group), litValue(p.rhs));
  }
}

function subqueryValues(ctx: Ctx, p: Extract<Pred, { k: 'insub' }>, env: Env): Value[] {
  const correlated = predRefs(p.where, 1).length > 0;
  const hit = correlated ? undefined : ctx.subCache.get(p);
  if (hit) return hit;
  const base = ctx.db.live.get(p.from.object)?.get(ctx.tenant) ?? [];
  const inner = expand(ctx.db, ctx.tenant, base, joinSteps(p.from.object, predRefs(p.where, 0)), env);
  const phys = physical(ctx.db, p.from.object, p.column);
  const values = inner.filter((e) => (p.where ? evalPred(ctx, p.where, e, null) === true : true)).map((e) => (e.row.get('')![phys] ?? null) as Value);
  if (!correlated) ctx.subCache.set(p, values);
  return values;
}

const SCALE = 6;
const SCALE_N = 10n ** BigInt(SCALE);

/** A number as an exact scaled integer (the fixture's numbers have at most two decimals). */
function scaled(v: number): bigint {
  const s = String(v);
  if (/e/i.test(s)) return BigInt(Math.round(v * 10 ** SCALE));
  const neg = s.startsWith('-');
  const [i, f = ''] = (neg ? s.slice(1) : s).split('.');
  const n = BigInt(i!) * SCALE_N + BigInt((f + '0'.repeat(SCALE)).slice(0, SCALE));
  return neg ? -n : n;
}

function unscaled(n: bigint): number {
  const neg = n < 0n;
  const a = neg ? -n : n;
  const text = `${a / SCALE_N}.${(a % SCALE_N).toString().padStart(SCALE, '0')}`;
  return Number(neg ? `-${text}` : text);
}

function aggValue(ctx: Ctx, a: Agg, group: readonly Env[]): Value {
  if (!a.arg) return group.length;
  let values: Value[] = group.map((e) => colValue(ctx, e, a.arg!)).filter((v) => v !== null);
  if (a.distinct) {
    const seen = new Map<string, Value>();
    for (const v of values) seen.set(JSON.stringify(v), v);
    values = [...seen.values()];
  }
  switch (a.fn) {
    case 'count':
      return values.length;
    case 'sum':
      return values.length ? unscaled(values.reduce<bigint>((s, v) => s + scaled(v as number), 0n)) : null;
    case 'avg': {
      if (!values.length) return null;
      const sum = values.reduce<bigint>((s, v) => s + scaled(v as number), 0n);
      // The quotient exactly, the remainder as a fraction: a scaled sum of epoch milliseconds
      // (about 1.7e18) is past 2^53, so Number(sum) would round away what PostgreSQL's numeric
      // avg keeps (avg(updated_at) of one row is that row's value exactly).
      const n = BigInt(values.length);
      return unscaled(sum / n) + Number(sum % n) / values.length / Number(SCALE_N);
    }
    case 'min':
    case 'max': {
      if (!values.length) return null;
      const sign = a.fn === 'min' ? -1 : 1;
      return values.reduce((m, v) => (compareValues(v, m) * sign > 0 ? v : m));
    }
  }
}

// ---------------------------------------------------------------- queries

export function kindOfType(t: LogicalType): CellKind {
  switch (t) {
    case 'number':
    case 'integer':
    case 'currency':
    case 'date':
    case 'datetime':
      return 'num';
    case 'boolean':
      return 'bool';
    case 'multiselect':
      return 'array';
    case 'json':
      return 'json';
    default:
      return 'text';
  }
}

export function itemKind(it: Item): CellKind {
  if (it.e.k === 'col') return kindOfType(it.e.col.type);
  const a = it.e.agg;
  if (a.fn === 'count' || a.fn === 'sum') return 'num';
  if (a.fn === 'avg') return 'approx';
  return kindOfType(a.arg!.type);
}

export interface SortSpec {
  readonly desc: boolean;
  readonly nullsFirst: boolean;
}

export interface RefResult {
  readonly kinds: readonly CellKind[];
  /** Every row the query produces before OFFSET/LIMIT, in ORDER BY order (stable) when it has one. */
  readonly rows: readonly Value[][];
  /** ORDER BY key values of each row (same order as rows), or null without ORDER BY. */
  readonly sortKeys: readonly Value[][] | null;
  readonly sort: readonly SortSpec[];
  /** Output index of every ORDER BY key, when all of them are output columns. */
  readonly sortOutputs: readonly number[] | null;
  readonly limit: number;
  readonly offset: number;
}

/** Rows of `q` for `tenant`. */
export function evaluate(db: RefDb, q: GenQuery, tenant: string): RefResult {
  const ctx: Ctx = { db, tenant, subCache: new Map() };
  const base = db.live.get(q.object)?.get(tenant) ?? [];
  let envs = expand(db, tenant, base, joinSteps(q.object, scopeColumns(q)), null);
  if (q.where) envs = envs.filter((e) => evalPred(ctx, q.where!, e, null) === true);
  const kinds = q.items.map(itemKind);
  const sort = q.orderBy.map((k) => ({ desc: k.dir === 'DESC', nullsFirst: k.nulls ? k.nulls === 'FIRST' : k.dir === 'DESC' }));
  const sortOutputs = q.orderBy.every((k) => k.ref.k === 'item') ? q.orderBy.map((k) => (k.ref as { index: number }).index) : null;

  let out: { values: Value[]; keys: Value[] }[];
  const aggregated = q.groupBy.length > 0 || q.having !== null || q.items.some((it) => it.e.k === 'agg');
  if (aggregated) {
    const groupValues = (e: Env): Value[] =>
      q.groupBy.map((g) => {
        if (g.k === 'col') return colValue(ctx, e, g.col);
        const it = q.items[g.index]!;
        if (it.e.k !== 'col') throw new Error('refeval: GROUP BY an aggregate');
        return colValue(ctx, e, it.e.col);
      });
    const groups = new Map<string, Env[]>();
    if (q.groupBy.length === 0) groups.set('', envs);
    for (const e of q.groupBy.length ? envs : []) {
      const k = JSON.stringify(groupValues(e));
      let g = groups.get(k);
      if (!g) groups.set(k, (g = []));
      g.push(e);
    }
    out = [];
    for (const g of groups.values()) {
      const first = g[0] ?? { row: new Map(), outer: null };
      if (q.having && evalPred(ctx, q.having, first, g) !== true) continue;
      const values = q.items.map((it) => (it.e.k === 'col' ? colValue(ctx, first, it.e.col) : aggValue(ctx, it.e.agg, g)));
      const keys = q.orderBy.map((k) => (k.ref.k === 'item' ? values[k.ref.index]! : k.ref.k === 'agg' ? aggValue(ctx, k.ref.agg, g) : colValue(ctx, first, k.ref.col)));
      out.push({ values, keys });
    }
  } else {
    out = envs.map((e) => {
      const values = q.items.map((it) => colValue(ctx, e, (it.e as { col: ColRef }).col));
      const keys = q.orderBy.map((k) => (k.ref.k === 'item' ? values[k.ref.index]! : colValue(ctx, e, (k.ref as { col: ColRef }).col)));
      return { values, keys };
    });
    if (q.distinct) {
      const seen = new Set<string>();
      out = out.filter((r) => {
        const k = JSON.stringify(r.values.map((v, i) => canonicalCell(kinds[i]!, v)));
        if (seen.has(k)) return false;
        seen.add(k);
        return true;
      });
    }
  }
  if (q.orderBy.length) out = out.map((r, i) => ({ r, i })).sort((a, b) => compareKeys(a.r.keys, b.r.keys, sort) || a.i - b.i).map((x) => x.r);
  return {
    kinds,
    rows: out.map((r) => r.values),
    sortKeys: q.orderBy.length ? out.map((r) => r.keys) : null,
    sort,
    sortOutputs,
    limit: q.limit,
    offset: q.offset ?? 0,
  };
}

export function compareKeys(a: readonly Value[], b: readonly Value[], sort: readonly SortSpec[]): number {
  for (let i = 0; i < sort.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    const s = sort[i]!;
    if (x === null && y === null) continue;
    if (x === null) return s.nullsFirst ? -1 : 1;
    if (y === null) return s.nullsFirst ? 1 : -1;
    const c = compareValues(x, y);
    if (c !== 0) return s.desc ? -c : c;
  }
  return 0;
}

// ---------------------------------------------------------------- comparing with a database

function sortedJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  return `{${Object.keys(v as object)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${sortedJson((v as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}

/** A database value as the evaluator represents it. */
export function fromDb(kind: CellKind, v: unknown): Value {
  if (v === null || v === undefined) return null;
  switch (kind) {
    case 'num':
    case 'approx':
      return Number(v);
    case 'bool':
      return Boolean(v);
    case 'text':
      return String(v);
    case 'array':
      return v as string[];
    case 'json':
      return (typeof v === 'string' ? JSON.parse(v) : v) as Record<string, unknown>;
  }
}

/** Exact cells as a string; approximate (avg) cells are compared separately with a tolerance. */
export function canonicalCell(kind: CellKind, v: Value): string {
  if (v === null) return '∅';
  switch (kind) {
    case 'num':
      return `n:${String(Number(v))}`;
    case 'approx':
      return '~';
    case 'bool':
      return v ? 't' : 'f';
    case 'text':
      return `s:${String(v)}`;
    case 'array':
    case 'json':
      return sortedJson(v);
  }
}

function close(a: Value, b: Value): boolean {
  if (a === null || b === null) return a === b;
  const x = a as number;
  const y = b as number;
  return Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y));
}

function rowKey(kinds: readonly CellKind[], row: readonly Value[]): string {
  return JSON.stringify(row.map((v, i) => canonicalCell(kinds[i]!, v)));
}

function sameRow(kinds: readonly CellKind[], a: readonly Value[], b: readonly Value[]): boolean {
  return rowKey(kinds, a) === rowKey(kinds, b) && kinds.every((k, i) => k !== 'approx' || close(a[i]!, b[i]!));
}

/**
 * Matches `actual` rows into `expected` (exact cells equal, avg cells within 1e-9 relative).
 * Returns the actual rows without a partner and the expected rows left over.
 */
export function matchRows(kinds: readonly CellKind[], expected: readonly Value[][], actual: readonly Value[][]): { extra: Value[][]; missing: Value[][] } {
  const buckets = new Map<string, Value[][]>();
  for (const r of expected) {
    const k = rowKey(kinds, r);
    let b = buckets.get(k);
    if (!b) buckets.set(k, (b = []));
    b.push(r);
  }
  const extra: Value[][] = [];
  for (const r of actual) {
    const b = buckets.get(rowKey(kinds, r));
    const i = b ? b.findIndex((e) => sameRow(kinds, e, r)) : -1;
    if (i < 0) extra.push(r);
    else b!.splice(i, 1);
  }
  return { extra, missing: [...buckets.values()].flat() };
}

function show(rows: readonly Value[][], n = 5): string {
  const head = rows.slice(0, n).map((r) => JSON.stringify(r));
  return head.join('\n    ') + (rows.length > n ? `\n    … ${rows.length - n} more` : '');
}

/**
 * Checks rows from the database against the reference result, allowing exactly the freedom
 * SQL allows: with LIMIT/OFFSET and no total order any qualifying rows may come back, but
 * they must be rows of the full result, in ORDER BY order, with the right ORDER BY keys.
 * Returns a description of the first disagreement, or null.
 */
export function checkRows(ref: RefResult, actual: readonly Value[][]): string | null {
  const n = ref.rows.length;
  const start = Math.min(ref.offset, n);
  const end = Math.min(n, ref.offset + ref.limit);
  const want = end - start;
  if (actual.length !== want) {
    return `expected ${want} rows (of ${n} before OFFSET ${ref.offset} LIMIT ${ref.limit}), got ${actual.length}\n  expected (first):\n    ${show(ref.rows.slice(start, end))}\n  actual (first):\n    ${show(actual)}`;
  }
  const window = ref.rows.slice(start, end);
  const everything = start === 0 && end === n;
  if (ref.sortKeys) {
    const keys = ref.sortKeys.map((k) => JSON.stringify(k.map((v) => (typeof v === 'number' ? String(v) : v))));
    const unique = new Set(keys).size === keys.length;
    if (unique) {
      for (let i = 0; i < want; i++) {
        if (!sameRow(ref.kinds, window[i]!, actual[i]!)) {
          return `row ${i} differs under a total ORDER BY:\n  expected ${JSON.stringify(window[i])}\n  actual   ${JSON.stringify(actual[i])}\n  expected (first):\n    ${show(window)}\n  actual (first):\n    ${show(actual)}`;
        }
      }
      return null;
    }
    if (ref.sortOutputs) {
      const idx = ref.sortOutputs;
      for (let i = 1; i < actual.length; i++) {
        if (compareKeys(idx.map((j) => actual[i - 1]![j]!), idx.map((j) => actual[i]![j]!), ref.sort) > 0) {
          return `rows ${i - 1} and ${i} are out of ORDER BY order: ${JSON.stringify(actual[i - 1])} then ${JSON.stringify(actual[i])}`;
        }
      }
      const keyKinds = idx.map((j) => ref.kinds[j]!);
      const m = matchRows(keyKinds, window.map((r) => idx.map((j) => r[j]!)), actual.map((r) => idx.map((j) => r[j]!)));
      if (m.extra.length || m.missing.length) {
        return `ORDER BY keys of the returned rows are not those of rows ${start}..${end - 1}:\n  unexpected ${show(m.extra)}\n  missing ${show(m.missing)}`;
      }
    }
  }
  const m = matchRows(ref.kinds, everything ? window : ref.rows, actual);
  if (m.extra.length || (everything && m.missing.length)) {
    return `${everything ? 'rows differ' : 'returned rows are not rows of the full result'}:\n  unexpected:\n    ${show(m.extra)}\n  missing:\n    ${everything ? show(m.missing) : '(not checked: LIMIT/OFFSET without a total order)'}\n  expected (first):\n    ${show(window)}\n  actual (first):\n    ${show(actual)}`;
  }
  return null;
}

export type { ObjectDef };
