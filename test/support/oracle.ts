/**
 * An independent reference model of the object query language's semantics, over the generated
 * fixture rows. It imports nothing from `src/`: expected results of the execution tests are
 * computed here, in plain TypeScript, from the rows as they were inserted, never from the
 * compiler's output.
 *
 * The model states the query language's rules (docs/query-language.md) directly:
 * - a record is visible when it is live (not soft-deleted) and belongs to the caller's tenant;
 * - a to-one relation is the visible target record, or null (no value, no such record, a
 *   soft-deleted record, another tenant's record);
 * - a virtual relation fans out to one row per visible child, a parent without children keeps
 *   one row of nulls;
 * - predicates are three-valued (SQL's true / false / unknown), and WHERE keeps only `true`.
 */

export type Row = Record<string, unknown>;
/** A three-valued truth value: `null` is SQL's unknown. */
export type Tri = boolean | null;

const ID = 'id';
const TENANT = 'org_id';
const DELETED = 'is_deleted';

export class Oracle {
  private readonly bySlug: ReadonlyMap<string, readonly Row[]>;
  private readonly liveCache = new Map<string, Row[]>();
  private readonly index = new Map<string, Map<string, Row>>();
  private readonly childIndex = new Map<string, Map<string, Row[]>>();

  constructor(data: ReadonlyMap<string, readonly Row[]>) {
    this.bySlug = data;
  }

  /** Every row of an object, whatever its tenant or deletion: the raw table. */
  all(slug: string): readonly Row[] {
    const rows = this.bySlug.get(slug);
    if (!rows) throw new Error(`oracle: no rows for object '${slug}'`);
    return rows;
  }

  /** The records a caller of `tenant` can see: not soft-deleted, of that tenant. */
  live(slug: string, tenant: string): Row[] {
    const key = `${slug}|${tenant}`;
    let rows = this.liveCache.get(key);
    if (!rows) {
      rows = this.all(slug).filter((r) => r[TENANT] === tenant && r[DELETED] !== true);
      this.liveCache.set(key, rows);
    }
    return rows;
  }

  /** The visible record of `slug` with this id, or null. */
  get(slug: string, tenant: string, id: unknown): Row | null {
    if (typeof id !== 'string') return null;
    const key = `${slug}|${tenant}`;
    let byId = this.index.get(key);
    if (!byId) {
      byId = new Map(this.live(slug, tenant).map((r) => [r[ID] as string, r]));
      this.index.set(key, byId);
    }
    return byId.get(id) ?? null;
  }

  /** A to-one hop: the visible `target` record whose id `row[column]` holds, or null. */
  follow(row: Row | null, column: string, target: string, tenant: string): Row | null {
    if (!row) return null;
    return this.get(target, tenant, row[column]);
  }

  /** Several to-one hops: `chain(r, t, ['account', 'account'], ['owner', 'user'])` is `account.owner`. */
  chain(row: Row | null, tenant: string, ...hops: readonly (readonly [column: string, target: string])[]): Row | null {
    let at = row;
    for (const [column, target] of hops) at = this.follow(at, column, target, tenant);
    return at;
  }

  /** The visible children of `parent`: records of `childSlug` whose `via` column holds its id. */
  children(parent: Row | null, childSlug: string, via: string, tenant: string): Row[] {
    if (!parent) return [];
    const key = `${childSlug}|${via}|${tenant}`;
    let byParent = this.childIndex.get(key);
    if (!byParent) {
      byParent = new Map();
      for (const r of this.live(childSlug, tenant)) {
        const p = r[via];
        if (typeof p !== 'string') continue;
        const list = byParent.get(p);
        if (list) list.push(r);
        else byParent.set(p, [r]);
      }
      this.childIndex.set(key, byParent);
    }
    return byParent.get(parent[ID] as string) ?? [];
  }

