import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { check, compile } from '../../src/compile.js';
import { lint } from '../../src/lint/lint.js';
import { execHarness } from '../support/exec-harness.js';
import type { Row } from '../support/oracle.js';
import { configureFastCheck, runs } from '../props/harness.js';

/**
 * `fanout: 'exact'` on PGlite against an oracle written from the definition, not from the
 * rewrite: the fan-out's rows are built in plain TypeScript (each account paired with every
 * child of every relation the query uses, or with a row of NULLs), WHERE keeps some of them, and
 * each aggregate then reads every record it names once per group. The service's default plan
 * runs beside it on the same queries and must get some of them wrong, so the cases can fail.
 */

const TENANTS = ['org_acme', 'org_globex'] as const;
const { catalog, oracle, run, runCount } = execHarness('crm', '2025-06-15T20:00:00Z');
const EXACT = { fanout: 'exact' } as const;

// ---- the oracle

type Rel = 'contacts' | 'opportunities';
interface FanRow { readonly account: Row; readonly contacts: Row | null; readonly opportunities: Row | null }
type Tri = boolean | null;

/** A condition as the oracle evaluates it (three-valued) and as the query writes it. */
interface Cond { readonly sql: string; readonly rels: readonly Rel[]; readonly test: (r: FanRow) => Tri }
/** An aggregate: which record it reads (the account or a child) and the value it aggregates. */
interface Agg { readonly sql: string; readonly fn: 'count' | 'sum' | 'avg' | 'min' | 'max'; readonly rel: Rel | null; readonly value: (rec: Row) => unknown }
type GroupKey = 'none' | 'industry' | 'owner' | 'name';

const CHILD: Record<Rel, { slug: string }> = { contacts: { slug: 'contact' }, opportunities: { slug: 'opportunity' } };

function fanRows(tenant: string, rels: readonly Rel[]): FanRow[] {
  const out: FanRow[] = [];
  for (const account of oracle.live('account', tenant)) {
    const cs = rels.includes('contacts') ? oracle.fanOut(account, 'contact', 'account', tenant) : [null];
    const os = rels.includes('opportunities') ? oracle.fanOut(account, 'opportunity', 'account', tenant) : [null];
    for (const c of cs) for (const o of os) out.push({ account, contacts: c, opportunities: o });
  }
  return out;
}

function num(v: unknown): number | null {
  return v === null || v === undefined ? null : Number(v);
}

/** The exact value of one aggregate over the kept rows of one group. */
function aggregate(a: Agg, rows: readonly FanRow[]): number | null {
  const records = new Map<string, Row>();
  for (const r of rows) {
    const rec = a.rel === null ? r.account : r[a.rel];
    if (rec) records.set(rec.id as string, rec);
  }
  const values = [...records.values()].map((rec) => a.value(rec)).filter((v) => v !== null && v !== undefined).map(Number);
  switch (a.fn) {
    case 'count':
      return values.length;
    case 'sum':
      return values.length === 0 ? null : values.reduce((s, v) => s + v, 0);
    case 'avg':
      return values.length === 0 ? null : values.reduce((s, v) => s + v, 0) / values.length;
    case 'min':
      return values.length === 0 ? null : Math.min(...values);
    case 'max':
      return values.length === 0 ? null : Math.max(...values);
  }
}

function groupValue(g: GroupKey, account: Row): unknown {
  return g === 'none' ? null : account[g] ?? null;
}

