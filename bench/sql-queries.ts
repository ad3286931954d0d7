/**
 * Report queries for the SQL benchmark, each with the SQL an expert would write by hand for the
 * same result over the physical tables: `$1` is the tenant, every table reference carries
 * `org_id = $1 AND is_deleted = false`, and to-one relations to a missing, soft-deleted or other
 * tenant's record read as NULL (LEFT JOIN with the guards in ON), as the service defines.
 * `$2` is the pinned NOW() where a query uses it (see NOW below).
 */

export interface SqlQuery {
  readonly id: string;
  /** What the query exercises. */
  readonly features: string;
  readonly slug: string;
  readonly oql: string;
  readonly hand: string;
  /** Compile with compileCount (the count endpoint) instead of compile. */
  readonly count?: boolean;
  /** The hand-written SQL takes the pinned NOW() as $2. */
  readonly usesNow?: boolean;
}

/** NOW() is pinned so results do not depend on the day the benchmark runs. */
export const NOW = '2025-06-30T12:00:00.000Z';

const live = (alias: string): string => `${alias}.org_id = $1 AND ${alias}.is_deleted = false`;
const toOne = (table: string, alias: string, from: string): string =>
  `LEFT JOIN ${table} ${alias} ON ${alias}.org_id = $1 AND ${alias}.id = ${from} AND ${alias}.is_deleted = false`;

