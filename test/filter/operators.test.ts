import { describe, expect, it } from 'vitest';
import type { ColumnDef } from '../../src/catalog/types.js';
import { filterRecords } from '../../src/filter/index.js';
import type { FixtureName } from '../../fixtures/index.js';
import type { Row } from '../support/oracle.js';
import { TENANTS, filterHarness, sorted } from './harness.js';

/**
 * Every operator on every logical type, on both fixtures, for two tenants each: the ids the
 * filter returns equal the ids the independent reference (filter-oracle.ts) selects from the
 * inserted rows. Values are taken from the data so that most conditions match something.
 */

const { env, state } = filterHarness();

type Cond = { field: string; operator: string; value?: unknown };

/** Objects whose columns cover every logical type between them. */
const OBJECTS: Record<FixtureName, string[]> = { crm: ['account', 'contact', 'opportunity', 'lead'], helpdesk: ['customer', 'asset', 'ticket'] };

function sample(rows: readonly Row[], col: string, k: number): unknown {
  const present = rows.map((r) => r[col]).filter((v) => v !== null && v !== '' && !(Array.isArray(v) && v.length === 0));
  return present.length ? present[(k * 7919) % present.length] : null;
}

function conditions(fixture: FixtureName, slug: string, col: ColumnDef): Cond[] {
  const f = col.slug;
  const rows = env[fixture].data.get(slug)!;
  const presence: Cond[] = ['is_empty', 'not_empty', 'exists', 'not_exists'].map((operator) => ({ field: f, operator }));
  const v = col.column ? sample(rows, col.column, 1) : null;
  const w = col.column ? sample(rows, col.column, 2) : null;
  switch (col.type) {
    case 'id':
    case 'text':
    case 'email':
    case 'phone':
    case 'url': {
      const s = String(v);
      const mid = s.slice(1, Math.max(2, Math.min(s.length - 1, 5)));
      return [
        ...presence,
        { field: f, operator: 'eq', value: s },
        { field: f, operator: 'neq', value: s },
        { field: f, operator: 'in', value: [s, String(w), 'no such value'] },
        { field: f, operator: 'nin', value: [s, String(w)] },
        { field: f, operator: 'in', value: [] },
        { field: f, operator: 'nin', value: [] },
        { field: f, operator: 'like', value: `${s.slice(0, 2)}%` },
        { field: f, operator: 'like', value: `%${mid.toUpperCase()}%` },
        { field: f, operator: 'like', value: '%under_score%' },
        { field: f, operator: 'like', value: '%back\\slash%' },
        { field: f, operator: 'ilike', value: `%${mid.toUpperCase()}%` },
        { field: f, operator: 'ilike', value: '%_%' },
        { field: f, operator: 'starts_with', value: s.slice(0, 3).toUpperCase() },
        { field: f, operator: 'ends_with', value: s.slice(-2) },
        { field: f, operator: 'contains', value: mid.toLowerCase() },
        { field: f, operator: 'contains', value: '100%' },
        { field: f, operator: 'contains', value: '_' },
        { field: f, operator: 'contains', value: '\\' },
        { field: f, operator: 'starts_with', value: '%' },
        { field: f, operator: 'not_contains', value: mid },
        { field: f, operator: 'not_contains', value: '%' },
      ];
    }
    case 'number':
    case 'integer':
    case 'currency': {
      const n = Number(v);
      return [
        ...presence,
        ...['eq', 'neq', 'gt', 'lt', 'gte', 'lte', 'leq', 'nleq'].map((operator) => ({ field: f, operator, value: n })),
        { field: f, operator: 'gte', value: String(n) },
        { field: f, operator: 'in', value: [n, Number(w)] },
        { field: f, operator: 'nin', value: [n, 0] },
        { field: f, operator: 'between', value: [n / 2, n] },
        { field: f, operator: 'between', value: [n, n] },
      ];
    }
    case 'date':
    case 'datetime': {
      const n = Number(v);
      const iso = new Date(n).toISOString();
      return [
        ...presence,
        ...['eq', 'neq', 'gt', 'lt', 'gte', 'lte', 'leq', 'nleq'].map((operator) => ({ field: f, operator, value: n })),
        { field: f, operator: 'eq', value: iso },
        { field: f, operator: 'gte', value: iso.slice(0, 10) },
        { field: f, operator: 'lt', value: `${iso.slice(0, 19)}+05:30` },
        { field: f, operator: 'in', value: [n, Number(w)] },
        { field: f, operator: 'nin', value: [n] },
        { field: f, operator: 'between', value: [n - 90 * 86_400_000, iso] },
      ];
    }
    case 'boolean':
      return [...presence, { field: f, operator: 'eq', value: true }, { field: f, operator: 'eq', value: 0 }, { field: f, operator: 'neq', value: true }];
    case 'enum':
    case 'relation': {
      const a = String(v);
      const b = String(w);
      return [
        ...presence,
        { field: f, operator: 'eq', value: a },
        { field: f, operator: 'neq', value: a },
        { field: f, operator: 'in', value: [a, b] },
        { field: f, operator: 'nin', value: [a, b] },
        { field: f, operator: 'in', value: [] },
        { field: f, operator: 'nin', value: [] },
      ];
    }
    case 'multiselect': {
      const [a, b] = col.options!;
      return [
        ...presence,
        { field: f, operator: 'eq', value: a },
        { field: f, operator: 'neq', value: a },
        { field: f, operator: 'in', value: [a, b] },
        { field: f, operator: 'nin', value: [a, b] },
        { field: f, operator: 'in', value: [] },
        { field: f, operator: 'nin', value: [] },
      ];
    }
    case 'json':
    case 'virtual':
      return presence;
    default:
      throw new Error(`no cases for ${col.type}`);
  }
}

