import { describe, expect, it } from 'vitest';
import {
  and, avg, coalesce, count, countDistinct, eq, ge, groupBy, gt, holds, inList, isEmptyArray, like, localDate,
  localDayStart, localMidnight, max, min, multiset, not, or, orderBy, overlaps, pick, roundHalfAway, sameSet, sum,
  utcDate, type ExecCase, type Row,
} from '../support/oracle.js';
import { LITERAL, execHarness } from '../support/exec-harness.js';

/**
 * The helpdesk fixture on real PostgreSQL (PGlite): deep to-one chains (ticket_comment →
 * ticket → asset → site → customer → agent → team), virtual relations two levels deep, and
 * self relations. Same method as the crm suite: the oracle computes each case's rows for two
 * tenants, and the count of each query must equal its number of rows.
 */

const TENANTS = ['org_north', 'org_south'] as const;
const NOW = '2025-06-15T20:00:00Z';
const NOW_MS = Date.parse(NOW);
const DAY = 86_400_000;

const { oracle, run, runCount, runCases } = execHarness('helpdesk', NOW);

// ---- shorthands over the oracle ----

type Hop = readonly [column: string, target: string];
const live = (slug: string, t: string): Row[] => oracle.live(slug, t);
const where = (slug: string, t: string, p: (r: Row) => boolean | null): Row[] => live(slug, t).filter((r) => holds(p(r)));
const ids = (rows: readonly Row[]): Row[] => rows.map((r) => ({ id: r.id }));
const chain = (r: Row | null, t: string, ...hops: Hop[]): Row | null => oracle.chain(r, t, ...hops);

const TICKET: Hop = ['ticket', 'ticket'];
const ASSET: Hop = ['asset', 'asset'];
const SITE: Hop = ['site', 'site'];
const CUSTOMER: Hop = ['customer', 'customer'];
const ACCOUNT_MANAGER: Hop = ['account_manager', 'agent'];
const TEAM: Hop = ['team', 'team'];
const MANAGER: Hop = ['manager', 'agent'];
const ASSIGNEE: Hop = ['assignee', 'agent'];
const AUTHOR: Hop = ['author', 'agent'];

