/**
 * The compile benchmark's corpus: report queries over the two fixture catalogs, in three size
 * classes. Every entry must compile (bench/compile.ts asserts it before timing).
 */

export type FixtureName = 'crm' | 'helpdesk';
export type SizeClass = 'short' | 'typical' | 'long';

export interface CorpusQuery {
  readonly id: string;
  readonly fixture: FixtureName;
  readonly slug: string;
  readonly size: SizeClass;
  readonly text: string;
}

const SHORT: [FixtureName, string, string][] = [
  ['crm', 'account', 'SELECT id, name FROM account LIMIT 100'],
  ['crm', 'opportunity', 'SELECT count(id) AS n FROM opportunity LIMIT 1'],
  ['crm', 'contact', "SELECT name, email FROM contact WHERE status = 'active' LIMIT 50"],
  ['crm', 'lead', 'SELECT id, name FROM lead WHERE score > 50 LIMIT 100'],
  ['crm', 'user', 'SELECT id, name FROM user WHERE is_active = 1 LIMIT 100'],
  ['crm', 'opportunity', 'SELECT id, amount FROM opportunity ORDER BY amount DESC LIMIT 10'],
  ['crm', 'account', "SELECT id, name FROM account WHERE tags && ARRAY['key'] LIMIT 100"],
  ['crm', 'contact', 'SELECT name, owner.name FROM contact LIMIT 100'],
  ['helpdesk', 'ticket', "SELECT subject FROM ticket WHERE priority = 'urgent' LIMIT 20"],
  ['helpdesk', 'customer', 'SELECT name, tier FROM customer LIMIT 100'],
  ['helpdesk', 'asset', 'SELECT count(id) AS n FROM asset WHERE is_critical = 1 LIMIT 1'],
  ['helpdesk', 'ticket', 'SELECT id FROM ticket WHERE labels = ARRAY[NULL] LIMIT 100'],
  ['helpdesk', 'site', "SELECT name, city FROM site WHERE city ILIKE '%york%' LIMIT 25"],
  ['helpdesk', 'agent', 'SELECT name, team.name FROM agent WHERE is_available = 1 LIMIT 50'],
];

