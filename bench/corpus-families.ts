/**
 * Corpora of report queries as people write them, each a family of one shape, over several
 * catalogs in rotation: the example CRM (fixtures/crm), the help desk (fixtures/helpdesk), a
 * real-estate CRM (properties, listings, agents, offers, showings...) and random catalogs
 * (random-catalog.ts). Where the generated corpus of bench/unseen.ts mixes everything and has
 * few relations, each family here stresses one thing the compiler has to resolve:
 *
 *   select-chains   one to three to-one hops in the select list (`owner.manager.manager.email`)
 *   where-chains    one to three to-one hops in WHERE conditions
 *   group-chains    one to three to-one hops as GROUP BY keys, with aggregates
 *   virtual         one-to-many relations in dot notation, alone and two in one WHERE
 *   exists          correlated EXISTS and NOT EXISTS subqueries, with hops inside
 *   case            CASE and if() over columns and hops, conditional counts
 *   dates           date boundaries: day, week, month starts in a zone (AT TIME ZONE twice), date columns without zones
 *   multiselect     multi-select arrays: has any, has none, is empty, through hops
 *   mixed           a report of several of the above at once
 *
 * Built from the catalogs' shapes (a loaded catalog's shape is read as data), not from the
 * compiler. Every text is valid for its catalog (test/bench/corpora.test.ts compiles them all,
 * and bench/corpora.ts asserts it again before timing).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Catalog } from '../src/catalog/types.js';
import { between, pick, sample, randomShapes, type Random } from './random-catalog.js';
import { mulberry32 } from '../src/demo/generate.js';
import { modelOf, type Col, type Kind, type Obj } from './random-scope.js';
import { SYNTHETIC_TYPE_CODES, compactPayload, servicePayloadOf, type Shape, type ShapeColumn, type ScalarType } from './synthetic-catalog.js';

export const CORPORA = ['select-chains', 'where-chains', 'group-chains', 'virtual', 'exists', 'case', 'dates', 'multiselect', 'mixed'] as const;
export type CorpusName = (typeof CORPORA)[number];

export interface CorpusText {
  readonly corpus: CorpusName;
  readonly catalog: string;
  readonly slug: string;
  readonly text: string;
}

// ---------------------------------------------------------------------------- catalogs

/** A real-estate brokerage's CRM, as a shape: the catalog nobody tuned the compiler for by name. */
export function realEstateShapes(): Shape[] {
  const s = (type: ScalarType, slug: string, options?: string[]): ShapeColumn => (options ? { slug, kind: 'scalar', type, options } : { slug, kind: 'scalar', type });
  const ref = (slug: string, object: string): ShapeColumn => ({ slug, kind: 'ref', object });
  const virtual = (slug: string, object: string, via: string): ShapeColumn => ({ slug, kind: 'virtual', object, via });
  const primary = (slug: string): ShapeColumn => ({ slug, kind: 'primary' });
  return [
    { slug: 'region', columns: [primary('name'), s('text', 'state'), s('text', 'country'), s('currency', 'median_price'), virtual('offices', 'office', 'region')] },
    { slug: 'office', columns: [primary('name'), ref('region', 'region'), ref('managing_agent', 'agent'), s('text', 'city'), s('text', 'street'), s('phone', 'phone'), s('date', 'opened_on'),
      s('boolean', 'is_franchise'), s('enum', 'tier', ['flagship', 'standard', 'satellite']), virtual('agents', 'agent', 'office')] },
    { slug: 'agent', columns: [primary('full_name'), ref('office', 'office'), ref('manager', 'agent'), ref('mentor', 'agent'), s('email', 'email'), s('phone', 'mobile'), s('text', 'license_number'),
      s('date', 'licensed_on'), s('date', 'hired_on'), s('boolean', 'is_active'), s('number', 'commission_pct'), s('currency', 'sales_ytd'), s('integer', 'deals_closed'),
      s('enum', 'level', ['associate', 'senior', 'team_lead', 'broker']), s('multiselect', 'languages', ['english', 'spanish', 'mandarin', 'hindi', 'french', 'german']),
      s('multiselect', 'specialties', ['luxury', 'condo', 'commercial', 'rental', 'land', 'relocation', 'first_time']), s('datetime', 'last_login_at'),
      virtual('listings', 'listing', 'listing_agent'), virtual('showings', 'showing', 'agent'), virtual('team', 'agent', 'manager'), virtual('clients', 'client', 'assigned_agent')] },
    { slug: 'client', columns: [primary('name'), ref('assigned_agent', 'agent'), ref('referred_by', 'client'), s('email', 'email'), s('phone', 'phone'), s('enum', 'kind', ['buyer', 'seller', 'investor', 'tenant', 'landlord']),
      s('enum', 'stage', ['new', 'contacted', 'qualified', 'touring', 'offer', 'closed', 'lost']), s('currency', 'budget_min'), s('currency', 'budget_max'), s('boolean', 'pre_approved'),
      s('multiselect', 'wanted_features', ['garage', 'pool', 'garden', 'view', 'elevator', 'fireplace', 'basement']), s('datetime', 'last_contacted_at'), s('date', 'move_by_on'),
      s('text', 'source_campaign'), s('json', 'preferences'), virtual('offers', 'offer', 'buyer'), virtual('owned_properties', 'property', 'owner'), virtual('showings', 'showing', 'client')] },
    { slug: 'property', columns: [primary('address'), ref('owner', 'client'), ref('region', 'region'), s('text', 'city'), s('text', 'postal_code'), s('enum', 'property_type', ['house', 'condo', 'townhouse', 'land', 'multi_family', 'commercial']),
      s('integer', 'bedrooms'), s('number', 'bathrooms'), s('integer', 'living_area_sqft'), s('integer', 'lot_size_sqft'), s('integer', 'year_built'), s('currency', 'assessed_value'),
      s('number', 'latitude'), s('number', 'longitude'), s('multiselect', 'features', ['garage', 'pool', 'garden', 'view', 'elevator', 'fireplace', 'basement', 'solar']),
      s('boolean', 'is_waterfront'), s('date', 'last_sold_on'), s('currency', 'last_sold_price'), virtual('listings', 'listing', 'property'), virtual('inspections', 'inspection', 'property')] },
    { slug: 'listing', columns: [primary('title'), ref('property', 'property'), ref('listing_agent', 'agent'), ref('co_agent', 'agent'), s('enum', 'status', ['draft', 'active', 'pending', 'sold', 'withdrawn', 'expired']),
      s('enum', 'listing_type', ['sale', 'rent', 'auction']), s('currency', 'list_price'), s('currency', 'price_reduction'), s('date', 'listed_on'), s('date', 'expires_on'), s('datetime', 'published_at'),
      s('datetime', 'closed_at'), s('integer', 'days_on_market'), s('integer', 'views'), s('boolean', 'is_featured'), s('multiselect', 'channels', ['mls', 'website', 'portal', 'social', 'print']),
      s('url', 'virtual_tour_url'), s('text', 'description'), virtual('offers', 'offer', 'listing'), virtual('showings', 'showing', 'listing')] },
    { slug: 'offer', columns: [primary('reference'), ref('listing', 'listing'), ref('buyer', 'client'), ref('buyer_agent', 'agent'), s('currency', 'amount'), s('currency', 'earnest_money'),
      s('enum', 'status', ['submitted', 'countered', 'accepted', 'rejected', 'withdrawn', 'closed']), s('enum', 'financing', ['cash', 'conventional', 'fha', 'va', 'jumbo']),
      s('boolean', 'has_inspection_contingency'), s('boolean', 'has_financing_contingency'), s('datetime', 'submitted_at'), s('datetime', 'responded_at'), s('date', 'closing_on'),
      s('number', 'over_ask_pct')] },
    { slug: 'showing', columns: [primary('label'), ref('listing', 'listing'), ref('agent', 'agent'), ref('client', 'client'), s('datetime', 'scheduled_at'), s('integer', 'duration_minutes'),
      s('enum', 'outcome', ['interested', 'not_interested', 'no_show', 'offer_likely', 'rescheduled']), s('integer', 'rating'), s('text', 'feedback'), s('boolean', 'is_virtual')] },
    { slug: 'inspection', columns: [primary('reference'), ref('property', 'property'), ref('inspector', 'agent'), s('date', 'inspected_on'), s('enum', 'result', ['pass', 'minor_issues', 'major_issues', 'fail']),
      s('currency', 'repair_estimate'), s('multiselect', 'issues', ['roof', 'plumbing', 'electrical', 'foundation', 'hvac', 'mold', 'pests']), s('boolean', 'is_reinspection')] },
  ];
}