const commentsOf = (ticket: Row, t: string): Row[] => oracle.children(ticket, 'ticket_comment', 'ticket', t);
const DOW = new Map(['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].map((d, i) => [d, i]));
const weekday = (ms: number, zone: string): number =>
  DOW.get(new Intl.DateTimeFormat('en-US', { timeZone: zone, weekday: 'short' }).format(Math.trunc(ms / 1000) * 1000))!;
const monthStart = (ms: number | null, zone: string): string | null => (ms === null ? null : `${localDate(Math.trunc(ms / 1000) * 1000, zone).slice(0, 7)}-01 00:00:00`);

const CASES: ExecCase[] = [
  // ---- deep to-one chains ----
  {
    name: 'depth 4: ticket.asset.site.customer.name from a comment',
    slug: 'ticket_comment',
    query: 'SELECT id, ticket.asset.site.customer.name AS customer, ticket.asset.site.name AS site FROM ticket_comment LIMIT 5000',
    expected: (o, t) =>
      live('ticket_comment', t).map((r) => {
        const site = chain(r, t, TICKET, ASSET, SITE);
        return { id: r.id, customer: chain(site, t, CUSTOMER)?.name ?? null, site: site?.name ?? null };
      }),
    covers: (o, t, rows) => rows.some((r) => r.customer !== null) && rows.some((r) => r.customer === null && r.site !== null),
  },
  {
    name: 'depth 6 in SELECT, depth 5 in WHERE with OR IS NULL',
    slug: 'ticket_comment',
    query:
      'SELECT id, ticket.asset.site.customer.account_manager.team.name AS team FROM ticket_comment ' +
      "WHERE ticket.asset.site.customer.account_manager.role = 'supervisor' OR ticket.asset.site.customer.account_manager.role IS NULL LIMIT 5000",
    expected: (o, t) =>
      live('ticket_comment', t).flatMap((r) => {
        const am = chain(r, t, TICKET, ASSET, SITE, CUSTOMER, ACCOUNT_MANAGER);
        return holds(or(eq(am?.role, 'supervisor'), am?.role == null)) ? [{ id: r.id, team: chain(am, t, TEAM)?.name ?? null }] : [];
      }),
    covers: (o, t, rows) => rows.some((r) => r.team !== null),
  },
  {
    name: 'depth 3 enum filter: asset.site.timezone',
    slug: 'ticket',
    query: "SELECT id, asset.site.city AS city FROM ticket WHERE asset.site.timezone = 'asia_kolkata' LIMIT 5000",
    expected: (o, t) =>
      live('ticket', t).flatMap((r) => {
        const s = chain(r, t, ASSET, SITE);
        return holds(eq(s?.timezone, 'asia_kolkata')) ? [{ id: r.id, city: s!.city ?? null }] : [];
      }),
  },
  {
    name: 'self relation: manager.name and manager.manager.name',
    slug: 'agent',
    query: 'SELECT id, manager.name AS m, manager.manager.name AS mm FROM agent LIMIT 1000',
    expected: (o, t) =>
      live('agent', t).map((r) => {
        const m = chain(r, t, MANAGER);
        return { id: r.id, m: m?.name ?? null, mm: chain(m, t, MANAGER)?.name ?? null };
      }),
  },
  {
    name: 'GROUP BY a depth-3 chain with sums and lakh',
    slug: 'ticket',
    query: 'SELECT asset.site.customer.tier AS tier, count(*) AS n, sum(billable_amount) AS billed, round(sum(billable_amount)/100000, 2) AS lakh FROM ticket GROUP BY asset.site.customer.tier LIMIT 100',
    expected: (o, t) =>
      [...groupBy(live('ticket', t), (r) => chain(r, t, ASSET, SITE, CUSTOMER)?.tier ?? null).values()].map((g) => {
        const billed = sum(g.items.map((r) => r.billable_amount));
        return { tier: g.key, n: g.items.length, billed, lakh: roundHalfAway(billed === null ? null : billed / 1e5, 2) };
      }),
  },
  {
    name: 'chains sharing a prefix, and a relation column compared with a chain',
    slug: 'ticket',
    query: 'SELECT id, asset.site.name AS site, asset.name AS asset_name, asset.site.customer.name AS site_customer FROM ticket WHERE customer <> asset.site.customer LIMIT 5000',
    expected: (o, t) =>
      live('ticket', t).flatMap((r) => {
        const a = chain(r, t, ASSET);
        const s = chain(a, t, SITE);
        return holds(not(eq(r.customer, s?.customer ?? null))) ? [{ id: r.id, site: s!.name, asset_name: a!.name, site_customer: chain(s, t, CUSTOMER)?.name ?? null }] : [];
      }),
  },
  {
    name: 'booleans 0/1 on the row and through a chain',
    slug: 'asset',
    query: 'SELECT id FROM asset WHERE is_critical = 1 AND site.is_headquarters = 0 LIMIT 1000',
    expected: (o, t) => ids(where('asset', t, (r) => and(eq(r.is_critical, true), eq(chain(r, t, SITE)?.is_headquarters, false)))),
  },

  // ---- virtual relations ----
  {
    name: 'virtual fan-out: customer.sites',
    slug: 'customer',
    query: 'SELECT id, sites.name AS site, sites.city AS city FROM customer LIMIT 5000',
    expected: (o, t) => live('customer', t).flatMap((c) => o.fanOut(c, 'site', 'customer', t).map((s) => ({ id: c.id, site: s?.name ?? null, city: s?.city ?? null }))),
  },
  {
    name: 'two virtual hops: customer.sites.assets',
    slug: 'customer',
    query: 'SELECT id, sites.id AS site_id, sites.assets.id AS asset_id FROM customer LIMIT 5000',
    expected: (o, t) =>
      live('customer', t).flatMap((c) =>
        o.fanOut(c, 'site', 'customer', t).flatMap((s) => o.fanOut(s, 'asset', 'site', t).map((a) => ({ id: c.id, site_id: s?.id ?? null, asset_id: a?.id ?? null })))),
    covers: (o, t, rows) => rows.some((r) => r.site_id === null) && rows.some((r) => r.site_id !== null && r.asset_id === null),
  },
  {
    name: 'virtual then to-one: team.members.manager',
    slug: 'team',
    query: 'SELECT id, members.name AS member, members.manager.name AS mgr FROM team LIMIT 1000',
    expected: (o, t) =>
      live('team', t).flatMap((tm) => o.fanOut(tm, 'agent', 'team', t).map((a) => ({ id: tm.id, member: a?.name ?? null, mgr: chain(a, t, MANAGER)?.name ?? null }))),
  },
  {
    name: 'COUNT(DISTINCT id) over a virtual filter',
    slug: 'agent',
    query: "SELECT count(DISTINCT id) AS agents, count(*) AS rows_n FROM agent WHERE assigned_tickets.priority = 'urgent' LIMIT 1",
    expected: (o, t) => {
      const per = live('agent', t).map((a) => o.children(a, 'ticket', 'assignee', t).filter((x) => x.priority === 'urgent').length);
      return [{ agents: per.filter((n) => n > 0).length, rows_n: per.reduce((x, y) => x + y, 0) }];
    },
  },
  {
    name: 'SELECT DISTINCT id with OR / IS NULL over a fan-out',
    slug: 'ticket',
    query: "SELECT DISTINCT id FROM ticket WHERE comments.sentiment = 'negative' OR comments.id IS NULL LIMIT 5000",
    expected: (o, t) => ids(live('ticket', t).filter((x) => o.fanOut(x, 'ticket_comment', 'ticket', t).some((c) => holds(or(eq(c?.sentiment, 'negative'), c === null))))),
  },
  {
    name: 'self virtual relation: direct reports per agent',
    slug: 'agent',
    query: 'SELECT id, count(reports.id) AS direct_reports, count(*) AS n FROM agent GROUP BY id LIMIT 1000',
    expected: (o, t) =>
      live('agent', t).map((a) => {
        const n = o.children(a, 'agent', 'manager', t).length;
        return { id: a.id, direct_reports: n, n: Math.max(1, n) };
      }),
  },

  {
    name: 'semi-join: two virtual relations ANDed under DISTINCT',
    slug: 'customer',
    query: "SELECT DISTINCT id FROM customer WHERE tickets.priority = 'urgent' AND sites.timezone = 'utc' LIMIT 5000",
    expected: (o, t) =>
      ids(live('customer', t).filter((c) => o.children(c, 'ticket', 'customer', t).some((x) => x.priority === 'urgent') && o.children(c, 'site', 'customer', t).some((s) => s.timezone === 'utc'))),
    semiJoin: true,
  },
  {
    name: 'semi-join: OR across relations with different via columns (assignee, author)',
    slug: 'agent',
    query: "SELECT DISTINCT id FROM agent WHERE assigned_tickets.labels && ARRAY['vip'] OR comments.sentiment = 'negative' LIMIT 5000",
    expected: (o, t) =>
      ids(live('agent', t).filter((a) => o.children(a, 'ticket', 'assignee', t).some((x) => holds(overlaps(x.labels, ['vip']))) || o.children(a, 'ticket_comment', 'author', t).some((c) => c.sentiment === 'negative'))),
    semiJoin: true,
  },
  {
    name: 'semi-join on a self relation under max()',
    slug: 'agent',
    query: "SELECT max(hourly_rate) AS top, min(name) AS first_name FROM agent WHERE reports.role = 'technician' LIMIT 1",
    expected: (o, t) => {
      const managers = live('agent', t).filter((a) => o.children(a, 'agent', 'manager', t).some((r) => r.role === 'technician'));
      return [{ top: max(managers.map((a) => a.hourly_rate)), first_name: min(managers.map((a) => a.name)) }];
    },
    semiJoin: true,
  },
  {
    name: 'no semi-join: two virtual hops (sites.assets) keep the fan-out',
    slug: 'customer',
    query: 'SELECT count(DISTINCT id) AS n FROM customer WHERE sites.assets.is_critical = 1 LIMIT 1',
    expected: (o, t) => [{ n: live('customer', t).filter((c) => o.children(c, 'site', 'customer', t).some((s) => o.children(s, 'asset', 'site', t).some((a) => a.is_critical === true))).length }],
    semiJoin: false,
  },

  // ---- subqueries ----
  {
    name: 'EXISTS over comments with two conditions',
    slug: 'ticket',
    query: "SELECT id FROM ticket t WHERE EXISTS (SELECT 1 FROM ticket_comment c WHERE c.ticket = t.id AND c.sentiment = 'negative' AND c.is_public = 1) LIMIT 5000",
    expected: (o, t) => ids(live('ticket', t).filter((x) => commentsOf(x, t).some((c) => c.sentiment === 'negative' && c.is_public === true))),
  },
  {
    name: 'NOT EXISTS: customers without urgent tickets',
    slug: 'customer',
    query: "SELECT id, name FROM customer c WHERE NOT EXISTS (SELECT 1 FROM ticket t WHERE t.customer = c.id AND t.priority = 'urgent') LIMIT 1000",
    expected: (o, t) => live('customer', t).filter((c) => !o.children(c, 'ticket', 'customer', t).some((x) => x.priority === 'urgent')).map((c) => pick(c, 'id', 'name')),
  },
  {
    name: 'nested EXISTS two levels down',
    slug: 'customer',
    query: 'SELECT c.id FROM customer c WHERE EXISTS (SELECT 1 FROM site s WHERE s.customer = c.id AND EXISTS (SELECT 1 FROM asset a WHERE a.site = s.id AND a.is_critical = 1)) LIMIT 1000',
    expected: (o, t) => ids(live('customer', t).filter((c) => o.children(c, 'site', 'customer', t).some((s) => o.children(s, 'asset', 'site', t).some((a) => a.is_critical === true)))),
  },
  {
    name: 'EXISTS correlated through an outer chain',
    slug: 'ticket',
    query: 'SELECT id FROM ticket t WHERE EXISTS (SELECT 1 FROM ticket_comment c WHERE c.ticket = t.id AND c.author = t.customer.account_manager) LIMIT 5000',
    expected: (o, t) =>
      ids(live('ticket', t).filter((x) => {
        const am = chain(x, t, CUSTOMER)?.account_manager ?? null;
        return commentsOf(x, t).some((c) => holds(eq(c.author, am)));
      })),
    covers: (o, t, rows) => rows.length > 0,
  },
  {
    name: 'EXISTS with a chain inside the subquery',
    slug: 'ticket',
    query: "SELECT id FROM ticket t WHERE EXISTS (SELECT 1 FROM ticket_comment c WHERE c.ticket = t.id AND c.author.role = 'supervisor') LIMIT 5000",
    expected: (o, t) => ids(live('ticket', t).filter((x) => commentsOf(x, t).some((c) => chain(c, t, AUTHOR)?.role === 'supervisor'))),
  },
  {
    name: 'IN (subquery) on a to-one column',
    slug: 'ticket',
    query: "SELECT id FROM ticket WHERE assignee IN (SELECT id FROM agent WHERE role = 'supervisor') LIMIT 5000",
    expected: (o, t) => ids(where('ticket', t, (x) => eq(chain(x, t, ASSIGNEE)?.role, 'supervisor'))),
  },
  {
    name: 'IN (subquery) on the end of a chain',
    slug: 'ticket',
    query: 'SELECT id FROM ticket WHERE asset.site IN (SELECT id FROM site WHERE is_headquarters = 1) LIMIT 5000',
    expected: (o, t) => {
      const hq = where('site', t, (s) => eq(s.is_headquarters, true)).map((s) => s.id);
      return ids(where('ticket', t, (x) => inList(chain(x, t, ASSET)?.site ?? null, hq)));
    },
  },
  {
    name: 'scalar subquery in SELECT and WHERE',
    slug: 'ticket',
    query: 'SELECT id, (SELECT count(*) FROM ticket_comment c WHERE c.ticket = t.id) AS n FROM ticket t WHERE (SELECT count(*) FROM ticket_comment c WHERE c.ticket = t.id) >= 2 LIMIT 5000',
    expected: (o, t) => live('ticket', t).map((x) => ({ id: x.id, n: commentsOf(x, t).length })).filter((r) => r.n >= 2),
  },

  // ---- multiselect ----
  {
    name: 'has any and has none together',
    slug: 'ticket',
    query: "SELECT id, labels FROM ticket WHERE labels && ARRAY['outage', 'safety'] AND NOT (labels && ARRAY['vip']) LIMIT 5000",
    expected: (o, t) => where('ticket', t, (x) => and(overlaps(x.labels, ['outage', 'safety']), not(overlaps(x.labels, ['vip'])))).map((x) => pick(x, 'id', 'labels')),
  },
  {
    name: '= ARRAY[NULL] and <> ARRAY[NULL]',
    slug: 'ticket_comment',
    query: "SELECT id FROM ticket_comment WHERE attachments = ARRAY[NULL] OR (attachments <> ARRAY[NULL] AND attachments && ARRAY['invoice']) LIMIT 5000",
    expected: (o, t) => ids(where('ticket_comment', t, (c) => or(isEmptyArray(c.attachments), and(!isEmptyArray(c.attachments), overlaps(c.attachments, ['invoice']))))),
  },
  {
    name: 'multiselect emptiness through a chain (no customer counts as empty)',
    slug: 'asset',
    query: 'SELECT id FROM asset WHERE site.customer.tags = ARRAY[NULL] LIMIT 5000',
    expected: (o, t) => ids(live('asset', t).filter((a) => isEmptyArray(chain(a, t, SITE, CUSTOMER)?.tags ?? null))),
  },
  {
    name: 'multiselect overlap through a chain',
    slug: 'ticket',
    query: "SELECT id FROM ticket WHERE assignee.skills && ARRAY['hvac', 'electrical'] LIMIT 5000",
    expected: (o, t) => ids(where('ticket', t, (x) => overlaps(chain(x, t, ASSIGNEE)?.skills ?? null, ['hvac', 'electrical']))),
  },

  // ---- time ----
  {
    name: 'day buckets in Kolkata with HAVING, ordered',
    slug: 'ticket',
    query: "SELECT date_trunc('day', to_timestamp(opened_at/1000) AT TIME ZONE 'Asia/Kolkata') AS day, count(*) AS n FROM ticket GROUP BY day HAVING count(*) >= 2 ORDER BY day LIMIT 5000",
    expected: (o, t) =>
      orderBy(
        [...groupBy(live('ticket', t), (x) => localDayStart(x.opened_at as number | null, 'Asia/Kolkata')).values()].map((g) => ({ day: g.key, n: g.items.length })).filter((r) => r.n >= 2),
        { by: (r) => r.day },
      ),
    ordered: true,
    covers: (o, t, rows) => rows.length > 0,
  },
  {
    name: 'day buckets in New York crossed with a chained enum',
    slug: 'ticket_comment',
    query: "SELECT date_trunc('day', to_timestamp(posted_at/1000) AT TIME ZONE 'America/New_York') AS day, ticket.priority AS priority, count(*) AS n FROM ticket_comment GROUP BY day, ticket.priority LIMIT 5000",
    expected: (o, t) =>
      [...groupBy(live('ticket_comment', t), (c) => [localDayStart(c.posted_at as number | null, 'America/New_York'), chain(c, t, TICKET)?.priority ?? null]).values()].map((g) => {
        const [day, priority] = g.key as [string | null, string | null];
        return { day, priority, n: g.items.length };
      }),
  },
  {
    name: 'month buckets in Kolkata ordered DESC',
    slug: 'ticket',
    query: "SELECT date_trunc('month', to_timestamp(opened_at/1000) AT TIME ZONE 'Asia/Kolkata') AS month, count(*) AS n, sum(time_spent_hours) AS hours FROM ticket GROUP BY 1 ORDER BY 1 DESC LIMIT 100",
    expected: (o, t) =>
      orderBy(
        [...groupBy(live('ticket', t), (x) => monthStart(x.opened_at as number | null, 'Asia/Kolkata')).values()].map((g) => ({ month: g.key, n: g.items.length, hours: sum(g.items.map((x) => x.time_spent_hours)) })),
        { by: (r) => r.month, desc: true },
      ),
    ordered: true,
  },
  {
    name: "day of week with date_part('dow') in Kolkata",
    slug: 'ticket',
    query: "SELECT date_part('dow', to_timestamp(opened_at/1000) AT TIME ZONE 'Asia/Kolkata') AS dow, count(*) AS n FROM ticket GROUP BY 1 ORDER BY 1 LIMIT 10",
    expected: (o, t) =>
      orderBy([...groupBy(live('ticket', t), (x) => (x.opened_at === null ? null : weekday(x.opened_at as number, 'Asia/Kolkata'))).values()].map((g) => ({ dow: g.key, n: g.items.length })), { by: (r) => r.dow }),
    ordered: true,
  },
  {
    name: 'relative bound: comments of the last 30 days in Kolkata (pinned NOW)',
    slug: 'ticket_comment',
    query: "SELECT id FROM ticket_comment WHERE posted_at >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata')*1000 - 2592000000 LIMIT 5000",
    expected: (o, t) => ids(where('ticket_comment', t, (c) => ge(c.posted_at, localMidnight(NOW_MS, 'Asia/Kolkata') - 30 * DAY))),
    covers: (o, t, rows) => rows.length > 0,
  },
  {
    name: 'date columns: bounds without AT TIME ZONE, display with ::date',
    slug: 'asset',
    query: 'SELECT id, to_timestamp(purchased_on/1000)::date AS bought, to_timestamp(warranty_expires_on/1000)::date AS warranty FROM asset WHERE warranty_expires_on >= 1735689600000 AND purchased_on < 1704067200000 LIMIT 5000',
    expected: (o, t) =>
      where('asset', t, (a) => and(ge(a.warranty_expires_on, Date.UTC(2025, 0, 1)), gt(Date.UTC(2024, 0, 1), a.purchased_on)))
        .map((a) => ({ id: a.id, bought: utcDate(a.purchased_on as number), warranty: utcDate(a.warranty_expires_on as number) })),
  },

  // ---- expressions and aggregates ----
  {
    name: 'if() with a boolean written 1, and with a number comparison',
    slug: 'ticket',
    query: "SELECT id, if(is_escalated = 1, 'esc', 'normal') AS esc, if(satisfaction_score >= 4, 1, 0) AS happy FROM ticket LIMIT 5000",
    expected: (o, t) =>
      live('ticket', t).map((x) => ({ id: x.id, esc: holds(eq(x.is_escalated, true)) ? 'esc' : 'normal', happy: holds(ge(x.satisfaction_score, 4)) ? 1 : 0 })),
  },
  {
    name: 'sum of a simple CASE grouped by a chain',
    slug: 'ticket',
    query: "SELECT customer.tier AS tier, sum(CASE priority WHEN 'urgent' THEN 3 WHEN 'high' THEN 2 ELSE 1 END) AS weight FROM ticket GROUP BY customer.tier LIMIT 100",
    expected: (o, t) =>
      [...groupBy(live('ticket', t), (x) => chain(x, t, CUSTOMER)?.tier ?? null).values()].map((g) => ({
        tier: g.key, weight: g.items.reduce((acc, x) => acc + (x.priority === 'urgent' ? 3 : x.priority === 'high' ? 2 : 1), 0),
      })),
  },
  {
    name: 'coalesce inside arithmetic',
    slug: 'ticket',
    query: 'SELECT id, coalesce(time_spent_hours, 0) + coalesce(billable_amount, 0) AS s FROM ticket LIMIT 5000',
    expected: (o, t) => live('ticket', t).map((x) => ({ id: x.id, s: sum([coalesce(x.time_spent_hours, 0), coalesce(x.billable_amount, 0)]) })),
  },
  {
    name: 'avg, min and max per enum, dates included',
    slug: 'asset',
    query: 'SELECT category, avg(runtime_hours) AS avg_h, min(purchased_on) AS first_bought, max(last_serviced_at) AS last_service, count(DISTINCT site) AS sites FROM asset GROUP BY category LIMIT 100',
    expected: (o, t) =>
      [...groupBy(live('asset', t), (a) => a.category).values()].map((g) => ({
        category: g.key,
        avg_h: avg(g.items.map((a) => a.runtime_hours)),
        first_bought: min(g.items.map((a) => a.purchased_on)),
        last_service: max(g.items.map((a) => a.last_serviced_at)),
        sites: countDistinct(g.items.map((a) => a.site)),
      })),
  },
  {
    name: 'integer sums and COUNT(DISTINCT relation) per enum',
    slug: 'ticket_comment',
    query: 'SELECT sentiment, sum(word_count) AS words, count(DISTINCT author) AS authors, count(author.id) AS live_authors FROM ticket_comment GROUP BY sentiment LIMIT 100',
    expected: (o, t) =>
      [...groupBy(live('ticket_comment', t), (c) => c.sentiment).values()].map((g) => ({
        sentiment: g.key,
        words: sum(g.items.map((c) => c.word_count)),
        authors: countDistinct(g.items.map((c) => c.author)),
        live_authors: count(g.items.map((c) => chain(c, t, AUTHOR)?.id ?? null)),
      })),
  },
  {
    name: 'ORDER BY ASC NULLS FIRST with a tie-breaker',
    slug: 'ticket',
    query: 'SELECT id, satisfaction_score FROM ticket ORDER BY satisfaction_score ASC NULLS FIRST, id LIMIT 50',
    expected: (o, t) => orderBy(live('ticket', t).map((x) => pick(x, 'id', 'satisfaction_score')), { by: (r) => r.satisfaction_score, nulls: 'first' }, { by: (r) => r.id }).slice(0, 50),
    ordered: true,
  },
  {
    name: 'HAVING, ORDER BY ordinal and an aggregate',
    slug: 'ticket',
    query: 'SELECT priority, count(*) AS n FROM ticket GROUP BY priority HAVING count(*) > 20 ORDER BY 2 DESC, 1 LIMIT 10',
    expected: (o, t) =>
      orderBy([...groupBy(live('ticket', t), (x) => x.priority).values()].map((g) => ({ priority: g.key, n: g.items.length })).filter((r) => r.n > 20), { by: (r) => r.n, desc: true }, { by: (r) => r.priority }),
    ordered: true,
  },
  {
    name: 'ORDER BY an aggregate that is not selected',
    slug: 'ticket',
    query: 'SELECT channel FROM ticket GROUP BY channel ORDER BY count(*) DESC, channel LIMIT 10',
    expected: (o, t) =>
      orderBy([...groupBy(live('ticket', t), (x) => x.channel).values()], { by: (g) => g.items.length, desc: true }, { by: (g) => g.key }).map((g) => ({ channel: g.key })),
    ordered: true,
  },
  {
    name: "ILIKE with a doubled quote: O'Brien in any case",
    slug: 'ticket_comment',
    query: "SELECT id, body FROM ticket_comment WHERE body ILIKE '%o''brien%' LIMIT 5000",
    expected: (o, t) => where('ticket_comment', t, (c) => like(c.body, "%o'brien%", true)).map((c) => pick(c, 'id', 'body')),
    covers: (o, t, rows) => rows.length > 0,
  },
  {
    name: 'LIKE with _ and a backslash in the data',
    slug: 'site',
    query: "SELECT id, address FROM site WHERE address LIKE '%under_score%' OR address LIKE '%back\\\\slash%' LIMIT 5000",
    expected: (o, t) => where('site', t, (s) => or(like(s.address, '%under_score%'), like(s.address, '%back\\\\slash%'))).map((s) => pick(s, 'id', 'address')),
    covers: (o, t, rows) => rows.some((r) => (r.address as string).includes('\\')),
  },
  {
    name: 'SELECT * with json, multiselect, dates and booleans',
    slug: 'asset',
    query: "SELECT * FROM asset WHERE category = 'hvac' LIMIT 5000",
    expected: (o, t) => where('asset', t, (a) => eq(a.category, 'hvac')).map(({ org_id: _org, is_deleted: _deleted, ...rest }) => rest),
    rawRefs: ['site'],
  },
];

runCases('helpdesk execution on PGlite', CASES, TENANTS);

describe('helpdesk: tenants, soft deletion, count', () => {
  it('a depth-4 chain never reads through a broken hop, whatever breaks it', async () => {
    const seen = new Set<string>();
    for (const t of TENANTS) {
      const rows = await run('SELECT id, ticket AS t_raw, ticket.asset.site.customer.id AS cust FROM ticket_comment LIMIT 10000', 'ticket_comment', t);
      const byId = new Map(live('ticket_comment', t).map((c) => [c.id, c]));
      for (const r of rows) {
        const c = byId.get(r.id)!;
        // Every hop's kind; where one is broken, the end of the chain is NULL.
        let at: Row | null = c;
        for (const [col, target] of [TICKET, ASSET, SITE, CUSTOMER]) {
          const kind = oracle.refKind(at!, col, target, t);
          seen.add(kind);
          at = kind === 'ok' ? oracle.follow(at, col, target, t) : null;
          if (!at) break;
        }
        expect(r.cust).toBe(at?.id ?? null);
      }
    }
    expect(sameSet(seen, new Set(['ok', 'null', 'nowhere', 'deleted', 'foreign']))).toBe(true);
  });

  it('every table of every tenant shows only live records of that tenant', async () => {
    for (const t of TENANTS) {
      for (const slug of ['customer', 'site', 'asset', 'ticket', 'ticket_comment', 'agent', 'team', 'sla_policy']) {
        const rows = await run(`SELECT id FROM ${slug} LIMIT 10000`, slug, t);
        expect(multiset(rows), `${slug} for ${t}`).toEqual(multiset(ids(live(slug, t))));
      }
    }
  });

  it('count with LIMIT: the LIMIT when more rows exist, exact when fewer', async () => {
    for (const t of TENANTS) {
      const urgent = live('ticket', t).filter((x) => x.priority === 'urgent').length;
      expect(urgent).toBeGreaterThan(25);
      expect(await runCount("SELECT id FROM ticket WHERE priority = 'urgent' LIMIT 25", 'ticket', t)).toBe(25);
      expect(await runCount("SELECT id FROM ticket WHERE priority = 'urgent' LIMIT 5000", 'ticket', t)).toBe(urgent);
      const withComments = live('ticket', t).filter((x) => commentsOf(x, t).some((c) => c.is_public === true)).length;
      expect(await runCount('SELECT DISTINCT id FROM ticket WHERE comments.is_public = 1 LIMIT 5000', 'ticket', t)).toBe(withComments);
    }
  });

  it('COUNT(DISTINCT id) over two fan-outs: literal plan, planned semi-joins and written EXISTS agree', async () => {
    for (const t of TENANTS) {
      const dotted = "SELECT count(DISTINCT id) AS n FROM customer WHERE sites.timezone = 'asia_kolkata' AND tickets.priority = 'urgent' LIMIT 1";
      const [fan] = await run(dotted, 'customer', t, LITERAL);
      const [planned] = await run(dotted, 'customer', t);
      const [semi] = await run(
        "SELECT count(id) AS n FROM customer c WHERE EXISTS (SELECT 1 FROM site s WHERE s.customer = c.id AND s.timezone = 'asia_kolkata') AND EXISTS (SELECT 1 FROM ticket x WHERE x.customer = c.id AND x.priority = 'urgent') LIMIT 1",
        'customer', t,
      );
      expect(fan).toEqual(semi);
      expect(planned).toEqual(semi);
      expect(fan!.n as number).toBeGreaterThan(0);
    }
  });
});
