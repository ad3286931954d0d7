import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import type { Catalog } from '../../src/catalog/types.js';
import { fixtureData, loadFixtureCatalog } from '../../fixtures/index.js';
import { pgliteWithFixtures } from '../support/pglite-template.js';

const crm = loadFixtureCatalog('crm');
const helpdesk = loadFixtureCatalog('helpdesk');

function sql(text: string, slug: string, catalog: Catalog, semiJoins: boolean): string {
  const q = compile(text, { catalog, slug, orgId: 'org_acme', semiJoins, cache: false });
  if (q.kind !== 'query') throw new Error('restricted');
  return q.sql;
}

describe('when the semi-join rewrite applies', () => {
  const uses = (text: string, slug = 'account') => sql(text, slug, crm, true);
  it('turns a filter on a one-to-many relation into EXISTS for COUNT(DISTINCT id)', () => {
    const out = uses("SELECT COUNT(DISTINCT id) AS n FROM account WHERE contacts.status = 'active' LIMIT 5");
    expect(out).toContain('EXISTS (SELECT NULL FROM "public"."contact"');
    expect(out).not.toContain('LEFT JOIN');
    // With the fan-out gone, ids are unique: no DISTINCT needed in the count.
    expect(out).toContain('count("t0"."id")');
  });
  it('turns OR across two relations into two semi-joins', () => {
    const out = uses("SELECT DISTINCT id FROM account WHERE contacts.status = 'active' OR opportunities.stage = 'won' LIMIT 5");
    expect(out.match(/EXISTS \(/g)).toHaveLength(2);
  });
  it('keeps the fan-out when duplicates are visible (COUNT(id), plain rows)', () => {
    expect(uses("SELECT COUNT(id) AS n FROM account WHERE contacts.status = 'active' LIMIT 5")).toContain('LEFT JOIN "public"."contact"');
    expect(uses("SELECT id FROM account WHERE contacts.status = 'active' LIMIT 5")).toContain('LEFT JOIN "public"."contact"');
  });
  it('keeps the fan-out when a childless parent could match', () => {
    expect(uses('SELECT DISTINCT id FROM account WHERE contacts.email IS NULL LIMIT 5')).toContain('LEFT JOIN');
    expect(uses("SELECT DISTINCT id FROM account WHERE contacts.status = 'active' OR (industry = 'retail' AND contacts.email IS NULL) LIMIT 5")).toContain('LEFT JOIN');
  });
  it('leaves a parent-only condition outside the semi-join', () => {
    const out = uses("SELECT DISTINCT id FROM account WHERE contacts.status = 'active' OR industry = 'retail' LIMIT 5");
    expect(out).toMatch(/EXISTS \(.*\) OR \("t0"\."industry" = /);
  });
  it('keeps the fan-out when the relation is selected, grouped or under NOT', () => {
    expect(uses("SELECT DISTINCT id, contacts.name FROM account WHERE contacts.status = 'active' LIMIT 5")).toContain('LEFT JOIN');
    expect(uses("SELECT DISTINCT id FROM account WHERE NOT (contacts.status = 'active') LIMIT 5")).toContain('LEFT JOIN');
  });
  it('reads every column of the relation inside the semi-join, also inside function calls', () => {
    const out = uses('SELECT DISTINCT id FROM account WHERE contacts.name = lower(contacts.email) LIMIT 5');
    expect(out).not.toContain('LEFT JOIN');
    expect(out).toContain('("t1"."name" = lower("t1"."email"))');
  });
  it('can be switched off', () => {
    expect(sql("SELECT COUNT(DISTINCT id) AS n FROM account WHERE contacts.status = 'active' LIMIT 5", 'account', crm, false)).toContain('LEFT JOIN');
  });
});

// The rewrite is only allowed where it gives the same rows: run both plans on real Postgres.
const CASES: [Catalog, string, string][] = [
  [crm, 'account', "SELECT COUNT(DISTINCT id) AS n FROM account WHERE contacts.status = 'active' LIMIT 100"],
  [crm, 'account', "SELECT COUNT(DISTINCT id) AS n FROM account WHERE contacts.status = 'active' OR opportunities.stage = 'won' LIMIT 100"],
  [crm, 'account', "SELECT COUNT(DISTINCT id) AS n FROM account WHERE contacts.status = 'active' AND opportunities.stage = 'won' LIMIT 100"],
  [crm, 'account', "SELECT industry, COUNT(DISTINCT id) AS n FROM account WHERE contacts.is_primary = 1 GROUP BY industry ORDER BY industry LIMIT 100"],
  [crm, 'account', "SELECT DISTINCT id FROM account WHERE (contacts.status = 'active' AND contacts.is_primary = 1) OR opportunities.amount > 500000 LIMIT 1000"],
  [crm, 'account', "SELECT DISTINCT id, name FROM account WHERE contacts.name ILIKE '%a%' AND industry IN ('retail', 'software') LIMIT 1000"],
  [crm, 'account', "SELECT MIN(annual_revenue) AS lo, MAX(annual_revenue) AS hi FROM account WHERE opportunities.stage IN ('won', 'lost') LIMIT 10"],
  [crm, 'account', "SELECT COUNT(DISTINCT id) AS n FROM account WHERE opportunities.sources && ARRAY['web'] OR contacts.email IS NOT NULL LIMIT 100"],
  [crm, 'account', "SELECT COUNT(DISTINCT id) AS n FROM account WHERE opportunities.amount BETWEEN 100000 AND 900000 AND contacts.status NOT IN ('bounced') LIMIT 100"],
  [crm, 'account', "SELECT DISTINCT id FROM account WHERE contacts.status = 'active' OR industry = 'retail' LIMIT 1000"],
  [crm, 'account', "SELECT DISTINCT id FROM account WHERE (contacts.status = 'active' OR industry = 'retail') AND contacts.is_primary = 1 LIMIT 1000"],
  [crm, 'account', "SELECT COUNT(DISTINCT id) AS n FROM account WHERE contacts.email IS NULL LIMIT 100"],
  [crm, 'account', "SELECT DISTINCT id FROM account WHERE contacts.name ILIKE concat('%', lower(contacts.email), '%') OR contacts.status = 'active' LIMIT 1000"],
  [crm, 'account', "SELECT COUNT(DISTINCT owner) AS owners FROM account WHERE contacts.owner = owner LIMIT 100"],
  [helpdesk, 'customer', "SELECT COUNT(DISTINCT id) AS n FROM customer WHERE tickets.status IS NOT NULL OR sites.name LIKE '%a%' LIMIT 100"],
  [helpdesk, 'team', "SELECT DISTINCT id FROM team WHERE members.name ILIKE '%e%' AND tickets.priority IS NOT NULL LIMIT 1000"],
];

describe('semi-join plans give the fan-out plans\' rows', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await pgliteWithFixtures([{ catalog: crm, data: fixtureData('crm') }, { catalog: helpdesk, data: fixtureData('helpdesk') }]);
  });
  afterAll(async () => {
    await db?.close();
  });

  const rows = async (catalog: Catalog, slug: string, text: string, semiJoins: boolean) => {
    const q = compile(text, { catalog, slug, orgId: 'org_acme', semiJoins, cache: false });
    const q2 = compile(text, { catalog, slug, orgId: catalog === crm ? 'org_acme' : 'org_north', semiJoins, cache: false });
    if (q.kind !== 'query' || q2.kind !== 'query') throw new Error('restricted');
    const res = await db.query<Record<string, unknown>>(q2.sql, q2.params);
    return res.rows.map((r) => JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? Number(v) : v))).sort();
  };

  for (const [catalog, slug, text] of CASES) {
    it(text, async () => {
      const fanOut = await rows(catalog, slug, text, false);
      const semi = await rows(catalog, slug, text, true);
      expect(semi).toEqual(fanOut);
      expect(fanOut.length).toBeGreaterThan(0);
    });
  }
  it('actually rewrote most of these cases (the comparison is not vacuous)', () => {
    const rewritten = CASES.filter(([c, s, t]) => sql(t, s, c, true) !== sql(t, s, c, false));
    expect(rewritten.length).toBeGreaterThanOrEqual(CASES.length - 2);
  });
});
