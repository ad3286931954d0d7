import fc from 'fast-check';
import { loadCatalog, type Catalog, type ColumnDef } from '../../src/catalog/index.js';
import { OPERATORS } from '../../src/filter/conditions.js';
import { isWritable, SYSTEM_FIELDS } from '../../src/records/values.js';
import { loadFixtureCatalog } from '../../fixtures/index.js';
import { DEEP } from '../props/harness.js';

/**
 * Random filter, connector and record bodies for test/fuzz/bodies.test.ts: shaped by a catalog
 * (its fields, dot paths and options), with the values that once took the process's stack or
 * time mixed in (issue 26): long digit runs ending in a bad character, values nested thousands
 * deep, lists and strings at and past their caps, objects of thousands of keys. Large values are
 * built by repetition, so generating one costs little. OQL_DEEP=1 raises the sizes.
 */

/** A schema the project's code and fixtures never saw: every logical type, relations both ways. */
export function unseenCatalog(): Catalog {
  return loadCatalog({
    objects: {
      depot: {
        columns: {
          name: { type: 'text', primary: true, required: true },
          unit: { type: 'enum', options: ['kg', 'litre', 'pallet'] },
          budget: 'currency',
          capacity: 'integer',
          load: 'number',
          open: 'boolean',
          opened_on: 'date',
          inspected_at: 'datetime',
          zones: { type: 'multiselect', options: ['north', 'south', 'cold'] },
          contact: 'email',
          phone: 'phone',
          web: 'url',
          spec: 'json',
          code: { type: 'text', unique: true },
          manager: { type: 'relation', object: 'crew' },
          gauges: { type: 'virtual', object: 'gauge', via: 'depot' },
          created_at: { type: 'datetime', system: true },
          updated_at: { type: 'datetime', system: true },
        },
      },
      gauge: {
        columns: {
          label: { type: 'text', primary: true },
          depot: { type: 'relation', object: 'depot' },
          reading: 'number',
          unit: { type: 'enum', options: ['bar', 'psi'] },
          calibrated_at: 'datetime',
          updated_at: { type: 'datetime', system: true },
        },
      },
      crew: {
        columns: {
          name: { type: 'text', primary: true },
          lead: { type: 'relation', object: 'crew' },
          email: 'email',
          depots: { type: 'virtual', object: 'depot', via: 'manager' },
          updated_at: { type: 'datetime', system: true },
        },
      },
    },
  });
}

export interface Target {
  readonly name: string;
  readonly catalog: Catalog;
  readonly slugs: readonly string[];
}

export function targets(): Target[] {
  return [
    { name: 'crm', catalog: loadFixtureCatalog('crm'), slugs: ['account', 'contact', 'opportunity'] },
    { name: 'helpdesk', catalog: loadFixtureCatalog('helpdesk'), slugs: ['customer', 'ticket', 'asset'] },
    { name: 'unseen', catalog: unseenCatalog(), slugs: ['depot', 'gauge', 'crew'] },
  ];
}

// ---- Values.

const SIZE = DEEP ? 10 : 1;

/** `n` levels of arrays (or objects) around `1`, built without recursion. */
export function nest(n: number, objects = false): unknown {
  let v: unknown = 1;
  for (let i = 0; i < n; i++) v = objects ? { v } : [v];
  return v;
}

/** An object of `n` keys named `${prefix}${i}`. */
export function manyKeys(n: number, prefix = 'k'): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) o[`${prefix}${i}`] = i;
  return o;
}

const plain = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 12 }),
  fc.integer({ min: 0, max: 4_102_444_800_000 }),
  fc.constantFrom('2024-05-01', '2024-05-01T10:00:00Z', '2024-02-30', '1e3', ' 12.5 ', '-.5', '0x10', 'Infinity', '', '%', '_', '\\', '\u0000', '1e999'),
);

/** The number payload and its kin: a run of one character, then one that ends it. */
export const digitRun = fc
  .tuple(fc.nat({ max: 12_000 }), fc.constantFrom('0', '9', '1', ' ', '.'), fc.constantFrom('Z', '', '.', 'e', 'e+', ' x', '1'))
  .map(([n, d, tail]) => d.repeat(n) + tail);

