import { describe, expect, it } from 'vitest';
import {
  and, avg, between, exactProduct, coalesce, count, countDistinct, eq, ge, groupBy, gt, holds, inList, isEmptyArray,
  like, localDayStart, localHour, localMidnight, localYearStart, lt, max, min, multiset, ne, not, notIn, or, orderBy,
  overlaps, pick, roundHalfAway, sameSet, sequence, sum, utcDate, TEXT_TIME_PARSERS, type ExecCase, type Row,
} from '../support/oracle.js';
import { LITERAL, execHarness } from '../support/exec-harness.js';

/**
 * The CRM fixture on real PostgreSQL (PGlite): every case is compiled for a tenant, run, and
 * its rows compared with rows the oracle computes from the generated data. Each case runs for
 * two tenants, and its count (compileCount) must equal the number of rows it returned.
 */

const TENANTS = ['org_acme', 'org_globex'] as const;
/** 2025-06-16 01:30 in Kolkata, still 2025-06-15 in UTC and New York. */
const NOW = '2025-06-15T20:00:00Z';
const NOW_MS = Date.parse(NOW);
const DAY = 86_400_000;

const { oracle, db, run, runCount, runCases } = execHarness('crm', NOW);

// ---- shorthands over the oracle ----

const live = (slug: string, t: string): Row[] => oracle.live(slug, t);
const account = (r: Row | null, t: string): Row | null => oracle.follow(r, 'account', 'account', t);
const owner = (r: Row | null, t: string): Row | null => oracle.follow(r, 'owner', 'user', t);
const contactsOf = (a: Row, t: string): Row[] => oracle.children(a, 'contact', 'account', t);
const oppsOf = (a: Row, t: string): Row[] => oracle.children(a, 'opportunity', 'account', t);
const where = (slug: string, t: string, p: (r: Row) => boolean | null): Row[] => live(slug, t).filter((r) => holds(p(r)));
const ids = (rows: readonly Row[]): Row[] => rows.map((r) => ({ id: r.id }));
const sizeOf = (amount: unknown): string => (holds(ge(amount, 5000)) ? 'big' : holds(ge(amount, 1000)) ? 'mid' : 'small');

function kinds(rows: readonly Row[], column: string, target: string, t: string): Set<string> {
  return new Set(rows.map((r) => oracle.refKind(r, column, target, t)));
}

