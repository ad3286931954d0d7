import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import { insertRows, type Row } from '../../fixtures/index.js';
import { configureFastCheck, runs } from '../props/harness.js';
import { pgFixtures } from '../support/pg-fixture.js';

/**
 * `fanout: 'exact'` on PostgreSQL 15 over random data, against SQL written by hand from the
 * definition: the fan-out spelled out as LEFT JOINs (each row paired with every child of every
 * relation, or with NULLs), WHERE applied to it, and each aggregate then read over the distinct
 * ids of the records the kept rows of a group hold. Conditions are random trees of AND, OR and
 * NOT over the row and two relations, with conditions reading two relations at once and
 * conditions true on NULLs; aggregates include DISTINCT ones and relations reached through a
 * to-one hop. Each run gets fresh random rows under its own tenant, beside a neighbour tenant
 * holding other rows under the same ids, so a missing tenant guard changes the numbers.
 */

const fx = pgFixtures(['crm', 'helpdesk'], { data: false });
const catalog = fx.catalog('crm');

const INDUSTRIES = ['software', 'retail', 'finance'] as const;
const STATUSES = ['active', 'inactive', 'bounced'] as const;
const STAGES = ['prospecting', 'won', 'lost'] as const;
const NAMES = ['ada', 'bo', 'cy'] as const;

// ---- random data

interface Data {
  readonly account: Row[];
  readonly contact: Row[];
  readonly opportunity: Row[];
}

