/**
 * 45 report queries over bench/schemas/revenue-crm.json, a schema no test uses, for the
 * interleaved benchmark. Each text has one `{n}` where a number goes: the benchmark writes a
 * different number into every call, so no two texts it compiles are the same, as with agents
 * that rarely send one text twice.
 */

export interface RevenueQuery {
  readonly slug: string;
  readonly template: string;
}

const Q = (slug: string, template: string): RevenueQuery => ({ slug, template });

export const REVENUE_QUERIES: readonly RevenueQuery[] = [
  // Short: one object, a filter or two.
  Q('company', 'SELECT id, name FROM company WHERE employees > {n} LIMIT 100'),
  Q('company', "SELECT name, arr FROM company WHERE segment = 'enterprise' ORDER BY arr DESC LIMIT {n}"),
  Q('person', "SELECT full_name, email FROM person WHERE lifecycle = 'mql' AND lead_score >= {n} LIMIT 50"),
  Q('deal', 'SELECT count(id) AS open_deals FROM deal WHERE value > {n} LIMIT 1'),
  Q('deal', "SELECT title, value FROM deal WHERE pipeline_stage = 'proposal' LIMIT {n}"),
  Q('subscription', "SELECT plan_name, mrr FROM subscription WHERE status = 'past_due' AND mrr > {n} LIMIT 100"),
  Q('invoice', "SELECT number, amount_due FROM invoice WHERE status = 'open' AND amount_due > {n} LIMIT 200"),
  Q('activity', "SELECT subject, occurred_at FROM activity WHERE kind = 'call' AND duration_minutes > {n} LIMIT 100"),
  Q('rep', 'SELECT name, quota FROM rep WHERE is_active = 1 AND quota > {n} LIMIT 100'),
  Q('company', "SELECT id, name FROM company WHERE tech_stack && ARRAY['snowflake'] AND employees < {n} LIMIT 100"),
  Q('person', 'SELECT full_name, company.name FROM person WHERE lead_score > {n} LIMIT 100'),
  Q('deal', 'SELECT title, owner.name FROM deal WHERE seats > {n} LIMIT 25'),
  Q('subscription', 'SELECT id FROM subscription WHERE addons = ARRAY[NULL] AND seats > {n} LIMIT 100'),
  Q('invoice', 'SELECT number FROM invoice WHERE is_disputed = 1 AND amount_paid < {n} LIMIT 50'),
  Q('rep', "SELECT name, email FROM rep WHERE name ILIKE '%{n}%' LIMIT 20"),
  Q('activity', 'SELECT kind, count(id) AS n FROM activity WHERE duration_minutes < {n} GROUP BY kind LIMIT 10'),

  // Typical: joins through to-one paths, aggregates, dates, EXISTS, one-to-many filters.
  Q('deal', "SELECT id, title, value, company.name AS company_name, company.account_exec.name AS ae FROM deal WHERE pipeline_stage = 'closed_won' AND value > {n} ORDER BY value DESC LIMIT 100"),
  Q('deal', 'SELECT pipeline_stage, count(id) AS n, sum(value) AS pipeline, avg(win_probability) AS avg_p FROM deal WHERE expected_close >= 1735689600000 AND value > {n} GROUP BY pipeline_stage ORDER BY pipeline DESC LIMIT 20'),
  Q('deal', "SELECT date_trunc('month', to_timestamp(closed_at/1000) AT TIME ZONE 'Europe/Berlin') AS month, count(id) AS won, sum(value) AS booked FROM deal WHERE pipeline_stage = 'closed_won' AND value > {n} GROUP BY month ORDER BY month LIMIT 36"),
  Q('company', "SELECT COUNT(DISTINCT id) AS companies FROM company WHERE deals.pipeline_stage = 'trial' AND deals.seats > {n} LIMIT 100"),
  Q('company', "SELECT count(id) AS n FROM company c WHERE EXISTS (SELECT 1 FROM subscription s WHERE s.company = c.id AND s.status = 'active' AND s.mrr > {n}) AND NOT EXISTS (SELECT 1 FROM invoice i WHERE i.company = c.id AND i.status = 'uncollectible') LIMIT 100"),
  Q('deal', "SELECT owner.name AS rep, count(id) AS n, SUM(if(pipeline_stage = 'closed_won', value, 0)) AS won, COUNT(CASE WHEN pipeline_stage = 'closed_lost' THEN 1 END) AS lost FROM deal GROUP BY owner.name HAVING count(id) > {n} ORDER BY won DESC LIMIT 50"),
  Q('person', "SELECT id, full_name, company.name AS company_name, company.csm.email AS csm_email FROM person WHERE company.tech_stack && ARRAY['aws', 'kubernetes'] AND lead_score > {n} ORDER BY full_name LIMIT 500"),
  Q('company', "SELECT industry, count(id) AS n, ROUND(SUM(arr)/1000000, 2) AS arr_millions FROM company WHERE (NOT (tech_stack && ARRAY['hubspot']) OR tech_stack = ARRAY[NULL]) AND employees > {n} GROUP BY industry ORDER BY arr_millions DESC LIMIT 10"),
  Q('person', "SELECT persona, count(id) AS n FROM person WHERE interests && ARRAY['security', 'pricing'] AND lead_score BETWEEN {n} AND 100 AND do_not_contact = 0 GROUP BY persona LIMIT 100"),
  Q('rep', "SELECT id, name, manager.name AS manager_name, manager.manager.name AS director FROM rep WHERE team IN ('ae', 'csm') AND quota > {n} ORDER BY name LIMIT 200"),
  Q('invoice', "SELECT to_timestamp(paid_at/1000)::date AS paid_day, count(id) AS n, sum(amount_paid) AS collected FROM invoice WHERE status NOT IN ('void', 'draft') AND amount_paid > {n} GROUP BY paid_day ORDER BY paid_day LIMIT 400"),
  Q('company', "SELECT DISTINCT id, name FROM company WHERE invoices.is_disputed = 1 AND region = 'emea' AND employees > {n} ORDER BY name LIMIT 100"),
  Q('subscription', "SELECT company.account_exec.name AS ae, plan, count(id) AS n, sum(mrr) AS mrr FROM subscription WHERE status IN ('active', 'past_due') AND mrr > {n} GROUP BY company.account_exec.name, plan ORDER BY mrr DESC LIMIT 100"),
  Q('company', "SELECT name, segment, COUNT(DISTINCT deals.id) AS open_deals FROM company WHERE deals.pipeline_stage IN ('proposal', 'legal') AND deals.value > {n} GROUP BY name, segment ORDER BY open_deals DESC LIMIT 20"),
  Q('activity', "SELECT deal.company.name AS company, count(id) AS touches, sum(duration_minutes) AS minutes FROM activity WHERE kind IN ('call', 'meeting') AND outcome = 'connected' AND duration_minutes > {n} GROUP BY deal.company.name ORDER BY touches DESC LIMIT 25"),
  Q('rep', "SELECT r.name, r.territory AS territory FROM rep r WHERE EXISTS (SELECT 1 FROM deal d WHERE d.owner = r.id AND d.is_forecast = 1 AND d.value > {n} AND d.closed_at IS NULL) ORDER BY r.name LIMIT 100"),
  Q('activity', "SELECT date_trunc('week', to_timestamp(occurred_at/1000) AT TIME ZONE 'America/Chicago') AS week, count(id) AS n, COUNT(CASE WHEN is_inbound = 1 THEN 1 END) AS inbound FROM activity WHERE duration_minutes >= {n} GROUP BY week ORDER BY week LIMIT 60"),
  Q('subscription', "SELECT plan, billing_period, count(id) AS n, avg(seats) AS avg_seats FROM subscription WHERE renews_on < 1767225600000 AND auto_renew = 0 AND seats > {n} GROUP BY plan, billing_period LIMIT 50"),
  Q('deal', "SELECT title, value, win_probability, value * win_probability / 100 AS weighted FROM deal WHERE is_forecast = 1 AND expected_close < 1767225600000 AND value > {n} ORDER BY weighted DESC LIMIT 100"),
  Q('person', "SELECT lower(email) AS email, full_name, coalesce(title, 'unknown') AS title FROM person WHERE company.segment = 'smb' AND lead_score > {n} AND email IS NOT NULL LIMIT 300"),
  Q('invoice', "SELECT company.name AS company, sum(amount_due - amount_paid) AS outstanding FROM invoice WHERE status = 'open' AND due_on < 1735689600000 AND amount_due > {n} GROUP BY company.name HAVING sum(amount_due - amount_paid) > 0 ORDER BY outstanding DESC LIMIT 50"),
  Q('company', "SELECT id, name, parent.name AS parent_name, parent.parent.name AS group_name FROM company WHERE parent IS NOT NULL AND health_score < {n} ORDER BY name LIMIT 100"),
  Q('deal', "SELECT deal_type, count(id) AS n FROM deal WHERE loss_reasons && ARRAY['price', 'competitor'] AND pipeline_stage = 'closed_lost' AND seats > {n} GROUP BY deal_type LIMIT 10"),

  // Long: wide select lists and many conditions.
  Q('deal', "SELECT id, title, value, seats, pipeline_stage, deal_type, expected_close, closed_at, win_probability, company.name AS company_name, company.segment AS segment, company.region AS region, company.industry AS industry, company.arr AS company_arr, company.account_exec.name AS ae, company.account_exec.email AS ae_email, company.csm.name AS csm, champion.full_name AS champion, champion.email AS champion_email, champion.persona AS persona, owner.name AS owner_name, owner.team AS owner_team, owner.manager.name AS owner_manager, value * win_probability / 100 AS weighted, if(pipeline_stage = 'closed_won', value, 0) AS won_value, date_trunc('quarter', to_timestamp(expected_close/1000) AT TIME ZONE 'UTC') AS quarter, CASE WHEN value > 100000 THEN 'large' WHEN value > 20000 THEN 'medium' ELSE 'small' END AS band FROM deal WHERE (pipeline_stage IN ('proposal', 'legal') AND value > {n} AND company.segment IN ('enterprise', 'strategic')) OR (is_forecast = 1 AND win_probability >= 60 AND owner.is_active = 1) OR (company.tech_stack && ARRAY['salesforce'] AND NOT (loss_reasons && ARRAY['no_budget'])) ORDER BY value DESC LIMIT 500"),
  Q('company', "SELECT id, name, website, segment, region, industry, tech_stack, employees, arr, health_score, is_customer, customer_since, last_activity_at, account_exec.name AS ae, account_exec.email AS ae_email, account_exec.manager.name AS ae_manager, csm.name AS csm, csm.territory AS csm_territory, parent.name AS parent_name, round(arr / 12, 2) AS mrr_estimate, upper(region) AS region_code, coalesce(health_score, 0) AS health, concat(name, ' (', segment, ')') AS label FROM company WHERE (employees > {n} AND arr > 100000 AND region = 'amer') OR (segment = 'strategic' AND health_score < 50) OR (tech_stack && ARRAY['snowflake', 'gcp'] AND is_customer = 1 AND customer_since < 1735689600000) OR (account_exec.territory = 'emea' AND last_activity_at < 1730000000000) ORDER BY arr DESC LIMIT 1000"),
  Q('subscription', "SELECT id, plan_name, plan, billing_period, status, addons, mrr, seats, starts_on, renews_on, cancelled_at, auto_renew, company.name AS company_name, company.segment AS segment, company.csm.name AS csm, company.account_exec.name AS ae, source_deal.title AS deal_title, source_deal.value AS deal_value, source_deal.owner.name AS deal_owner, mrr * 12 AS arr, if(auto_renew = 1, 'auto', 'manual') AS renewal, to_timestamp(renews_on/1000)::date AS renewal_day FROM subscription WHERE (status = 'active' AND mrr > {n} AND renews_on < 1767225600000) OR (status = 'past_due' AND company.is_customer = 1) OR (addons && ARRAY['sso', 'audit_log'] AND seats BETWEEN 50 AND 5000 AND company.region IN ('emea', 'apac')) ORDER BY mrr DESC LIMIT 500"),
  Q('activity', "SELECT id, subject, kind, outcome, duration_minutes, occurred_at, is_inbound, deal.title AS deal_title, deal.pipeline_stage AS stage, deal.value AS deal_value, deal.company.name AS company_name, deal.company.segment AS segment, deal.owner.name AS deal_owner, person.full_name AS person_name, person.email AS person_email, person.persona AS persona, person.company.name AS person_company, rep.name AS rep_name, rep.team AS rep_team, rep.manager.name AS rep_manager, date_trunc('day', to_timestamp(occurred_at/1000) AT TIME ZONE 'Asia/Tokyo') AS day, duration_minutes / 60 AS hours FROM activity WHERE (kind = 'meeting' AND duration_minutes > {n} AND deal.pipeline_stage IN ('demo', 'trial')) OR (outcome = 'no_answer' AND rep.team = 'sdr') OR (person.lifecycle IN ('sql', 'opportunity') AND occurred_at >= 1735689600000 AND is_inbound = 0) ORDER BY occurred_at DESC LIMIT 500"),
  Q('invoice', "SELECT id, number, status, amount_due, amount_paid, tax_rate, issued_on, due_on, paid_at, is_disputed, company.name AS company_name, company.region AS region, company.account_exec.name AS ae, company.csm.name AS csm, subscription.plan AS plan, subscription.billing_period AS period, subscription.company.parent.name AS parent_company, amount_due - amount_paid AS balance, round(amount_due * tax_rate / 100, 2) AS tax, abs(amount_due - amount_paid) AS gap, coalesce(paid_at, 0) AS paid_or_zero FROM invoice WHERE (status IN ('open', 'uncollectible') AND amount_due > {n} AND due_on < 1735689600000) OR (is_disputed = 1 AND company.segment = 'enterprise') OR (subscription.status = 'past_due' AND amount_paid < amount_due AND issued_on >= 1704067200000) ORDER BY due_on LIMIT 1000"),
  Q('person', "SELECT id, full_name, email, phone, title, persona, lifecycle, interests, lead_score, last_seen_at, do_not_contact, company.name AS company_name, company.industry AS industry, company.segment AS segment, company.employees AS employees, company.account_exec.name AS ae, owner.name AS owner_name, owner.territory AS territory, lower(email) AS email_lc, concat(full_name, ' <', email, '>') AS contact_line FROM person WHERE (lifecycle IN ('mql', 'sql') AND lead_score > {n} AND do_not_contact = 0) OR (persona = 'economic_buyer' AND company.segment IN ('enterprise', 'strategic') AND company.is_customer = 0) OR (interests && ARRAY['analytics'] AND last_seen_at >= 1735689600000 AND owner.is_active = 1) ORDER BY lead_score DESC LIMIT 1000"),
];

/** The `i`-th text of a rotation: query `i mod 45` with `n` written where its number goes. */
export function revenueText(q: RevenueQuery, n: number): string {
  return q.template.replace('{n}', String(n));
}