const CASES: ExecCase[] = [
  // ---- plain filters, enums, booleans ----
  {
    name: 'enum equality',
    slug: 'account',
    query: "SELECT id, name, industry FROM account WHERE industry = 'software' LIMIT 1000",
    expected: (o, t) => where('account', t, (r) => eq(r.industry, 'software')).map((r) => pick(r, 'id', 'name', 'industry')),
  },
  {
    name: 'enum IN list',
    slug: 'opportunity',
    query: "SELECT id, stage FROM opportunity WHERE stage IN ('won', 'lost') LIMIT 1000",
    expected: (o, t) => where('opportunity', t, (r) => inList(r.stage, ['won', 'lost'])).map((r) => pick(r, 'id', 'stage')),
  },
  {
    name: 'enum NOT IN and <> leave out NULL stages',
    slug: 'opportunity',
    query: "SELECT id FROM opportunity WHERE stage NOT IN ('won', 'lost') AND stage <> 'proposal' LIMIT 1000",
    expected: (o, t) => ids(where('opportunity', t, (r) => and(notIn(r.stage, ['won', 'lost']), ne(r.stage, 'proposal')))),
    covers: (o, t) => live('opportunity', t).some((r) => r.stage === null),
  },
  {
    name: 'boolean written 1',
    slug: 'contact',
    query: 'SELECT id, is_primary FROM contact WHERE is_primary = 1 LIMIT 1000',
    expected: (o, t) => where('contact', t, (r) => eq(r.is_primary, true)).map((r) => pick(r, 'id', 'is_primary')),
  },
  {
    name: 'boolean written <> 1 keeps false only, not NULL',
    slug: 'user',
    query: 'SELECT id FROM user WHERE is_active <> 1 LIMIT 1000',
    expected: (o, t) => ids(where('user', t, (r) => ne(r.is_active, true))),
    covers: (o, t) => live('user', t).some((r) => r.is_active === null),
  },
  {
    name: 'bare boolean column and NOT',
    slug: 'contact',
    query: 'SELECT id FROM contact WHERE NOT is_primary OR is_primary = 0 LIMIT 1000',
    expected: (o, t) => ids(where('contact', t, (r) => or(not(r.is_primary as boolean | null), eq(r.is_primary, false)))),
  },
  {
    name: 'BETWEEN and NOT BETWEEN on a number',
    slug: 'opportunity',
    query: 'SELECT id, amount FROM opportunity WHERE amount BETWEEN 1000 AND 5000 OR probability NOT BETWEEN 10 AND 9000 LIMIT 1000',
    expected: (o, t) =>
      where('opportunity', t, (r) => or(between(r.amount, 1000, 5000), not(between(r.probability, 10, 9000)))).map((r) => pick(r, 'id', 'amount')),
  },
  {
    name: 'relation column compared with a known id',
    slug: 'opportunity',
    query: "SELECT id FROM opportunity WHERE account = 'org_acme_account_3' LIMIT 1000",
    expected: (o, t) => ids(where('opportunity', t, (r) => eq(r.account, 'org_acme_account_3'))),
    rawRefs: [],
  },
  {
    name: 'SELECT * returns every stored column by slug',
    slug: 'lead',
    query: "SELECT * FROM lead WHERE status = 'converted' LIMIT 1000",
    expected: (o, t) =>
      where('lead', t, (r) => eq(r.status, 'converted')).map(({ org_id: _org, is_deleted: _deleted, ...rest }) => rest),
    rawRefs: ['converted_account', 'owner', 'created_by', 'updated_by'],
  },

  // ---- to-one chains ----
  {
    name: 'depth 1: owner.name, NULL for a missing, deleted or foreign owner',
    slug: 'opportunity',
    query: 'SELECT id, owner AS owner_id, owner.name AS owner_name FROM opportunity LIMIT 1000',
    expected: (o, t) => live('opportunity', t).map((r) => ({ id: r.id, owner_id: r.owner, owner_name: owner(r, t)?.name ?? null })),
    rawRefs: ['owner_id'],
    covers: (o, t) => sameSet(kinds(live('opportunity', t), 'owner', 'user', t), new Set(['null', 'ok', 'nowhere', 'deleted', 'foreign'])),
  },
  {
    name: 'broken references: the relation is set but the target is not visible',
    slug: 'opportunity',
    query: 'SELECT id, account AS raw, account.id AS account_id, account.name AS account_name FROM opportunity WHERE account IS NOT NULL AND account.id IS NULL LIMIT 1000',
    expected: (o, t) =>
      live('opportunity', t)
        .filter((r) => r.account !== null && account(r, t) === null)
        .map((r) => ({ id: r.id, raw: r.account, account_id: null, account_name: null })),
    rawRefs: ['raw'],
    covers: (o, t, rows) => sameSet(kinds(rows.map((r) => ({ account: r.raw })), 'account', 'account', t), new Set(['nowhere', 'deleted', 'foreign'])),
  },
  {
    name: 'depth 2: account.owner.name and .email share one join path',
    slug: 'contact',
    query: 'SELECT id, account.owner.name AS owner_name, account.owner.email AS owner_email FROM contact LIMIT 1000',
    expected: (o, t) =>
      live('contact', t).map((r) => {
        const u = owner(account(r, t), t);
        return { id: r.id, owner_name: u?.name ?? null, owner_email: u?.email ?? null };
      }),
  },
  {
    name: 'depth 3 in SELECT and WHERE: primary_contact.account.owner',
    slug: 'opportunity',
    query: "SELECT id, primary_contact.account.owner.name AS n FROM opportunity WHERE primary_contact.account.owner.role = 'manager' LIMIT 1000",
    expected: (o, t) =>
      live('opportunity', t).flatMap((r) => {
        const u = o.chain(r, t, ['primary_contact', 'contact'], ['account', 'account'], ['owner', 'user']);
        return holds(eq(u?.role, 'manager')) ? [{ id: r.id, n: u!.name }] : [];
      }),
    covers: (o, t, rows) => rows.length > 0,
  },
  {
    name: 'depth 3 on a self relation: owner.manager.manager',
    slug: 'lead',
    query: 'SELECT id, owner.manager.manager.name AS grand_manager, owner.manager.name AS manager FROM lead LIMIT 1000',
    expected: (o, t) =>
      live('lead', t).map((r) => {
        const m = o.chain(r, t, ['owner', 'user'], ['manager', 'user']);
        return { id: r.id, grand_manager: o.follow(m, 'manager', 'user', t)?.name ?? null, manager: m?.name ?? null };
      }),
    covers: (o, t, rows) => rows.some((r) => r.grand_manager !== null) && rows.some((r) => r.grand_manager === null && r.manager !== null),
  },
  {
    name: 'chain IS NULL OR value, row by row',
    slug: 'contact',
    query: "SELECT id FROM contact WHERE account.industry IS NULL OR account.industry = 'retail' LIMIT 1000",
    expected: (o, t) => ids(where('contact', t, (r) => {
      const a = account(r, t);
      return or(a?.industry == null, eq(a?.industry, 'retail'));
    })),
  },
  {
    name: 'GROUP BY a chain, with COUNT(DISTINCT relation column)',
    slug: 'opportunity',
    query: 'SELECT account.industry AS industry, count(*) AS n, count(DISTINCT account) AS accounts FROM opportunity GROUP BY account.industry LIMIT 100',
    expected: (o, t) =>
      [...groupBy(live('opportunity', t), (r) => account(r, t)?.industry ?? null).values()].map((g) => ({
        industry: g.key, n: g.items.length, accounts: countDistinct(g.items.map((r) => r.account)),
      })),
  },
  {
    name: 'SELECT DISTINCT over a chain',
    slug: 'contact',
    query: 'SELECT DISTINCT account.industry AS industry FROM contact LIMIT 100',
    expected: (o, t) => [...groupBy(live('contact', t), (r) => account(r, t)?.industry ?? null).values()].map((g) => ({ industry: g.key })),
  },
  {
    name: 'COUNT(DISTINCT depth-2 chain)',
    slug: 'contact',
    query: 'SELECT count(DISTINCT account.owner.id) AS owners, count(account.owner.id) AS with_owner FROM contact LIMIT 1',
    expected: (o, t) => {
      const us = live('contact', t).map((r) => owner(account(r, t), t)?.id ?? null);
      return [{ owners: countDistinct(us), with_owner: count(us) }];
    },
  },
  {
    name: 'coalesce over a column and over a chain',
    slug: 'account',
    query: "SELECT id, coalesce(city, 'unknown') AS city, coalesce(owner.name, 'nobody') AS owner_name FROM account LIMIT 1000",
    expected: (o, t) => live('account', t).map((r) => ({ id: r.id, city: coalesce(r.city, 'unknown'), owner_name: coalesce(owner(r, t)?.name, 'nobody') })),
  },

  // ---- virtual relations (fan-out) ----
  {
    name: 'virtual fan-out: one row per contact, one row of NULLs without contacts',
    slug: 'account',
    query: 'SELECT id, contacts.id AS contact_id, contacts.name AS contact_name FROM account LIMIT 5000',
    expected: (o, t) =>
      live('account', t).flatMap((a) => o.fanOut(a, 'contact', 'account', t).map((c) => ({ id: a.id, contact_id: c?.id ?? null, contact_name: c?.name ?? null }))),
    covers: (o, t) => {
      const counts = live('account', t).map((a) => contactsOf(a, t).length);
      return counts.some((n) => n === 0) && counts.some((n) => n >= 2);
    },
  },
  {
    name: 'virtual filter with COUNT(DISTINCT id) against the fanned count(*)',
    slug: 'account',
    query: "SELECT count(DISTINCT id) AS accounts, count(*) AS fanned FROM account WHERE contacts.status = 'active' LIMIT 1",
    expected: (o, t) => {
      const per = live('account', t).map((a) => contactsOf(a, t).filter((c) => c.status === 'active').length);
      return [{ accounts: per.filter((n) => n > 0).length, fanned: per.reduce((x, y) => x + y, 0) }];
    },
    covers: (o, t, [r]) => (r!.fanned as number) > (r!.accounts as number),
  },
  {
    name: 'SELECT DISTINCT id with a virtual filter',
    slug: 'account',
    query: "SELECT DISTINCT id FROM account WHERE opportunities.stage = 'won' LIMIT 1000",
    expected: (o, t) => ids(live('account', t).filter((a) => oppsOf(a, t).some((p) => p.stage === 'won'))),
  },
  {
    name: 'OR with IS NULL over a fan-out, row by row',
    slug: 'account',
    query: "SELECT id, contacts.id AS contact_id FROM account WHERE contacts.status = 'bounced' OR contacts.id IS NULL LIMIT 5000",
    expected: (o, t) =>
      live('account', t).flatMap((a) =>
        o.fanOut(a, 'contact', 'account', t)
          .filter((c) => holds(or(eq(c?.status, 'bounced'), c === null)))
          .map((c) => ({ id: a.id, contact_id: c?.id ?? null }))),
  },
  {
    name: 'GROUP BY id over a fan-out: count(*) vs count(child)',
    slug: 'account',
    query: 'SELECT id, count(*) AS n_rows, count(contacts.id) AS n_contacts FROM account GROUP BY id LIMIT 1000',
    expected: (o, t) => live('account', t).map((a) => ({ id: a.id, n_rows: Math.max(1, contactsOf(a, t).length), n_contacts: contactsOf(a, t).length })),
  },
  {
    name: 'AND across two virtual relations multiplies rows per parent',
    slug: 'account',
    query: "SELECT id, count(*) AS n FROM account WHERE contacts.status = 'active' AND opportunities.stage = 'won' GROUP BY id LIMIT 1000",
    expected: (o, t) =>
      live('account', t)
        .map((a) => ({ id: a.id, n: contactsOf(a, t).filter((c) => c.status === 'active').length * oppsOf(a, t).filter((p) => p.stage === 'won').length }))
        .filter((r) => r.n > 0),
    covers: (o, t, rows) => rows.some((r) => (r.n as number) > 1),
  },
  {
    name: 'virtual then to-one: opportunities.owner.name',
    slug: 'account',
    query: 'SELECT id, opportunities.owner.name AS opp_owner FROM account LIMIT 5000',
    expected: (o, t) => live('account', t).flatMap((a) => o.fanOut(a, 'opportunity', 'account', t).map((p) => ({ id: a.id, opp_owner: owner(p, t)?.name ?? null }))),
  },

  // ---- virtual filters the planner may turn into semi-joins (both plans run when they differ) ----
  {
    name: 'semi-join: two conditions on the same child stay on the same child',
    slug: 'account',
    query: "SELECT DISTINCT id FROM account WHERE contacts.status = 'active' AND contacts.is_primary = 1 LIMIT 5000",
    expected: (o, t) => ids(live('account', t).filter((a) => contactsOf(a, t).some((c) => c.status === 'active' && c.is_primary === true))),
    semiJoin: true,
  },
  {
    name: 'semi-join: OR across two virtual relations',
    slug: 'account',
    query: "SELECT DISTINCT id FROM account WHERE contacts.status = 'bounced' OR opportunities.stage = 'won' LIMIT 5000",
    expected: (o, t) => ids(live('account', t).filter((a) => contactsOf(a, t).some((c) => c.status === 'bounced') || oppsOf(a, t).some((p) => p.stage === 'won'))),
    semiJoin: true,
  },
  {
    name: 'semi-join: an OR inside the child condition, ANDed with a parent condition',
    slug: 'account',
    query: "SELECT count(DISTINCT id) AS n FROM account WHERE (contacts.status = 'bounced' OR contacts.email ILIKE '%example.org') AND industry <> 'retail' LIMIT 1",
    expected: (o, t) => [{ n: where('account', t, (a) => and(ne(a.industry, 'retail'), contactsOf(a, t).some((c) => holds(or(eq(c.status, 'bounced'), like(c.email, '%example.org', true)))))).length }],
    semiJoin: true,
  },
  {
    name: 'semi-join: a parent column inside the covered subtree',
    slug: 'account',
    query: "SELECT DISTINCT id FROM account WHERE (contacts.status = 'active' AND city ILIKE '%a%') OR industry = 'retail' LIMIT 5000",
    expected: (o, t) =>
      ids(where('account', t, (a) => or(and(like(a.city, '%a%', true), contactsOf(a, t).some((c) => c.status === 'active')), eq(a.industry, 'retail')))),
    semiJoin: true,
  },
  {
    name: 'semi-join: child column compared with a parent column',
    slug: 'account',
    query: 'SELECT DISTINCT id FROM account WHERE contacts.owner = owner LIMIT 5000',
    expected: (o, t) => ids(live('account', t).filter((a) => contactsOf(a, t).some((c) => holds(eq(c.owner, a.owner))))),
    semiJoin: true,
    covers: (o, t, rows) => rows.length > 0,
  },
  {
    name: 'semi-join: <> on the child OR a parent condition keeps childless parents only via the parent',
    slug: 'account',
    query: "SELECT DISTINCT id FROM account WHERE contacts.status <> 'active' OR city = 'north' LIMIT 5000",
    expected: (o, t) => ids(where('account', t, (a) => or(contactsOf(a, t).some((c) => holds(ne(c.status, 'active'))), eq(a.city, 'north')))),
    semiJoin: true,
  },
  {
    name: 'semi-join under GROUP BY with COUNT(DISTINCT id), min and max',
    slug: 'account',
    query: 'SELECT industry, count(DISTINCT id) AS n, min(name) AS first_name, max(annual_revenue) AS top FROM account WHERE opportunities.amount > 5000 GROUP BY industry LIMIT 100',
    expected: (o, t) =>
      [...groupBy(live('account', t).filter((a) => oppsOf(a, t).some((p) => holds(gt(p.amount, 5000)))), (a) => a.industry).values()].map((g) => ({
        industry: g.key, n: g.items.length, first_name: min(g.items.map((a) => a.name)), top: max(g.items.map((a) => a.annual_revenue)),
      })),
    semiJoin: true,
  },
  {
    name: 'semi-join: LIKE with a quote and BETWEEN on a date column of the child',
    slug: 'account',
    query: "SELECT DISTINCT id FROM account WHERE contacts.name LIKE '%O''Brien%' OR contacts.birthday BETWEEN 1704067200000 AND 1706745600000 LIMIT 5000",
    expected: (o, t) =>
      ids(live('account', t).filter((a) => contactsOf(a, t).some((c) => holds(or(like(c.name, "%O'Brien%"), between(c.birthday, 1704067200000, 1706745600000)))))),
    semiJoin: true,
  },
  {
    name: 'the child of a dot path referenced again inside a subquery is the same child',
    slug: 'account',
    query: "SELECT DISTINCT id FROM account a WHERE contacts.status = 'bounced' AND EXISTS (SELECT 1 FROM opportunity o WHERE o.primary_contact = a.contacts.id) LIMIT 5000",
    expected: (o, t) =>
      ids(live('account', t).filter((a) => contactsOf(a, t).some((c) => c.status === 'bounced' && live('opportunity', t).some((p) => p.primary_contact === c.id)))),
  },
  {
    name: 'a child condition and a to-one hop from the same child stay on the same child',
    slug: 'account',
    query: "SELECT DISTINCT id FROM account WHERE contacts.status = 'inactive' AND contacts.owner.role = 'manager' LIMIT 5000",
    expected: (o, t) => ids(live('account', t).filter((a) => contactsOf(a, t).some((c) => c.status === 'inactive' && owner(c, t)?.role === 'manager'))),
  },
  {
    name: 'a selected to-one hop from the filtered child shows that child, not its siblings',
    slug: 'account',
    query: "SELECT DISTINCT id, contacts.owner.name AS contact_owner FROM account WHERE contacts.status = 'bounced' LIMIT 5000",
    expected: (o, t) =>
      [...groupBy(live('account', t).flatMap((a) => contactsOf(a, t).filter((c) => c.status === 'bounced').map((c) => ({ id: a.id, contact_owner: owner(c, t)?.name ?? null }))), (r) => [r.id, r.contact_owner]).values()].map((g) => g.items[0]!),
  },
  {
    name: 'no semi-join: IS NULL on the child is true on the row of NULLs',
    slug: 'account',
    query: "SELECT DISTINCT id FROM account WHERE contacts.status = 'active' OR contacts.id IS NULL LIMIT 5000",
    expected: (o, t) => ids(live('account', t).filter((a) => o.fanOut(a, 'contact', 'account', t).some((c) => holds(or(eq(c?.status, 'active'), c === null))))),
    semiJoin: false,
  },
  {
    name: 'no semi-join: NOT over the child condition',
    slug: 'account',
    query: "SELECT DISTINCT id FROM account WHERE NOT (contacts.status = 'active') LIMIT 5000",
    expected: (o, t) => ids(live('account', t).filter((a) => o.fanOut(a, 'contact', 'account', t).some((c) => holds(not(eq(c?.status, 'active')))))),
    semiJoin: false,
  },
  {
    name: 'no semi-join: a multiplicity-sensitive aggregate (count(*)) keeps the fan-out',
    slug: 'account',
    query: "SELECT industry, count(*) AS n FROM account WHERE opportunities.stage = 'won' GROUP BY industry LIMIT 100",
    expected: (o, t) =>
      [...groupBy(live('account', t).flatMap((a) => oppsOf(a, t).filter((p) => p.stage === 'won').map(() => a)), (a) => a.industry).values()].map((g) => ({ industry: g.key, n: g.items.length })),
    semiJoin: false,
  },

  // ---- subqueries ----
  {
    name: 'correlated EXISTS',
    slug: 'account',
    query: "SELECT id FROM account a WHERE EXISTS (SELECT 1 FROM opportunity o WHERE o.account = a.id AND o.stage = 'won') LIMIT 1000",
    expected: (o, t) => ids(live('account', t).filter((a) => oppsOf(a, t).some((p) => p.stage === 'won'))),
  },
  {
    name: 'correlated NOT EXISTS ignores deleted children',
    slug: 'account',
    query: 'SELECT a.id FROM account a WHERE NOT EXISTS (SELECT 1 FROM contact c WHERE c.account = a.id) LIMIT 1000',
    expected: (o, t) => ids(live('account', t).filter((a) => contactsOf(a, t).length === 0)),
    covers: (o, t, rows) => {
      // Some account in the answer has only soft-deleted contacts, so the guard inside the subquery matters.
      return rows.some((r) => o.all('contact').some((c) => c.account === r.id && c.is_deleted === true && c.org_id === t));
    },
  },
  {
    name: 'EXISTS with plain count(id): a semi-join, no fan-out',
    slug: 'account',
    query: "SELECT count(id) AS n FROM account a WHERE EXISTS (SELECT 1 FROM contact c WHERE c.account = a.id AND c.status = 'active') LIMIT 1",
    expected: (o, t) => [{ n: live('account', t).filter((a) => contactsOf(a, t).some((c) => c.status === 'active')).length }],
  },
  {
    name: 'IN (subquery) on a to-one column: the subquery is tenant-guarded',
    slug: 'contact',
    query: "SELECT id, account AS account_id FROM contact WHERE account IN (SELECT id FROM account WHERE industry = 'finance') LIMIT 1000",
    expected: (o, t) => where('contact', t, (r) => eq(account(r, t)?.industry, 'finance')).map((r) => ({ id: r.id, account_id: r.account })),
  },
  {
    name: 'id IN (subquery of a relation column)',
    slug: 'account',
    query: 'SELECT id FROM account WHERE id IN (SELECT account FROM opportunity WHERE amount > 5000) LIMIT 1000',
    expected: (o, t) => {
      const targets = where('opportunity', t, (p) => gt(p.amount, 5000)).map((p) => p.account);
      return ids(where('account', t, (a) => inList(a.id, targets)));
    },
  },
  {
    name: 'NOT IN (subquery) with a NULL in the subquery matches nothing',
    slug: 'account',
    query: 'SELECT id FROM account WHERE id NOT IN (SELECT account FROM opportunity) LIMIT 1000',
    expected: (o, t) => {
      const targets = live('opportunity', t).map((p) => p.account);
      return ids(where('account', t, (a) => notIn(a.id, targets)));
    },
    covers: (o, t, rows) => rows.length === 0,
  },
  {
    name: 'NOT IN (subquery) without NULLs',
    slug: 'account',
    query: 'SELECT id FROM account WHERE id NOT IN (SELECT account FROM opportunity WHERE account IS NOT NULL) LIMIT 1000',
    expected: (o, t) => {
      const targets = live('opportunity', t).map((p) => p.account).filter((x) => x !== null);
      return ids(where('account', t, (a) => notIn(a.id, targets)));
    },
    covers: (o, t, rows) => rows.length > 0,
  },
  {
    name: 'correlated scalar subquery in SELECT',
    slug: 'account',
    query: 'SELECT id, (SELECT count(*) FROM contact c WHERE c.account = a.id) AS n_contacts FROM account a LIMIT 1000',
    expected: (o, t) => live('account', t).map((a) => ({ id: a.id, n_contacts: contactsOf(a, t).length })),
  },
  {
    name: 'uncorrelated scalar subquery in WHERE',
    slug: 'opportunity',
    query: 'SELECT id, amount FROM opportunity WHERE amount > (SELECT avg(amount) FROM opportunity) LIMIT 1000',
    expected: (o, t) => {
      const mean = avg(live('opportunity', t).map((p) => p.amount));
      return where('opportunity', t, (p) => gt(p.amount, mean)).map((p) => pick(p, 'id', 'amount'));
    },
  },

  // ---- multiselect ----
  {
    name: 'multiselect has any (&&)',
    slug: 'account',
    query: "SELECT id, tags FROM account WHERE tags && ARRAY['key', 'partner'] LIMIT 1000",
    expected: (o, t) => where('account', t, (r) => overlaps(r.tags, ['key', 'partner'])).map((r) => pick(r, 'id', 'tags')),
  },
  {
    name: 'multiselect has none: NOT (x && ...) keeps [] but not NULL',
    slug: 'account',
    query: "SELECT id, tags FROM account WHERE NOT (tags && ARRAY['churn_risk']) LIMIT 1000",
    expected: (o, t) => where('account', t, (r) => not(overlaps(r.tags, ['churn_risk']))).map((r) => pick(r, 'id', 'tags')),
    covers: (o, t, rows) => rows.some((r) => (r.tags as unknown[]).length === 0),
  },
  {
    name: 'multiselect = ARRAY[NULL] is NULL or empty',
    slug: 'lead',
    query: 'SELECT id, sources FROM lead WHERE sources = ARRAY[NULL] LIMIT 1000',
    expected: (o, t) => live('lead', t).filter((r) => isEmptyArray(r.sources)).map((r) => pick(r, 'id', 'sources')),
    covers: (o, t, rows) => sameSet(new Set(rows.map((r) => (r.sources === null ? 'null' : 'empty'))), new Set(['null', 'empty'])),
  },
  {
    name: 'multiselect <> ARRAY[NULL] has elements',
    slug: 'lead',
    query: 'SELECT id FROM lead WHERE sources <> ARRAY[NULL] LIMIT 1000',
    expected: (o, t) => ids(live('lead', t).filter((r) => !isEmptyArray(r.sources))),
  },
  {
    name: 'multiselect through a to-one chain, OR with a local multiselect',
    slug: 'opportunity',
    query: "SELECT id FROM opportunity WHERE account.tags && ARRAY['key'] OR sources && ARRAY['partner', 'event'] LIMIT 1000",
    expected: (o, t) => ids(where('opportunity', t, (r) => or(overlaps(account(r, t)?.tags ?? null, ['key']), overlaps(r.sources, ['partner', 'event'])))),
  },

  // ---- time ----
  {
    name: 'day buckets in Asia/Kolkata, ordered by day',
    slug: 'opportunity',
    query: "SELECT date_trunc('day', to_timestamp(created_at/1000) AT TIME ZONE 'Asia/Kolkata') AS day, count(*) AS n FROM opportunity GROUP BY day ORDER BY day LIMIT 2000",
    expected: (o, t) =>
      orderBy([...groupBy(live('opportunity', t), (r) => localDayStart(r.created_at as number | null, 'Asia/Kolkata')).values()].map((g) => ({ day: g.key, n: g.items.length })), { by: (r) => r.day }),
    ordered: true,
    covers: (o, t) => {
      // The bucketing must matter: some rows fall on another day in UTC than in Kolkata.
      const differs = live('opportunity', t).filter((r) => r.created_at !== null && localDayStart(r.created_at as number, 'Asia/Kolkata') !== localDayStart(r.created_at as number, 'UTC'));
      return differs.length > 5;
    },
  },
  {
    name: 'day buckets in America/New_York, DESC NULLS FIRST',
    slug: 'lead',
    query: "SELECT date_trunc('day', to_timestamp(created_at/1000) AT TIME ZONE 'America/New_York') AS day, count(*) AS n FROM lead GROUP BY day ORDER BY day DESC NULLS FIRST LIMIT 2000",
    expected: (o, t) =>
      orderBy([...groupBy(live('lead', t), (r) => localDayStart(r.created_at as number | null, 'America/New_York')).values()].map((g) => ({ day: g.key, n: g.items.length })), { by: (r) => r.day, desc: true, nulls: 'first' }),
    ordered: true,
  },
  {
    name: 'local hour of day with date_part',
    slug: 'lead',
    query: "SELECT date_part('hour', to_timestamp(created_at/1000) AT TIME ZONE 'America/New_York') AS h, count(*) AS n FROM lead GROUP BY h LIMIT 100",
    expected: (o, t) =>
      [...groupBy(live('lead', t), (r) => (r.created_at === null ? null : localHour(r.created_at as number, 'America/New_York'))).values()].map((g) => ({ h: g.key, n: g.items.length })),
  },
  {
    name: 'relative bound: the last 90 days before today in Kolkata (pinned NOW)',
    slug: 'opportunity',
    query: "SELECT id FROM opportunity WHERE created_at >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata')*1000 - 7776000000 LIMIT 1000",
    expected: (o, t) => ids(where('opportunity', t, (r) => ge(r.created_at, localMidnight(NOW_MS, 'Asia/Kolkata') - 90 * DAY))),
    covers: (o, t, rows) => rows.length > 0,
  },
  {
    name: 'window with two relative bounds: this year before today, in Kolkata',
    slug: 'opportunity',
    query:
      "SELECT id FROM opportunity WHERE created_at >= date_part('epoch', date_trunc('year', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata')*1000 " +
      "AND created_at < date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata')*1000 LIMIT 1000",
    expected: (o, t) =>
      ids(where('opportunity', t, (r) => and(ge(r.created_at, localYearStart(NOW_MS, 'Asia/Kolkata')), lt(r.created_at, localMidnight(NOW_MS, 'Asia/Kolkata'))))),
    covers: (o, t, rows) => rows.length > 5,
  },
  {
    name: 'date column: epoch bounds without AT TIME ZONE, shown with ::date',
    slug: 'contact',
    query: 'SELECT id, to_timestamp(birthday/1000)::date AS birthday FROM contact WHERE birthday >= 1704067200000 AND birthday < 1735689600000 LIMIT 1000',
    expected: (o, t) => where('contact', t, (r) => and(ge(r.birthday, Date.UTC(2024, 0, 1)), lt(r.birthday, Date.UTC(2025, 0, 1)))).map((r) => ({ id: r.id, birthday: utcDate(r.birthday as number) })),
  },
  {
    name: 'GROUP BY a date display, ORDER BY DESC NULLS LAST with LIMIT',
    slug: 'opportunity',
    query: 'SELECT to_timestamp(close_date/1000)::date AS d, count(*) AS n FROM opportunity GROUP BY d ORDER BY d DESC NULLS LAST LIMIT 50',
    expected: (o, t) =>
      orderBy([...groupBy(live('opportunity', t), (r) => utcDate(r.close_date as number | null)).values()].map((g) => ({ d: g.key, n: g.items.length })), { by: (r) => r.d, desc: true, nulls: 'last' }).slice(0, 50),
    ordered: true,
  },

  // ---- expressions ----
  {
    name: 'searched CASE',
    slug: 'opportunity',
    query: "SELECT id, CASE WHEN amount >= 5000 THEN 'big' WHEN amount >= 1000 THEN 'mid' ELSE 'small' END AS size FROM opportunity LIMIT 1000",
    expected: (o, t) => live('opportunity', t).map((r) => ({ id: r.id, size: sizeOf(r.amount) })),
  },
  {
    name: 'simple CASE without ELSE gives NULL',
    slug: 'opportunity',
    query: "SELECT id, CASE stage WHEN 'won' THEN 1 WHEN 'lost' THEN 0 END AS outcome FROM opportunity LIMIT 1000",
    expected: (o, t) => live('opportunity', t).map((r) => ({ id: r.id, outcome: r.stage === 'won' ? 1 : r.stage === 'lost' ? 0 : null })),
  },
  {
    name: 'if() inside sum, grouped by a relation column',
    slug: 'opportunity',
    query: "SELECT owner AS owner_id, sum(if(stage = 'won', amount, 0)) AS won_amount, count(*) AS n FROM opportunity GROUP BY owner LIMIT 1000",
    expected: (o, t) =>
      [...groupBy(live('opportunity', t), (r) => r.owner).values()].map((g) => ({
        owner_id: g.key, won_amount: sum(g.items.map((r) => (holds(eq(r.stage, 'won')) ? r.amount : 0))), n: g.items.length,
      })),
    rawRefs: ['owner_id'],
  },
  {
    name: 'conditional counts in one scan',
    slug: 'opportunity',
    query: "SELECT count(CASE WHEN stage = 'won' THEN 1 END) AS won, count(CASE WHEN stage = 'lost' THEN 1 END) AS lost, count(*) AS total FROM opportunity LIMIT 1",
    expected: (o, t) => {
      const rows = live('opportunity', t);
      return [{ won: rows.filter((r) => r.stage === 'won').length, lost: rows.filter((r) => r.stage === 'lost').length, total: rows.length }];
    },
  },
  {
    name: 'round(sum/1e7, 2) crore and round(sum/1e5, 2) lakh per chained group',
    slug: 'opportunity',
    query: 'SELECT account.industry AS industry, round(sum(amount)/10000000, 2) AS crore, round(sum(amount)/100000, 2) AS lakh, round(avg(probability), 2) AS p FROM opportunity GROUP BY account.industry LIMIT 100',
    expected: (o, t) =>
      [...groupBy(live('opportunity', t), (r) => account(r, t)?.industry ?? null).values()].map((g) => {
        const total = sum(g.items.map((r) => r.amount));
        return {
          industry: g.key,
          crore: roundHalfAway(total === null ? null : total / 1e7, 2),
          lakh: roundHalfAway(total === null ? null : total / 1e5, 2),
          p: roundHalfAway(avg(g.items.map((r) => r.probability)), 2),
        };
      }),
  },
  {
    name: 'GROUP BY an alias whose expression has a literal (parameter reuse)',
    slug: 'account',
    query: "SELECT coalesce(city, 'n/a') AS city_or_na, count(*) AS n FROM account GROUP BY city_or_na LIMIT 1000",
    expected: (o, t) => [...groupBy(live('account', t), (r) => coalesce(r.city, 'n/a')).values()].map((g) => ({ city_or_na: g.key, n: g.items.length })),
  },
  {
    name: 'GROUP BY a repeated CASE expression',
    slug: 'opportunity',
    query: "SELECT CASE WHEN amount >= 5000 THEN 'big' WHEN amount >= 1000 THEN 'mid' ELSE 'small' END AS size, count(*) AS n FROM opportunity GROUP BY CASE WHEN amount >= 5000 THEN 'big' WHEN amount >= 1000 THEN 'mid' ELSE 'small' END LIMIT 10",
    expected: (o, t) => [...groupBy(live('opportunity', t), (r) => sizeOf(r.amount)).values()].map((g) => ({ size: g.key, n: g.items.length })),
  },
  {
    name: 'HAVING on aggregates',
    slug: 'opportunity',
    query: 'SELECT owner AS owner_id, count(*) AS n, sum(amount) AS total FROM opportunity GROUP BY owner HAVING count(*) >= 8 AND sum(amount) > 30000 LIMIT 1000',
    expected: (o, t) =>
      [...groupBy(live('opportunity', t), (r) => r.owner).values()]
        .map((g) => ({ owner_id: g.key, n: g.items.length, total: sum(g.items.map((r) => r.amount)) }))
        .filter((r) => r.n >= 8 && holds(gt(r.total, 30000))),
    rawRefs: ['owner_id'],
    covers: (o, t, rows) => rows.length > 0,
  },
  {
    name: 'min, max, avg and count of a column per enum',
    slug: 'opportunity',
    query: 'SELECT stage, min(amount) AS lo, max(amount) AS hi, avg(amount) AS mean, count(amount) AS n, max(created_at) AS latest FROM opportunity GROUP BY stage LIMIT 100',
    expected: (o, t) =>
      [...groupBy(live('opportunity', t), (r) => r.stage).values()].map((g) => {
        const xs = g.items.map((r) => r.amount);
        return { stage: g.key, lo: min(xs), hi: max(xs), mean: avg(xs), n: count(xs), latest: max(g.items.map((r) => r.created_at)) };
      }),
  },
  {
    name: 'arithmetic, abs and unary minus on numbers',
    slug: 'opportunity',
    query: 'SELECT id, amount * probability / 100 AS weighted, abs(amount - 5000) AS dist, -amount AS neg FROM opportunity LIMIT 1000',
    expected: (o, t) =>
      live('opportunity', t).map((r) => {
        const a = r.amount as number | null;
        const p = r.probability as number | null;
        return { id: r.id, weighted: exactProduct(a, p, 2), dist: a === null ? null : Math.abs(a - 5000), neg: a === null ? null : -a };
      }),
  },
  {
    name: 'lower, upper, concat (NULL as empty) and trim',
    slug: 'account',
    query: "SELECT id, lower(name) AS lname, upper(city) AS ucity, concat(name, ' (', city, ')') AS label, trim(concat('  ', city, '  ')) AS t FROM account LIMIT 1000",
    expected: (o, t) =>
      live('account', t).map((r) => ({
        id: r.id,
        lname: (r.name as string).toLowerCase(),
        ucity: r.city === null ? null : (r.city as string).toUpperCase(),
        label: `${r.name as string} (${(r.city as string | null) ?? ''})`,
        t: ((r.city as string | null) ?? '').trim(),
      })),
  },

  {
    name: 'left: the first n characters, NULL kept',
    slug: 'account',
    query: 'SELECT id, left(name, 3) AS n3, LEFT(city, 2) AS c2, left(concat(name, city), 0) AS none FROM account LIMIT 1000',
    expected: (o, t) =>
      live('account', t).map((r) => ({
        id: r.id,
        n3: [...(r.name as string)].slice(0, 3).join(''),
        c2: r.city === null ? null : [...(r.city as string)].slice(0, 2).join(''),
        none: '',
      })),
  },

  // ---- LIKE ----
  {
    name: "LIKE with a quote in the pattern: O'Brien",
    slug: 'account',
    query: "SELECT id, name FROM account WHERE name LIKE 'O''Brien%' LIMIT 1000",
    expected: (o, t) => where('account', t, (r) => like(r.name, "O'Brien%")).map((r) => pick(r, 'id', 'name')),
    covers: (o, t, rows) => rows.length > 0,
  },
  {
    name: 'ILIKE with _ matching one character',
    slug: 'contact',
    query: "SELECT id, email FROM contact WHERE email ILIKE '%@example._rg' LIMIT 1000",
    expected: (o, t) => where('contact', t, (r) => like(r.email, '%@example._rg', true)).map((r) => pick(r, 'id', 'email')),
    covers: (o, t, rows) => sameSet(new Set(rows.map((r) => (r.email as string).split('@')[1])), new Set(['Example.org'])),
  },
  {
    name: 'LIKE with an escaped % and NOT ILIKE leaving out NULLs',
    slug: 'lead',
    query: "SELECT id, company FROM lead WHERE company LIKE '%100\\% sure%' OR company NOT ILIKE '%a%' LIMIT 1000",
    expected: (o, t) => where('lead', t, (r) => or(like(r.company, '%100\\% sure%'), not(like(r.company, '%a%', true)))).map((r) => pick(r, 'id', 'company')),
    covers: (o, t, rows) => rows.some((r) => (r.company as string).includes('100% sure')),
  },

  // ---- ORDER BY, LIMIT, OFFSET ----
  {
    name: 'ORDER BY alias DESC NULLS LAST, id, with LIMIT and OFFSET',
    slug: 'opportunity',
    query: 'SELECT id, amount AS amt FROM opportunity ORDER BY amt DESC NULLS LAST, id LIMIT 20 OFFSET 5',
    expected: (o, t) =>
      orderBy(live('opportunity', t).map((r) => ({ id: r.id, amt: r.amount })), { by: (r) => r.amt, desc: true, nulls: 'last' }, { by: (r) => r.id }).slice(5, 25),
    ordered: true,
  },
  {
    name: 'ORDER BY ordinal ASC NULLS FIRST',
    slug: 'opportunity',
    query: 'SELECT id, amount FROM opportunity ORDER BY 2 ASC NULLS FIRST, 1 LIMIT 25 OFFSET 10',
    expected: (o, t) =>
      orderBy(live('opportunity', t).map((r) => pick(r, 'id', 'amount')), { by: (r) => r.amount, nulls: 'first' }, { by: (r) => r.id }).slice(10, 35),
    ordered: true,
    covers: (o, t, rows) => rows.some((r) => r.amount === null),
  },
  {
    name: 'ORDER BY an expression that is not selected',
    slug: 'opportunity',
    query: 'SELECT id, amount FROM opportunity WHERE amount IS NOT NULL ORDER BY abs(amount - 5000), id LIMIT 30',
    expected: (o, t) =>
      orderBy(where('opportunity', t, (r) => r.amount !== null).map((r) => pick(r, 'id', 'amount')), { by: (r) => Math.abs((r.amount as number) - 5000) }, { by: (r) => r.id }).slice(0, 30),
    ordered: true,
  },
  {
    name: 'ORDER BY a chain, aggregate ordering by alias',
    slug: 'contact',
    query: 'SELECT account.owner.name AS owner_name, count(*) AS n FROM contact GROUP BY account.owner.name ORDER BY n DESC, owner_name NULLS FIRST LIMIT 100',
    expected: (o, t) =>
      orderBy(
        [...groupBy(live('contact', t), (r) => owner(account(r, t), t)?.name ?? null).values()].map((g) => ({ owner_name: g.key, n: g.items.length })),
        { by: (r) => r.n, desc: true }, { by: (r) => r.owner_name, nulls: 'first' },
      ),
    ordered: true,
  },
];

