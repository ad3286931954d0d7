import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../src/diagnostics/diagnostic.js';
import { lint } from '../../src/lint/lint.js';
import { loadFixtureCatalog } from '../../fixtures/index.js';
import { execHarness } from '../support/exec-harness.js';
import type { Row } from '../support/oracle.js';

/**
 * Fan-out lint on the CRM fixture: each warned query is run as written and as its rewrite on
 * PGlite. The true value comes from the oracle (plain TypeScript over the generated rows): the
 * rewrite must return it and the original must not, which proves both the warning and the fix.
 */

const TENANTS = ['org_acme', 'org_globex'] as const;
const catalog = loadFixtureCatalog('crm');
const { oracle, run } = execHarness('crm', '2025-06-15T20:00:00Z');

const contactsOf = (a: Row, t: string): Row[] => oracle.children(a, 'contact', 'account', t);
const oppsOf = (a: Row, t: string): Row[] => oracle.children(a, 'opportunity', 'account', t);
const cents = (x: unknown): number => Math.round(Number(x) * 100);
const sumCents = (rows: readonly Row[]): number => rows.reduce((s, r) => s + (r.amount === null || r.amount === undefined ? 0 : cents(r.amount)), 0);

function fixOf(diagnostics: readonly Diagnostic[], code: string): string {
  const d = diagnostics.find((x) => x.code === code && x.fix);
  expect(d, `${code} with a fix in ${JSON.stringify(diagnostics, null, 1)}`).toBeDefined();
  return d!.fix!.text;
}

function applyFix(text: string, d: Diagnostic): string {
  return text.slice(0, d.fix!.range[0]) + d.fix!.text + text.slice(d.fix!.range[1]);
}

/** An account of the tenant whose name is unique and that has at least two contacts and two opportunities. */
function busyAccount(t: string): Row {
  const accounts = oracle.live('account', t);
  const found = accounts.find((a) => typeof a.name === 'string'
    && accounts.filter((b) => b.name === a.name).length === 1
    && contactsOf(a, t).length >= 2
    && oppsOf(a, t).filter((o) => o.amount !== null).length >= 2);
  if (!found) throw new Error(`fixture: no busy account in ${t}`);
  return found;
}