function expectedRows(tenant: string, group: GroupKey, where: readonly Cond[], aggs: readonly Agg[]): Row[] {
  const rels = [...new Set([...where.flatMap((c) => c.rels), ...aggs.map((a) => a.rel)].filter((r): r is Rel => r !== null))];
  const kept = fanRows(tenant, rels).filter((r) => where.every((c) => c.test(r) === true));
  const groups = new Map<string, FanRow[]>();
  for (const r of kept) {
    const k = JSON.stringify(groupValue(group, r.account));
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  // Without GROUP BY an aggregate query has one row even when nothing is kept.
  if (group === 'none' && groups.size === 0) groups.set('null', []);
  return [...groups.entries()].map(([k, rows]) => {
    const row: Row = group === 'none' ? {} : { g: JSON.parse(k) };
    aggs.forEach((a, i) => (row[`a${i}`] = aggregate(a, rows)));
    return row;
  });
}

function queryText(group: GroupKey, where: readonly Cond[], aggs: readonly Agg[]): string {
  const items = [...(group === 'none' ? [] : [`${group} AS g`]), ...aggs.map((a, i) => `${a.sql} AS a${i}`)];
  const w = where.length === 0 ? '' : ` WHERE ${where.map((c) => `(${c.sql})`).join(' AND ')}`;
  return `SELECT ${items.join(', ')} FROM account${w}${group === 'none' ? '' : ' GROUP BY 1'} LIMIT 1000`;
}

/** Numbers equal to a cent (sums of currency) or to 1e-9 relative (averages). */
function close(a: unknown, b: unknown): boolean {
  if (a === null || b === null) return a === b;
  const x = Number(a);
  const y = Number(b);
  return Math.abs(x - y) <= Math.max(0.005, Math.abs(y) * 1e-9);
}

function sameRows(actual: readonly Row[], expected: readonly Row[]): boolean {
  if (actual.length !== expected.length) return false;
  const key = (r: Row): string => JSON.stringify(r.g ?? null);
  const byKey = new Map(expected.map((r) => [key(r), r]));
  return actual.every((r) => {
    const e = byKey.get(key(r));
    return e !== undefined && Object.keys(e).every((k) => (k === 'g' ? JSON.stringify(e[k]) === JSON.stringify(r[k] ?? null) : close(r[k], e[k])));
  });
}

// ---- the building blocks of the cases

const eqv = (x: unknown, v: unknown): Tri => (x === null || x === undefined ? null : x === v);
const child = (rel: Rel, f: (c: Row) => Tri) => (r: FanRow): Tri => (r[rel] === null ? f({}) : f(r[rel]!));
const valuesOf = (slug: string, column: string): string[] =>
  [...new Set(TENANTS.flatMap((t) => oracle.live(slug, t).map((r) => r[column]).filter((v): v is string => typeof v === 'string')))].sort();

const STATUSES = valuesOf('contact', 'status');
const STAGES = valuesOf('opportunity', 'stage');
const INDUSTRIES = valuesOf('account', 'industry');

const AGGS: readonly Agg[] = [
  { sql: 'COUNT(*)', fn: 'count', rel: null, value: () => 1 },
  { sql: 'SUM(annual_revenue)', fn: 'sum', rel: null, value: (a) => a.annual_revenue },
  { sql: 'COUNT(contacts.id)', fn: 'count', rel: 'contacts', value: (c) => c.id },
  { sql: 'COUNT(contacts.email)', fn: 'count', rel: 'contacts', value: (c) => c.email },
  { sql: 'SUM(opportunities.amount)', fn: 'sum', rel: 'opportunities', value: (o) => o.amount },
  { sql: 'AVG(opportunities.amount)', fn: 'avg', rel: 'opportunities', value: (o) => o.amount },
  { sql: 'AVG(opportunities.probability)', fn: 'avg', rel: 'opportunities', value: (o) => o.probability },
  { sql: 'MIN(opportunities.amount)', fn: 'min', rel: 'opportunities', value: (o) => o.amount },
  { sql: 'MAX(opportunities.probability)', fn: 'max', rel: 'opportunities', value: (o) => o.probability },
  { sql: 'COUNT(opportunities.id)', fn: 'count', rel: 'opportunities', value: (o) => o.id },
];

const leafCond: fc.Arbitrary<Cond> = fc.oneof(
  fc.constantFrom(...INDUSTRIES).map((v): Cond => ({ sql: `industry = '${v}'`, rels: [], test: (r) => eqv(r.account.industry, v) })),
  fc.integer({ min: 0, max: 5_000_000 }).map((n): Cond => ({ sql: `annual_revenue > ${n}`, rels: [], test: (r) => (r.account.annual_revenue == null ? null : Number(r.account.annual_revenue) > n) })),
  fc.constantFrom(...STATUSES).map((v): Cond => ({ sql: `contacts.status = '${v}'`, rels: ['contacts'], test: child('contacts', (c) => eqv(c.status, v)) })),
  fc.constant<Cond>({ sql: 'contacts.status IS NULL', rels: ['contacts'], test: child('contacts', (c) => c.status === null || c.status === undefined) }),
  fc.constant<Cond>({ sql: 'contacts.is_primary = true', rels: ['contacts'], test: child('contacts', (c) => eqv(c.is_primary, true)) }),
  fc.constantFrom(...STAGES).map((v): Cond => ({ sql: `opportunities.stage <> '${v}'`, rels: ['opportunities'], test: child('opportunities', (o) => (o.stage == null ? null : o.stage !== v)) })),
  fc.integer({ min: 0, max: 60_000_000 }).map((n): Cond => ({ sql: `opportunities.amount > ${n}`, rels: ['opportunities'], test: child('opportunities', (o) => (o.amount == null ? null : Number(o.amount) > n)) })),
);

const or3 = (a: Tri, b: Tri): Tri => (a === true || b === true ? true : a === null || b === null ? null : false);
const and3 = (a: Tri, b: Tri): Tri => (a === false || b === false ? false : a === null || b === null ? null : true);
const not3 = (a: Tri): Tri => (a === null ? null : !a);
const union = (a: readonly Rel[], b: readonly Rel[]): Rel[] => [...new Set([...a, ...b])];

/** Conditions nesting AND, OR and NOT over the account and both relations (three-valued, as SQL). */
const { arbCond } = fc.letrec<{ arbCond: Cond }>((t) => ({
  arbCond: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leafCond,
    fc.tuple(t('arbCond'), t('arbCond')).map(([x, y]): Cond => ({ sql: `(${x.sql}) OR (${y.sql})`, rels: union(x.rels, y.rels), test: (r) => or3(x.test(r), y.test(r)) })),
    fc.tuple(t('arbCond'), t('arbCond')).map(([x, y]): Cond => ({ sql: `(${x.sql}) AND (${y.sql})`, rels: union(x.rels, y.rels), test: (r) => and3(x.test(r), y.test(r)) })),
    t('arbCond').map((x): Cond => ({ sql: `NOT (${x.sql})`, rels: x.rels, test: (r) => not3(x.test(r)) })),
  ),
}));