runCases('crm execution on PGlite', CASES, TENANTS);

describe('crm: LIMIT, OFFSET and count', () => {
  const active = (t: string): number => live('contact', t).filter((r) => r.status === 'active').length;

  it('count respects LIMIT: the LIMIT when more rows exist, exact when fewer', async () => {
    for (const t of TENANTS) {
      expect(active(t)).toBeGreaterThan(10);
      expect(await runCount("SELECT id FROM contact WHERE status = 'active' LIMIT 10", 'contact', t)).toBe(10);
      expect(await runCount("SELECT id FROM contact WHERE status = 'active' LIMIT 10000", 'contact', t)).toBe(active(t));
      expect(await runCount("SELECT id FROM contact WHERE status = 'active' LIMIT 10 OFFSET 5", 'contact', t)).toBe(10);
      expect(await runCount(`SELECT id FROM contact WHERE status = 'active' LIMIT 100 OFFSET ${active(t) - 3}`, 'contact', t)).toBe(3);
    }
  });

  it('count of a fan-out counts fanned rows; with DISTINCT id, parents', async () => {
    for (const t of TENANTS) {
      const per = live('account', t).map((a) => contactsOf(a, t).filter((c) => c.status === 'active').length);
      expect(await runCount("SELECT id FROM account WHERE contacts.status = 'active' LIMIT 10000", 'account', t)).toBe(per.reduce((x, y) => x + y, 0));
      expect(await runCount("SELECT DISTINCT id FROM account WHERE contacts.status = 'active' LIMIT 10000", 'account', t)).toBe(per.filter((n) => n > 0).length);
    }
  });

  it('pages of LIMIT/OFFSET over a total order concatenate to the whole', async () => {
    const t = 'org_acme';
    const q = (offset: number): string => `SELECT id, created_at FROM lead ORDER BY created_at NULLS FIRST, id LIMIT 17 OFFSET ${offset}`;
    const pages: Row[] = [];
    for (let offset = 0; ; offset += 17) {
      const page = await run(q(offset), 'lead', t);
      pages.push(...page);
      if (page.length < 17) break;
    }
    const expected = orderBy(live('lead', t).map((r) => pick(r, 'id', 'created_at')), { by: (r) => r.created_at, nulls: 'first' }, { by: (r) => r.id });
    expect(sequence(pages)).toEqual(sequence(expected));
  });

  it('a LIMIT without ORDER BY returns that many rows, all from the answer', async () => {
    for (const t of TENANTS) {
      const rows = await run("SELECT id FROM contact WHERE status = 'active' LIMIT 7", 'contact', t);
      const all = new Set(live('contact', t).filter((r) => r.status === 'active').map((r) => r.id));
      expect(rows).toHaveLength(7);
      for (const r of rows) expect(all.has(r.id)).toBe(true);
    }
  });
});