const SCALAR: Partial<Record<string, ScalarType>> = {
  text: 'text', email: 'email', phone: 'phone', url: 'url', number: 'number', integer: 'integer', currency: 'currency', boolean: 'boolean',
  date: 'date', datetime: 'datetime', enum: 'enum', multiselect: 'multiselect', json: 'json',
};

/** A loaded catalog read back as shapes (its objects, columns, relations and options), so the fixtures get the same generators. */
export function shapesOf(catalog: Catalog): Shape[] {
  return [...catalog.objects.values()].map((o) => {
    const columns: ShapeColumn[] = [];
    for (const c of o.columns.values()) {
      if (c.slug === 'id') continue;
      if (c.isPrimary && c.type === 'text') columns.unshift({ slug: c.slug, kind: 'primary' });
      else if (c.relation?.kind === 'to-one') columns.push({ slug: c.slug, kind: 'ref', object: c.relation.object });
      else if (c.relation?.kind === 'virtual') columns.push({ slug: c.slug, kind: 'virtual', object: c.relation.object, via: c.relation.via });
      else if (SCALAR[c.type]) columns.push(c.options ? { slug: c.slug, kind: 'scalar', type: SCALAR[c.type]!, options: c.options } : { slug: c.slug, kind: 'scalar', type: SCALAR[c.type]! });
    }
    return { slug: o.slug, columns };
  });
}