const arbQuery = fc.record({
  group: fc.constantFrom<GroupKey>('none', 'industry', 'owner', 'name'),
  where: fc.array(arbCond, { maxLength: 2 }),
  // At least one aggregate that counts duplicates, so the option has something to correct.
  aggs: fc.tuple(fc.constantFrom(...AGGS.filter((a) => a.fn !== 'min' && a.fn !== 'max')), fc.array(fc.constantFrom(...AGGS), { maxLength: 2 })).map(([a, rest]) => [a, ...rest]),
});

// ---- the tests

describe("fanout: 'exact' against the oracle (PGlite, fixture data)", () => {
  const seed = configureFastCheck('fanout-exact');

  it('random aggregate queries over accounts, their contacts and their opportunities, AND/OR/NOT across them, for two tenants', async () => {
    let wrongByDefault = 0;
    await fc.assert(
      fc.asyncProperty(arbQuery, fc.constantFrom(...TENANTS), async ({ group, where, aggs }, tenant) => {
        const query = queryText(group, where, aggs);
        const expected = expectedRows(tenant, group, where, aggs);
        const actual = await run(query, 'account', tenant, EXACT);
        if (!sameRows(actual, expected)) {
          throw new Error(`${query} (${tenant})\nexpected ${JSON.stringify(expected.slice(0, 5))}\nactual   ${JSON.stringify(actual.slice(0, 5))}`);
        }
        expect(await runCount(query, 'account', tenant, EXACT)).toBe(actual.length);
        if (!sameRows(await run(query, 'account', tenant), expected)) wrongByDefault++;
      }),
      { numRuns: runs(200, 5000), seed },
    );
    // The property can fail: the service's fan-out gets many of the same queries wrong.
    expect(wrongByDefault).toBeGreaterThan(10);
  }, 300_000);
});

