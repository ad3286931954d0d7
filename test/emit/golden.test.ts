import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/catalog/load.js';
import { clearCompileCache, compile, compileCount, type CompileOptions } from '../../src/compile.js';
import type { Catalog } from '../../src/catalog/types.js';
import { fixturePayload, loadFixtureCatalog, type FixtureName } from '../../fixtures/index.js';
import crmTypeCodes from '../../fixtures/crm/type-codes.json' with { type: 'json' };

/**
 * Golden cases as data: a query, the exact SQL and the exact parameters. The expected SQL was
 * written from the emitter's documented format (docs/query-language.md#the-sql-it-writes,
 * src/emit/emit.ts): tables `"schema"."table" AS "t<n>"` in order of first use, output columns
 * `"c<i>"`, every literal a `$n::type` parameter numbered in order of first appearance and
 * reused when equal, `$1` the tenant, the tenant and soft-delete guards on every table
 * reference (in the ON clause of a join), the user's WHERE in parentheses after the guards.
 */

const NOW = '2025-06-15T20:00:00Z';
const NOW_ISO = '2025-06-15T20:00:00.000Z';
const ORG = 'org_acme';

/** The guards of a table alias, as the emitter writes them. */
const g = (t: string): string => `"${t}"."org_id" = $1 AND "${t}"."is_deleted" = false`;
const from = (table: string): string => `FROM "public"."${table}" AS "t0"`;
const join = (table: string, alias: string, on: string): string => `LEFT JOIN "public"."${table}" AS "${alias}" ON ${on} AND ${g(alias)}`;

interface Golden {
  readonly name: string;
  readonly fixture?: FixtureName;
  readonly slug: string;
  readonly query: string;
  readonly sql: string;
  readonly params: readonly unknown[];
  readonly keys?: readonly string[];
  readonly count?: boolean;
  readonly now?: boolean;
  /** Compile with the service's literal fan-out for virtual relations (no semi-join rewrite). */
  readonly fanOut?: boolean;
  /** A known emitter bug: expected to fail until fixed. */
  readonly bug?: string;
}