type Lib = { loadCatalog: (payload: unknown, options?: { typeCodes?: Record<string, string> }) => Catalog; withAuditFields: (c: Catalog) => Catalog };

export interface CorpusCatalog {
  readonly name: string;
  readonly catalog: Catalog;
  readonly objects: readonly Obj[];
}

const REPO = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
const readJson = (path: string): unknown => JSON.parse(readFileSync(join(REPO, path), 'utf8'));

/** The catalogs in rotation: the two fixtures, the real-estate CRM (both payload forms) and `randoms` random catalogs. */
export function corpusCatalogs(lib: Lib, randoms = 6): CorpusCatalog[] {
  const of = (name: string, catalog: Catalog): CorpusCatalog => ({ name, catalog, objects: modelOf(shapesOf(catalog)) });
  const out = [
    of('crm', lib.loadCatalog(readJson('fixtures/crm/objects-list.json'), { typeCodes: readJson('fixtures/crm/type-codes.json') as Record<string, string> })),
    of('helpdesk', lib.loadCatalog(readJson('fixtures/helpdesk/schema.json'))),
    of('real-estate', lib.withAuditFields(lib.loadCatalog(compactPayload(realEstateShapes())))),
    of('real-estate (service payload)', lib.loadCatalog(servicePayloadOf(realEstateShapes()), { typeCodes: SYNTHETIC_TYPE_CODES })),
  ];
  for (let k = 0; k < randoms; k++) {
    const shapes = randomShapes(rngOf(0xc0a7 + k), { minObjects: 5 });
    const loaded = k % 2 === 0 ? lib.loadCatalog(compactPayload(shapes)) : lib.loadCatalog(servicePayloadOf(shapes), { typeCodes: SYNTHETIC_TYPE_CODES });
    out.push(of(`random ${k + 1}`, k % 4 < 2 ? lib.withAuditFields(loaded) : loaded));
  }
  return out;
}