export const SQL_QUERIES: readonly SqlQuery[] = [
  {
    id: 'Q01',
    features: 'to-one chain (3 hops) in SELECT, ORDER BY + LIMIT',
    slug: 'opportunity',
    oql: "SELECT id, name, amount, account.name AS account_name, account.owner.name AS account_owner, owner.manager.name AS owner_manager FROM opportunity WHERE stage = 'won' AND amount > 9000 ORDER BY amount DESC, id LIMIT 200",
    hand: `SELECT o.id, o.name, o.amount, a.name, au.name, om.name
FROM opportunity o
${toOne('account', 'a', 'o.account')}
${toOne('"user"', 'au', 'a.owner')}
${toOne('"user"', 'ow', 'o.owner')}
${toOne('"user"', 'om', 'ow.manager')}
WHERE ${live('o')} AND o.stage = 'won' AND o.amount > 9000
ORDER BY o.amount DESC, o.id LIMIT 200`,
  },
  {
    id: 'Q02',
    features: 'to-one chain (2 hops) in WHERE',
    slug: 'opportunity',
    oql: "SELECT id, name, amount FROM opportunity WHERE account.industry = 'finance' AND account.owner.role = 'manager' ORDER BY id LIMIT 100",
    hand: `SELECT o.id, o.name, o.amount
FROM opportunity o
JOIN account a ON a.org_id = $1 AND a.id = o.account AND a.is_deleted = false
JOIN "user" u ON u.org_id = $1 AND u.id = a.owner AND u.is_deleted = false
WHERE ${live('o')} AND a.industry = 'finance' AND u.role = 'manager'
ORDER BY o.id LIMIT 100`,
  },
  {
    id: 'Q03',
    features: 'GROUP BY a to-one field, IN list',
    slug: 'opportunity',
    oql: "SELECT account.industry AS industry, count(id) AS n, sum(amount) AS total FROM opportunity WHERE stage IN ('won', 'negotiation') GROUP BY account.industry ORDER BY industry LIMIT 10",
    hand: `SELECT a.industry, count(*), sum(o.amount)
FROM opportunity o
${toOne('account', 'a', 'o.account')}
WHERE ${live('o')} AND o.stage IN ('won', 'negotiation')
GROUP BY a.industry ORDER BY a.industry LIMIT 10`,
  },
  {
    id: 'Q04',
    features: 'virtual relation in WHERE + COUNT(DISTINCT id) (the service\'s recommended form)',
    slug: 'account',
    oql: "SELECT count(DISTINCT id) AS n FROM account WHERE opportunities.stage = 'won' AND opportunities.amount > 5000 LIMIT 100",
    hand: `SELECT count(*)
FROM account a
WHERE ${live('a')}
  AND EXISTS (SELECT 1 FROM opportunity o WHERE ${live('o')} AND o.account = a.id AND o.stage = 'won' AND o.amount > 5000)`,
  },
  {
    id: 'Q05',
    features: 'virtual relation in WHERE + SELECT DISTINCT id, name; multiselect on the child',
    slug: 'account',
    oql: "SELECT DISTINCT id, name FROM account WHERE opportunities.sources && ARRAY['partner'] AND industry = 'finance' ORDER BY id LIMIT 100",
    hand: `SELECT a.id, a.name
FROM account a
WHERE ${live('a')} AND a.industry = 'finance'
  AND EXISTS (SELECT 1 FROM opportunity o WHERE ${live('o')} AND o.account = a.id AND o.sources && ARRAY['partner'])
ORDER BY a.id LIMIT 100`,
  },
  {
    id: 'Q06',
    features: 'virtual relation, fan-out rows (parent without children keeps a NULL row: OR ... IS NULL)',
    slug: 'account',
    oql: "SELECT id, name, opportunities.name AS opp, opportunities.amount AS amount FROM account WHERE industry = 'software' AND (opportunities.stage = 'won' OR opportunities.id IS NULL) ORDER BY id, opportunities.id LIMIT 1000",
    hand: `SELECT a.id, a.name, o.name, o.amount
FROM account a
LEFT JOIN opportunity o ON o.org_id = $1 AND o.account = a.id AND o.is_deleted = false
WHERE ${live('a')} AND a.industry = 'software' AND (o.stage = 'won' OR o.id IS NULL)
ORDER BY a.id, o.id LIMIT 1000`,
  },
  {
    id: 'Q07',
    features: 'virtual relation, fan-out aggregate (multiplicity matters), GROUP BY parent field',
    slug: 'account',
    oql: "SELECT industry, count(opportunities.id) AS opps, sum(opportunities.amount) AS pipeline FROM account WHERE opportunities.stage NOT IN ('won', 'lost') GROUP BY industry ORDER BY industry LIMIT 10",
    hand: `SELECT a.industry, count(*), sum(o.amount)
FROM account a
JOIN opportunity o ON o.org_id = $1 AND o.account = a.id AND o.is_deleted = false
WHERE ${live('a')} AND o.stage NOT IN ('won', 'lost')
GROUP BY a.industry ORDER BY a.industry LIMIT 10`,
  },
  {
    id: 'Q08',
    features: 'AND across two virtual relations + COUNT(DISTINCT id)',
    slug: 'account',
    oql: "SELECT count(DISTINCT id) AS n FROM account WHERE opportunities.stage = 'won' AND contacts.status = 'bounced' LIMIT 100",
    hand: `SELECT count(*)
FROM account a
WHERE ${live('a')}
  AND EXISTS (SELECT 1 FROM opportunity o WHERE ${live('o')} AND o.account = a.id AND o.stage = 'won')
  AND EXISTS (SELECT 1 FROM contact c WHERE ${live('c')} AND c.account = a.id AND c.status = 'bounced')`,
  },
  {
    id: 'Q09',
    features: 'correlated EXISTS and NOT EXISTS (semi-join, anti-join)',
    slug: 'account',
    oql: "SELECT count(id) AS n FROM account a WHERE EXISTS (SELECT 1 FROM opportunity o WHERE o.account = a.id AND o.stage = 'won') AND NOT EXISTS (SELECT 1 FROM contact c WHERE c.account = a.id AND c.status = 'bounced') LIMIT 100",
    hand: `SELECT count(*)
FROM account a
WHERE ${live('a')}
  AND EXISTS (SELECT 1 FROM opportunity o WHERE ${live('o')} AND o.account = a.id AND o.stage = 'won')
  AND NOT EXISTS (SELECT 1 FROM contact c WHERE ${live('c')} AND c.account = a.id AND c.status = 'bounced')`,
  },
  {
    id: 'Q10',
    features: 'correlated scalar subquery (children per parent)',
    slug: 'account',
    oql: "SELECT id, name, (SELECT count(id) FROM opportunity o WHERE o.account = a.id) AS opps FROM account a WHERE industry = 'retail' ORDER BY id LIMIT 100",
    hand: `SELECT a.id, a.name, (SELECT count(*) FROM opportunity o WHERE ${live('o')} AND o.account = a.id)
FROM account a
WHERE ${live('a')} AND a.industry = 'retail'
ORDER BY a.id LIMIT 100`,
  },
  {
    id: 'Q11',
    features: 'multiselect has-any (&&), GROUP BY',
    slug: 'opportunity',
    oql: "SELECT stage, count(id) AS n FROM opportunity WHERE sources && ARRAY['web', 'referral'] GROUP BY stage ORDER BY stage LIMIT 100",
    hand: `SELECT o.stage, count(*)
FROM opportunity o
WHERE ${live('o')} AND o.sources && ARRAY['web', 'referral']
GROUP BY o.stage ORDER BY o.stage LIMIT 100`,
  },
  {
    id: 'Q12',
    features: 'multiselect has-none OR is-empty (= ARRAY[NULL])',
    slug: 'account',
    oql: "SELECT industry, count(id) AS n FROM account WHERE NOT (tags && ARRAY['churn_risk']) OR tags = ARRAY[NULL] GROUP BY industry ORDER BY industry LIMIT 100",
    hand: `SELECT a.industry, count(*)
FROM account a
WHERE ${live('a')} AND (a.tags IS NULL OR NOT (a.tags && ARRAY['churn_risk']))
GROUP BY a.industry ORDER BY a.industry LIMIT 100`,
  },
  {
    id: 'Q13',
    features: 'day buckets in Asia/Kolkata, relative window from NOW() (pinned)',
    slug: 'opportunity',
    usesNow: true,
    oql: "SELECT date_trunc('day', to_timestamp(created_at/1000) AT TIME ZONE 'Asia/Kolkata') AS day, count(id) AS n, sum(amount) AS total FROM opportunity WHERE created_at >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata')*1000 - 90*86400000 GROUP BY day ORDER BY day LIMIT 100",
    hand: `SELECT date_trunc('day', to_timestamp(o.created_at / 1000) AT TIME ZONE 'Asia/Kolkata') AS day, count(*), sum(o.amount)
FROM opportunity o
WHERE ${live('o')}
  AND o.created_at >= date_part('epoch', date_trunc('day', $2::timestamptz AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata') * 1000 - 90 * 86400000::bigint
GROUP BY 1 ORDER BY 1 LIMIT 100`,
  },
  {
    id: 'Q14',
    features: 'day buckets of a date column (::date), epoch range',
    slug: 'opportunity',
    oql: 'SELECT to_timestamp(close_date/1000)::date AS close_day, count(id) AS n, sum(amount) AS total FROM opportunity WHERE close_date >= 1735689600000 AND close_date < 1738368000000 GROUP BY close_day ORDER BY close_day LIMIT 100',
    hand: `SELECT to_timestamp(o.close_date / 1000)::date, count(*), sum(o.amount)
FROM opportunity o
WHERE ${live('o')} AND o.close_date >= 1735689600000 AND o.close_date < 1738368000000
GROUP BY 1 ORDER BY 1 LIMIT 100`,
  },
  {
    id: 'Q15',
    features: 'week buckets in America/New_York, GROUP BY + HAVING',
    slug: 'opportunity',
    oql: "SELECT date_trunc('week', to_timestamp(created_at/1000) AT TIME ZONE 'America/New_York') AS week, count(id) AS n FROM opportunity WHERE stage = 'won' GROUP BY week HAVING count(id) > 20 ORDER BY week LIMIT 200",
    hand: `SELECT date_trunc('week', to_timestamp(o.created_at / 1000) AT TIME ZONE 'America/New_York'), count(*)
FROM opportunity o
WHERE ${live('o')} AND o.stage = 'won'
GROUP BY 1 HAVING count(*) > 20 ORDER BY 1 LIMIT 200`,
  },
  {
    id: 'Q16',
    features: 'GROUP BY a to-one field + HAVING, conditional aggregates (if, CASE)',
    slug: 'opportunity',
    oql: "SELECT owner.name AS rep, count(id) AS n, SUM(if(stage = 'won', amount, 0)) AS won_amount, COUNT(CASE WHEN stage = 'lost' THEN 1 END) AS lost FROM opportunity GROUP BY owner.name HAVING count(id) > 100 ORDER BY rep LIMIT 100",
    hand: `SELECT u.name, count(*), sum(CASE WHEN o.stage = 'won' THEN o.amount ELSE 0 END), count(*) FILTER (WHERE o.stage = 'lost')
FROM opportunity o
${toOne('"user"', 'u', 'o.owner')}
WHERE ${live('o')}
GROUP BY u.name HAVING count(*) > 100 ORDER BY u.name LIMIT 100`,
  },
  {
    id: 'Q17',
    features: 'GROUP BY the relation column itself + HAVING on sum',
    slug: 'opportunity',
    oql: "SELECT owner, count(id) AS n, sum(amount) AS total FROM opportunity WHERE stage = 'won' GROUP BY owner HAVING sum(amount) > 300000 ORDER BY total DESC, owner LIMIT 50",
    hand: `SELECT o.owner, count(*), sum(o.amount) AS total
FROM opportunity o
WHERE ${live('o')} AND o.stage = 'won'
GROUP BY o.owner HAVING sum(o.amount) > 300000 ORDER BY total DESC, o.owner LIMIT 50`,
  },
  {
    id: 'Q18',
    features: 'GROUP BY a 2-hop to-one field and an enum + HAVING',
    slug: 'opportunity',
    oql: 'SELECT account.owner.name AS rep, stage, count(id) AS n FROM opportunity GROUP BY account.owner.name, stage HAVING count(id) > 5 ORDER BY rep, stage LIMIT 500',
    hand: `SELECT u.name, o.stage, count(*)
FROM opportunity o
${toOne('account', 'a', 'o.account')}
${toOne('"user"', 'u', 'a.owner')}
WHERE ${live('o')}
GROUP BY u.name, o.stage HAVING count(*) > 5 ORDER BY u.name, o.stage LIMIT 500`,
  },
  {
    id: 'Q19',
    features: 'child climbing up: multiselect on a to-one parent, 2-hop SELECT',
    slug: 'contact',
    oql: "SELECT id, name, account.name AS account_name, account.owner.email AS owner_email FROM contact WHERE account.tags && ARRAY['key'] AND status = 'active' ORDER BY id LIMIT 500",
    hand: `SELECT c.id, c.name, a.name, u.email
FROM contact c
JOIN account a ON a.org_id = $1 AND a.id = c.account AND a.is_deleted = false
${toOne('"user"', 'u', 'a.owner')}
WHERE ${live('c')} AND a.tags && ARRAY['key'] AND c.status = 'active'
ORDER BY c.id LIMIT 500`,
  },
  {
    id: 'Q20',
    features: 'self relation chain (user.manager.manager), boolean as 1',
    slug: 'user',
    oql: 'SELECT id, name, manager.name AS mgr, manager.manager.name AS mgr2 FROM user WHERE is_active = 1 ORDER BY id LIMIT 500',
    hand: `SELECT u.id, u.name, m.name, mm.name
FROM "user" u
${toOne('"user"', 'm', 'u.manager')}
${toOne('"user"', 'mm', 'm.manager')}
WHERE ${live('u')} AND u.is_active
ORDER BY u.id LIMIT 500`,
  },
  {
    id: 'Q21',
    features: 'ILIKE search + to-one in SELECT',
    slug: 'contact',
    oql: "SELECT id, name, email, account.name AS account_name FROM contact WHERE name ILIKE '%harbor%' ORDER BY id LIMIT 50",
    hand: `SELECT c.id, c.name, c.email, a.name
FROM contact c
${toOne('account', 'a', 'c.account')}
WHERE ${live('c')} AND c.name ILIKE '%harbor%'
ORDER BY c.id LIMIT 50`,
  },
  {
    id: 'C1',
    features: 'count endpoint: LIMIT 100, no ORDER BY (1M-row object)',
    slug: 'opportunity',
    count: true,
    oql: 'SELECT id, name, amount FROM opportunity WHERE amount > 1000 LIMIT 100',
    hand: `SELECT count(*) FROM (SELECT 1 FROM opportunity o WHERE ${live('o')} AND o.amount > 1000 LIMIT 100) q`,
  },
  {
    id: 'C2',
    features: 'count endpoint: LIMIT 100 after ORDER BY, to-one in SELECT',
    slug: 'opportunity',
    count: true,
    oql: "SELECT id, name, amount, account.name AS account_name FROM opportunity WHERE stage = 'won' ORDER BY amount DESC LIMIT 100",
    // The count of the first 100 rows does not depend on their order, nor on to-one joins.
    hand: `SELECT count(*) FROM (SELECT 1 FROM opportunity o WHERE ${live('o')} AND o.stage = 'won' LIMIT 100) q`,
  },
  {
    id: 'C3',
    features: 'count endpoint: SELECT DISTINCT id over a virtual relation, LIMIT 100',
    slug: 'account',
    count: true,
    oql: "SELECT DISTINCT id FROM account WHERE opportunities.stage = 'won' LIMIT 100",
    hand: `SELECT count(*) FROM (SELECT a.id FROM account a WHERE ${live('a')}
  AND EXISTS (SELECT 1 FROM opportunity o WHERE ${live('o')} AND o.account = a.id AND o.stage = 'won') LIMIT 100) q`,
  },
];

/** Count vs fetch: the same query through the count endpoint and through execute. */
export const COUNT_VS_FETCH: readonly string[] = ['C1', 'C2', 'C3'];