  /** A virtual hop as dot notation reads it: one entry per child, or a single null. */
  fanOut(parent: Row | null, childSlug: string, via: string, tenant: string): (Row | null)[] {
    const kids = this.children(parent, childSlug, via, tenant);
    return kids.length > 0 ? kids : [null];
  }

  /** Why a to-one value does or does not resolve; tests use it to prove the data covers each case. */
  refKind(row: Row, column: string, target: string, tenant: string): RefKind {
    const id = row[column];
    if (id === null || id === undefined) return 'null';
    const hit = this.all(target).find((r) => r[ID] === id);
    if (!hit) return 'nowhere';
    if (hit[TENANT] !== tenant) return 'foreign';
    if (hit[DELETED] === true) return 'deleted';
    return 'ok';
  }
}

export type RefKind = 'null' | 'ok' | 'nowhere' | 'deleted' | 'foreign';

// ---- three-valued logic ----

function isNull(v: unknown): v is null | undefined {
  return v === null || v === undefined;
}

export function eq(a: unknown, b: unknown): Tri {
  if (isNull(a) || isNull(b)) return null;
  return a === b;
}

export function ne(a: unknown, b: unknown): Tri {
  return not(eq(a, b));
}

function cmp(a: unknown, b: unknown, test: (c: number) => boolean): Tri {
  if (isNull(a) || isNull(b)) return null;
  return test(compareValues(a, b));
}

export const lt = (a: unknown, b: unknown): Tri => cmp(a, b, (c) => c < 0);
export const le = (a: unknown, b: unknown): Tri => cmp(a, b, (c) => c <= 0);
export const gt = (a: unknown, b: unknown): Tri => cmp(a, b, (c) => c > 0);
export const ge = (a: unknown, b: unknown): Tri => cmp(a, b, (c) => c >= 0);

export function between(x: unknown, low: unknown, high: unknown): Tri {
  return and(ge(x, low), le(x, high));
}

export function not(a: Tri): Tri {
  return a === null ? null : !a;
}

export function and(...xs: Tri[]): Tri {
  if (xs.some((x) => x === false)) return false;
  return xs.some((x) => x === null) ? null : true;
}

export function or(...xs: Tri[]): Tri {
  if (xs.some((x) => x === true)) return true;
  return xs.some((x) => x === null) ? null : false;
}

/** `x IN (a, b)`: true if any equal, else unknown if any comparison is unknown. */
export function inList(x: unknown, items: readonly unknown[]): Tri {
  return or(...items.map((i) => eq(x, i)));
}

export function notIn(x: unknown, items: readonly unknown[]): Tri {
  return not(inList(x, items));
}

/** WHERE, HAVING, CASE WHEN and EXISTS keep only `true`. */
export function holds(t: Tri): boolean {
  return t === true;
}

/** `a && b` on text arrays: unknown when either side is null. */
export function overlaps(arr: unknown, values: readonly string[]): Tri {
  if (isNull(arr)) return null;
  const have = arr as readonly string[];
  return values.some((v) => have.includes(v));
}

/** The service's `x = ARRAY[NULL]`: no value or no elements. */
export function isEmptyArray(arr: unknown): boolean {
  return isNull(arr) || (arr as readonly unknown[]).length === 0;
}

/** SQL LIKE (ILIKE when `caseInsensitive`): `%` any run, `_` one character, `\` escapes. */
export function like(value: unknown, pattern: string, caseInsensitive = false): Tri {
  if (isNull(value)) return null;
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) re += escapeRegex(pattern[++i]!);
    else if (ch === '%') re += '[\\s\\S]*';
    else if (ch === '_') re += '[\\s\\S]';
    else re += escapeRegex(ch);
  }
  return new RegExp(`^${re}$`, caseInsensitive ? 'iu' : 'u').test(String(value));
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

export function coalesce<T>(...xs: (T | null | undefined)[]): T | null {
  for (const x of xs) if (!isNull(x)) return x;
  return null;
}

// ---- ordering (PostgreSQL: C collation on these databases, NULLS LAST ascending) ----