describe('crm: tenants and soft deletion', () => {
  const TABLES = ['user', 'account', 'contact', 'opportunity', 'lead'] as const;

  it('every tenant sees exactly its live records, for all three tenants', async () => {
    for (const t of ['org_acme', 'org_globex', 'org_initech']) {
      for (const slug of TABLES) {
        const rows = await run(`SELECT id FROM ${slug} LIMIT 10000`, slug, t);
        expect(multiset(rows), `${slug} for ${t}`).toEqual(multiset(ids(live(slug, t))));
        expect(oracle.all(slug).filter((r) => r.org_id === t).length).toBeGreaterThan(rows.length); // some were deleted
      }
    }
  });

  it("a reference to another tenant's record reads as NULL through every join", async () => {
    let foreign = 0;
    for (const t of TENANTS) {
      const rows = await run('SELECT id, account AS raw, account.name AS a_name, account.owner.name AS o_name, account.industry AS ind FROM contact LIMIT 10000', 'contact', t);
      for (const r of rows) {
        if (typeof r.raw === 'string' && !r.raw.startsWith(`${t}_`)) {
          foreign++;
          expect([r.a_name, r.o_name, r.ind]).toEqual([null, null, null]);
        }
      }
    }
    foreign > 0;
  });

  it('the same query for two tenants gives disjoint ids', async () => {
    const q = "SELECT DISTINCT id FROM account WHERE contacts.status = 'active' OR opportunities.stage = 'won' LIMIT 10000";
    const [a, b] = await Promise.all(TENANTS.map((t) => run(q, 'account', t)));
    const inA = new Set(a!.map((r) => r.id));
    a!.length > 0;
    b!.length > 0;
    expect(b!.filter((r) => inA.has(r.id))).toEqual([]);
  });

  it('soft-deleted records appear nowhere: root, joins, virtual joins, subqueries', async () => {
    const deleted = new Set(oracle.all('contact').filter((r) => r.is_deleted === true).map((r) => r.id));
    const deletedAccounts = new Set(oracle.all('account').filter((r) => r.is_deleted === true).map((r) => r.id));
    deleted.size > 0;
    for (const t of TENANTS) {
      const fan = await run('SELECT id, contacts.id AS cid FROM account LIMIT 10000', 'account', t);
      const up = await run('SELECT id, account.id AS aid FROM contact LIMIT 10000', 'contact', t);
      const sub = await run('SELECT id FROM contact WHERE id IN (SELECT id FROM contact) LIMIT 10000', 'contact', t);
      for (const r of fan) expect(deleted.has(r.cid) || deletedAccounts.has(r.id)).toBe(false);
      for (const r of up) expect(deleted.has(r.id) || deletedAccounts.has(r.aid)).toBe(false);
      for (const r of sub) expect(deleted.has(r.id)).toBe(false);
    }
  });

  it('dot notation (planned and literal fan-out) and a written EXISTS give the same parents', async () => {
    for (const t of TENANTS) {
      const dotted = "SELECT DISTINCT id FROM account WHERE contacts.status = 'inactive' AND contacts.is_primary = 1 LIMIT 10000";
      const planned = await run(dotted, 'account', t);
      const literal = await run(dotted, 'account', t, LITERAL);
      const semi = await run("SELECT id FROM account a WHERE EXISTS (SELECT 1 FROM contact c WHERE c.account = a.id AND c.status = 'inactive' AND c.is_primary = 1) LIMIT 10000", 'account', t);
      expect(multiset(planned)).toEqual(multiset(semi));
      expect(multiset(literal)).toEqual(multiset(semi));
      expect(semi.length).toBeGreaterThan(0);
    }
  });

  it('ternary partition: p, NOT p and p IS NULL together give every row exactly once', async () => {
    for (const t of TENANTS) {
      const p = "account.industry = 'software'";
      const parts = await Promise.all([
        run(`SELECT id FROM contact WHERE ${p} LIMIT 10000`, 'contact', t),
        run(`SELECT id FROM contact WHERE NOT (${p}) LIMIT 10000`, 'contact', t),
        run(`SELECT id FROM contact WHERE (${p}) IS NULL LIMIT 10000`, 'contact', t),
      ]);
      expect(multiset(parts.flat())).toEqual(multiset(ids(live('contact', t))));
      expect(parts.every((x) => x.length > 0)).toBe(true);
    }
  });
});