const TYPICAL: [FixtureName, string, string][] = [
  ['crm', 'opportunity',
    "SELECT id, name, amount, account.name, account.owner.name AS account_owner FROM opportunity WHERE stage = 'won' AND amount > 50000 ORDER BY amount DESC LIMIT 100"],
  ['crm', 'opportunity',
    "SELECT stage, count(id) AS n, sum(amount) AS total, avg(probability) AS avg_probability FROM opportunity WHERE close_date >= 1735689600000 AND close_date < 1767225600000 GROUP BY stage ORDER BY total DESC LIMIT 100"],
  ['crm', 'opportunity',
    "SELECT date_trunc('day', to_timestamp(created_at/1000) AT TIME ZONE 'Asia/Kolkata') AS day, count(id) AS n, sum(amount) AS total FROM opportunity WHERE created_at >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata')*1000 - 30*86400000 GROUP BY day ORDER BY day LIMIT 100"],
  ['crm', 'account',
    "SELECT COUNT(DISTINCT id) AS accounts FROM account WHERE opportunities.stage = 'won' AND opportunities.amount > 100000 LIMIT 100"],
  ['crm', 'account',
    "SELECT count(id) AS n FROM account a WHERE EXISTS (SELECT 1 FROM opportunity o WHERE o.account = a.id AND o.stage = 'won') AND NOT EXISTS (SELECT 1 FROM contact c WHERE c.account = a.id AND c.status = 'bounced') LIMIT 100"],
  ['crm', 'opportunity',
    "SELECT owner.name AS rep, count(id) AS n, SUM(if(stage = 'won', amount, 0)) AS won_amount, COUNT(CASE WHEN stage = 'lost' THEN 1 END) AS lost FROM opportunity GROUP BY owner.name HAVING count(id) > 10 ORDER BY won_amount DESC LIMIT 50"],
  ['crm', 'contact',
    "SELECT id, name, account.name AS account_name, account.owner.email AS owner_email FROM contact WHERE account.tags && ARRAY['key', 'partner'] AND status = 'active' ORDER BY name LIMIT 500"],
  ['crm', 'account',
    "SELECT industry, count(id) AS n, ROUND(SUM(annual_revenue)/10000000, 2) AS revenue_crore FROM account WHERE NOT (tags && ARRAY['churn_risk']) OR tags = ARRAY[NULL] GROUP BY industry ORDER BY revenue_crore DESC LIMIT 10"],
  ['crm', 'lead',
    "SELECT status, count(id) AS n FROM lead WHERE sources && ARRAY['web', 'event'] AND score BETWEEN 40 AND 90 AND converted_account IS NULL GROUP BY status LIMIT 100"],
  ['crm', 'user',
    "SELECT id, name, manager.name AS manager_name, manager.manager.name AS skip_level FROM user WHERE role IN ('rep', 'manager') AND is_active = 1 ORDER BY name LIMIT 200"],
  ['crm', 'opportunity',
    "SELECT to_timestamp(close_date/1000)::date AS close_day, count(id) AS n FROM opportunity WHERE stage NOT IN ('won', 'lost') AND close_date >= 1735689600000 GROUP BY close_day ORDER BY close_day LIMIT 400"],
  ['crm', 'account',
    "SELECT DISTINCT id, name FROM account WHERE contacts.status = 'bounced' AND industry = 'finance' ORDER BY name LIMIT 100"],
  ['helpdesk', 'ticket',
    "SELECT assignee.team.name AS team, priority, count(id) AS n, avg(time_spent_hours) AS avg_hours FROM ticket WHERE status IN ('open', 'pending') AND opened_at >= 1735689600000 GROUP BY assignee.team.name, priority ORDER BY n DESC LIMIT 100"],
  ['helpdesk', 'customer',
    "SELECT name, tier, COUNT(DISTINCT tickets.id) AS open_tickets FROM customer WHERE tickets.status = 'open' AND tickets.priority IN ('high', 'urgent') GROUP BY name, tier ORDER BY open_tickets DESC LIMIT 20"],
  ['helpdesk', 'asset',
    "SELECT category, count(id) AS n, sum(purchase_cost) AS cost FROM asset WHERE features && ARRAY['iot_sensor'] AND site.customer.tier = 'gold' AND warranty_expires_on < 1767225600000 GROUP BY category LIMIT 50"],
  ['helpdesk', 'agent',
    "SELECT a.name, a.team.region AS region FROM agent a WHERE EXISTS (SELECT 1 FROM ticket t WHERE t.assignee = a.id AND t.is_escalated = 1 AND t.resolved_at IS NULL) ORDER BY a.name LIMIT 100"],
  ['helpdesk', 'ticket',
    "SELECT date_trunc('week', to_timestamp(opened_at/1000) AT TIME ZONE 'America/New_York') AS week, count(id) AS opened, COUNT(CASE WHEN resolved_at IS NOT NULL THEN 1 END) AS resolved FROM ticket WHERE channel = 'portal' GROUP BY week ORDER BY week LIMIT 60"],
  ['helpdesk', 'ticket_comment',
    "SELECT ticket.customer.name AS customer, count(id) AS comments, sum(word_count) AS words FROM ticket_comment WHERE is_public = 1 AND sentiment = 'negative' AND lower(body) LIKE '%delay%' GROUP BY ticket.customer.name ORDER BY comments DESC LIMIT 25"],
];