/** A seeded random source: the demo data's mulberry32, as bench/lib.ts's rng. */
export const rngOf: (seed: number) => Random = mulberry32;

// ---------------------------------------------------------------------------- texts

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Asia/Tokyo', 'America/Sao_Paulo', 'Australia/Sydney'];
const WORDS = ['acme', 'Globex', 'north', 'Initech', 'berlin', "O'Brien", 'Zürich', 'blue', 'Hooli', 'pending review', 'east', 'Smith'];
const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const DAY = 86_400_000;

interface Hop {
  readonly segs: readonly string[];
  readonly col: Col;
  readonly owner: Obj;
}

/** One text under construction: its root, random source and the output names taken. */
class Writer {
  readonly bySlug: ReadonlyMap<string, Obj>;
  readonly keys = new Set<string>();
  private readonly rootNames: ReadonlySet<string>;

  constructor(readonly r: Random, objects: readonly Obj[], readonly root: Obj) {
    this.bySlug = new Map(objects.map((o) => [o.slug, o]));
    this.rootNames = new Set([...root.cols.map((c) => c.slug), ...root.virtuals.map((v) => v.slug)]);
  }

  /** A path of exactly `hops` to-one relations from `from` to a column `accept` takes, or null. */
  chain(hops: number, accept: (c: Col) => boolean, from: Obj = this.root): Hop | null {
    for (let attempt = 0; attempt < 8; attempt++) {
      const segs: string[] = [];
      let at = from;
      let ok = true;
      for (let h = 0; h < hops; h++) {
        if (at.refs.length === 0) {
          ok = false;
          break;
        }
        const ref = pick(this.r, at.refs);
        segs.push(ref.slug);
        at = this.bySlug.get(ref.target!)!;
      }
      if (!ok) continue;
      const cols = at.cols.filter(accept);
      if (cols.length > 0) {
        const col = pick(this.r, cols);
        return { segs: [...segs, col.slug], col, owner: at };
      }
    }
    return null;
  }

  /** A chain of one to three hops (the longest that exists, tried from `max` down), or a column of the root. */
  hops(max: number, accept: (c: Col) => boolean): Hop | null {
    for (let h = between(this.r, Math.min(1, max), max); h >= 0; h--) {
      const p = this.chain(h, accept);
      if (p) return p;
    }
    return null;
  }

  /** A fresh output name from a hint: no earlier key and no column of the root (GROUP BY reads those first). */
  alias(hint: string): string {
    let name = hint.slice(0, 40);
    for (let i = 2; this.keys.has(name) || this.rootNames.has(name); i++) name = `${hint.slice(0, 40)}_${i}`;
    this.keys.add(name);
    return name;
  }

  /** The select item of a path: bare when its key is free, else aliased. */
  item(p: Hop): string {
    const written = p.segs.join('.');
    if (!this.keys.has(written) && this.r() < 0.7) {
      this.keys.add(written);
      return written;
    }
    return `${written} AS ${this.alias(p.segs.join('_'))}`;
  }

  number(): string {
    const x = this.r();
    if (x < 0.5) return String(between(this.r, 0, 100));
    return String(between(this.r, 1, 500) * pick(this.r, [10, 100, 1000]));
  }

  epoch(kind: Kind): string {
    const day = Date.UTC(2023, 0, 1) + between(this.r, 0, 3 * 365) * DAY;
    return String(kind === 'date' ? day : day + between(this.r, 0, DAY - 1));
  }