/** Compares two non-null values: numbers numerically, text by code point (the C collation), booleans false < true. */
export function compareValues(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  const sa = String(a);
  const sb = String(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

export interface SortKey<T> {
  readonly by: (x: T) => unknown;
  readonly desc?: boolean;
  /** Default as PostgreSQL: NULLS LAST ascending, NULLS FIRST descending. */
  readonly nulls?: 'first' | 'last';
}

/** Sorts as ORDER BY does. */
export function orderBy<T>(items: readonly T[], ...keys: readonly SortKey<T>[]): T[] {
  return items.slice().sort((x, y) => {
    for (const k of keys) {
      const a = k.by(x);
      const b = k.by(y);
      const nullsFirst = (k.nulls ?? (k.desc ? 'first' : 'last')) === 'first';
      if (isNull(a) || isNull(b)) {
        if (isNull(a) && isNull(b)) continue;
        return (isNull(a) ? -1 : 1) * (nullsFirst ? 1 : -1);
      }
      const c = compareValues(a, b);
      if (c !== 0) return k.desc ? -c : c;
    }
    return 0;
  });
}

// ---- grouping and aggregates (SQL: aggregates skip nulls; sum/avg/min/max of nothing are null) ----

/** Groups rows by a key; null is a group of its own, as in GROUP BY. */
export function groupBy<T>(items: readonly T[], key: (x: T) => unknown): Map<string, { key: unknown; items: T[] }> {
  const out = new Map<string, { key: unknown; items: T[] }>();
  for (const x of items) {
    const k = key(x);
    const id = JSON.stringify(k === undefined ? null : k);
    const g = out.get(id);
    if (g) g.items.push(x);
    else out.set(id, { key: k === undefined ? null : k, items: [x] });
  }
  return out;
}

function present(values: readonly unknown[]): unknown[] {
  return values.filter((v) => !isNull(v));
}

export function count(values: readonly unknown[]): number {
  return present(values).length;
}

export function countDistinct(values: readonly unknown[]): number {
  return new Set(present(values).map((v) => JSON.stringify(v))).size;
}

/**
 * Sum of numbers with at most two decimals (every fixture number has), exact: summed in
 * hundredths as integers, as PostgreSQL's numeric sums exactly.
 */
export function sum(values: readonly unknown[]): number | null {
  const xs = present(values) as number[];
  if (xs.length === 0) return null;
  return xs.reduce((acc, x) => acc + Math.round(x * 100), 0) / 100;
}

export function avg(values: readonly unknown[]): number | null {
  const xs = present(values) as number[];
  if (xs.length === 0) return null;
  return sum(xs)! / xs.length;
}

export function min(values: readonly unknown[]): unknown {
  const xs = present(values);
  if (xs.length === 0) return null;
  return xs.reduce((a, b) => (compareValues(a, b) <= 0 ? a : b));
}

export function max(values: readonly unknown[]): unknown {
  const xs = present(values);
  if (xs.length === 0) return null;
  return xs.reduce((a, b) => (compareValues(a, b) >= 0 ? a : b));
}

/** Hundredths of a number that has at most two decimals (every fixture number does), exactly. */
function hundredths(x: number): bigint {
  return BigInt(Math.round(x * 100));
}

/** `units / 10^scale` as the double nearest the exact decimal, which is how a numeric string parses. */
function fromScaled(units: bigint, scale: number): number {
  const neg = units < 0n;
  const digits = (neg ? -units : units).toString().padStart(scale + 1, '0');
  return Number(`${neg ? '-' : ''}${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`);
}

/**
 * `a * b / 10^k` computed exactly in decimal, as PostgreSQL's numeric does, then read as a
 * double: the same double a numeric result string parses to. Null if either side is.
 */
export function exactProduct(a: unknown, b: unknown, divisorPowerOfTen = 0): number | null {
  if (isNull(a) || isNull(b)) return null;
  return fromScaled(hundredths(a as number) * hundredths(b as number), 4 + divisorPowerOfTen);
}

/** PostgreSQL's round(numeric, n): half away from zero, computed on decimal strings, not floats. */
export function roundHalfAway(x: number | null, digits: number): number | null {
  if (x === null) return null;
  const sign = x < 0 ? -1 : 1;
  const [whole, frac = ''] = Math.abs(x).toFixed(12).split('.');
  const kept = frac.slice(0, digits).padEnd(digits, '0');
  let scaled = BigInt(whole! + kept);
  if (Number(frac[digits] ?? '0') >= 5) scaled += 1n;
  return (sign * Number(scaled)) / 10 ** digits;
}

// ---- time ----

const DAY = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

function fields(instant: number, zone: string): { y: number; m: number; d: number; h: number; mi: number; s: number } {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    formatters.set(zone, f);
  }
  const parts = f.formatToParts(instant);
  const get = (t: string): number => Number(parts.find((p) => p.type === t)!.value);
  return { y: get('year'), m: get('month'), d: get('day'), h: get('hour'), mi: get('minute'), s: get('second') };
}

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

/** The local calendar date of an instant in a zone, `YYYY-MM-DD`. */
export function localDate(epochMs: number, zone: string): string {
  const f = fields(epochMs, zone);
  return `${pad(f.y, 4)}-${pad(f.m)}-${pad(f.d)}`;
}

/** The local hour (0-23) of an instant in a zone. */
export function localHour(epochMs: number, zone: string): number {
  return fields(epochMs, zone).h;
}

/**
 * `date_trunc('day', to_timestamp(ms/1000) AT TIME ZONE zone)` as PostgreSQL prints the
 * timestamp (without time zone): `YYYY-MM-DD 00:00:00`. The service divides in integers, so
 * milliseconds are dropped first (they cannot move a day boundary, which is on a whole second).
 */
export function localDayStart(epochMs: number | null | undefined, zone: string): string | null {
  if (isNull(epochMs)) return null;
  return `${localDate(Math.trunc(epochMs / 1000) * 1000, zone)} 00:00:00`;
}

/** The instant (epoch ms) at which the local wall-clock time `date time` occurs in `zone`. */
export function zonedInstant(date: string, zone: string, time = '00:00:00'): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const [h, mi, s] = time.split(':').map(Number) as [number, number, number];
  const wall = Date.UTC(y, m - 1, d, h, mi, s);
  // Iterate the offset: two rounds settle it away from a DST gap, which our midnights never hit.
  let guess = wall;
  for (let i = 0; i < 3; i++) {
    const f = fields(guess, zone);
    const seen = Date.UTC(f.y, f.m - 1, f.d, f.h, f.mi, f.s);
    guess += wall - seen;
  }
  return guess;
}

