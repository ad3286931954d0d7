import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { filterRecords } from '../../src/query/filter.js';
import type { FixtureName } from '../../fixtures/index.js';
import type { Row } from '../support/oracle.js';
import { PROPERTY_TIMEOUT, configureFastCheck, runs } from '../props/harness.js';
import { OBJECTS, conditions, type Cond } from './cases.js';
import { TENANTS, filterHarness, sorted } from './harness.js';

/**
 * Properties of the record filter on PGlite, against the reference in filter-oracle.ts:
 * random condition trees select the reference's records; each operator and its negative twin
 * (and is_empty / not_empty, exists / not_exists) partition the records; paging through any
 * filter and sort with any page size yields every matching record exactly once, in the
 * reference's order; no filter returns another tenant's records.
 */

configureFastCheck('filter/props');
const { env, state } = filterHarness();

const TWIN: Record<string, string> = { eq: 'neq', in: 'nin', contains: 'not_contains', leq: 'nleq', is_empty: 'not_empty', exists: 'not_exists' };

interface Target { fixture: FixtureName; slug: string; tenant: string }

const targets: Target[] = (['crm', 'helpdesk'] as const).flatMap((fixture) => OBJECTS[fixture].flatMap((slug) => TENANTS[fixture].map((tenant) => ({ fixture, slug, tenant }))));

function leaves(t: Target): Cond[] {
  return [...env[t.fixture].catalog.objects.get(t.slug)!.columns.values()].flatMap((c) => conditions(env, t.fixture, t.slug, c));
}

type Tree = Cond | { and: Tree[] } | { or: Tree[] };

const arbTarget = fc.constantFrom(...targets);

function arbTree(t: Target): fc.Arbitrary<Tree> {
  const leaf = fc.constantFrom(...leaves(t));
  const { tree } = fc.letrec<{ tree: Tree }>((tie) => ({
    tree: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.record({ and: fc.array(tie('tree'), { minLength: 1, maxLength: 3 }) }),
      fc.record({ or: fc.array(tie('tree'), { minLength: 1, maxLength: 3 }) }),
    ),
  }));
  return tree;
}

const wrap = (t: Tree): Record<string, unknown> => ('and' in t || 'or' in t ? t : { and: [t] });

async function ids(t: Target, filters: unknown, extra: Record<string, unknown> = {}): Promise<string[]> {
  const query = { fields: ['id'], pagination: { page_size: 1000 }, ...(filters === undefined ? {} : { filters }), ...extra };
  const { records } = await filterRecords(state.db, { query }, { catalog: env[t.fixture].catalog, slug: t.slug, orgId: t.tenant });
  return records.map((r) => r['id'] as string);
}

describe('record filter properties', () => {
  it('random condition trees select the reference records of the caller\'s tenant only', async () => {
    await fc.assert(
      fc.asyncProperty(arbTarget.chain((t) => fc.tuple(fc.constant(t), arbTree(t))), async ([t, tree]) => {
        const filters = wrap(tree);
        const got = await ids(t, filters);
        expect(sorted(got)).toEqual(sorted(env[t.fixture].ref.ids(t.slug, t.tenant, filters)));
        expect(got.filter((id) => !id.startsWith(`${t.tenant}_`))).toEqual([]);
      }),
      { numRuns: runs(60, 2000) },
    );
  }, PROPERTY_TIMEOUT);

  it('an operator and its negative twin partition the records', async () => {
    await fc.assert(
      fc.asyncProperty(
        arbTarget.chain((t) => fc.tuple(fc.constant(t), fc.constantFrom(...leaves(t).filter((c) => c.operator in TWIN)))),
        async ([t, c]) => {
          const all = await ids(t, undefined);
          const p = await ids(t, { and: [c] });
          const q = await ids(t, { and: [{ ...c, operator: TWIN[c.operator]! }] });
          expect(p.filter((id) => q.includes(id))).toEqual([]);
          expect(sorted([...p, ...q])).toEqual(sorted(all));
        },
      ),
      { numRuns: runs(60, 2000) },
    );
  }, PROPERTY_TIMEOUT);

  it('paging through any filter and sort yields each record once, in the reference order', async () => {
    const sortable = (t: Target): string[] => {
      const obj = env[t.fixture].catalog.objects.get(t.slug)!;
      const own = [...obj.columns.values()].filter((c) => c.column !== null && !['multiselect', 'json', 'virtual'].includes(c.type)).map((c) => c.slug);
      const rel = [...obj.columns.values()].find((c) => c.relation?.kind === 'to-one');
      return rel ? [...own, `${rel.slug}.name`] : own;
    };
    await fc.assert(
      fc.asyncProperty(
        arbTarget.chain((t) =>
          fc.tuple(
            fc.constant(t),
            fc.option(arbTree(t), { nil: undefined }),
            fc.uniqueArray(fc.record({ field: fc.constantFrom(...sortable(t)), direction: fc.constantFrom('asc', 'desc') }), { maxLength: 3, selector: (s) => s.field }),
            fc.integer({ min: 1, max: 40 }),
          ),
        ),
        async ([t, tree, sort, size]) => {
          const filters = tree === undefined ? undefined : wrap(tree);
          const seen: string[] = [];
          for (let page = 1; ; page++) {
            const got = await ids(t, filters, { sort, pagination: { page, page_size: size } });
            seen.push(...got);
            if (got.length < size) break;
          }
          const expected = referenceOrder(t, env[t.fixture].ref.ids(t.slug, t.tenant, filters), sort);
          expect(seen).toEqual(expected);
        },
      ),
      { numRuns: runs(25, 500) },
    );
  }, PROPERTY_TIMEOUT);
});

/** The README's order: each key ascending or descending with empty (null) values last, then id. */
function referenceOrder(t: Target, ids: string[], sort: readonly { field: string; direction: string }[]): string[] {
  const { catalog, oracle } = env[t.fixture];
  const byId = new Map(oracle.live(t.slug, t.tenant).map((r) => [r['id'] as string, r]));
  const valueOf = (row: Row, field: string): unknown => {
    const [first, second] = field.split('.');
    const col = catalog.objects.get(t.slug)!.columns.get(first!)!;
    if (!second) return row[col.column!] ?? null;
    const target = oracle.get(col.relation!.object, t.tenant, row[col.column!]);
    return target ? (target[catalog.objects.get(col.relation!.object)!.columns.get(second)!.column!] ?? null) : null;
  };
  const cmp = (a: unknown, b: unknown): number => {
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
    // PGlite's collation is C: code point order, which JavaScript's < gives for these texts.
    return a! < b! ? -1 : a! > b! ? 1 : 0;
  };
  return ids.slice().sort((x, y) => {
    const a = byId.get(x)!;
    const b = byId.get(y)!;
    for (const s of sort) {
      const va = valueOf(a, s.field);
      const vb = valueOf(b, s.field);
      if (va === null && vb === null) continue;
      if (va === null) return 1;
      if (vb === null) return -1;
      const c = cmp(va, vb) * (s.direction === 'desc' ? -1 : 1);
      if (c !== 0) return c;
    }
    return x < y ? -1 : x > y ? 1 : 0;
  });
}
