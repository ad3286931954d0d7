import { describe, expect, it } from 'vitest';
import { DEMO_ORGANIZATIONS, demoData } from '../../src/demo/demo.js';
import { loadFixtureCatalog } from '../../fixtures/index.js';

/** The demo's data: believable, deterministic, referentially whole, one tenant's rows its own. */

const catalog = loadFixtureCatalog('crm');
const data = await demoData(catalog, { organizations: DEMO_ORGANIZATIONS });
const all = (slug: string) => data.get(slug)!;
const ORGS = DEMO_ORGANIZATIONS;

describe('demo data', () => {
  it('is the same for the same seed and differs for another', async () => {
    expect(await demoData(catalog, { organizations: ORGS })).toEqual(data);
    const other = await demoData(catalog, { organizations: ORGS, seed: 7 });
    expect(other.get('account')!.map((a) => a['name'])).not.toEqual(all('account').map((a) => a['name']));
  });

  it('fills every object for every organization, in the counts asked for', async () => {
    for (const [slug, n] of Object.entries({ user: 10, account: 30, contact: 80, opportunity: 120, lead: 60 })) {
      for (const org of ORGS) expect(all(slug).filter((r) => r['org_id'] === org), `${slug} ${org}`).toHaveLength(n);
    }
    const small = await demoData(catalog, { organizations: ['org_one'], perOrganization: { account: 3, contact: 5 } });
    expect(small.get('account')).toHaveLength(3);
    expect(small.get('contact')).toHaveLength(5);
  });

  it('reads like a CRM: person names, company names, addresses, no fuzzing words', () => {
    const fuzz = /100% sure|under_score|back\\slash|Ünïcode|QUARTZ|\d+$/;
    for (const slug of ['user', 'contact', 'lead']) {
      for (const r of all(slug)) {
        expect(r['name'], slug).toMatch(/^\p{Lu}[\p{L}'.-]*( \p{Lu}?[\p{L}'.-]*)+$/u);
        expect(r['name']).not.toMatch(fuzz);
        if (r['email'] !== null) expect(r['email'], slug).toMatch(/^[a-z]+(\.[a-z]+)*@[a-z]+\.example$/);
      }
    }
    for (const a of all('account')) expect(a['name']).not.toMatch(fuzz);
    for (const o of all('opportunity')) expect(o['name']).not.toMatch(fuzz);
  });

  it('keeps contacts at their account\'s email domain, and probabilities in line with stages', () => {
    const accounts = new Map(all('account').map((a) => [a['id'], a]));
    for (const c of all('contact')) {
      const a = accounts.get(c['account'])!;
      const domain = `${(a['name'] as string).toLowerCase().replace(/[^a-z]+/g, '').slice(0, 24)}.example`;
      expect(c['email']).toMatch(new RegExp(`@${domain.replace(/\./g, '\\.')}$`));
    }
    const p = { prospecting: 10, qualification: 20, proposal: 40, negotiation: 60, won: 100, lost: 0 } as Record<string, number>;
    for (const o of all('opportunity')) expect(o['probability']).toBe(p[o['stage'] as string]);
  });

  it('points every relation at a record of the same organization that exists', () => {
    const ids = new Map<string, Map<unknown, string>>();
    for (const [slug, rows] of data) ids.set(slug, new Map(rows.map((r) => [r['id'], r['org_id'] as string])));
    const relations: [string, string, string][] = [
      ['user', 'manager', 'user'], ['user', 'owner', 'user'], ['account', 'owner', 'user'], ['contact', 'account', 'account'],
      ['contact', 'owner', 'user'], ['opportunity', 'account', 'account'], ['opportunity', 'primary_contact', 'contact'],
      ['opportunity', 'owner', 'user'], ['lead', 'converted_account', 'account'], ['lead', 'owner', 'user'],
    ];
    let checked = 0;
    for (const [slug, column, target] of relations) {
      for (const r of all(slug)) {
        const ref = r[column];
        if (ref === null) continue;
        expect(ids.get(target)!.get(ref), `${slug}.${column} -> ${String(ref)}`).toBe(r['org_id']);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(1000);
    // The first user of each organization (ids sort in the order records were made) is the
    // admin at the top of the reporting line.
    for (const org of ORGS) {
      const first = all('user').filter((u) => u['org_id'] === org).sort((a, b) => (String(a['id']) < String(b['id']) ? -1 : 1))[0]!;
      expect(first['manager']).toBeNull();
      expect(all('user').filter((u) => u['org_id'] === org && u['manager'] === first['id']).length).toBeGreaterThan(0);
    }
  });

  it('has ids of the form the service gives records: the object\'s prefix and a ULID, unique, in the order made', () => {
    const prefixes: Record<string, string> = { user: 'use', account: 'acc', contact: 'con', opportunity: 'opp', lead: 'lea' };
    const seen = new Set<unknown>();
    for (const [slug, prefix] of Object.entries(prefixes)) {
      for (const org of ORGS) {
        const ids = all(slug).filter((r) => r['org_id'] === org).map((r) => r['id'] as string);
        for (const id of ids) {
          expect(id).toMatch(new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`));
          expect(id).not.toContain(org);
          seen.add(id);
        }
        expect([...ids].sort()).toEqual(ids);
      }
    }
    expect(seen.size).toBe([...Object.keys(prefixes)].reduce((n, slug) => n + all(slug).length, 0));
  });

  it('keeps datetimes and dates in range and dates at UTC midnight', () => {
    for (const o of all('opportunity')) {
      expect(o['created_at']).toBeGreaterThanOrEqual(Date.UTC(2024, 0, 1));
      expect(o['created_at']).toBeLessThan(Date.UTC(2026, 0, 1));
      expect((o['close_date'] as number) % 86_400_000).toBe(0);
      expect(o['close_date']).toBeGreaterThan(o['created_at'] as number);
    }
  });
});