const deepValue = fc.tuple(fc.nat({ max: 6_000 * SIZE }), fc.boolean()).map(([n, objects]) => nest(n, objects));
const longText = fc.tuple(fc.nat({ max: 12_000 }), fc.constantFrom('x', '%_', '\\', 'é', '👍', '\u0000')).map(([n, s]) => s.repeat(Math.ceil(n / s.length)));
const bigList = fc.tuple(fc.nat({ max: 1_200 }), fc.oneof(plain, digitRun, longText)).map(([n, item]) => new Array<unknown>(n).fill(item));
const wide = fc.nat({ max: 1_000 * SIZE }).map((n) => manyKeys(n));

export function valueArb(options: readonly string[]): fc.Arbitrary<unknown> {
  const option = options.length ? fc.constantFrom(...options) : fc.constant('x');
  return fc.oneof(
    { weight: 12, arbitrary: fc.oneof(plain, option) },
    { weight: 4, arbitrary: fc.array(fc.oneof(plain, option), { maxLength: 8 }) },
    { weight: 2, arbitrary: digitRun },
    { weight: 1, arbitrary: deepValue },
    { weight: 1, arbitrary: longText },
    { weight: 1, arbitrary: bigList },
    { weight: 1, arbitrary: wide },
  );
}

// ---- Filter and connector bodies.

interface Field {
  readonly field: string;
  readonly column: ColumnDef;
  /** The path crosses a one-to-many relation: a condition may use it, a returned field or sort may not. */
  readonly toMany: boolean;
}

/** The fields of `slug`: its columns and dot paths through its relations, with the column each ends on. */
function fields(catalog: Catalog, slug: string): Field[] {
  const out: Field[] = [];
  const many = (c: ColumnDef) => c.type === 'virtual';
  for (const c of catalog.objects.get(slug)!.columns.values()) {
    out.push({ field: c.slug, column: c, toMany: many(c) });
    const target = c.relation ? catalog.objects.get(c.relation.object) : undefined;
    for (const d of target ? [...target.columns.values()].slice(0, 8) : []) {
      out.push({ field: `${c.slug}.${d.slug}`, column: d, toMany: many(c) || many(d) });
      const next = d.relation ? catalog.objects.get(d.relation.object) : undefined;
      const e = next ? [...next.columns.values()][1] : undefined;
      if (e) out.push({ field: `${c.slug}.${d.slug}.${e.slug}`, column: e, toMany: many(c) || many(d) || many(e) });
    }
  }
  return out;
}

const brokenField = fc.constantFrom('', '.', 'a..b', '__proto__', 'constructor', 'x'.repeat(600), `${'owner.'.repeat(12)}name`, 'NAME', 7, null);

export function fieldArb(catalog: Catalog, slug: string): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 10, arbitrary: fc.constantFrom(...fields(catalog, slug).map((f) => f.field)) }, { weight: 1, arbitrary: brokenField });
}

/** Fields a body may return: the one-to-many relations hold no value of their own. */
function returnedFieldsArb(catalog: Catalog, slug: string): fc.Arbitrary<unknown[]> {
  const returnable = fields(catalog, slug).filter((f) => !f.toMany).map((f) => f.field);
  return fc.oneof(
    { weight: 12, arbitrary: fc.array(fc.constantFrom(...returnable), { minLength: 1, maxLength: 6 }) },
    { weight: 2, arbitrary: fc.array(fieldArb(catalog, slug), { maxLength: 6 }) },
    { weight: 1, arbitrary: fc.nat({ max: 600 }).map((n) => new Array<unknown>(n).fill(returnable[0])) },
  );
}

const PRESENCE = ['is_empty', 'not_empty', 'exists', 'not_exists'];
const EQUALITY = ['eq', 'neq', 'in', 'nin'];
const ORDERED = ['gt', 'lt', 'gte', 'lte', 'leq', 'nleq', 'between'];
const TEXT = ['like', 'ilike', 'starts_with', 'ends_with', 'contains', 'not_contains'];

/**
 * A condition a field of this type takes, with a value of its kind: most of these compile, so
 * the SQL laws see many accepted bodies. The operator table is the README's, written here again.
 */