const GOLDEN: Golden[] = [
  {
    name: 'plain filter',
    slug: 'account',
    query: "SELECT id, name FROM account WHERE industry = 'software' LIMIT 10",
    sql: `SELECT "t0"."id" AS "c0", "t0"."name" AS "c1" ${from('account')} WHERE ${g('t0')} AND ("t0"."industry" = $2::text) LIMIT $3::int8`,
    params: [ORG, 'software', 10],
    keys: ['id', 'name'],
  },
  {
    // Sent as int8, a whole number compared with a numeric column costs a cast per row in a generic plan.
    name: 'a whole number compared with a numeric column binds as numeric, on either side, in BETWEEN and IN',
    slug: 'opportunity',
    query: 'SELECT id FROM opportunity WHERE amount >= 1000 AND 50 < probability AND amount BETWEEN 1 AND 2 AND amount IN (3, 4) AND close_date >= 1700000000000 LIMIT 10',
    sql:
      `SELECT "t0"."id" AS "c0" ${from('opportunity')} WHERE ${g('t0')} AND (("t0"."amount" >= $2::numeric) AND ($3::numeric < "t0"."probability") ` +
      'AND ("t0"."amount" BETWEEN $4::numeric AND $5::numeric) AND ("t0"."amount" IN ($6::numeric, $7::numeric)) AND ("t0"."close_date" >= $8::int8)) LIMIT $9::int8',
    params: [ORG, 1000, 50, 1, 2, 3, 4, 1700000000000, 10],
    keys: ['id'],
  },
  {
    name: 'a whole number in arithmetic with a numeric column, or compared with that arithmetic, binds as numeric; with an epoch column, int8',
    slug: 'opportunity',
    query: 'SELECT id FROM opportunity WHERE amount * 2 > 5 AND 100 - probability < 40 AND close_date + 86400000 > 1700000000000 LIMIT 10',
    sql:
      `SELECT "t0"."id" AS "c0" ${from('opportunity')} WHERE ${g('t0')} AND ((("t0"."amount" * $2::numeric) > $3::numeric) AND (($4::numeric - "t0"."probability") < $5::numeric) ` +
      'AND (("t0"."close_date" + $6::int8) > $7::int8)) LIMIT $8::int8',
    params: [ORG, 2, 5, 100, 40, 86400000, 1700000000000, 10],
    keys: ['id'],
  },
  {
    name: 'a whole number chosen beside a numeric value (CASE, coalesce, if) binds as numeric; beside other whole numbers, int8',
    slug: 'opportunity',
    query: 'SELECT id, CASE WHEN stage = \'won\' THEN amount ELSE 0 END AS won, coalesce(probability, 0) AS p, if(amount > 5, 1, 0) AS big FROM opportunity LIMIT 10',
    sql:
      'SELECT "t0"."id" AS "c0", CASE WHEN "t0"."stage" = $2::text THEN "t0"."amount" ELSE $3::numeric END AS "c1", coalesce("t0"."probability", $3::numeric) AS "c2", ' +
      `CASE WHEN "t0"."amount" > $4::numeric THEN $5::int8 ELSE $6::int8 END AS "c3" ${from('opportunity')} WHERE ${g('t0')} LIMIT $7::int8`,
    params: [ORG, 'won', 0, 5, 1, 0, 10],
    keys: ['id', 'won', 'p', 'big'],
  },
  {
    name: 'an aggregate compared with a whole number keeps it int8; the same number as a numeric column\'s is a parameter of its own',
    slug: 'opportunity',
    query: 'SELECT stage, count(*) AS n FROM opportunity WHERE amount > 10 GROUP BY stage HAVING count(*) > 10 LIMIT 10',
    sql:
      `SELECT "t0"."stage" AS "c0", count(*) AS "c1" ${from('opportunity')} WHERE ${g('t0')} AND ("t0"."amount" > $2::numeric) ` +
      'GROUP BY "t0"."stage" HAVING count(*) > $3::int8 LIMIT $3::int8',
    params: [ORG, 10, 10],
    keys: ['stage', 'n'],
  },
  {
    name: 'depth-3 to-one chain in SELECT and WHERE: one join per hop, shared',
    slug: 'opportunity',
    query: "SELECT id, primary_contact.account.owner.name AS n FROM opportunity WHERE primary_contact.account.owner.role = 'manager' LIMIT 100",
    sql:
      `SELECT "t0"."id" AS "c0", "t3"."name" AS "c1" ${from('opportunity')} ` +
      `${join('contact', 't1', '"t1"."id" = "t0"."primary_contact"')} ` +
      `${join('account', 't2', '"t2"."id" = "t1"."account"')} ` +
      `${join('user', 't3', '"t3"."id" = "t2"."owner"')} ` +
      `WHERE ${g('t0')} AND ("t3"."role" = $2::text) LIMIT $3::int8`,
    params: [ORG, 'manager', 100],
    keys: ['id', 'n'],
  },
  {
    name: 'unaliased chain: the key is the path as written',
    slug: 'contact',
    query: 'SELECT id, account.owner.email FROM contact LIMIT 5',
    sql:
      `SELECT "t0"."id" AS "c0", "t2"."email" AS "c1" ${from('contact')} ` +
      `${join('account', 't1', '"t1"."id" = "t0"."account"')} ${join('user', 't2', '"t2"."id" = "t1"."owner"')} ` +
      `WHERE ${g('t0')} LIMIT $2::int8`,
    params: [ORG, 5],
    keys: ['id', 'account.owner.email'],
  },
  {
    name: 'virtual relation: fan-out LEFT JOIN on the child column, OR and IS NULL row by row',
    slug: 'account',
    query: "SELECT id, contacts.name AS contact_name FROM account WHERE contacts.status = 'active' OR contacts.id IS NULL LIMIT 100",
    sql:
      `SELECT "t0"."id" AS "c0", "t1"."name" AS "c1" ${from('account')} ${join('contact', 't1', '"t1"."account" = "t0"."id"')} ` +
      `WHERE ${g('t0')} AND (("t1"."status" = $2::text) OR ("t1"."id" IS NULL)) LIMIT $3::int8`,
    params: [ORG, 'active', 100],
  },
  {
    name: 'EXISTS: a correlated subquery with its own guards',
    slug: 'account',
    query: "SELECT id FROM account a WHERE EXISTS (SELECT 1 FROM opportunity o WHERE o.account = a.id AND o.stage = 'won') LIMIT 100",
    sql:
      `SELECT "t0"."id" AS "c0" ${from('account')} WHERE ${g('t0')} AND EXISTS (SELECT $2::int8 FROM "public"."opportunity" AS "t1" ` +
      `WHERE ${g('t1')} AND (("t1"."account" = "t0"."id") AND ("t1"."stage" = $3::text))) LIMIT $4::int8`,
    params: [ORG, 1, 'won', 100],
  },
  {
    name: 'NOT EXISTS',
    slug: 'account',
    query: 'SELECT id FROM account a WHERE NOT EXISTS (SELECT 1 FROM contact c WHERE c.account = a.id) LIMIT 100',
    sql:
      `SELECT "t0"."id" AS "c0" ${from('account')} WHERE ${g('t0')} AND (NOT EXISTS (SELECT $2::int8 FROM "public"."contact" AS "t1" ` +
      `WHERE ${g('t1')} AND ("t1"."account" = "t0"."id"))) LIMIT $3::int8`,
    params: [ORG, 1, 100],
  },
  {
    name: 'IN (subquery) on a to-one column',
    slug: 'contact',
    query: "SELECT id FROM contact WHERE account IN (SELECT id FROM account WHERE industry = 'finance') LIMIT 100",
    sql:
      `SELECT "t0"."id" AS "c0" ${from('contact')} WHERE ${g('t0')} AND ("t0"."account" IN (SELECT "t1"."id" FROM "public"."account" AS "t1" ` +
      `WHERE ${g('t1')} AND ("t1"."industry" = $2::text))) LIMIT $3::int8`,
    params: [ORG, 'finance', 100],
  },
  {
    name: 'multiselect has any / has none: one text[] parameter per array',
    slug: 'lead',
    query: "SELECT id FROM lead WHERE sources && ARRAY['web', 'referral'] AND NOT (sources && ARRAY['event']) LIMIT 100",
    sql: `SELECT "t0"."id" AS "c0" ${from('lead')} WHERE ${g('t0')} AND (("t0"."sources" && $2::text[]) AND (NOT ("t0"."sources" && $3::text[]))) LIMIT $4::int8`,
    params: [ORG, ['web', 'referral'], ['event'], 100],
  },
  {
    name: 'multiselect = ARRAY[NULL] and <> ARRAY[NULL]: emptiness, never NULL',
    slug: 'lead',
    query: 'SELECT id FROM lead WHERE sources = ARRAY[NULL] OR NOT (sources <> ARRAY[NULL]) LIMIT 100',
    sql:
      `SELECT "t0"."id" AS "c0" ${from('lead')} WHERE ${g('t0')} AND ((coalesce(cardinality("t0"."sources"), 0) = 0) OR (NOT (coalesce(cardinality("t0"."sources"), 0) <> 0))) LIMIT $2::int8`,
    params: [ORG, 100],
  },
  {
    name: 'booleans written 0 and 1 bind as booleans',
    slug: 'contact',
    query: "SELECT id FROM contact WHERE is_primary = 1 AND status <> 'bounced' LIMIT 100",
    sql: `SELECT "t0"."id" AS "c0" ${from('contact')} WHERE ${g('t0')} AND (("t0"."is_primary" = $2::boolean) AND ("t0"."status" <> $3::text)) LIMIT $4::int8`,
    params: [ORG, true, 'bounced', 100],
  },
  {
    name: 'if() becomes CASE',
    slug: 'opportunity',
    query: "SELECT owner AS owner_id, sum(if(stage = 'won', amount, 0)) AS won FROM opportunity GROUP BY owner LIMIT 100",
    sql:
      `SELECT "t0"."owner" AS "c0", sum(CASE WHEN "t0"."stage" = $2::text THEN "t0"."amount" ELSE $3::numeric END) AS "c1" ${from('opportunity')} ` +
      `WHERE ${g('t0')} GROUP BY "t0"."owner" LIMIT $4::int8`,
    params: [ORG, 'won', 0, 100],
    keys: ['owner_id', 'won'],
  },
  {
    name: 'simple CASE',
    slug: 'opportunity',
    query: "SELECT id, CASE stage WHEN 'won' THEN 1 WHEN 'lost' THEN 0 END AS outcome FROM opportunity LIMIT 10",
    sql: `SELECT "t0"."id" AS "c0", CASE "t0"."stage" WHEN $2::text THEN $3::int8 WHEN $4::text THEN $5::int8 END AS "c1" ${from('opportunity')} WHERE ${g('t0')} LIMIT $6::int8`,
    params: [ORG, 'won', 1, 'lost', 0, 10],
  },
  {
    name: 'round(x, 2) casts x to numeric and the digits to int4',
    slug: 'opportunity',
    query: 'SELECT round(sum(amount)/10000000, 2) AS crore FROM opportunity LIMIT 1',
    sql: `SELECT round((sum("t0"."amount") / $2::numeric)::numeric, $3::int4) AS "c0" ${from('opportunity')} WHERE ${g('t0')} LIMIT $4::int8`,
    params: [ORG, 10000000, 2, 1],
  },
  {
    name: 'AT TIME ZONE day bucket, GROUP BY alias repeats the expression with the same parameters',
    slug: 'lead',
    query: "SELECT date_trunc('day', to_timestamp(created_at/1000) AT TIME ZONE 'Asia/Kolkata') AS day, count(*) AS n FROM lead GROUP BY day ORDER BY day LIMIT 100",
    sql:
      `SELECT date_trunc($2::text, to_timestamp("t0"."created_at" / $3::int8) AT TIME ZONE $4::text) AS "c0", count(*) AS "c1" ${from('lead')} WHERE ${g('t0')} ` +
      `GROUP BY date_trunc($2::text, to_timestamp("t0"."created_at" / $3::int8) AT TIME ZONE $4::text) ORDER BY "c0" LIMIT $5::int8`,
    params: [ORG, 'day', 1000, 'Asia/Kolkata', 100],
  },
  {
    name: 'GROUP BY alias with a literal: parameter reuse keeps SELECT and GROUP BY identical',
    slug: 'account',
    query: "SELECT coalesce(city, 'n/a') AS c, count(*) AS n FROM account GROUP BY c LIMIT 100",
    sql: `SELECT coalesce("t0"."city", $2::text) AS "c0", count(*) AS "c1" ${from('account')} WHERE ${g('t0')} GROUP BY coalesce("t0"."city", $2::text) LIMIT $3::int8`,
    params: [ORG, 'n/a', 100],
  },
  {
    name: 'HAVING',
    slug: 'opportunity',
    query: 'SELECT owner AS o, count(*) AS n FROM opportunity GROUP BY owner HAVING count(*) >= 5 LIMIT 100',
    sql: `SELECT "t0"."owner" AS "c0", count(*) AS "c1" ${from('opportunity')} WHERE ${g('t0')} GROUP BY "t0"."owner" HAVING count(*) >= $2::int8 LIMIT $3::int8`,
    params: [ORG, 5, 100],
  },
  {
    name: 'ORDER BY alias and ordinal name output columns; LIMIT and OFFSET are parameters',
    slug: 'opportunity',
    query: 'SELECT id, amount AS amt FROM opportunity ORDER BY amt DESC NULLS LAST, 1 LIMIT 20 OFFSET 40',
    sql: `SELECT "t0"."id" AS "c0", "t0"."amount" AS "c1" ${from('opportunity')} WHERE ${g('t0')} ORDER BY "c1" DESC NULLS LAST, "c0" LIMIT $2::int8 OFFSET $3::int8`,
    params: [ORG, 20, 40],
  },
  {
    name: 'pinned NOW() is a timestamptz parameter',
    slug: 'lead',
    query: "SELECT id FROM lead WHERE created_at >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata')*1000 LIMIT 100",
    sql:
      `SELECT "t0"."id" AS "c0" ${from('lead')} WHERE ${g('t0')} AND ("t0"."created_at" >= ` +
      '(SELECT date_part($2::text, date_trunc($3::text, $4::timestamptz AT TIME ZONE $5::text) AT TIME ZONE $5::text) * $6::int8)) LIMIT $7::int8',
    params: [ORG, 'epoch', 'day', NOW_ISO, 'Asia/Kolkata', 1000, 100],
    now: true,
  },
  {
    name: 'NOW() unpinned is the server clock',
    slug: 'lead',
    query: "SELECT id FROM lead WHERE created_at >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata')*1000 LIMIT 100",
    sql:
      `SELECT "t0"."id" AS "c0" ${from('lead')} WHERE ${g('t0')} AND ("t0"."created_at" >= ` +
      '(SELECT date_part($2::text, date_trunc($3::text, now() AT TIME ZONE $4::text) AT TIME ZONE $4::text) * $5::int8)) LIMIT $6::int8',
    params: [ORG, 'epoch', 'day', 'Asia/Kolkata', 1000, 100],
  },
  {
    name: 'pinned NOW() used twice is one parameter, the others keep their values',
    slug: 'lead',
    query:
      "SELECT id FROM lead WHERE created_at >= date_part('epoch', date_trunc('year', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata')*1000 " +
      "AND created_at < date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata')*1000 LIMIT 100",
    sql:
      `SELECT "t0"."id" AS "c0" ${from('lead')} WHERE ${g('t0')} AND (` +
      '("t0"."created_at" >= (SELECT date_part($2::text, date_trunc($3::text, $4::timestamptz AT TIME ZONE $5::text) AT TIME ZONE $5::text) * $6::int8)) AND ' +
      '("t0"."created_at" < (SELECT date_part($2::text, date_trunc($7::text, $4::timestamptz AT TIME ZONE $5::text) AT TIME ZONE $5::text) * $6::int8))) LIMIT $8::int8',
    params: [ORG, 'epoch', 'year', NOW_ISO, 'Asia/Kolkata', 1000, 'day', 100],
    now: true,
  },
  {
    name: 'a date boundary is computed once where it filters (WHERE, HAVING), and written plainly where it is shown',
    slug: 'lead',
    query:
      "SELECT id, created_at >= date_part('epoch', NOW())*1000 AS fresh FROM lead WHERE created_at BETWEEN date_part('epoch', NOW())*1000 - 86400000 AND date_part('epoch', NOW())*1000 " +
      'GROUP BY id, created_at HAVING max(created_at) > date_part(\'epoch\', NOW())*1000 - 3600000 LIMIT 100',
    sql:
      'SELECT "t0"."id" AS "c0", "t0"."created_at" >= (date_part($2::text, now()) * $3::int8) AS "c1" ' +
      `${from('lead')} WHERE ${g('t0')} AND ("t0"."created_at" BETWEEN (SELECT (date_part($2::text, now()) * $3::int8) - $4::int8) AND (SELECT date_part($2::text, now()) * $3::int8)) ` +
      'GROUP BY "t0"."id", "t0"."created_at" HAVING max("t0"."created_at") > (SELECT (date_part($2::text, now()) * $3::int8) - $5::int8) LIMIT $6::int8',
    params: [ORG, 'epoch', 1000, 86400000, 3600000, 100],
    keys: ['id', 'fresh'],
  },
  {
    name: 'date display: ::date on to_timestamp; an equal literal reuses its parameter (1000)',
    slug: 'contact',
    query: 'SELECT id, to_timestamp(birthday/1000)::date AS bday FROM contact LIMIT 1000',
    sql: `SELECT "t0"."id" AS "c0", (to_timestamp("t0"."birthday" / $2::int8))::date AS "c1" ${from('contact')} WHERE ${g('t0')} LIMIT $2::int8`,
    params: [ORG, 1000],
  },
  {
    name: 'correlated scalar subquery',
    slug: 'account',
    query: 'SELECT id, (SELECT count(*) FROM contact c WHERE c.account = a.id) AS n FROM account a LIMIT 10',
    sql:
      `SELECT "t0"."id" AS "c0", (SELECT count(*) FROM "public"."contact" AS "t1" WHERE ${g('t1')} AND ("t1"."account" = "t0"."id")) AS "c1" ` +
      `${from('account')} WHERE ${g('t0')} LIMIT $2::int8`,
    params: [ORG, 10],
  },
  {
    name: 'ILIKE with a quote: the quote travels in the parameter',
    slug: 'account',
    query: "SELECT id FROM account WHERE name ILIKE '%o''brien%' LIMIT 10",
    sql: `SELECT "t0"."id" AS "c0" ${from('account')} WHERE ${g('t0')} AND ("t0"."name" ILIKE $2::text) LIMIT $3::int8`,
    params: [ORG, "%o'brien%", 10],
  },
  {
    name: 'count wraps the query and keeps its LIMIT and DISTINCT (literal fan-out)',
    slug: 'account',
    query: "SELECT DISTINCT id FROM account WHERE contacts.status = 'active' LIMIT 100",
    sql:
      `SELECT count(*) AS "count" FROM (SELECT DISTINCT "t0"."id" AS "c0" ${from('account')} ${join('contact', 't1', '"t1"."account" = "t0"."id"')} ` +
      `WHERE ${g('t0')} AND ("t1"."status" = $2::text) LIMIT $3::int8) AS "q"`,
    params: [ORG, 'active', 100],
    count: true,
    fanOut: true,
  },
  {
    name: 'count wraps the query: the semi-join plan of the same query',
    slug: 'account',
    query: "SELECT DISTINCT id FROM account WHERE contacts.status = 'active' LIMIT 100",
    sql:
      // The semi-join leaves one row per account, so DISTINCT over its id is dropped as well.
      `SELECT count(*) AS "count" FROM (SELECT "t0"."id" AS "c0" ${from('account')} WHERE ${g('t0')} AND EXISTS (SELECT NULL FROM "public"."contact" AS "t1" ` +
      `WHERE ${g('t1')} AND (("t1"."account" = "t0"."id") AND ("t1"."status" = $2::text))) LIMIT $3::int8) AS "q"`,
    params: [ORG, 'active', 100],
    count: true,
  },
  {
    name: 'count drops ORDER BY: how many rows pass the LIMIT does not depend on their order',
    slug: 'opportunity',
    query: "SELECT name, amount FROM opportunity WHERE stage = 'won' ORDER BY amount DESC LIMIT 100",
    sql:
      `SELECT count(*) AS "count" FROM (SELECT "t0"."name" AS "c0", "t0"."amount" AS "c1" ${from('opportunity')} WHERE ${g('t0')} AND ("t0"."stage" = $2::text) ` +
      `LIMIT $3::int8) AS "q"`,
    params: [ORG, 'won', 100],
    count: true,
  },
  {
    name: 'OR across two virtual relations under COUNT(DISTINCT id): two semi-joins, count(id)',
    slug: 'account',
    query: "SELECT count(DISTINCT id) AS n FROM account WHERE contacts.status = 'active' OR opportunities.stage = 'won' LIMIT 1",
    sql:
      `SELECT count("t0"."id") AS "c0" ${from('account')} WHERE ${g('t0')} AND (` +
      `EXISTS (SELECT NULL FROM "public"."contact" AS "t1" WHERE ${g('t1')} AND (("t1"."account" = "t0"."id") AND ("t1"."status" = $2::text))) OR ` +
      `EXISTS (SELECT NULL FROM "public"."opportunity" AS "t2" WHERE ${g('t2')} AND (("t2"."account" = "t0"."id") AND ("t2"."stage" = $3::text)))) LIMIT $4::int8`,
    params: [ORG, 'active', 'won', 1],
  },
  {
    name: 'the same query with the literal fan-out: a cross product of two LEFT JOINs',
    slug: 'account',
    query: "SELECT count(DISTINCT id) AS n FROM account WHERE contacts.status = 'active' OR opportunities.stage = 'won' LIMIT 1",
    sql:
      `SELECT count(DISTINCT "t0"."id") AS "c0" ${from('account')} ${join('contact', 't1', '"t1"."account" = "t0"."id"')} ${join('opportunity', 't2', '"t2"."account" = "t0"."id"')} ` +
      `WHERE ${g('t0')} AND (("t1"."status" = $2::text) OR ("t2"."stage" = $3::text)) LIMIT $4::int8`,
    params: [ORG, 'active', 'won', 1],
    fanOut: true,
  },
  {
    name: 'SELECT * lists the stored columns in catalog order, virtual relations left out',
    fixture: 'helpdesk',
    slug: 'team',
    query: 'SELECT * FROM team LIMIT 5',
    sql:
      `SELECT "t0"."id" AS "c0", "t0"."name" AS "c1", "t0"."region" AS "c2", "t0"."lead" AS "c3", "t0"."default_sla" AS "c4", "t0"."is_24x7" AS "c5", "t0"."created_at" AS "c6" ` +
      `${from('team')} WHERE ${g('t0')} LIMIT $2::int8`,
    params: [ORG, 5],
    keys: ['id', 'name', 'region', 'lead', 'default_sla', 'is_24x7', 'created_at'],
  },
  {
    name: 'depth-4 chain on the helpdesk fixture',
    fixture: 'helpdesk',
    slug: 'ticket_comment',
    query: 'SELECT ticket.asset.site.customer.name AS customer FROM ticket_comment LIMIT 10',
    sql:
      `SELECT "t4"."name" AS "c0" ${from('ticket_comment')} ${join('ticket', 't1', '"t1"."id" = "t0"."ticket"')} ${join('asset', 't2', '"t2"."id" = "t1"."asset"')} ` +
      `${join('site', 't3', '"t3"."id" = "t2"."site"')} ${join('customer', 't4', '"t4"."id" = "t3"."customer"')} WHERE ${g('t0')} LIMIT $2::int8`,
    params: [ORG, 10],
  },
];

