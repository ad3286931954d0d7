import { describe, expect, it } from 'vitest';
import { filterRecords } from '../../src/query/filter.js';
import type { FixtureName } from '../../fixtures/index.js';
import { OBJECTS, conditions, type Cond } from './cases.js';
import { TENANTS, filterHarness, sorted } from './harness.js';

/**
 * Every operator on every logical type, on both fixtures, for two tenants each: the ids the
 * filter returns equal the ids the independent reference (filter-oracle.ts) selects from the
 * inserted rows. Values are taken from the data so that most conditions match something.
 */

const { env, state } = filterHarness();

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
          await check(fixture, slug, conditions(env, fixture, slug, col));
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

describe('records', () => {
  it('are keyed by field, decoded by type, with null for empty values, in the requested page', async () => {
    const { catalog, oracle } = env.crm;
    const fields = ['id', 'name', 'tags', 'annual_revenue', 'created_at', 'owner.name', 'external_id'];
    const { records } = await filterRecords(state.db, { query: { fields, sort: [{ field: 'id', direction: 'desc' }], pagination: { page: 2, page_size: 7 } } }, { catalog, slug: 'account', orgId: 'org_globex' });
    const live = oracle.live('account', 'org_globex').slice().sort((a, b) => ((a['id'] as string) < (b['id'] as string) ? 1 : -1)).slice(7, 14);
    const blank = (v: unknown) => (v === '' || (Array.isArray(v) && v.length === 0) || v === undefined ? null : v);
    expect(records).toEqual(
      live.map((r) => ({
        id: r['id'],
        name: blank(r['name']),
        tags: blank(r['tags']),
        annual_revenue: r['annual_revenue'],
        created_at: r['created_at'],
        'owner.name': oracle.get('user', 'org_globex', r['owner'])?.['name'] ?? null,
        external_id: blank(r['external_id']),
      })),
    );
  });
});