const maybe = <T,>(a: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.option(a, { freq: 4, nil: null });

const arbData: fc.Arbitrary<Data> = fc
  .record({
    accounts: fc.array(fc.record({ industry: maybe(fc.constantFrom(...INDUSTRIES)), annual_revenue: maybe(fc.integer({ min: 0, max: 900 })), owner: fc.constantFrom('u1', 'u2'), is_deleted: fc.constantFrom(false, false, false, true) }), { minLength: 1, maxLength: 6 }),
    contacts: fc.array(fc.record({ account: fc.nat(7), name: maybe(fc.constantFrom(...NAMES)), status: maybe(fc.constantFrom(...STATUSES)), email: maybe(fc.constant('x@y.z')), is_primary: maybe(fc.boolean()), is_deleted: fc.boolean() }), { maxLength: 10 }),
    opportunities: fc.array(fc.record({ account: fc.nat(7), name: maybe(fc.constantFrom(...NAMES)), stage: maybe(fc.constantFrom(...STAGES)), amount: maybe(fc.integer({ min: -50, max: 1000 })), is_deleted: fc.boolean() }), { maxLength: 10 }),
  })
  .map(({ accounts, contacts, opportunities }) => ({
    // Accounts 0..n-1 exist; a child may point past them (no such account) or at a deleted one.
    account: accounts.map((a, i) => ({ id: `a${i}`, name: `account ${i}`, ...a, is_deleted: a.is_deleted && i > 0 })),
    contact: contacts.map((c, i) => ({ id: `c${i}`, ...c, account: `a${c.account}`, is_deleted: c.is_deleted && i % 3 === 0 })),
    opportunity: opportunities.map((o, i) => ({ id: `o${i}`, ...o, account: `a${o.account}`, is_deleted: o.is_deleted && i % 3 === 0 })),
  }));

let tenants = 0;

async function load(data: Data, neighbour: Data): Promise<string> {
  const tenant = `t${++tenants}`;
  for (const [org, d] of [[tenant, data], [`${tenant}_n`, neighbour]] as const) {
    for (const slug of ['account', 'contact', 'opportunity'] as const) {
      const rows = d[slug].map((r) => ({ ...r, org_id: org }));
      if (rows.length) await insertRows(fx.pool('crm'), catalog, catalog.objects.get(slug)!, rows);
    }
  }
  return tenant;
}

// ---- conditions and aggregates: the query's text and the hand-written SQL of each

interface Leaf { readonly oql: string; readonly sql: string }

/** FROM account: the row is `a`, its contacts `c`, its opportunities `o`. */
const ACCOUNT_LEAVES: fc.Arbitrary<Leaf> = fc.oneof(
  fc.constantFrom(...INDUSTRIES).map((v) => ({ oql: `industry = '${v}'`, sql: `a.industry = '${v}'` })),
  fc.integer({ min: 0, max: 900 }).map((n) => ({ oql: `annual_revenue > ${n}`, sql: `a.annual_revenue > ${n}` })),
  fc.constantFrom(...STATUSES).map((v) => ({ oql: `contacts.status = '${v}'`, sql: `c.status = '${v}'` })),
  fc.constant({ oql: 'contacts.status IS NULL', sql: 'c.status IS NULL' }),
  fc.constant({ oql: 'contacts.is_primary = true', sql: 'c.is_primary = true' }),
  fc.constantFrom(...STAGES).map((v) => ({ oql: `opportunities.stage = '${v}'`, sql: `o.stage = '${v}'` })),
  fc.integer({ min: -50, max: 1000 }).map((n) => ({ oql: `opportunities.amount > ${n}`, sql: `o.amount > ${n}` })),
  fc.constant({ oql: "coalesce(opportunities.stage, 'none') = 'none'", sql: "coalesce(o.stage, 'none') = 'none'" }),
  // Two relations, and a relation with the row, in one leaf.
  fc.constant({ oql: 'contacts.name = opportunities.name', sql: 'c.name = o.name' }),
  fc.constant({ oql: 'opportunities.amount > annual_revenue', sql: 'o.amount > a.annual_revenue' }),
);

/** FROM opportunity: the row is `r`, its account `a`, the account's contacts `c` and opportunities `o`. */
const OPPORTUNITY_LEAVES: fc.Arbitrary<Leaf> = fc.oneof(
  fc.constantFrom(...STAGES).map((v) => ({ oql: `stage = '${v}'`, sql: `r.stage = '${v}'` })),
  fc.integer({ min: -50, max: 1000 }).map((n) => ({ oql: `amount > ${n}`, sql: `r.amount > ${n}` })),
  fc.constantFrom(...INDUSTRIES).map((v) => ({ oql: `account.industry = '${v}'`, sql: `a.industry = '${v}'` })),
  fc.constantFrom(...STATUSES).map((v) => ({ oql: `account.contacts.status = '${v}'`, sql: `c.status = '${v}'` })),
  fc.constant({ oql: 'account.contacts.status IS NULL', sql: 'c.status IS NULL' }),
  fc.constantFrom(...STAGES).map((v) => ({ oql: `account.opportunities.stage = '${v}'`, sql: `o.stage = '${v}'` })),
  fc.constant({ oql: 'account.contacts.name = name', sql: 'c.name = r.name' }),
  fc.constant({ oql: 'account.opportunities.amount > amount', sql: 'o.amount > r.amount' }),
);

function tree(leaves: fc.Arbitrary<Leaf>): fc.Arbitrary<Leaf> {
  const { node } = fc.letrec<{ node: Leaf }>((t) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaves,
      fc.tuple(t('node'), t('node')).map(([x, y]) => ({ oql: `(${x.oql}) AND (${y.oql})`, sql: `(${x.sql}) AND (${y.sql})` })),
      fc.tuple(t('node'), t('node')).map(([x, y]) => ({ oql: `(${x.oql}) OR (${y.oql})`, sql: `(${x.sql}) OR (${y.sql})` })),
      t('node').map((x) => ({ oql: `NOT (${x.oql})`, sql: `NOT (${x.sql})` })),
    ),
  }));
  return node;
}

/** An aggregate: its text, and the SQL of it over the records whose ids the kept rows of a group hold. */
interface Agg {
  readonly oql: string;
  /** Which fan column holds the ids of the records it reads. */
  readonly ids: string;
  readonly table: string;
  readonly fn: string;
  readonly sensitive: boolean;
}