function options(c: Golden, extra: Partial<CompileOptions> = {}): CompileOptions {
  return {
    catalog: loadFixtureCatalog(c.fixture ?? 'crm'), slug: c.slug, orgId: ORG, ...(c.now ? { now: NOW } : {}), ...(c.fanOut ? { semiJoins: false } : {}), ...extra,
  };
}

function compiled(c: Golden, extra: Partial<CompileOptions> = {}): { sql: string; params: unknown[]; keys?: string[] } {
  if (c.count) {
    const r = compileCount(c.query, options(c, extra));
    if (r.kind !== 'query') throw new Error('restricted');
    return { sql: r.sql, params: r.params };
  }
  const r = compile(c.query, options(c, extra));
  if (r.kind !== 'query') throw new Error('restricted');
  return { sql: r.sql, params: r.params, keys: r.columns.map((x) => x.key) };
}

describe('golden SQL', () => {
  for (const c of GOLDEN) {
    (c.bug ? it.fails : it)(c.name, () => {
      const out = compiled(c);
      expect(out.sql).toBe(c.sql);
      expect(out.params).toEqual(c.params);
      if (c.keys) expect(out.keys).toEqual(c.keys);
    });
  }

  it('the tenant is only ever $1: another tenant changes params[0] and nothing else', () => {
    for (const c of GOLDEN.filter((x) => !x.bug)) {
      const a = compiled(c);
      const b = compiled(c, { orgId: 'org_globex' });
      expect(b.sql).toBe(a.sql);
      expect(b.params).toEqual(['org_globex', ...a.params.slice(1)]);
    }
  });

  it('a different pinned NOW changes only the NOW parameter', () => {
    const c = GOLDEN.find((x) => x.name.startsWith('pinned NOW() is'))!;
    const out = compiled(c, { now: Date.UTC(2024, 1, 29, 12) });
    expect(out.sql).toBe(c.sql);
    expect(out.params).toEqual(c.params.map((p) => (p === NOW_ISO ? '2024-02-29T12:00:00.000Z' : p)));
  });
});