describe('two one-to-many relations in one aggregate query', () => {
  for (const t of TENANTS) {
    it(`the per-relation rewrite gives the true counts and sums (${t})`, async () => {
      const account = busyAccount(t);
      const name = String(account.name).replace(/'/g, "''");
      const query = `SELECT name, COUNT(contacts.id) AS contacts_n, SUM(opportunities.amount) AS pipeline FROM account WHERE name = '${name}' GROUP BY name LIMIT 10`;
      const diagnostics = lint(query, { catalog, slug: 'account' });
      const codes = diagnostics.map((d) => d.code);
      expect(codes.filter((c) => c === 'FANOUT_AGGREGATE')).toHaveLength(2);
      expect(codes).toContain('FANOUT_CROSS_PRODUCT');
      const count = diagnostics.find((d) => d.code === 'FANOUT_AGGREGATE' && query.slice(d.span.start, d.span.end) === 'COUNT(contacts.id)');
      expect(count?.message).toMatch(/'opportunities'/);

      const trueContacts = contactsOf(account, t).length;
      const truePipeline = sumCents(oppsOf(account, t));
      const [original] = await run(query, 'account', t);
      // Each contact is repeated once per opportunity and each opportunity once per contact.
      expect(Number(original!.contacts_n)).not.toBe(trueContacts);
      expect(cents(original!.pipeline)).not.toBe(truePipeline);

      const rewrite = fixOf(diagnostics, 'FANOUT_AGGREGATE');
      expect(lint(rewrite, { catalog, slug: 'account' }).filter((d) => d.code.startsWith('FANOUT'))).toEqual([]);
      const [fixed] = await run(rewrite, 'account', t);
      expect(Number(fixed!.contacts_n)).toBe(trueContacts);
      expect(cents(fixed!.pipeline)).toBe(truePipeline);
    });
  }
});

describe('AVG of a child column beside another relation', () => {
  it('the rewrite averages each child once per industry', async () => {
    const t = 'org_acme';
    const query = 'SELECT industry, AVG(opportunities.amount) AS a, COUNT(contacts.id) AS c FROM account GROUP BY industry ORDER BY industry LIMIT 10';
    const rewrite = fixOf(lint(query, { catalog, slug: 'account' }), 'FANOUT_AGGREGATE');
    const rows = await run(rewrite, 'account', t);
    const accounts = oracle.live('account', t);
    for (const row of rows) {
      const group = accounts.filter((a) => a.industry === row.industry);
      const amounts = group.flatMap((a) => oppsOf(a, t)).map((o) => o.amount).filter((x) => x !== null && x !== undefined).map(Number);
      const contacts = group.reduce((n, a) => n + contactsOf(a, t).length, 0);
      if (amounts.length === 0) expect(row.a).toBeNull();
      else expect(Number(row.a)).toBeCloseTo(amounts.reduce((x, y) => x + y, 0) / amounts.length, 4);
      expect(Number(row.c)).toBe(contacts);
    }
    expect(rows.length).toBeGreaterThan(1);
  });
});

describe('a child aggregate filtered by another relation', () => {
  for (const t of TENANTS) {
    it(`SUM(opportunities.amount) WHERE contacts.status = 'active' becomes EXISTS (${t})`, async () => {
      const query = "SELECT SUM(opportunities.amount) AS pipeline FROM account WHERE contacts.status = 'active' LIMIT 10";
      const diagnostics = lint(query, { catalog, slug: 'account' });
      const rewrite = fixOf(diagnostics, 'FANOUT_AGGREGATE');
      const withActive = oracle.live('account', t).filter((a) => contactsOf(a, t).some((c) => c.status === 'active'));
      const truth = withActive.reduce((s, a) => s + sumCents(oppsOf(a, t)), 0);
      const [original] = await run(query, 'account', t);
      expect(cents(original!.pipeline)).toBeGreaterThan(truth);
      const [fixed] = await run(rewrite, 'account', t);
      expect(cents(fixed!.pipeline)).toBe(truth);
    });
  }
});

describe('a root aggregate filtered through a relation', () => {
  for (const t of TENANTS) {
    it(`COUNT(*) and SUM of a root column with WHERE contacts.status become EXISTS (${t})`, async () => {
      const query = "SELECT COUNT(*) AS n, SUM(annual_revenue) AS r FROM account WHERE contacts.status = 'active' LIMIT 10";
      const diagnostics = lint(query, { catalog, slug: 'account' });
      expect(diagnostics.filter((d) => d.code === 'FANOUT_AGGREGATE').map((d) => query.slice(d.span.start, d.span.end))).toEqual(['COUNT(*)', 'SUM(annual_revenue)']);
      const rewrite = fixOf(diagnostics, 'FANOUT_AGGREGATE');
      const matching = oracle.live('account', t).filter((a) => contactsOf(a, t).some((c) => c.status === 'active'));
      const revenue = matching.reduce((s, a) => s + (a.annual_revenue === null ? 0 : cents(a.annual_revenue)), 0);
      const [original] = await run(query, 'account', t);
      expect(Number(original!.n)).toBeGreaterThan(matching.length);
      const [fixed] = await run(rewrite, 'account', t);
      expect(Number(fixed!.n)).toBe(matching.length);
      expect(cents(fixed!.r)).toBe(revenue);
    });
  }
});

describe('OR across two one-to-many relations', () => {
  for (const t of TENANTS) {
    it(`each side as EXISTS counts each account once (${t})`, async () => {
      const query = "SELECT COUNT(*) AS n FROM account WHERE contacts.status = 'bounced' OR opportunities.stage = 'won' LIMIT 10";
      const diagnostics = lint(query, { catalog, slug: 'account' });
      expect(diagnostics.map((d) => d.code)).toEqual(expect.arrayContaining(['FANOUT_OR', 'FANOUT_AGGREGATE']));
      const or = diagnostics.find((d) => d.code === 'FANOUT_OR')!;
      const rewrite = applyFix(query, or);
      expect(lint(rewrite, { catalog, slug: 'account' }).filter((d) => d.code.startsWith('FANOUT'))).toEqual([]);
      const truth = oracle.live('account', t).filter((a) => contactsOf(a, t).some((c) => c.status === 'bounced') || oppsOf(a, t).some((o) => o.stage === 'won')).length;
      const [original] = await run(query, 'account', t);
      expect(Number(original!.n)).toBeGreaterThan(truth);
      const [fixed] = await run(rewrite, 'account', t);
      expect(Number(fixed!.n)).toBe(truth);
    });
  }
});

describe('when fan-out is not a problem', () => {
  const quiet = (query: string, slug: string): void => {
    const codes = lint(query, { catalog, slug }).map((d) => d.code);
    expect(codes.filter((c) => c.startsWith('FANOUT')), query).toEqual([]);
  };
  it('one relation aggregated on its own rows', () => {
    quiet('SELECT name, SUM(opportunities.amount) AS pipeline FROM account GROUP BY name ORDER BY name LIMIT 10', 'account');
    quiet('SELECT name, COUNT(contacts.id) AS n FROM account GROUP BY name ORDER BY name LIMIT 10', 'account');
  });
  it('COUNT(DISTINCT) of a child column, MIN and MAX', () => {
    quiet('SELECT name, COUNT(DISTINCT contacts.id) AS c, COUNT(DISTINCT opportunities.id) AS o, MAX(opportunities.amount) AS top FROM account GROUP BY name ORDER BY name LIMIT 10', 'account');
  });
  it('a filter on one relation that the planner runs as a semi-join', () => {
    quiet("SELECT id, name FROM account WHERE contacts.status = 'active' ORDER BY id LIMIT 10", 'account');
  });
  it('to-one paths', () => {
    quiet('SELECT owner.name, SUM(amount) AS s FROM opportunity GROUP BY owner.name ORDER BY 1 LIMIT 10', 'opportunity');
  });
});

describe('a cross product of two relations without aggregates', () => {
  it('is warned on the second relation, and not for one relation', () => {
    const query = 'SELECT name, contacts.name AS contact, opportunities.name AS deal FROM account ORDER BY name LIMIT 100';
    const d = lint(query, { catalog, slug: 'account' }).filter((x) => x.code === 'FANOUT_CROSS_PRODUCT');
    expect(d).toHaveLength(1);
    expect(query.slice(d[0]!.span.start, d[0]!.span.end)).toBe('opportunities.name');
    expect(d[0]!.message).toMatch(/'contacts' and 'opportunities'/);
    const one = lint('SELECT name, contacts.name AS contact FROM account ORDER BY name LIMIT 100', { catalog, slug: 'account' });
    expect(one.map((x) => x.code)).not.toContain('FANOUT_CROSS_PRODUCT');
  });

  it('inside a subquery too', () => {
    const query = 'SELECT id, (SELECT SUM(opportunities.amount) FROM account a WHERE a.id = opportunity.account AND a.contacts.status = \'active\') AS acct_pipeline FROM opportunity ORDER BY id LIMIT 10';
    const codes = lint(query, { catalog, slug: 'opportunity' }).map((x) => x.code);
    expect(codes).toContain('FANOUT_AGGREGATE');
  });
});

describe('a root aggregate multiplied by a child aggregate', () => {
  it('is warned, naming the relation, and rewritten', () => {
    const query = 'SELECT industry, SUM(annual_revenue) AS r, COUNT(contacts.id) AS c FROM account GROUP BY industry LIMIT 10';
    const diagnostics = lint(query, { catalog, slug: 'account' });
    const d = diagnostics.find((x) => x.code === 'FANOUT_AGGREGATE');
    expect(d?.message).toMatch(/SUM\(annual_revenue\) counts each account once per child of 'contacts'/);
    expect(d?.fix?.text).toContain('SUM((SELECT COUNT(x.id) FROM contact x WHERE x.account = p.id)) AS c FROM account p');
  });
});