/** Start of the local day containing `instant`, as epoch ms (the service's relative day start). */
export function localMidnight(instant: number, zone: string): number {
  return zonedInstant(localDate(instant, zone), zone);
}

/** Start of the local year containing `instant`, as epoch ms. */
export function localYearStart(instant: number, zone: string): number {
  return zonedInstant(`${localDate(instant, zone).slice(0, 4)}-01-01`, zone);
}

/** `to_timestamp(ms/1000)::date` on a server whose TimeZone is UTC: the UTC calendar date. */
export function utcDate(epochMs: number | null | undefined): string | null {
  if (isNull(epochMs)) return null;
  return new Date(Math.floor(epochMs / DAY) * DAY).toISOString().slice(0, 10);
}

// ---- comparing results ----

/** What the database's rows and the oracle's rows are reduced to before comparing. */
export function canonicalValue(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === 'bigint') return Number(v);
  // Twelve significant digits: exact decimals from PostgreSQL and the oracle's doubles agree to far more.
  if (typeof v === 'number') return Number.isInteger(v) ? v : Number(v.toPrecision(12));
  if (Array.isArray(v)) return v.map(canonicalValue);
  if (v instanceof Date) throw new Error('oracle: a Date reached the comparison; decode timestamps as text');
  if (typeof v === 'object') {
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, x]) => [k, canonicalValue(x)]));
  }
  return v;
}