  /** A condition on a column reached by `written` (a path as written). */
  condition(written: string, c: Col): string {
    const r = this.r;
    const x = r();
    switch (c.kind) {
      case 'text':
        if (x < 0.4) return `${written} = ${quote(pick(r, WORDS))}`;
        if (x < 0.75) return `${written} ILIKE '%${pick(r, ['ac', 'an', 'or', 'ber', 'sm'])}%'`;
        return `${written} IS NOT NULL`;
      case 'enum':
        if (x < 0.5) return `${written} = ${quote(pick(r, c.options))}`;
        return `${written} ${r() < 0.8 ? 'IN' : 'NOT IN'} (${sample(r, c.options, between(r, 2, 3)).map(quote).join(', ')})`;
      case 'multi':
        if (x < 0.6) return `${written} && ARRAY[${sample(r, c.options, between(r, 1, 3)).map(quote).join(', ')}]`;
        if (x < 0.85) return `NOT (${written} && ARRAY[${sample(r, c.options, between(r, 1, 2)).map(quote).join(', ')}])`;
        return `${written} = ARRAY[NULL]`;
      case 'num':
        if (x < 0.7) return `${written} ${pick(r, ['>', '>=', '<', '<='])} ${this.number()}`;
        return `${written} BETWEEN ${between(r, 0, 50)} AND ${between(r, 51, 100_000)}`;
      case 'bool':
        return `${written} = ${pick(r, ['1', '0', '1'])}`;
      case 'date':
        // Date columns take boundaries without a zone.
        return x < 0.5 ? `${written} >= ${this.epoch('date')}` : `${written} BETWEEN ${this.epoch('date')} AND ${this.epoch('date')}`;
      case 'datetime':
        if (x < 0.5) return `${written} >= ${this.epoch(c.kind)}`;
        return `${written} >= ${this.dayStart(pick(r, ZONES))} - ${between(r, 1, 90)}*86400000`;
      case 'ref':
      case 'id':
        return x < 0.5 ? `${written} = '${Math.floor(r() * 0xffffffff).toString(16).padStart(8, '0')}'` : `${written} IS NOT NULL`;
      case 'json':
        return `${written} IS NOT NULL`;
    }
  }

  /** A relative day start in a zone, `AT TIME ZONE` twice. */
  dayStart(zone: string, unit = 'day'): string {
    return `date_part('epoch', date_trunc('${unit}', NOW() AT TIME ZONE '${zone}') AT TIME ZONE '${zone}')*1000`;
  }

  limit(): number {
    return pick(this.r, [10, 25, 50, 100, 100, 200, 500, 1000]);
  }

  /** `n` conditions on hops of up to `max` relations, ANDed (a few ORed in parentheses). */
  conditions(n: number, max: number, accept: (c: Col) => boolean = conditional): string[] {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const p = this.hops(max, accept);
      if (p) out.push(this.condition(p.segs.join('.'), p.col));
    }
    if (out.length >= 3 && this.r() < 0.3) {
      const [a, b, ...rest] = out;
      return [`(${a} OR ${b})`, ...rest];
    }
    return out;
  }
}

const conditional = (c: Col): boolean => c.kind !== 'json' && c.kind !== 'id';
const shown = (c: Col): boolean => c.kind !== 'id';
const groupable = (c: Col): boolean => c.kind === 'enum' || c.kind === 'text' || c.kind === 'bool';
const numeric = (c: Col): boolean => c.kind === 'num';
const dated = (c: Col): boolean => c.kind === 'date' || c.kind === 'datetime';

function query(select: readonly string[], root: string, where: readonly string[], tail: readonly string[], limit: number): string {
  return [`SELECT ${select.join(', ')} FROM ${root}`, ...(where.length ? [`WHERE ${where.join(' AND ')}`] : []), ...tail, `LIMIT ${limit}`].join(' ');
}

/** The root's primary column (the name people select first), or id. */
function primaryOf(o: Obj): string {
  return o.cols[1]?.kind === 'text' ? o.cols[1].slug : 'id';
}

/** Objects with a to-one path at least `hops` long, the roots a chain family can start from. */
function deepRoots(objects: readonly Obj[], hops: number): Obj[] {
  const bySlug = new Map(objects.map((o) => [o.slug, o]));
  const depth = (o: Obj, left: number): boolean => left === 0 || o.refs.some((r) => depth(bySlug.get(r.target!)!, left - 1));
  const roots = objects.filter((o) => depth(o, hops));
  return roots.length ? roots : objects.filter((o) => o.refs.length > 0);
}

