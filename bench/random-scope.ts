/**
 * The pieces random-reports.ts assembles queries from: the catalog's shapes as a typed model,
 * and, for one query, its scope: dot paths from the FROM object, literals of each column's type,
 * WHERE leaves and trees, select expressions, aggregates and group keys, with the output keys
 * and aliases kept unique (a duplicate key is an error, and an alias must not hide a column
 * GROUP BY reads first).
 */
import { between, pick, sample, type Random } from './random-catalog.js';
import type { Shape } from './synthetic-catalog.js';

export type Kind = 'text' | 'enum' | 'multi' | 'num' | 'bool' | 'date' | 'datetime' | 'json' | 'ref' | 'id';

export interface Col {
  readonly slug: string;
  readonly kind: Kind;
  readonly options: readonly string[];
  /** The object a to-one (`ref`) column points at. */
  readonly target: string | null;
}

export interface Obj {
  readonly slug: string;
  readonly cols: readonly Col[];
  readonly refs: readonly Col[];
  readonly virtuals: readonly { readonly slug: string; readonly object: string }[];
  /** Objects with a to-one column holding this one's id: what EXISTS can correlate on. */
  readonly children: { readonly object: string; readonly via: string }[];
}

export interface Path {
  readonly segs: readonly string[];
  readonly col: Col;
  readonly owner: Obj;
}

const KINDS: Record<string, Kind> = {
  text: 'text', email: 'text', phone: 'text', url: 'text', number: 'num', integer: 'num', currency: 'num', boolean: 'bool',
  date: 'date', datetime: 'datetime', enum: 'enum', multiselect: 'multi', json: 'json',
};