/** A row with its keys in sorted order and every value canonical, so JSON.stringify compares it. */
export function canonicalRow(row: Row): Row {
  return canonicalValue(row) as Row;
}

/** Rows as a sorted list of their JSON, so two multisets compare with one toEqual. */
export function multiset(rows: readonly Row[]): string[] {
  return rows.map((r) => JSON.stringify(canonicalRow(r))).sort();
}

/** Rows in order, canonicalised. */
export function sequence(rows: readonly Row[]): string[] {
  return rows.map((r) => JSON.stringify(canonicalRow(r)));
}

// ---- decoding a database result (no compiler involved: keys are given by the caller) ----

/** PostgreSQL type OIDs whose text form the tests keep as text, so nothing depends on the host's time zone. */
export const TEXT_TIME_PARSERS = {
  1082: (x: string) => x, // date
  1114: (x: string) => x, // timestamp
  1184: (x: string) => x, // timestamptz
} as const;

const INT8 = 20;
const NUMERIC = 1700;

export interface DbResult {
  readonly rows: readonly Record<string, unknown>[];
  readonly fields: readonly { readonly name: string; readonly dataTypeID: number }[];
}

/**
 * Maps output columns `c0, c1, ...` to the given keys; int8 and numeric become numbers (the
 * fixture's values are small enough to be exact as doubles after canonical rounding).
 */
export function decodeRows(result: DbResult, keys: readonly string[]): Row[] {
  const types = new Map(result.fields.map((f) => [f.name, f.dataTypeID]));
  return result.rows.map((raw) => {
    const row: Row = {};
    keys.forEach((key, i) => {
      const name = `c${i}`;
      if (!(name in raw)) throw new Error(`result has no column ${name} for key '${key}'`);
      const v = raw[name];
      const t = types.get(name);
      row[key] = v === null ? null : t === INT8 || t === NUMERIC ? Number(v) : v;
    });
    return row;
  });
}

/** Every id-looking value (`org_<tenant>_<object>_<n>`) in `rows` must belong to `tenant`. */
export function foreignIds(rows: readonly Row[], tenant: string, except: readonly string[] = []): string[] {
  const bad: string[] = [];
  for (const r of rows) {
    for (const [k, v] of Object.entries(r)) {
      if (except.includes(k)) continue;
      if (typeof v === 'string' && /^org_[a-z]+_[a-z_]+_\d+$/.test(v) && !v.startsWith(`${tenant}_`)) bad.push(`${k}=${v}`);
    }
  }
  return bad;
}

// ---- execution cases ----

/** One report query with its expected rows, computed by the oracle for a tenant. */
export interface ExecCase {
  readonly name: string;
  /** The request slug (the top-level FROM). */
  readonly slug: string;
  readonly query: string;
  readonly expected: (o: Oracle, tenant: string) => Row[];
  /** Compare in order: only when ORDER BY orders the rows completely. */
  readonly ordered?: boolean;
  /** Keys whose values are stored relation ids, which may name another tenant's record. */
  readonly rawRefs?: readonly string[];
  /**
   * Whether a tenant's data exercises what the case is about (a NULL stage, a foreign
   * reference...); at least one tenant must, or the case would prove nothing.
   */
  readonly covers?: (o: Oracle, tenant: string, expected: readonly Row[]) => boolean;
  /**
   * Whether the planner's semi-join rewrite must change this query (true) or must leave the
   * literal fan-out (false). Either way, when the plans differ both are run against the oracle.
   */
  readonly semiJoin?: boolean;
  /** A known compiler bug: the case is expected to fail until it is fixed. */
  readonly bug?: string;
}

export function sameSet<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}

export function pick(row: Row | null, ...keys: readonly string[]): Row {
  return Object.fromEntries(keys.map((k) => [k, row?.[k] ?? null]));
}