const agg = (oql: string, ids: string, table: string, fn: string): Agg => ({ oql, ids, table, fn, sensitive: !/^(min|max)\(|DISTINCT/.test(fn) });

const ACCOUNT_AGGS: readonly Agg[] = [
  agg('COUNT(*)', 'a_id', 'account', 'count(*)'),
  agg('SUM(annual_revenue)', 'a_id', 'account', 'sum(x.annual_revenue)'),
  agg('COUNT(contacts.id)', 'c_id', 'contact', 'count(x.id)'),
  agg('COUNT(contacts.email)', 'c_id', 'contact', 'count(x.email)'),
  agg('SUM(opportunities.amount)', 'o_id', 'opportunity', 'sum(x.amount)'),
  agg('AVG(opportunities.amount)', 'o_id', 'opportunity', 'avg(x.amount)'),
  agg('MIN(opportunities.amount)', 'o_id', 'opportunity', 'min(x.amount)'),
  agg('MAX(opportunities.amount)', 'o_id', 'opportunity', 'max(x.amount)'),
  agg('COUNT(DISTINCT contacts.status)', 'c_id', 'contact', 'count(DISTINCT x.status)'),
  agg('SUM(DISTINCT opportunities.amount)', 'o_id', 'opportunity', 'sum(DISTINCT x.amount)'),
];

const OPPORTUNITY_AGGS: readonly Agg[] = [
  agg('COUNT(*)', 'r_id', 'opportunity', 'count(*)'),
  agg('SUM(amount)', 'r_id', 'opportunity', 'sum(x.amount)'),
  agg('COUNT(account.contacts.id)', 'c_id', 'contact', 'count(x.id)'),
  agg('COUNT(DISTINCT account.contacts.status)', 'c_id', 'contact', 'count(DISTINCT x.status)'),
  agg('SUM(account.opportunities.amount)', 'o_id', 'opportunity', 'sum(x.amount)'),
  agg('AVG(account.opportunities.amount)', 'o_id', 'opportunity', 'avg(x.amount)'),
  agg('MAX(account.opportunities.amount)', 'o_id', 'opportunity', 'max(x.amount)'),
];

const live = (t: string): string => `${t}.org_id = $1 AND ${t}.is_deleted = false`;

interface Family {
  readonly slug: string;
  readonly groups: readonly { readonly oql: string; readonly sql: string }[];
  readonly leaves: fc.Arbitrary<Leaf>;
  readonly aggs: readonly Agg[];
  /** The fan-out: ids of every record a row holds, `g` the group key, `$1` the tenant. */
  readonly fan: (group: string, where: string) => string;
}

const FAMILIES: readonly Family[] = [
  {
    slug: 'account',
    groups: [{ oql: '', sql: 'NULL' }, { oql: 'industry', sql: 'a.industry' }, { oql: 'owner', sql: 'a.owner' }],
    leaves: ACCOUNT_LEAVES,
    aggs: ACCOUNT_AGGS,
    fan: (g, w) => `SELECT ${g} AS g, a.id AS a_id, c.id AS c_id, o.id AS o_id FROM account a
      LEFT JOIN contact c ON c.account = a.id AND ${live('c')}
      LEFT JOIN opportunity o ON o.account = a.id AND ${live('o')}
      WHERE ${live('a')} AND (${w})`,
  },
  {
    slug: 'opportunity',
    groups: [{ oql: '', sql: 'NULL' }, { oql: 'stage', sql: 'r.stage' }, { oql: 'account.industry', sql: 'a.industry' }],
    leaves: OPPORTUNITY_LEAVES,
    aggs: OPPORTUNITY_AGGS,
    fan: (g, w) => `SELECT ${g} AS g, r.id AS r_id, c.id AS c_id, o.id AS o_id FROM opportunity r
      LEFT JOIN account a ON a.id = r.account AND ${live('a')}
      LEFT JOIN contact c ON c.account = a.id AND ${live('c')}
      LEFT JOIN opportunity o ON o.account = a.id AND ${live('o')}
      WHERE ${live('r')} AND (${w})`,
  },
];

function texts(f: Family, group: { oql: string; sql: string }, where: Leaf | null, aggs: readonly Agg[]): { oql: string; sql: string } {
  const items = [...(group.oql ? [`${group.oql} AS g`] : []), ...aggs.map((a, i) => `${a.oql} AS a${i}`)];
  const oql = `SELECT ${items.join(', ')} FROM ${f.slug}${where ? ` WHERE ${where.oql}` : ''}${group.oql ? ' GROUP BY 1' : ''} LIMIT 1000`;
  const same = group.oql ? 'f2.g IS NOT DISTINCT FROM k.g' : 'true';
  const values = aggs.map((a, i) => `(SELECT ${a.fn} FROM ${a.table} x WHERE x.org_id = $1 AND x.id IN (SELECT f2.${a.ids} FROM fan f2 WHERE ${same})) AS a${i}`);
  const fan = f.fan(group.sql, where?.sql ?? 'true');
  const sql = group.oql
    ? `WITH fan AS (${fan}) SELECT k.g, ${values.join(', ')} FROM (SELECT DISTINCT g FROM fan) k`
    : `WITH fan AS (${fan}) SELECT ${values.join(', ')}`;
  return { oql, sql };
}

// ---- comparing

type Cells = readonly unknown[];

function close(a: unknown, b: unknown): boolean {
  if (a === null || b === null) return a === b;
  const x = Number(a);
  const y = Number(b);
  if (Number.isNaN(x) || Number.isNaN(y)) return a === b;
  return Math.abs(x - y) <= Math.abs(y) * 1e-9 + 1e-9;
}

function sameRows(actual: readonly Cells[], expected: readonly Cells[]): boolean {
  if (actual.length !== expected.length) return false;
  // Grouped rows start with their distinct group key; an ungrouped query has one row.
  const key = (r: Cells): string => JSON.stringify(r[0] ?? null);
  const left = [...actual].sort((x, y) => key(x).localeCompare(key(y)));
  const right = [...expected].sort((x, y) => key(x).localeCompare(key(y)));
  return left.every((row, i) => row.length === right[i]!.length && row.every((v, j) => close(v, right[i]![j])));
}

async function rows(sql: string, params: unknown[]): Promise<Cells[]> {
  return (await fx.pool('crm').query({ text: sql, values: params, rowMode: 'array' })).rows as Cells[];
}

async function runExact(oql: string, slug: string, tenant: string, fanout: 'exact' | 'service'): Promise<Cells[]> {
  const c = compile(oql, { catalog, slug, orgId: tenant, fanout, cache: false });
  if (c.kind !== 'query') throw new Error('restricted');
  return rows(c.sql, c.params);
}

// ---- the tests

describe("fanout: 'exact' on PostgreSQL 15 against hand-written SQL, random data", () => {
  const seed = configureFastCheck('fanout-exact-pg');

  for (const family of FAMILIES) {
    it(`FROM ${family.slug}: random AND/OR/NOT conditions over the row and two relations, every aggregate`, async () => {
      let wrongByDefault = 0;
      let withRelations = 0;
      const arbQuery = fc.record({
        group: fc.constantFrom(...family.groups),
        where: fc.option(tree(family.leaves), { nil: null, freq: 6 }),
        aggs: fc.tuple(fc.constantFrom(...family.aggs.filter((a) => a.sensitive)), fc.array(fc.constantFrom(...family.aggs), { maxLength: 3 })).map(([a, rest]) => [a, ...rest]),
      });
      await fc.assert(
        fc.asyncProperty(arbData, arbData, arbQuery, async (data, neighbour, { group, where, aggs }) => {
          const tenant = await load(data, neighbour);
          const { oql, sql } = texts(family, group, where, aggs);
          const expected = await rows(sql, [tenant]);
          const actual = await runExact(oql, family.slug, tenant, 'exact');
          if (!sameRows(actual, expected)) {
            throw new Error(`${oql}\n(${tenant})\nexpected ${JSON.stringify(expected)}\nactual   ${JSON.stringify(actual)}\nhand-written: ${sql}`);
          }
          if (/\./.test(oql.replace(/\d\.\d/g, ''))) withRelations++;
          if (!sameRows(await runExact(oql, family.slug, tenant, 'service'), expected)) wrongByDefault++;
        }),
        { numRuns: runs(150, 3000), seed },
      );
      // The property can fail: the service's fan-out gets many of the same queries wrong.
      expect(withRelations).toBeGreaterThan(50);
      expect(wrongByDefault).toBeGreaterThan(10);
    }, 600_000);
  }
});

describe('relations of relations (helpdesk: customer → sites → assets)', () => {
  const helpdesk = fx.catalog('helpdesk');
  const T = 'org_nested';
  const insert = async (org: string): Promise<void> => {
    const pool = fx.pool('helpdesk');
    const put = (slug: string, rows: Row[]) => insertRows(pool, helpdesk, helpdesk.objects.get(slug)!, rows.map((r) => ({ is_deleted: false, ...r, org_id: org })));
    await put('customer', [{ id: 'c1', name: 'one' }, { id: 'c2', name: 'two' }]);
    await put('site', [{ id: 's1', customer: 'c1', floor_area: 100 }, { id: 's2', customer: 'c1', floor_area: 50 }, { id: 's3', customer: 'c1', floor_area: 999, is_deleted: true }]);
    await put('asset', [
      { id: 'a1', site: 's1', is_critical: true, purchase_cost: 10 },
      { id: 'a2', site: 's1', is_critical: true, purchase_cost: 20 },
      { id: 'a3', site: 's1', is_critical: false, purchase_cost: 40 },
      { id: 'a4', site: 's3', is_critical: true, purchase_cost: 80 },
    ]);
  };

  const run = async (query: string, org: string, fanout: 'exact' | 'service' = 'exact'): Promise<Cells> => {
    const c = compile(query, { catalog: helpdesk, slug: 'customer', orgId: org, fanout });
    if (c.kind !== 'query') throw new Error('restricted');
    const r = await fx.pool('helpdesk').query({ text: c.sql, values: c.params, rowMode: 'array' });
    return (r.rows[0] as Cells).map((v) => (v === null ? null : Number(v)));
  };

  it('each site and each asset is read once, a condition on assets keeps the sites it reaches', async () => {
    await insert(T);
    // Fan-out rows of c1: (s1, a1) (s1, a2) (s1, a3) (s2, NULLs); c2: (NULLs, NULLs). s3 is deleted.
    const cases: [string, number[], number[]][] = [
      ['SELECT COUNT(*) AS n, SUM(sites.floor_area) AS area, COUNT(sites.assets.id) AS assets FROM customer LIMIT 1', [2, 150, 3], [5, 350, 3]],
      ['SELECT COUNT(*) AS n, SUM(sites.floor_area) AS area, SUM(sites.assets.purchase_cost) AS cost FROM customer WHERE sites.assets.is_critical = true LIMIT 1', [1, 100, 30], [2, 200, 30]],
      ['SELECT COUNT(*) AS n, SUM(sites.floor_area) AS area, COUNT(sites.assets.id) AS assets FROM customer WHERE sites.assets.is_critical = true OR sites.floor_area < 60 LIMIT 1', [1, 150, 2], [3, 250, 2]],
      ['SELECT COUNT(*) AS n, SUM(sites.floor_area) AS area FROM customer WHERE NOT (sites.assets.is_critical = true) LIMIT 1', [1, 100], [1, 100]],
      ['SELECT COUNT(*) AS n, SUM(sites.floor_area) AS area FROM customer WHERE sites.assets.id IS NULL LIMIT 1', [2, 50], [2, 50]],
    ];
    for (const [query, exact, fanned] of cases) {
      expect(await run(query, T), query).toEqual(exact);
      expect(await run(query, T, 'service'), query).toEqual(fanned);
    }
    // Another tenant with the same ids sees its own rows only.
    await insert(`${T}_2`);
    expect(await run(cases[0]![0], T)).toEqual(cases[0]![1]);
  });
});