describe('hand-written cases', () => {
  const counts = (a: Row, t: string) => ({
    contacts: oracle.children(a, 'contact', 'account', t).length,
    pipeline: oracle.children(a, 'opportunity', 'account', t).reduce((s, o) => s + (o.amount == null ? 0 : Number(o.amount)), 0),
  });

  for (const t of TENANTS) {
    it(`two relations per account: the true counts and sums, where the fan-out multiplies them (${t})`, async () => {
      const query = 'SELECT id, COUNT(contacts.id) AS contacts_n, SUM(opportunities.amount) AS pipeline FROM account GROUP BY id LIMIT 1000';
      const exact = new Map((await run(query, 'account', t, EXACT)).map((r) => [r.id, r]));
      const fanned = new Map((await run(query, 'account', t)).map((r) => [r.id, r]));
      let multiplied = 0;
      for (const a of oracle.live('account', t)) {
        const want = counts(a, t);
        const got = exact.get(a.id)!;
        expect(got.contacts_n).toBe(want.contacts);
        expect(close(got.pipeline ?? 0, want.pipeline)).toBe(true);
        if (fanned.get(a.id)!.contacts_n !== want.contacts) multiplied++;
      }
      expect(multiplied).toBeGreaterThan(0);
      expect([...exact.keys()].every((id) => String(id).startsWith(`${t}_`))).toBe(true);
    });
  }

  it("a relation's condition keeps the parents with a matching child and counts only those children", async () => {
    const t = 'org_acme';
    const query = "SELECT COUNT(*) AS n, COUNT(contacts.id) AS active, SUM(opportunities.amount) AS pipeline FROM account WHERE contacts.status = 'active' LIMIT 10";
    const accounts = oracle.live('account', t).filter((a) => oracle.children(a, 'contact', 'account', t).some((c) => c.status === 'active'));
    const [row] = await run(query, 'account', t, EXACT);
    expect(row!.n).toBe(accounts.length);
    expect(row!.active).toBe(accounts.flatMap((a) => oracle.children(a, 'contact', 'account', t)).filter((c) => c.status === 'active').length);
    expect(close(row!.pipeline, accounts.reduce((s, a) => s + counts(a, t).pipeline, 0))).toBe(true);
  });

  it('a condition true on the fan-out row of NULLs keeps the parents without children', async () => {
    const t = 'org_globex';
    const query = 'SELECT COUNT(*) AS n FROM account WHERE contacts.status IS NULL AND opportunities.amount > 0 LIMIT 10';
    const want = oracle.live('account', t).filter((a) => {
      const cs = oracle.children(a, 'contact', 'account', t);
      return (cs.length === 0 || cs.some((c) => c.status === null)) && oracle.children(a, 'opportunity', 'account', t).some((o) => o.amount != null && Number(o.amount) > 0);
    });
    expect(oracle.live('account', t).some((a) => oracle.children(a, 'contact', 'account', t).length === 0)).toBe(true);
    expect((await run(query, 'account', t, EXACT))[0]!.n).toBe(want.length);
  });

  it('a condition on a relation reached through a to-one hop keeps the rows whose parent has a matching child', async () => {
    const t = 'org_acme';
    const query = "SELECT stage, SUM(amount) AS amount, COUNT(*) AS n FROM opportunity WHERE account.contacts.status = 'active' GROUP BY stage LIMIT 100";
    const rows = await run(query, 'opportunity', t, EXACT);
    const kept = oracle.live('opportunity', t).filter((o) => oracle.children(oracle.get('account', t, o.account), 'contact', 'account', t).some((c) => c.status === 'active'));
    const stages = new Set(kept.map((o) => o.stage ?? null));
    expect(rows).toHaveLength(stages.size);
    for (const stage of stages) {
      const opps = kept.filter((o) => (o.stage ?? null) === stage);
      const got = rows.find((r) => r.stage === stage)!;
      expect(got.n).toBe(opps.length);
      expect(close(got.amount, opps.reduce((s, o) => s + (o.amount == null ? 0 : Number(o.amount)), 0))).toBe(true);
    }
  });

  it('HAVING and ORDER BY on exact aggregates, and empty input', async () => {
    const t = 'org_acme';
    const query = 'SELECT industry, COUNT(opportunities.id) AS n FROM account GROUP BY industry HAVING COUNT(opportunities.id) > 3 ORDER BY n DESC LIMIT 100';
    const rows = await run(query, 'account', t, EXACT);
    const per = new Map<unknown, number>();
    for (const a of oracle.live('account', t)) per.set(a.industry ?? null, (per.get(a.industry ?? null) ?? 0) + oracle.children(a, 'opportunity', 'account', t).length);
    const want = [...per].filter(([, n]) => n > 3).sort((a, b) => b[1] - a[1]);
    expect(rows.map((r) => r.n)).toEqual(want.map(([, n]) => n));
    const [none] = await run("SELECT COUNT(contacts.id) AS c, SUM(opportunities.amount) AS s FROM account WHERE name = 'no such account' LIMIT 1", 'account', t, EXACT);
    expect(none).toEqual({ c: 0, s: null });
  });
});