function typedLeaf(f: Field): fc.Arbitrary<Record<string, unknown>> {
  const one = (ops: string[], value: fc.Arbitrary<unknown>): fc.Arbitrary<Record<string, unknown>> => {
    const lists: string[] = ops.filter((o) => o === 'in' || o === 'nin');
    const single = ops.filter((o) => !lists.includes(o) && o !== 'between');
    const presence = fc.tuple(fc.constantFrom(...PRESENCE), fc.boolean()).map(([operator, withNull]) => ({ field: f.field, operator, ...(withNull ? { value: null } : {}) }));
    return fc.oneof(
      presence,
      ...(single.length ? [fc.record({ field: fc.constant(f.field), operator: fc.constantFrom(...single), value })] : []),
      ...(lists.length ? [fc.record({ field: fc.constant(f.field), operator: fc.constantFrom(...lists), value: fc.array(value, { maxLength: 5 }) })] : []),
    );
  };
  const text = fc.string({ maxLength: 10 });
  switch (f.column.type) {
    case 'number':
    case 'integer':
    case 'currency': {
      const n = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer().map(String), fc.constantFrom(' 1.5e3 ', '-.5', '7.'));
      const between = fc.tuple(fc.integer(), fc.nat()).map(([a, d]) => ({ field: f.field, operator: 'between', value: [a, a + d] }));
      return fc.oneof(one([...EQUALITY, ...ORDERED], n), between);
    }
    case 'date':
    case 'datetime': {
      const t = fc.oneof(fc.integer({ min: 0, max: 4_102_444_800_000 }), fc.constantFrom('2024-05-01', '2024-05-01T10:00:00Z', '2024-05-01T10:00:00.123+05:30'));
      return one([...EQUALITY, ...ORDERED], t);
    }
    case 'boolean':
      return one(['eq', 'neq'], fc.constantFrom(true, false, 0, 1));
    case 'enum':
    case 'multiselect':
      return one(EQUALITY, fc.constantFrom(...(f.column.options ?? ['x'])));
    case 'relation':
      return one(EQUALITY, text);
    case 'json':
    case 'virtual':
      return one([], fc.constant(null));
    default:
      return one([...EQUALITY, ...TEXT], text);
  }
}

const operatorArb = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...OPERATORS) },
  { weight: 1, arbitrary: fc.constantFrom('EQ', 'eqq', '', 'between ', '__proto__', 'x'.repeat(10_000), 3, null) },
);

function optionsOf(catalog: Catalog, slug: string): string[] {
  return [...catalog.objects.get(slug)!.columns.values()].flatMap((c) => c.options ?? []);
}

function leafArb(catalog: Catalog, slug: string): fc.Arbitrary<Record<string, unknown>> {
  const typed = fc.oneof(...fields(catalog, slug).map(typedLeaf), fc.constant({ field: '', operator: 'global_search', value: 'a%' }));
  const hostile = fc.record({ field: fieldArb(catalog, slug), operator: operatorArb, value: valueArb(optionsOf(catalog, slug)) }, { requiredKeys: ['field', 'operator'] });
  const extra = fc.oneof({ weight: 20, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: fc.constantFrom({ valeu: 1 }, { and: [] }, manyKeys(2_000, 'x')) });
  return fc.tuple(fc.oneof({ weight: 10, arbitrary: typed }, { weight: 1, arbitrary: hostile }), extra).map(([l, e]) => ({ ...e, ...l }));
}

/** A filters object: random trees, long chains past maxDepth, and flat lists past maxConditions. */
function filtersArb(catalog: Catalog, slug: string): fc.Arbitrary<unknown> {
  const leaf = leafArb(catalog, slug);
  const tree = fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.record({ and: fc.array(tie('node'), { minLength: 1, maxLength: 4 }) }),
      fc.record({ or: fc.array(tie('node'), { minLength: 1, maxLength: 4 }) }),
      fc.tuple(leaf, fc.array(tie('node'), { minLength: 1, maxLength: 3 })).map(([l, and]) => ({ ...l, and })),
    ),
  })).node;
  const chain = fc.tuple(fc.nat({ max: 40 * SIZE }), leaf).map(([n, l]) => {
    let v: unknown = l;
    for (let i = 0; i < n; i++) v = { [i % 2 ? 'and' : 'or']: [v, l] };
    return v;
  });
  const flat = fc.tuple(fc.nat({ max: 260 }), leaf).map(([n, l]) => ({ and: new Array<unknown>(n).fill(l) }));
  return fc.oneof({ weight: 16, arbitrary: tree }, { weight: 1, arbitrary: chain }, { weight: 1, arbitrary: flat }, { weight: 1, arbitrary: fc.oneof(plain, deepValue, wide) });
}