const CRM_LONG_ITEMS = [
  'id', 'name', 'amount', 'stage', 'close_date', 'probability', 'sources', 'created_at', 'updated_at',
  'account.name', 'account.industry', 'account.city', 'account.annual_revenue', 'account.tags',
  'account.owner.name', 'account.owner.email', 'account.owner.manager.name', 'primary_contact.name',
  'primary_contact.email', 'primary_contact.status', 'owner.name', 'owner.email', 'owner.role',
  'owner.manager.name', 'created_by.name', 'updated_by.name',
];
const CRM_LONG_EXPRS = [
  'amount * probability / 100 AS weighted', "if(stage = 'won', amount, 0) AS won_amount",
  "date_trunc('day', to_timestamp(created_at/1000) AT TIME ZONE 'Asia/Kolkata') AS created_day",
  'to_timestamp(close_date/1000)::date AS close_day', "concat(owner.name, ' / ', account.name) AS label",
  'upper(account.city) AS city_upper', 'coalesce(amount, 0) AS amount_or_zero', 'round(probability, 1) AS p1',
  "CASE WHEN amount > 100000 THEN 'large' WHEN amount > 10000 THEN 'medium' ELSE 'small' END AS size_band",
  'abs(amount - 50000) AS distance', 'lower(trim(name)) AS clean_name', 'date_part(\'epoch\', NOW()) * 1000 - created_at AS age_ms',
  "coalesce(primary_contact.phone, 'n/a') AS phone", 'lower(owner.email) AS owner_email_lc',
];
const CRM_LONG_TERMS = [
  "stage = 'won'", "stage IN ('proposal', 'negotiation')", 'amount > 10000', 'amount BETWEEN 500 AND 900000',
  'probability >= 20', "sources && ARRAY['web', 'referral']", "NOT (sources && ARRAY['cold_call'])",
  "account.industry = 'software'", "account.tags && ARRAY['key']", "account.city ILIKE '%york%'",
  "account.owner.role = 'manager'", 'owner.is_active = 1', "owner.manager.name LIKE 'A%'",
  "primary_contact.status <> 'bounced'", 'primary_contact.is_primary = 1', 'close_date >= 1735689600000',
  'close_date < 1767225600000', 'created_at > 1700000000000', 'account.annual_revenue IS NOT NULL',
  "lower(name) LIKE '%harbor%'", 'sources = ARRAY[NULL]', 'updated_at - created_at < 86400000 * 30',
];

const HELPDESK_LONG_ITEMS = [
  'id', 'subject', 'status', 'priority', 'channel', 'labels', 'requester_email', 'opened_at', 'first_response_at',
  'resolved_at', 'due_on', 'is_escalated', 'satisfaction_score', 'time_spent_hours', 'billable_amount',
  'asset.name', 'asset.category', 'asset.site.name', 'asset.site.city', 'asset.site.customer.name',
  'customer.name', 'customer.tier', 'customer.industry', 'customer.account_manager.name', 'assignee.name',
  'assignee.email', 'assignee.team.name', 'assignee.manager.name', 'team.region', 'sla_policy.name',
];
const HELPDESK_LONG_EXPRS = [
  '(resolved_at - opened_at) / 3600000 AS hours_to_resolve', "if(is_escalated = 1, 'yes', 'no') AS escalated",
  "date_trunc('hour', to_timestamp(opened_at/1000) AT TIME ZONE 'America/New_York') AS opened_hour",
  'to_timestamp(due_on/1000)::date AS due_day', "concat(customer.name, ' - ', subject) AS title",
  'round(time_spent_hours * assignee.hourly_rate, 2) AS labour_cost', 'coalesce(satisfaction_score, 0) AS csat',
  "CASE priority WHEN 'urgent' THEN 1 WHEN 'high' THEN 2 ELSE 3 END AS rank",
  'abs(billable_amount - 100) AS delta', 'upper(channel) AS channel_uc',
];
const HELPDESK_LONG_TERMS = [
  "status IN ('open', 'pending', 'on_hold')", "priority = 'urgent'", 'is_escalated = 1', 'satisfaction_score < 3',
  "labels && ARRAY['outage', 'safety']", 'labels = ARRAY[NULL]', "NOT (labels && ARRAY['billing'])",
  'opened_at >= 1735689600000', 'resolved_at IS NULL', 'due_on < 1767225600000', 'time_spent_hours > 2.5',
  "asset.category = 'hvac'", 'asset.is_critical = 1', "asset.site.city ILIKE '%north%'", "customer.tier IN ('gold', 'platinum')",
  "customer.tags && ARRAY['strategic']", 'assignee.is_available = 1', "assignee.team.region = 'west'",
  "sla_policy.priority = 'high'", "lower(subject) LIKE '%leak%'", 'billable_amount BETWEEN 10 AND 5000',
];