type Family = (w: Writer) => string | null;

const FAMILIES: Record<CorpusName, { roots: (objects: readonly Obj[]) => readonly Obj[]; write: Family }> = {
  'select-chains': {
    roots: (o) => deepRoots(o, 2),
    write: (w) => {
      const select = ['id', primaryOf(w.root)];
      w.keys.add('id').add(primaryOf(w.root));
      for (let i = between(w.r, 2, 6); i > 0; i--) {
        const p = w.chain(between(w.r, 1, 3), shown) ?? w.chain(1, shown);
        if (p) select.push(w.item(p));
      }
      const where = w.conditions(between(w.r, 0, 2), 0);
      return query(select, w.root.slug, where, w.r() < 0.5 ? [`ORDER BY ${primaryOf(w.root)}`] : [], w.limit());
    },
  },
  'where-chains': {
    roots: (o) => deepRoots(o, 2),
    write: (w) => {
      const select = ['id', primaryOf(w.root)];
      const where = w.conditions(between(w.r, 1, 4), 3);
      return where.length ? query(select, w.root.slug, where, [], w.limit()) : null;
    },
  },
  'group-chains': {
    roots: (o) => deepRoots(o, 2),
    write: (w) => {
      const keys: string[] = [];
      const select: string[] = [];
      for (let i = between(w.r, 1, 2); i > 0; i--) {
        const p = w.hops(3, groupable);
        if (!p) continue;
        const written = p.segs.join('.');
        if (keys.includes(written)) continue;
        keys.push(written);
        select.push(w.r() < 0.5 ? `${written} AS ${w.alias(p.segs.join('_'))}` : (w.keys.add(written), written));
      }
      if (keys.length === 0) return null;
      select.push(`count(id) AS ${w.alias('n')}`);
      const m = w.hops(2, numeric);
      if (m) select.push(`${pick(w.r, ['sum', 'avg', 'max'])}(${m.segs.join('.')}) AS ${w.alias(`total_${m.col.slug}`)}`);
      const where = w.conditions(between(w.r, 0, 2), 2);
      return query(select, w.root.slug, where, [`GROUP BY ${keys.join(', ')}`, 'ORDER BY 1'], w.limit());
    },
  },
  virtual: {
    roots: (o) => o.filter((x) => x.virtuals.length > 0),
    write: (w) => {
      const terms: string[] = [];
      const used = new Set<string>();
      const pair = w.r() < 0.5 && w.root.virtuals.length > 1;
      for (let i = pair ? 2 : 1; i > 0; i--) {
        const vs = w.root.virtuals.filter((v) => !used.has(v.slug));
        if (vs.length === 0) break;
        const v = pick(w.r, vs);
        used.add(v.slug);
        const child = w.bySlug.get(v.object)!;
        // The child's own column, or one to-one hop on from it.
        const p = w.r() < 0.3 ? w.chain(1, conditional, child) : null;
        const q = p ?? w.chain(0, conditional, child);
        if (q) terms.push(w.condition(`${v.slug}.${q.segs.join('.')}`, q.col));
      }
      if (terms.length === 0) return null;
      terms.push(...w.conditions(between(w.r, 0, 1), 1));
      if (w.r() < 0.5) return query([`COUNT(DISTINCT id) AS ${w.alias('n')}`], w.root.slug, terms, [], 100);
      return query(['DISTINCT id', primaryOf(w.root)], w.root.slug, terms, [`ORDER BY ${primaryOf(w.root)}`], w.limit());
    },
  },
  exists: {
    roots: (o) => o.filter((x) => x.children.length > 0),
    write: (w) => {
      const alias = w.root.slug.charAt(0);
      const terms: string[] = [];
      for (let i = between(w.r, 1, 2); i > 0; i--) {
        const child = pick(w.r, w.root.children);
        const obj = w.bySlug.get(child.object)!;
        const sub = obj.slug.charAt(0) === alias ? 'x' : obj.slug.charAt(0);
        const inner = [`${sub}.${child.via} = ${alias}.id`];
        for (let k = between(w.r, 1, 2); k > 0; k--) {
          const p = w.chain(w.r() < 0.4 ? 1 : 0, conditional, obj) ?? w.chain(0, conditional, obj);
          if (p) inner.push(w.condition(`${sub}.${p.segs.join('.')}`, p.col));
        }
        terms.push(`${w.r() < 0.3 ? 'NOT ' : ''}EXISTS (SELECT 1 FROM ${obj.slug} ${sub} WHERE ${inner.join(' AND ')})`);
      }
      const own = w.r() < 0.5 ? w.hops(1, conditional) : null;
      if (own) terms.push(w.condition(`${alias}.${own.segs.join('.')}`, own.col));
      const select = w.r() < 0.5 ? [`count(${alias}.id) AS n`] : [`${alias}.id`, `${alias}.${primaryOf(w.root)}`];
      return `SELECT ${select.join(', ')} FROM ${w.root.slug} ${alias} WHERE ${terms.join(' AND ')} LIMIT ${w.limit()}`;
    },
  },
  case: {
    roots: (o) => o,
    write: (w) => {
      const select = ['id'];
      w.keys.add('id');
      for (let i = between(w.r, 1, 3); i > 0; i--) {
        const p = w.hops(2, (c) => c.kind === 'num' || c.kind === 'enum' || c.kind === 'bool');
        if (!p) continue;
        const at = p.segs.join('.');
        const name = w.alias(`${p.segs.join('_')}_band`);
        if (p.col.kind === 'num') select.push(`CASE WHEN ${at} > ${between(w.r, 1000, 9000)} THEN 'large' WHEN ${at} > ${between(w.r, 10, 999)} THEN 'medium' ELSE 'small' END AS ${name}`);
        else if (p.col.kind === 'enum') select.push(`CASE ${at} ${p.col.options.slice(0, 3).map((o, k) => `WHEN ${quote(o)} THEN ${k + 1}`).join(' ')} ELSE 0 END AS ${name}`);
        else select.push(`if(${at} = 1, 'yes', 'no') AS ${name}`);
      }
      if (select.length === 1) return null;
      return query(select, w.root.slug, w.conditions(between(w.r, 0, 2), 1), [], w.limit());
    },
  },
  dates: {
    roots: (o) => o.filter((x) => x.cols.some(dated)),
    write: (w) => {
      const d = w.hops(1, dated);
      if (!d) return null;
      const at = d.segs.join('.');
      const zone = pick(w.r, ZONES);
      const x = w.r();
      const where: string[] = [];
      if (d.col.kind === 'date') {
        // Date columns: boundaries without a zone, shown with ::date.
        where.push(`${at} >= ${w.epoch('date')}`, `${at} < ${w.epoch('date')}`);
        if (x < 0.5) return query([`to_timestamp(${at}/1000)::date AS ${w.alias('day')}`, `count(id) AS ${w.alias('n')}`], w.root.slug, where, ['GROUP BY 1', 'ORDER BY 1'], 400);
        return query(['id', `to_timestamp(${at}/1000)::date AS ${w.alias(`${d.col.slug}_day`)}`], w.root.slug, where, [], w.limit());
      }
      const unit = pick(w.r, ['day', 'week', 'month', 'month', 'quarter', 'year']);
      if (x < 0.4) where.push(`${at} >= ${w.dayStart(zone)} - ${between(w.r, 1, 90)}*86400000`);
      else if (x < 0.7) where.push(`${at} >= ${w.dayStart(zone, unit)}`);
      else where.push(`${at} >= ${w.dayStart(zone, 'month')} - ${between(w.r, 1, 12)}*30*86400000`, `${at} < ${w.dayStart(zone, 'month')}`);
      where.push(...w.conditions(between(w.r, 0, 1), 1));
      const bucket = `date_trunc('${pick(w.r, ['day', 'week', 'month'])}', to_timestamp(${at}/1000) AT TIME ZONE '${zone}')`;
      if (w.r() < 0.6) return query([`${bucket} AS ${w.alias('period')}`, `count(id) AS ${w.alias('n')}`], w.root.slug, where, [`GROUP BY ${w.r() < 0.5 ? 'period' : '1'}`, 'ORDER BY 1'], 400);
      return query(['id', `${bucket} AS ${w.alias('period')}`, `date_part('epoch', NOW()) * 1000 - ${at} AS ${w.alias('age_ms')}`], w.root.slug, where, [], w.limit());
    },
  },
  multiselect: {
    roots: (o) => o.filter((x) => x.cols.some((c) => c.kind === 'multi') || x.refs.length > 0),
    write: (w) => {
      const where = w.conditions(between(w.r, 1, 3), 2, (c) => c.kind === 'multi');
      if (where.length === 0) return null;
      const m = w.hops(1, (c) => c.kind === 'multi');
      const select = ['id', primaryOf(w.root), ...(m && w.r() < 0.5 ? [w.item(m)] : [])];
      w.keys.add('id');
      return query(select, w.root.slug, where, [], w.limit());
    },
  },
  mixed: {
    roots: (o) => deepRoots(o, 1),
    write: (w) => {
      const select = [primaryOf(w.root)];
      w.keys.add(primaryOf(w.root));
      for (let i = between(w.r, 2, 5); i > 0; i--) {
        const p = w.hops(3, shown);
        if (p) select.push(w.item(p));
      }
      const n = w.hops(2, numeric);
      if (n) select.push(`CASE WHEN ${n.segs.join('.')} > ${between(w.r, 100, 9000)} THEN 'high' ELSE 'low' END AS ${w.alias('band')}`);
      const d = w.hops(1, (c) => c.kind === 'datetime');
      if (d) select.push(`date_trunc('day', to_timestamp(${d.segs.join('.')}/1000) AT TIME ZONE '${pick(w.r, ZONES)}') AS ${w.alias('day')}`);
      const where = w.conditions(between(w.r, 2, 5), 3);
      const v = w.root.virtuals.length && w.r() < 0.3 ? pick(w.r, w.root.virtuals) : null;
      if (v) {
        const q = w.chain(0, conditional, w.bySlug.get(v.object)!);
        if (q) return query(['DISTINCT id', ...select.slice(0, 1)], w.root.slug, [...where, w.condition(`${v.slug}.${q.segs.join('.')}`, q.col)], [], w.limit());
      }
      return query(select, w.root.slug, where, w.r() < 0.5 ? [`ORDER BY ${primaryOf(w.root)}`] : [], w.limit());
    },
  },
};

/**
 * The texts of one corpus over catalogs in rotation: `next()` draws a catalog at random and
 * writes a new text of the family on it. A text already given is never given again.
 */
export class CorpusGenerator {
  private readonly seen = new Set<string>();
  private readonly roots: Map<CorpusCatalog, readonly Obj[]>;

  constructor(readonly corpus: CorpusName, private readonly catalogs: readonly CorpusCatalog[], private readonly random: Random) {
    this.roots = new Map(catalogs.map((c) => [c, FAMILIES[corpus].roots(c.objects)]));
  }

  next(): CorpusText & { readonly source: CorpusCatalog } {
    for (let attempt = 0; attempt < 1000; attempt++) {
      const source = pick(this.random, this.catalogs);
      const roots = this.roots.get(source)!;
      if (roots.length === 0) continue;
      const root = pick(this.random, roots);
      const text = FAMILIES[this.corpus].write(new Writer(this.random, source.objects, root));
      const key = `${source.name}\u0000${text}`;
      if (text === null || this.seen.has(key)) continue;
      this.seen.add(key);
      return { corpus: this.corpus, catalog: source.name, slug: root.slug, text, source };
    }
    throw new Error(`the ${this.corpus} corpus has no new text to give`);
  }
}