/** Keys no query object has: usually none, sometimes thousands. */
const unknownKeys = fc.oneof(
  { weight: 30, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.constantFrom({ filtres: {} }, { feilds: [] }, JSON.parse('{"__proto__": 1}') as Record<string, unknown>) },
  { weight: 1, arbitrary: fc.nat({ max: 5_000 * SIZE }).map((n) => manyKeys(n, 'key')) },
);

export function filterBodyArb(catalog: Catalog, slug: string): fc.Arbitrary<unknown> {
  const field = fieldArb(catalog, slug);
  const sortable = fields(catalog, slug).filter((f) => !f.toMany && !['multiselect', 'json'].includes(f.column.type)).map((f) => f.field);
  const sortField = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...sortable) }, { weight: 1, arbitrary: field });
  const query = fc.record(
    {
      fields: returnedFieldsArb(catalog, slug),
      filters: filtersArb(catalog, slug),
      sort: fc.array(fc.record({ field: sortField, direction: fc.oneof({ weight: 8, arbitrary: fc.constantFrom('asc', 'desc', 'DESC') }, { weight: 1, arbitrary: fc.constantFrom('up', 1) }) }, { requiredKeys: ['field'] }), { maxLength: 3 }),
      pagination: fc.record({ page: fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 1, max: 50 }) }, { weight: 1, arbitrary: plain }), page_size: fc.oneof({ weight: 16, arbitrary: fc.integer({ min: 1, max: 1_000 }) }, { weight: 1, arbitrary: fc.oneof(fc.integer({ min: 1_001, max: 1_200 }), plain) }) }, { requiredKeys: [] }),
    },
    { requiredKeys: [] },
  );
  return fc.tuple(query, unknownKeys).map(([q, extra]) => ({ query: { ...extra, ...q } }));
}

export function connectorBodyArb(catalog: Catalog, slug: string): fc.Arbitrary<unknown> {
  const leaf = leafArb(catalog, slug);
  const filter = fc.oneof(
    { weight: 16, arbitrary: fc.record({ and: fc.array(leaf, { minLength: 1, maxLength: 6 }) }) },
    { weight: 1, arbitrary: fc.tuple(fc.nat({ max: 260 }), leaf).map(([n, l]) => ({ and: new Array<unknown>(n).fill(l) })) },
    { weight: 1, arbitrary: fc.oneof(plain, deepValue, fc.record({ or: fc.array(leaf, { maxLength: 2 }) })) },
  );
  const query = fc.record({ fields: returnedFieldsArb(catalog, slug), filter }, { requiredKeys: ['fields'] });
  const token = fc.oneof({ weight: 12, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('a.b', 'eyJ2IjoxfQ.AAAA', 'x'.repeat(5_000)), plain) });
  return fc.tuple(query, unknownKeys, token).map(([q, extra, next_token]) => ({ query: { ...extra, ...q }, next_token }));
}

// ---- Record bodies.

export function recordArb(catalog: Catalog, slug: string): fc.Arbitrary<Record<string, unknown>> {
  const obj = catalog.objects.get(slug)!;
  const writable = [...obj.columns.values()].filter(isWritable).map((c) => c.slug);
  const key = fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...writable) },
    { weight: 2, arbitrary: fc.constantFrom(...SYSTEM_FIELDS, ...obj.columns.keys()) },
    { weight: 1, arbitrary: fc.constantFrom('nmae', '__proto__', '', 'x'.repeat(1_000)) },
  );
  const value = fc.oneof({ weight: 3, arbitrary: valueArb(optionsOf(catalog, slug)) }, { weight: 1, arbitrary: fc.nat({ max: 200 }).map((n) => nest(n)) });
  const fields = fc.array(fc.tuple(key, value), { maxLength: 8 });
  const extra = fc.oneof({ weight: 20, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: fc.nat({ max: 5_000 * SIZE }).map((n) => manyKeys(n, 'extra')) });
  return fc.tuple(fields, extra).map(([pairs, more]) => {
    const r: Record<string, unknown> = { ...more };
    // Defined, not assigned: `__proto__` stays an own key, as JSON.parse makes it.
    for (const [k, v] of pairs) Object.defineProperty(r, k, { value: v, enumerable: true, writable: true, configurable: true });
    return r;
  });
}