/** A long query: `items` select items and a `terms`-term WHERE of AND groups joined by OR. */
export function longQuery(
  slug: string, columns: readonly string[], exprs: readonly string[], conditions: readonly string[],
  items: number, terms: number, rotate = 0,
): string {
  const select: string[] = [];
  for (let i = 0; select.length < items; i++) {
    const k = (i + rotate) % (columns.length + exprs.length);
    if (i >= columns.length + exprs.length) {
      // Past the distinct items: repeat columns under fresh aliases.
      select.push(`${columns[k % columns.length]!} AS x${i}`);
    } else if (k < columns.length) select.push(`${columns[k]!} AS c${k}`);
    else select.push(exprs[k - columns.length]!.replace(/ AS (\w+)$/, ` AS $1_${i}`));
  }
  const where: string[] = [];
  for (let i = 0; i < terms; i++) where.push(conditions[(i * 7 + rotate) % conditions.length]!);
  // Groups of up to four ANDed terms, ORed together: (a AND b AND c AND d) OR (e AND ...) ...
  const groups: string[] = [];
  for (let i = 0; i < where.length; i += 4) groups.push(`(${where.slice(i, i + 4).join(' AND ')})`);
  return `SELECT ${select.join(', ')} FROM ${slug} WHERE ${groups.join(' OR ')} ORDER BY id LIMIT 500`;
}

/**
 * pgsql-ast-parser rejects four-part names (`account.owner.manager.name`) and node-sql-parser
 * rejects AT TIME ZONE: the `portable` long queries leave both out, so every parser has long
 * texts it accepts.
 */
function portable(xs: readonly string[]): string[] {
  return xs.filter((x) => !/\w+\.\w+\.\w+\.\w+/.test(x) && !x.includes('AT TIME ZONE'));
}

function longQueries(): CorpusQuery[] {
  const out: CorpusQuery[] = [];
  for (let r = 0; r < 5; r++) {
    const p = r >= 3 ? portable : (xs: readonly string[]) => xs;
    const kind = r >= 3 ? 'portable' : 'full';
    out.push({ id: `long-crm-${kind}-${r}`, fixture: 'crm', slug: 'opportunity', size: 'long', text: longQuery('opportunity', p(CRM_LONG_ITEMS), p(CRM_LONG_EXPRS), p(CRM_LONG_TERMS), 40, 20, r * 3) });
    out.push({ id: `long-helpdesk-${kind}-${r}`, fixture: 'helpdesk', slug: 'ticket', size: 'long', text: longQuery('ticket', p(HELPDESK_LONG_ITEMS), p(HELPDESK_LONG_EXPRS), p(HELPDESK_LONG_TERMS), 40, 20, r * 3) });
  }
  return out;
}

export function corpus(): CorpusQuery[] {
  const out: CorpusQuery[] = [];
  SHORT.forEach(([fixture, slug, text], i) => out.push({ id: `short-${i}`, fixture, slug, size: 'short', text }));
  TYPICAL.forEach(([fixture, slug, text], i) => out.push({ id: `typical-${i}`, fixture, slug, size: 'typical', text }));
  out.push(...longQueries());
  return out;
}

/** The linearity series: the base query repeated `factor` times (select items and WHERE terms). */
export function scaledQuery(factor: number): string {
  return longQuery('opportunity', portable(CRM_LONG_ITEMS), portable(CRM_LONG_EXPRS), portable(CRM_LONG_TERMS), 8 * factor, 5 * factor, 0);
}