describe('crm: hand-written SQL over the physical tables agrees (cross-checks the oracle itself)', () => {
  it('this year before today in Kolkata: hand-written bounds, oracle and (when fixed) the compiler', async () => {
    for (const t of TENANTS) {
      const hand = await db().query<{ id: string }>(
        `SELECT id FROM opportunity WHERE org_id = $1 AND NOT is_deleted
           AND created_at >= extract(epoch FROM date_trunc('year', $2::timestamptz AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata') * 1000
           AND created_at <  extract(epoch FROM date_trunc('day',  $2::timestamptz AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata') * 1000`,
        [t, NOW],
      );
      const expected = ids(where('opportunity', t, (r) => and(ge(r.created_at, localYearStart(NOW_MS, 'Asia/Kolkata')), lt(r.created_at, localMidnight(NOW_MS, 'Asia/Kolkata')))));
      expect(multiset(hand.rows)).toEqual(multiset(expected));
      expect(expected.length).toBeGreaterThan(0);
    }
  });

  it('fan-out with OR / IS NULL: the compiled query equals a hand-written LEFT JOIN', async () => {
    for (const t of TENANTS) {
      const hand = await db().query<{ id: string; contact_id: string | null }>(
        `SELECT a.id, c.id AS contact_id FROM account a
           LEFT JOIN contact c ON c.account = a.id AND c.org_id = a.org_id AND NOT c.is_deleted
          WHERE a.org_id = $1 AND NOT a.is_deleted AND (c.status = 'bounced' OR c.id IS NULL)`,
        [t],
      );
      const compiled = await run("SELECT id, contacts.id AS contact_id FROM account WHERE contacts.status = 'bounced' OR contacts.id IS NULL LIMIT 5000", 'account', t);
      expect(multiset(compiled)).toEqual(multiset(hand.rows));
    }
  });

  it('Kolkata day buckets: the compiled query equals a hand-written GROUP BY', async () => {
    for (const t of TENANTS) {
      const hand = await db().query<{ day: string; n: number }>(
        `SELECT date_trunc('day', to_timestamp(created_at / 1000) AT TIME ZONE 'Asia/Kolkata') AS day, count(*)::int AS n
           FROM opportunity WHERE org_id = $1 AND NOT is_deleted GROUP BY 1 ORDER BY 1`,
        [t], { parsers: TEXT_TIME_PARSERS },
      );
      const compiled = await run("SELECT date_trunc('day', to_timestamp(created_at/1000) AT TIME ZONE 'Asia/Kolkata') AS day, count(*) AS n FROM opportunity GROUP BY day ORDER BY day LIMIT 2000", 'opportunity', t);
      expect(sequence(compiled)).toEqual(sequence(hand.rows));
    }
  });
});