async function check(fixture: FixtureName, slug: string, conds: readonly Cond[]): Promise<void> {
  const { catalog, ref } = env[fixture];
  for (const tenant of TENANTS[fixture]) {
    for (const c of conds) {
      const filters = { and: [c] };
      const { records } = await filterRecords(state.db, { query: { fields: ['id'], filters, pagination: { page_size: 1000 } } }, { catalog, slug, orgId: tenant });
      const got = sorted(records.map((r) => r['id']));
      const expected = sorted(ref.ids(slug, tenant, filters));
      expect(got, `${tenant} ${slug} ${JSON.stringify(c)}`).toEqual(expected);
      expect(got.every((id) => id.startsWith(`${tenant}_`)), 'another tenant').toBe(true);
    }
  }
}

for (const fixture of ['crm', 'helpdesk'] as const) {
  describe(`every operator × logical type (${fixture})`, () => {
    for (const slug of OBJECTS[fixture]) {
      for (const col of env[fixture].catalog.objects.get(slug)!.columns.values()) {
        it(`${slug}.${col.slug} (${col.type})`, async () => {
          await check(fixture, slug, conditions(fixture, slug, col));
        });
      }
    }
  });
}

describe('dot paths', () => {
  it('to-one paths are joins; one-to-many paths match parents with any matching child', async () => {
    await check('crm', 'account', [
      { field: 'owner.name', operator: 'contains', value: 'user' },
      { field: 'owner.name', operator: 'neq', value: 'x' },
      { field: 'owner.manager.email', operator: 'ends_with', value: '.com' },
      { field: 'owner.is_active', operator: 'is_empty' },
      { field: 'contacts.status', operator: 'eq', value: 'active' },
      { field: 'contacts.status', operator: 'neq', value: 'active' },
      { field: 'contacts.email', operator: 'is_empty' },
      { field: 'contacts.owner.name', operator: 'starts_with', value: 'a' },
      { field: 'opportunities.amount', operator: 'gt', value: 1_000_000 },
      { field: 'opportunities.sources', operator: 'in', value: ['web', 'event'] },
    ]);
    await check('helpdesk', 'customer', [
      { field: 'sites.assets.category', operator: 'eq', value: 'hvac' },
      { field: 'tickets.comments.sentiment', operator: 'eq', value: 'negative' },
      { field: 'account_manager.team.region', operator: 'in', value: ['north', 'east'] },
    ]);
  });

  it('a parent matching through many children is returned once', async () => {
    const { catalog } = env.crm;
    const { records } = await filterRecords(state.db, { query: { fields: ['id'], filters: { and: [{ field: 'contacts.id', operator: 'not_empty' }] }, pagination: { page_size: 1000 } } }, { catalog, slug: 'account', orgId: 'org_acme' });
    const ids = records.map((r) => r['id']);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThan(5);
  });
});

describe('global_search', () => {
  it('is a case-insensitive literal substring over the text, email, phone and url fields', async () => {
    const conds: Cond[] = ['ACME', 'example.ORG', '+91', '100%', 'under_sc', 'back\\', 'zürich', 'www.'].map((value) => ({ field: '', operator: 'global_search', value }));
    await check('crm', 'contact', conds);
    await check('crm', 'lead', conds);
    await check('helpdesk', 'customer', conds);
  });
});

describe('nested trees', () => {
  it('and/or nest, and several conditions combine', async () => {
    await check('crm', 'opportunity', []);
    const { catalog, ref } = env.crm;
    const filters = {
      or: [
        { and: [{ field: 'stage', operator: 'in', value: ['won', 'lost'] }, { field: 'amount', operator: 'gte', value: 50_000 }] },
        { and: [{ field: 'sources', operator: 'is_empty' }, { or: [{ field: 'name', operator: 'contains', value: 'a' }, { field: 'close_date', operator: 'not_exists' }] }] },
      ],
      and: [{ field: 'probability', operator: 'nleq', value: 10 }],
    };
    for (const tenant of TENANTS.crm) {
      const { records } = await filterRecords(state.db, { query: { fields: ['id'], filters, pagination: { page_size: 1000 } } }, { catalog, slug: 'opportunity', orgId: tenant });
      expect(sorted(records.map((r) => r['id']))).toEqual(sorted(ref.ids('opportunity', tenant, filters)));
    }
  });
});