export function modelOf(shapes: readonly Shape[]): Obj[] {
  const objects = shapes.map((s): Obj => {
    const cols: Col[] = [{ slug: 'id', kind: 'id', options: [], target: null }];
    const virtuals: Obj['virtuals'][number][] = [];
    for (const c of s.columns) {
      if (c.kind === 'primary') cols.push({ slug: c.slug, kind: 'text', options: [], target: null });
      else if (c.kind === 'ref') cols.push({ slug: c.slug, kind: 'ref', options: [], target: c.object });
      else if (c.kind === 'virtual') virtuals.push({ slug: c.slug, object: c.object });
      else cols.push({ slug: c.slug, kind: KINDS[c.type]!, options: c.options ?? ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'], target: null });
    }
    return { slug: s.slug, cols, refs: cols.filter((c) => c.kind === 'ref'), virtuals, children: [] };
  });
  const bySlug = new Map(objects.map((o) => [o.slug, o]));
  for (const o of objects) for (const r of o.refs) bySlug.get(r.target!)!.children.push({ object: o.slug, via: r.slug });
  return objects;
}

const WORDS = ['acme', 'Globex', 'north', 'Initech', 'berlin', 'Umbrella', 'priority', "O'Brien", 'Zürich', 'blue', 'delta', 'Hooli', 'alpha', 'pending review', 'Q3', 'east'];
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Asia/Tokyo', 'America/Sao_Paulo', 'Australia/Sydney'];
const TRUNC = ['day', 'week', 'month', 'month', 'quarter', 'year', 'hour'];
const PART = ['year', 'month', 'dow', 'hour', 'quarter', 'doy'];
const DAY = 86_400_000;

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const not = (k: Kind): boolean => k !== 'json' && k !== 'multi';

export class Scope {
  /** Output keys taken by unaliased paths and aliases. */
  readonly keys = new Set<string>();
  private readonly rootColumns: ReadonlySet<string>;
  private readonly bySlug: ReadonlyMap<string, Obj>;

  constructor(
    private readonly r: Random,
    objects: readonly Obj[],
    readonly root: Obj,
    private readonly rootAlias: string | null,
    private readonly upper: boolean,
    private readonly sep: string,
  ) {
    this.bySlug = new Map(objects.map((o) => [o.slug, o]));
    this.rootColumns = new Set([...root.cols.map((c) => c.slug), ...root.virtuals.map((v) => v.slug)]);
  }

  kw(word: string): string {
    return this.upper ? word : word.toLowerCase();
  }

  private f(name: string): string {
    return this.upper && this.r() < 0.5 ? name.toUpperCase() : name;
  }

  from(): string {
    const alias = this.rootAlias ? (this.r() < 0.2 ? ` ${this.kw('AS')} ${this.rootAlias}` : ` ${this.rootAlias}`) : '';
    return `${this.sep}${this.kw('FROM')} ${this.root.slug}${alias}`;
  }

  /** A path from `obj` through up to `hops` relations (one of them one-to-many at most, when allowed) to a column `accept` takes. */
  path(obj: Obj, accept: (c: Col) => boolean, o: { hops: number; virtual: boolean }): Path | null {
    const r = this.r;
    const x = r();
    const want = Math.min(o.hops, x < 0.6 ? 0 : x < 0.88 ? 1 : x < 0.97 ? 2 : 3);
    for (let attempt = 0; attempt < 4; attempt++) {
      const segs: string[] = [];
      let at = obj;
      let virtual = o.virtual;
      for (let h = attempt === 0 ? want : 0; h > 0; h--) {
        if (virtual && at.virtuals.length > 0 && r() < 0.5) {
          const v = pick(r, at.virtuals);
          segs.push(v.slug);
          at = this.bySlug.get(v.object)!;
          virtual = false;
        } else if (at.refs.length > 0) {
          const ref = pick(r, at.refs);
          segs.push(ref.slug);
          at = this.bySlug.get(ref.target!)!;
        }
      }
      const cols = at.cols.filter(accept);
      if (cols.length > 0) {
        const col = pick(r, cols);
        return { segs: [...segs, col.slug], col, owner: at };
      }
    }
    return null;
  }

  /** The path as written at the top level: bare, or after the FROM alias. */
  written(p: Path, qualifier: string | null = this.rootAlias && this.r() < 0.3 ? this.rootAlias : null): string {
    return qualifier ? `${qualifier}.${p.segs.join('.')}` : p.segs.join('.');
  }

  keyOf(p: Path): string {
    return p.segs.join('.');
  }

  /** A fresh alias from a hint: no output key, no earlier alias, no column of the FROM object. */
  alias(hint: string): string {
    let name = hint;
    for (let i = 2; this.keys.has(name) || this.rootColumns.has(name); i++) name = `${hint}_${i}`;
    this.keys.add(name);
    return name;
  }

  direction(key: string): string {
    const x = this.r();
    const dir = x < 0.45 ? ` ${this.kw('DESC')}` : x < 0.6 ? ` ${this.kw('ASC')}` : '';
    return this.r() < 0.1 ? `${key}${dir} ${this.kw('NULLS LAST')}` : `${key}${dir}`;
  }

  finish(select: string, where: string | null, groups: readonly string[], order: readonly string[], limit: number): string {
    const parts = [select];
    if (where) parts.push(`${this.kw('WHERE')} ${where}`);
    parts.push(...groups);
    if (order.length > 0) parts.push(`${this.kw('ORDER BY')} ${order.join(', ')}`);
    parts.push(`${this.kw('LIMIT')} ${limit}${this.r() < 0.05 ? ` ${this.kw('OFFSET')} ${between(this.r, 1, 500)}` : ''}`);
    return parts.join(this.sep);
  }

  // ------------------------------------------------------------------ literals

  private number(): string {
    const x = this.r();
    if (x < 0.45) return String(between(this.r, 0, 100));
    if (x < 0.85) return String(between(this.r, 1, 500) * pick(this.r, [10, 100, 1000]));
    return (between(this.r, 1, 100_000) / 100).toFixed(2);
  }

  private epoch(kind: Kind): string {
    const day = Date.UTC(2023, 0, 1) + between(this.r, 0, 3 * 365) * DAY;
    return String(kind === 'date' ? day : day + between(this.r, 0, DAY - 1));
  }

  private word(): string {
    return quote(pick(this.r, WORDS));
  }

  private options(c: Col, n: number): string {
    return sample(this.r, c.options, n).map(quote).join(', ');
  }

  private dayStart(zone: string): string {
    return `${this.f('date_part')}('epoch', ${this.f('date_trunc')}('day', ${this.f('now')}() ${this.kw('AT TIME ZONE')} '${zone}') ${this.kw('AT TIME ZONE')} '${zone}')*1000`;
  }

  // ------------------------------------------------------------------ WHERE

  /** `leaves` conditions joined by `op`, nested (the other operator inside) up to `depth` levels. */
  tree(leaves: number, op: 'AND' | 'OR', depth: number, obj = this.root, qualifier: string | null = null): string {
    if (leaves <= 1) {
      const l = this.leaf(obj, qualifier);
      return this.r() < 0.05 ? `${this.kw('NOT')} (${l})` : l;
    }
    const parts: string[] = [];
    for (let left = leaves; left > 0;) {
      // A nested group is never the whole tree: that would only add parentheses.
      const n = depth > 0 && this.r() < 0.3 ? Math.min(left, between(this.r, 2, 3), leaves - 1) : 1;
      parts.push(n > 1 ? `(${this.tree(n, op === 'AND' ? 'OR' : 'AND', depth - 1, obj, qualifier)})` : this.leaf(obj, qualifier));
      left -= n;
    }
    return parts.join(` ${this.kw(op)} `);
  }

  /**
   * One condition on `obj`'s columns; `qualifier` is a subquery's alias inside it, null at the top.
   * Only top-level conditions of WHERE (not `rowOnly` ones, inside an aggregate) read subqueries
   * or one-to-many paths.
   */
  leaf(obj: Obj, qualifier: string | null, rowOnly = false): string {
    const r = this.r;
    const top = qualifier === null && !rowOnly;
    if (top && this.rootAlias && obj.children.length > 0 && r() < 0.06) return this.exists();
    const p = this.path(obj, () => true, { hops: 2, virtual: top && r() < 0.15 });
    if (!p) return `${qualifier ? `${qualifier}.` : ''}id IS NOT NULL`;
    const w = qualifier === null ? this.written(p) : this.written(p, qualifier);
    const c = p.col;
    const x = r();
    switch (c.kind) {
      case 'text':
        if (x < 0.3) return `${w} ${pick(r, ['=', '<>', '='])} ${this.word()}`;
        if (x < 0.5) return `${w} ${this.kw(pick(r, ['ILIKE', 'LIKE', 'ILIKE', 'NOT ILIKE']))} '%${pick(r, ['ac', 'an', 'or', 'e', 'ber'])}%'`;
        if (x < 0.6) return `${w} ${this.kw('IN')} (${[this.word(), this.word(), this.word()].join(', ')})`;
        if (x < 0.7) return `${this.f('lower')}(${w}) ${this.kw('LIKE')} '%${pick(r, ['inc', 'ltd', 'north'])}%'`;
        return `${w} ${this.kw(pick(r, ['IS NULL', 'IS NOT NULL']))}`;
      case 'enum':
        if (x < 0.45) return `${w} ${pick(r, ['=', '=', '<>', '!='])} ${this.options(c, 1)}`;
        if (x < 0.85) return `${w} ${this.kw(r() < 0.75 ? 'IN' : 'NOT IN')} (${this.options(c, between(r, 2, 4))})`;
        return `${w} ${this.kw(pick(r, ['IS NULL', 'IS NOT NULL']))}`;
      case 'multi':
        if (x < 0.55) return `${w} && ${this.kw('ARRAY')}[${this.options(c, between(r, 1, 3))}]`;
        if (x < 0.75) return `${this.kw('NOT')} (${w} && ${this.kw('ARRAY')}[${this.options(c, between(r, 1, 2))}])`;
        return `${w} ${pick(r, ['=', '<>'])} ${this.kw('ARRAY')}[${this.kw('NULL')}]`;
      case 'num': {
        if (x < 0.45) return `${w} ${pick(r, ['>', '>=', '<', '<=', '=', '<>'])} ${this.number()}`;
        if (x < 0.6) return `${w} ${this.kw(r() < 0.85 ? 'BETWEEN' : 'NOT BETWEEN')} ${between(r, 0, 50)} ${this.kw('AND')} ${between(r, 51, 100_000)}`;
        if (x < 0.7) return `${w} * ${between(r, 2, 12)} > ${this.number()}`;
        if (x < 0.8) return `${this.f('coalesce')}(${w}, 0) ${pick(r, ['>', '<'])} ${this.number()}`;
        const q = this.sibling(p, 'num', qualifier);
        if (x < 0.9 && q) return `${w} - ${q} ${pick(r, ['>', '<'])} ${between(r, 0, 1000)}`;
        return `${w} ${this.kw(pick(r, ['IS NULL', 'IS NOT NULL']))}`;
      }
      case 'bool':
        return x < 0.85 ? `${w} = ${pick(r, ['1', '0', '1', this.kw('TRUE'), this.kw('FALSE')])}` : `${w} ${this.kw(pick(r, ['IS NULL', 'IS NOT NULL']))}`;
      case 'date':
      case 'datetime': {
        if (x < 0.45) return `${w} ${pick(r, ['>=', '<', '>', '<='])} ${this.epoch(c.kind)}`;
        if (x < 0.6) return `${w} ${this.kw('BETWEEN')} ${this.epoch(c.kind)} ${this.kw('AND')} ${this.epoch(c.kind)}`;
        if (x < 0.72) return `${w} >= ${this.dayStart(pick(r, ZONES))} - ${between(r, 1, 90)}*86400000`;
        if (x < 0.8) return `${w} > ${this.f('date_part')}('epoch', ${this.f('now')}()) * 1000 - ${between(r, 1, 30)} * 86400000`;
        const q = this.sibling(p, c.kind, qualifier);
        if (x < 0.88 && q) return `${w} - ${q} < 86400000 * ${between(r, 1, 60)}`;
        return `${w} ${this.kw(pick(r, ['IS NULL', 'IS NOT NULL']))}`;
      }
      case 'ref': {
        const target = this.bySlug.get(c.target!)!;
        if (top && x < 0.15) {
          const sub = this.subAlias(target);
          return `${w} ${this.kw(r() < 0.8 ? 'IN' : 'NOT IN')} (${this.kw('SELECT')} ${sub}.id ${this.kw('FROM')} ${target.slug} ${sub} ${this.kw('WHERE')} ${this.tree(between(r, 1, 2), 'AND', 0, target, sub)})`;
        }
        if (x < 0.5) return `${w} = '${this.recordId()}'`;
        return `${w} ${this.kw(pick(r, ['IS NULL', 'IS NOT NULL']))}`;
      }
      case 'id':
        return x < 0.6 ? `${w} = '${this.recordId()}'` : `${w} ${this.kw('IN')} ('${this.recordId()}', '${this.recordId()}')`;
      case 'json':
        return `${w} ${this.kw(pick(r, ['IS NULL', 'IS NOT NULL']))}`;
    }
  }

  private exists(): string {
    const r = this.r;
    const child = pick(r, this.root.children);
    const obj = this.bySlug.get(child.object)!;
    const sub = this.subAlias(obj);
    const more = r() < 0.8 ? ` ${this.kw('AND')} ${this.tree(between(r, 1, 3), 'AND', 0, obj, sub)}` : '';
    return `${r() < 0.75 ? '' : `${this.kw('NOT')} `}${this.kw('EXISTS')} (${this.kw('SELECT')} 1 ${this.kw('FROM')} ${obj.slug} ${sub} ${this.kw('WHERE')} ${sub}.${child.via} = ${this.rootAlias}.id${more})`;
  }

  /** A subquery's alias: one letter, never the FROM alias. */
  private subAlias(obj: Obj): string {
    const a = obj.slug.charAt(0);
    return a === this.rootAlias ? 'x' : a;
  }

  private recordId(): string {
    return Math.floor(this.r() * 0xffffffff).toString(16).padStart(8, '0');
  }

  /** Another column of the same kind on the same object as `p`, written with the same hops. */
  private sibling(p: Path, kind: Kind, qualifier: string | null): string | null {
    const others = p.owner.cols.filter((c) => c.kind === kind && c !== p.col);
    if (others.length === 0) return null;
    const segs = [...p.segs.slice(0, -1), pick(this.r, others).slug].join('.');
    return qualifier ? `${qualifier}.${segs}` : segs;
  }

  // ------------------------------------------------------------------ select list

  /** A computed select item (it needs an alias) and a hint for the alias. */
  expression(): { text: string; hint: string } | null {
    const r = this.r;
    const x = r();
    const kinds: Kind[] = x < 0.35 ? ['num'] : x < 0.6 ? ['text', 'enum'] : x < 0.9 ? ['date', 'datetime'] : ['num', 'bool', 'enum'];
    const p = this.path(this.root, (c) => kinds.includes(c.kind), { hops: 2, virtual: false });
    if (!p) return null;
    const w = this.written(p);
    const c = p.col;
    const y = r();
    switch (c.kind) {
      case 'num': {
        const q = this.sibling(p, 'num', null);
        if (x >= 0.9) return { text: `${this.kw('CASE WHEN')} ${w} > ${between(r, 1000, 9000)} ${this.kw('THEN')} 'large' ${this.kw('WHEN')} ${w} > ${between(r, 10, 999)} ${this.kw('THEN')} 'medium' ${this.kw('ELSE')} 'small' ${this.kw('END')}`, hint: `${c.slug}_band` };
        if (y < 0.2) return { text: `${w} * ${between(r, 2, 100)}`, hint: `${c.slug}_scaled` };
        if (y < 0.35) return { text: `${this.f('round')}(${w} / ${pick(r, [12, 100, 1000])}, ${between(r, 0, 2)})`, hint: `${c.slug}_rounded` };
        if (y < 0.5) return { text: `${this.f('coalesce')}(${w}, 0)`, hint: `${c.slug}_or_zero` };
        if (y < 0.7 && q) return { text: `${w} * ${q} / 100`, hint: `${c.slug}_weighted` };
        if (y < 0.85 && q) return { text: `${this.f('abs')}(${w} - ${q})`, hint: `${c.slug}_gap` };
        return { text: `${w} / ${between(r, 2, 60)}`, hint: `${c.slug}_per_unit` };
      }
      case 'text':
      case 'enum': {
        if (x >= 0.9) {
          const num = this.sibling(p, 'num', null) ?? '1';
          return { text: `${this.f('if')}(${w} = ${c.kind === 'enum' ? this.options(c, 1) : this.word()}, ${num}, 0)`, hint: `${c.slug}_value` };
        }
        if (y < 0.4) return { text: `${this.f(pick(r, ['lower', 'upper', 'trim']))}(${w})`, hint: `${c.slug}_clean` };
        if (y < 0.5) return { text: `${this.f('left')}(${w}, ${between(r, 1, 40)})`, hint: `${c.slug}_short` };
        if (y < 0.75) {
          const other = this.path(this.root, (d) => d.kind === 'text' || d.kind === 'enum' || d.kind === 'num', { hops: 2, virtual: false });
          return { text: `${this.f('concat')}(${w}, ${pick(r, ["' / '", "' - '", "', '"])}, ${other ? this.written(other) : w})`, hint: `${c.slug}_label` };
        }
        return { text: `${this.f('coalesce')}(${w}, 'n/a')`, hint: `${c.slug}_or_none` };
      }
      case 'bool':
        return { text: `${this.f('if')}(${w} = 1, 'yes', 'no')`, hint: `${c.slug}_text` };
      case 'date':
      case 'datetime': {
        const zone = pick(r, ZONES);
        if (y < 0.4) {
          const unit = pick(r, TRUNC);
          return { text: `${this.f('date_trunc')}('${unit}', ${this.f('to_timestamp')}(${w}/1000) ${this.kw('AT TIME ZONE')} '${zone}')`, hint: `${c.slug}_${unit}` };
        }
        if (y < 0.6) return { text: `${this.f('to_timestamp')}(${w}/1000)::${this.kw('date')}`, hint: `${c.slug}_day` };
        if (y < 0.8) {
          const part = pick(r, PART);
          return { text: `${this.f('date_part')}('${part}', ${this.f('to_timestamp')}(${w} / 1000) ${this.kw('AT TIME ZONE')} '${zone}')`, hint: `${c.slug}_${part}` };
        }
        const q = this.sibling(p, c.kind, null);
        if (q && y < 0.9) return { text: `(${w} - ${q}) / 3600000`, hint: `${c.slug}_hours` };
        return { text: `${this.f('date_part')}('epoch', ${this.f('now')}()) * 1000 - ${w}`, hint: `${c.slug}_age_ms` };
      }
      default:
        return null;
    }
  }

  /** An aggregate (it needs an alias) and a hint for the alias. */
  aggregate(): { text: string; hint: string } {
    const r = this.r;
    const x = r();
    const virtual = r() < 0.2;
    const num = x < 0.6 ? this.path(this.root, (c) => c.kind === 'num', { hops: 1, virtual }) : null;
    if (num) {
      const w = this.written(num);
      const slug = num.col.slug;
      const y = r();
      if (y < 0.35) return { text: `${this.f('sum')}(${w})`, hint: `total_${slug}` };
      if (y < 0.55) return { text: `${this.f('avg')}(${w})`, hint: `avg_${slug}` };
      if (y < 0.7) return { text: `${this.f(pick(r, ['min', 'max']))}(${w})`, hint: `${pick(r, ['low', 'high'])}_${slug}` };
      if (y < 0.8) return { text: `${this.f('round')}(${this.f('avg')}(${w}), 2)`, hint: `mean_${slug}` };
      if (y < 0.88) return { text: `${this.f('round')}(${this.f('sum')}(${w}) / 1000, 1)`, hint: `${slug}_thousands` };
      return { text: `${this.f('sum')}(${this.f('if')}(${this.leaf(this.root, null, true)}, ${w}, 0))`, hint: `${slug}_matching` };
    }
    if (x < 0.7) {
      const d = this.path(this.root, (c) => c.kind === 'date' || c.kind === 'datetime', { hops: 1, virtual: false });
      if (d) return { text: `${this.f(pick(r, ['min', 'max']))}(${this.written(d)})`, hint: `${pick(r, ['first', 'last'])}_${d.col.slug}` };
    }
    if (x < 0.8) {
      const d = this.path(this.root, (c) => not(c.kind) && c.kind !== 'bool', { hops: 1, virtual });
      if (d) return { text: `${this.f('count')}(${this.kw('DISTINCT')} ${this.written(d)})`, hint: `distinct_${d.segs.join('_')}` };
    }
    if (x < 0.88) return { text: `${this.f('count')}(${this.kw('CASE WHEN')} ${this.leaf(this.root, null, true)} ${this.kw('THEN')} 1 ${this.kw('END')})`, hint: 'matching' };
    return r() < 0.7 ? { text: `${this.f('count')}(id)`, hint: 'n' } : { text: `${this.f('count')}(*)`, hint: 'records' };
  }

  /**
   * A GROUP BY key at select position `ordinal`: its select item, the ways GROUP BY may name it
   * (expression, alias, ordinal) and how ORDER BY may.
   */
  groupKey(ordinal: number): { select: string; groupBy: string[]; order: string } | null {
    const r = this.r;
    const x = r();
    if (x < 0.25) {
      const d = this.path(this.root, (c) => c.kind === 'date' || c.kind === 'datetime', { hops: 1, virtual: false });
      if (d) {
        const unit = pick(r, TRUNC);
        const text = r() < 0.75
          ? `${this.f('date_trunc')}('${unit}', ${this.f('to_timestamp')}(${this.written(d)}/1000) ${this.kw('AT TIME ZONE')} '${pick(r, ZONES)}')`
          : `${this.f('to_timestamp')}(${this.written(d)}/1000)::${this.kw('date')}`;
        const name = this.alias(`${d.col.slug}_${unit}`);
        return { select: `${text} ${this.kw('AS')} ${name}`, groupBy: [name, name, String(ordinal), text], order: name };
      }
    }
    const kinds: Kind[] = x < 0.6 ? ['enum'] : x < 0.75 ? ['text'] : x < 0.85 ? ['bool'] : x < 0.95 ? ['ref'] : ['num'];
    const p = this.path(this.root, (c) => kinds.includes(c.kind) || c.kind === 'enum', { hops: 2, virtual: false });
    if (!p) return null;
    const w = this.written(p);
    const key = this.keyOf(p);
    if (this.keys.has(key) || r() < 0.3) {
      const name = this.alias(p.segs.join('_'));
      return { select: `${w} ${this.kw('AS')} ${name}`, groupBy: [w, String(ordinal)], order: name };
    }
    this.keys.add(key);
    return { select: w, groupBy: [w, w, String(ordinal)], order: w };
  }
}