describe('what the option leaves alone and what it refuses', () => {
  it('compiles queries without a one-to-many aggregate to the same SQL as the default', () => {
    for (const [query, slug] of [
      ['SELECT stage, COUNT(*) AS n, SUM(amount) AS s FROM opportunity GROUP BY stage LIMIT 10', 'opportunity'],
      ['SELECT name, account.name AS a FROM opportunity WHERE account.industry = \'retail\' ORDER BY name LIMIT 10', 'opportunity'],
      ['SELECT name, contacts.name AS c FROM account ORDER BY name LIMIT 10', 'account'],
      ["SELECT industry, MAX(opportunities.amount) AS m, COUNT(DISTINCT contacts.id) AS c FROM account WHERE contacts.status = 'active' GROUP BY 1 LIMIT 10", 'account'],
    ] as const) {
      const options = { catalog, slug, orgId: 'org_x' };
      expect(compile(query, { ...options, fanout: 'exact' }).sql, query).toBe(compile(query, options).sql);
    }
  });

  it.each([
    ['SELECT contacts.status AS s, SUM(opportunities.amount) AS p FROM account GROUP BY 1 LIMIT 10', 'account', 'contacts.status', 'outside an aggregate'],
    ['SELECT COUNT(concat(contacts.name, opportunities.name)) AS x FROM account LIMIT 10', 'account', 'COUNT(concat(contacts.name, opportunities.name))', 'two one-to-many relations'],
    ['SELECT stage, SUM(account.opportunities.amount * probability) AS x FROM opportunity GROUP BY stage LIMIT 10', 'opportunity', 'SUM(account.opportunities.amount * probability)', 'reads both account.opportunities and the opportunity itself'],
  ])('refuses %s with FANOUT_EXACT_UNSUPPORTED at the offending text', (query, slug, at, says) => {
    const { plan, diagnostics } = check(query, { catalog, slug, fanout: 'exact' });
    expect(plan).toBeNull();
    const d = diagnostics.find((x) => x.code === 'FANOUT_EXACT_UNSUPPORTED');
    expect(d, JSON.stringify(diagnostics)).toBeDefined();
    expect(query.slice(d!.span.start, d!.span.end)).toBe(at);
    expect(d!.message).toContain(says);
    expect(d!.hint).toBeTruthy();
    // The same query under the default option compiles.
    expect(check(query, { catalog, slug }).plan).not.toBeNull();
  });

  it.each([
    ["SELECT COUNT(*) AS n FROM account WHERE contacts.status = 'active' OR opportunities.stage = 'won' LIMIT 10", 'account'],
    ["SELECT COUNT(*) AS n FROM account WHERE NOT (contacts.status = 'active' AND opportunities.stage = 'won') LIMIT 10", 'account'],
    ['SELECT COUNT(*) AS n, SUM(opportunities.amount) AS s FROM account WHERE contacts.name = opportunities.name LIMIT 10', 'account'],
    ['SELECT COUNT(DISTINCT contacts.status) AS d, SUM(opportunities.amount) AS p FROM account LIMIT 10', 'account'],
    ['SELECT stage, COUNT(account.contacts.id) AS n FROM opportunity GROUP BY stage LIMIT 10', 'opportunity'],
  ])('compiles %s, which has an exact reading', (query, slug) => {
    const { plan, diagnostics } = check(query, { catalog, slug, fanout: 'exact' });
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(plan).not.toBeNull();
  });

  it('an unknown mode is a clear INVALID_OPTIONS, valid query or not', () => {
    for (const query of ['SELECT COUNT(*) AS n FROM account LIMIT 1', 'SELECT FROM']) {
      expect(() => compile(query, { catalog, slug: 'account', orgId: 'org_x', fanout: 'exactly' as never })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining("'service' or 'exact'") }));
    }
  });

  it('lint under the option no longer warns of the fan-out it corrects', () => {
    const query = 'SELECT name, COUNT(contacts.id) AS contacts_n, SUM(opportunities.amount) AS pipeline FROM account GROUP BY name LIMIT 10';
    expect(lint(query, { catalog, slug: 'account' }).map((d) => d.code)).toContain('FANOUT_AGGREGATE');
    expect(lint(query, { catalog, slug: 'account', fanout: 'exact' }).filter((d) => d.code.startsWith('FANOUT'))).toEqual([]);
  });
});