describe('determinism', () => {
  it('the same query and catalog give byte-identical SQL: cached, uncached, and with a reloaded catalog', () => {
    // Loaded afresh from the payloads: a new catalog object, the same schema.
    const reloaded: Record<FixtureName, Catalog> = {
      crm: loadCatalog(fixturePayload('crm'), { typeCodes: crmTypeCodes }),
      helpdesk: loadCatalog(fixturePayload('helpdesk')),
    };
    for (const c of GOLDEN) {
      const first = compiled(c);
      const again = compiled(c);
      const uncached = compiled(c, { cache: false });
      clearCompileCache();
      const cleared = compiled(c);
      for (const other of [again, uncached, cleared]) {
        expect(other.sql).toBe(first.sql);
        expect(other.params).toEqual(first.params);
      }
      const fresh = reloaded[c.fixture ?? 'crm'];
      expect(fresh).not.toBe(loadFixtureCatalog(c.fixture ?? 'crm'));
      expect(compiled(c, { catalog: fresh, cache: false }).sql).toBe(first.sql);
    }
  });
});

describe('no user text reaches the SQL', () => {
  const MARKED: { fixture?: FixtureName; slug: string; query: string; literals: unknown[]; words: string[] }[] = [
    {
      slug: 'account',
      query:
        "SELECT id AS zq_alias_one, concat(name, 'zq_lit_two') AS zq_alias_three, count(*) AS zq_alias_count FROM account zq_acct " +
        "WHERE name = 'zq_lit_four'' OR 1=1 --' AND city ILIKE '%zq_lit_five%' " +
        'AND EXISTS (SELECT 1 FROM contact zq_con WHERE zq_con.account = zq_acct.id) GROUP BY id, name ORDER BY zq_alias_count DESC LIMIT 10',
      literals: ['zq_lit_two', "zq_lit_four' OR 1=1 --", '%zq_lit_five%'],
      words: ['zq_alias_one', 'zq_alias_three', 'zq_alias_count', 'zq_acct', 'zq_con', 'zq_lit', 'OR 1=1', '--'],
    },
    {
      slug: 'opportunity',
      query: "SELECT stage AS \"zq_quoted\", sum(amount) AS zq_total FROM opportunity zq_o WHERE sources && ARRAY['zq_opt', 'web'] GROUP BY stage LIMIT 5",
      literals: [['zq_opt', 'web']],
      words: ['zq_quoted', 'zq_total', 'zq_o', 'zq_opt'],
    },
    {
      fixture: 'helpdesk',
      slug: 'ticket',
      query: "SELECT id, if(subject ILIKE 'zq_x%', 'zq_yes', 'zq_no') AS zq_flag FROM ticket zq_t WHERE zq_t.asset.site.city = 'zq_city\\' LIMIT 5",
      literals: ['zq_x%', 'zq_yes', 'zq_no', 'zq_city\\'],
      words: ['zq_flag', 'zq_t', 'zq_x', 'zq_yes', 'zq_no', 'zq_city'],
    },
  ];

  for (const m of MARKED) {
    it(m.query.slice(0, 60), () => {
      const out = compile(m.query, { catalog: loadFixtureCatalog(m.fixture ?? 'crm'), slug: m.slug, orgId: ORG });
      if (out.kind !== 'query') throw new Error('restricted');
      for (const w of m.words) expect(out.sql).not.toContain(w);
      expect(out.sql).not.toContain("'");
      for (const l of m.literals) expect(out.params).toContainEqual(l);
    });
  }

  it('no golden SQL contains a string literal, and every parameter is used', () => {
    for (const c of GOLDEN.filter((x) => !x.bug)) {
      const out = compiled(c);
      expect(out.sql).not.toContain("'");
      const used = new Set([...out.sql.matchAll(/\$(\d+)/g)].map((x) => Number(x[1])));
      expect([...used].sort((a, b) => a - b)).toEqual(out.params.map((_, i) => i + 1));
    }
  });
});
