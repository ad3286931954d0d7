import { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import { loadModule, parseSync } from 'libpg-query';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureData, loadFixtureCatalog, type FixtureName } from '../../fixtures/index.js';
import type { Catalog } from '../../src/catalog/types.js';
import { compile, compileCount } from '../../src/compile.js';
import { compileConnectorPage, compileFilter } from '../../src/filter/index.js';
import { bulkCreate, bulkUpsert, getRecord, updateRecord } from '../../src/records/index.js';
import { asDatabase, type Database, type Tx } from '../../src/run/database.js';
import { databaseOf } from '../../src/run/database-of.js';
import { corpus } from '../../bench/corpus.js';
import { OBJECTS, conditions } from '../filter/cases.js';
import { createTables, recordCatalog } from '../records/support.js';
import { buildSchema, printQuery, queryArb } from '../support/querygen.js';
import { emptyPglite } from '../support/pglite-template.js';

/**
 * Citus on paper (docs/scale.md): with the CRM tables distributed by org_id and co-located, a
 * statement runs on one shard when every table it names is pinned to one organization. This walks
 * the real PostgreSQL parser's tree (libpg-query) of every statement the library emits for the
 * corpora the other tests use — report queries (the compile benchmark's corpus and random queries
 * of the property tests, with their counts), filter bodies for every operator on every column,
 * connector pages, and every statement of the record write path, captured as it runs on PGlite —
 * and checks that each table reference (RangeVar) is pinned:
 *
 * - in a SELECT, by a conjunct `<its alias>.org_id = $1` of the WHERE of its own SELECT (the FROM
 *   table) or of the ON of its own join (a joined table), so no OR or NOT can loosen it;
 * - in an UPDATE or DELETE, by a conjunct `org_id = $1` of its WHERE;
 * - in an INSERT, by a bind parameter holding the organization in the org_id of every row: in
 *   each row of its VALUES, or in the select list of a SELECT that names no table.
 *
 * $1 is the organization in every statement that names a table. The checker is written here from
 * the parser's node shapes, not taken from the emitter or from test/fuzz/sql-structure.ts.
 */

type Node = Record<string, unknown>;
const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);
const names = (list: unknown): string[] => (Array.isArray(list) ? list.map((x) => (x as { String?: { sval?: string } }).String?.sval ?? '?') : []);

interface Statement {
  readonly source: string;
  readonly sql: string;
  readonly params: readonly unknown[];
  readonly org: string;
}

function conjuncts(e: unknown): Node[] {
  if (!isNode(e)) return [];
  const b = e['BoolExpr'] as Node | undefined;
  if (b && b['boolop'] === 'AND_EXPR') return (b['args'] as unknown[]).flatMap(conjuncts);
  return [e];
}

/** Whether one of the conjuncts is `<qualifier>.column = $1` (or unqualified, when `qualifier` is null). */
function pinned(conds: readonly Node[], qualifier: string | null, column: string): boolean {
  return conds.some((c) => {
    const a = c['A_Expr'] as Node | undefined;
    if (!a || a['kind'] !== 'AEXPR_OP' || names(a['name']).join() !== '=') return false;
    for (const [l, r] of [[a['lexpr'], a['rexpr']], [a['rexpr'], a['lexpr']]] as const) {
      const ref = isNode(l) ? (l['ColumnRef'] as Node | undefined) : undefined;
      const param = isNode(r) ? (r['ParamRef'] as Node | undefined) : undefined;
      if (!ref || !param || param['number'] !== 1) continue;
      const f = names(ref['fields']);
      if (qualifier === null ? f.length === 1 && f[0] === column : f.length === 2 && f[0] === qualifier && f[1] === column) return true;
    }
    return false;
  });
}

/** Problems of one statement; also counts the table references it checked. */
function check(s: Statement, tenant: string, counter: { refs: number }): string[] {
  const problems: string[] = [];
  const tree = parseSync(s.sql) as { stmts?: { stmt: Node }[] };
  const tables = new Set<Node>();
  const seen = new Set<Node>();
  const mark = (rv: Node, ok: boolean, where: string): void => {
    seen.add(rv);
    counter.refs++;
    if (!ok) problems.push(`${String(rv['relname'])}${rv['alias'] ? ` AS ${String((rv['alias'] as Node)['aliasname'])}` : ''} is not pinned by ${tenant} = $1 in ${where}`);
  };
  const aliasOf = (rv: Node): string => String((rv['alias'] as Node | undefined)?.['aliasname'] ?? rv['relname']);
  const fromItem = (item: Node, where: Node[]): void => {
    if ('RangeVar' in item) {
      const rv = item['RangeVar'] as Node;
      mark(rv, pinned(where, aliasOf(rv), tenant) || pinned(where, null, tenant), 'the WHERE of its SELECT');
      return;
    }
    const j = item['JoinExpr'] as Node | undefined;
    if (!j) return;
    fromItem(j['larg'] as Node, where);
    const rarg = j['rarg'] as Node;
    if ('RangeVar' in rarg) mark(rarg['RangeVar'] as Node, pinned(conjuncts(j['quals']), aliasOf(rarg['RangeVar'] as Node), tenant), 'the ON of its join');
    else fromItem(rarg, where);
  };
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (!isNode(v)) return;
    for (const [k, child] of Object.entries(v)) {
      if (k === 'RangeVar' && isNode(child)) tables.add(child);
      if (k === 'SelectStmt' && isNode(child)) for (const item of (child['fromClause'] as Node[] | undefined) ?? []) fromItem(item, conjuncts(child['whereClause']));
      if ((k === 'UpdateStmt' || k === 'DeleteStmt') && isNode(child)) {
        const rv = child['relation'] as Node;
        mark(rv, pinned(conjuncts(child['whereClause']), null, tenant) || pinned(conjuncts(child['whereClause']), aliasOf(rv), tenant), `the WHERE of its ${k}`);
      }
      if (k === 'InsertStmt' && isNode(child)) {
        const rv = child['relation'] as Node;
        const cols = ((child['cols'] as Node[] | undefined) ?? []).map((c) => String((c['ResTarget'] as Node)['name']));
        const at = cols.indexOf(tenant);
        const select = (child['selectStmt'] as Node | undefined)?.['SelectStmt'] as Node | undefined;
        // Its rows: each list of its VALUES; or, for rows taken apart from a parameter by a SELECT that
        // names no table (its FROM a function of parameters), that SELECT's list, the same in every row.
        const values = (select?.['valuesLists'] as Node[] | undefined)?.map((row) => (row['List'] as Node)['items'] as Node[]);
        const namesNoTable = select !== undefined && !JSON.stringify(select['fromClause'] ?? []).includes('"RangeVar"');
        const selected = namesNoTable && Array.isArray(select['targetList']) ? [(select['targetList'] as Node[]).map((t) => (t['ResTarget'] as Node)['val'] as Node)] : [];
        const rows = values ?? selected;
        const ok = at >= 0 && rows.length > 0 && rows.every((row) => {
          let value = row[at]!;
          if ('TypeCast' in value) value = (value['TypeCast'] as Node)['arg'] as Node;
          const p = value['ParamRef'] as Node | undefined;
          return p !== undefined && s.params[Number(p['number']) - 1] === s.org;
        });
        mark(rv, ok, 'every row of its INSERT');
        // Its VALUES are not a FROM: skip the SelectStmt under it.
        continue;
      }
      walk(child);
    }
  };
  for (const { stmt } of tree.stmts ?? []) walk(stmt);
  for (const rv of tables) if (!seen.has(rv)) problems.push(`${String(rv['relname'])} appears where no rule places it (${s.source})`);
  if (seen.size > 0 && s.params[0] !== s.org && !s.sql.startsWith('INSERT')) problems.push(`$1 is ${JSON.stringify(s.params[0])}, not the organization`);
  return problems;
}

const NOW = Date.UTC(2025, 5, 15, 20);
const statements: Statement[] = [];

function reports(): void {
  for (const q of corpus()) {
    const catalog = loadFixtureCatalog(q.fixture);
    for (const [fn, tag] of [[compile, 'report'], [compileCount, 'count']] as const) {
      const c = fn(q.text, { catalog, slug: q.slug, orgId: 'org_corpus', now: NOW });
      if (c.kind !== 'restricted') statements.push({ source: `${tag} ${q.id}`, sql: c.sql, params: c.params, org: 'org_corpus' });
    }
  }
  const schemas = (['crm', 'helpdesk'] as const).map((f) => buildSchema(f, loadFixtureCatalog(f), fixtureData(f)));
  const catalogs = new Map<string, Catalog>((['crm', 'helpdesk'] as const).map((f) => [f, loadFixtureCatalog(f)]));
  for (const [i, q] of fc.sample(queryArb(schemas), { numRuns: 400, seed: 20261125 }).entries()) {
    const catalog = catalogs.get(q.fixture)!;
    for (const [fn, tag] of [[compile, 'report'], [compileCount, 'count']] as const) {
      for (const semiJoins of [true, false]) {
        const c = fn(printQuery(q), { catalog, slug: q.object, orgId: `org_gen_${i}`, now: NOW, semiJoins });
        if (c.kind !== 'restricted') statements.push({ source: `${tag} of random query ${i}${semiJoins ? '' : ' (fan-out)'}`, sql: c.sql, params: c.params, org: `org_gen_${i}` });
      }
    }
  }
}

function filters(): void {
  const env = Object.fromEntries((['crm', 'helpdesk'] as const).map((f) => [f, { data: fixtureData(f) }])) as unknown as Parameters<typeof conditions>[0];
  for (const fixture of ['crm', 'helpdesk'] as FixtureName[]) {
    const catalog = loadFixtureCatalog(fixture);
    for (const slug of OBJECTS[fixture]) {
      const obj = catalog.objects.get(slug)!;
      const fields = [...obj.columns.values()].filter((c) => c.type !== 'virtual').map((c) => c.slug);
      for (const col of obj.columns.values()) {
        for (const cond of conditions(env, fixture, slug, col)) {
          const body = { query: { fields, filters: { or: [cond, { and: [cond] }] }, sort: [{ field: fields[0]!, direction: 'desc' }], pagination: { page: 2, page_size: 10 } } };
          let c;
          try {
            c = compileFilter(body, { catalog, slug, orgId: 'org_filter' });
          } catch {
            continue; // refused bodies emit nothing
          }
          statements.push({ source: `filter ${fixture}.${slug} ${cond.field} ${cond.operator}`, sql: c.sql, params: c.params, org: 'org_filter' });
        }
      }
      const sync = obj.columns.has('updated_at') ? { filter: { and: [{ field: 'updated_at', operator: 'gte', value: 0 }] } } : {};
      const page = compileConnectorPage({ query: { fields: fields.slice(0, 5), ...sync }, next_token: null },
        { catalog, slug, orgId: 'org_sync', tokenSecret: 'single-shard-test-secret-0123456789', now: NOW });
      statements.push({ source: `connector ${fixture}.${slug}`, sql: page.sql, params: page.params, org: 'org_sync' });
    }
  }
}

/** The database layer, recording every statement it is given. */
function recording(inner: Database, org: () => string): Database {
  const record = (sql: string, params: readonly unknown[] = []) => statements.push({ source: 'record write path', sql, params, org: org() });
  return asDatabase({
    kind: inner.kind,
    label: inner.label,
    query: (sql, params) => (record(sql, params), inner.query(sql, params)),
    read: (sql, params, o) => (record(sql, params), inner.read(sql, params, o)),
    transaction: (fn, o) => inner.transaction((tx: Tx) => fn({ query: (sql, params) => (record(sql, params), tx.query(sql, params)) }), o),
    ping: (ms) => inner.ping(ms),
    close: () => inner.close(),
  }) as Database;
}

let pglite: PGlite;

async function writes(): Promise<void> {
  const catalog = recordCatalog();
  pglite = await emptyPglite();
  await createTables(pglite, catalog);
  let org = 'org_w1';
  const db = recording(databaseOf(pglite), () => org);
  for (const o of ['org_w1', 'org_w2']) {
    org = o;
    const ctx = { catalog, orgId: o, userId: `u_${o}`, now: () => NOW };
    await bulkCreate(db, 'person', [{ name: 'Ada' }, { name: 'Grace' }], ctx);
    const people = (await pglite.query<{ id: string }>('SELECT id FROM public.person WHERE org_id = $1 ORDER BY id', [o])).rows.map((r) => r.id);
    await bulkCreate(db, 'thing', [
      { name: 'One', owner: people[0], external_id: `ext-${o}-1`, tags: ['a'], stage: 'new', score: 1.5, count: 2, active: true, born_on: Date.UTC(2024, 1, 29), seen_at: NOW, extra: { k: 1 } },
      { name: 'Two', owner: people[1], external_id: `ext-${o}-2`, email: 'two@example.com', site: 'https://example.com', price: 10 },
    ], ctx);
    const things = (await pglite.query<{ id: string }>('SELECT id FROM public.thing WHERE org_id = $1 ORDER BY id', [o])).rows.map((r) => r.id);
    await bulkUpsert(db, 'thing', { values: [{ id: things[0], name: 'One again', owner: people[1] }, { name: 'Three', external_id: `ext-${o}-3` }] }, ctx);
    await updateRecord(db, 'thing', things[1]!, { stage: 'won', owner: null }, ctx);
    await getRecord(db, 'thing', things[1]!, ctx);
    await bulkCreate(db, 'note', [{ body: 'hello', thing: things[0] }], ctx);
  }
}

beforeAll(async () => {
  await loadModule();
  reports();
  filters();
  await writes();
}, 120_000);

afterAll(async () => {
  await pglite?.close();
});

describe('every emitted statement routes to one shard (docs/scale.md)', () => {
  it('pins every table reference of every statement of the corpora to the organization', () => {
    const counter = { refs: 0 };
    const failures: string[] = [];
    for (const s of statements) {
      const tenant = s.source === 'record write path' ? recordCatalog().mapping.tenantColumn : 'org_id';
      for (const p of check(s, tenant, counter)) failures.push(`${s.source}: ${p}\n  ${s.sql.slice(0, 300)}`);
    }
    expect(failures.slice(0, 10)).toEqual([]);
    // The corpora are what they claim to be: thousands of statements, each kind present.
    const kinds = new Set(statements.map((s) => s.source.split(' ')[0]));
    expect([...kinds].sort()).toEqual(['connector', 'count', 'filter', 'record', 'report']);
    expect(statements.length).toBeGreaterThan(2000);
    expect(counter.refs).toBeGreaterThan(statements.length);
    for (const shape of ['INSERT', 'UPDATE', 'FOR UPDATE', 'JOIN', 'EXISTS']) expect(statements.some((s) => s.sql.includes(shape)), shape).toBe(true);
  });

  it('would catch a statement that is not pinned', () => {
    const counter = { refs: 0 };
    const bad = (sql: string, params: unknown[] = ['org_x']) => check({ source: 'probe', sql, params, org: 'org_x' }, 'org_id', counter);
    expect(bad('SELECT "t0"."id" FROM "public"."account" AS "t0" WHERE "t0"."org_id" = $1 OR true')).not.toEqual([]);
    expect(bad('SELECT "t0"."id" FROM "public"."account" AS "t0" LEFT JOIN "public"."contact" AS "t1" ON "t1"."account" = "t0"."id" WHERE "t0"."org_id" = $1')).not.toEqual([]);
    expect(bad('SELECT "t0"."id" FROM "public"."account" AS "t0" WHERE "t0"."org_id" = $1 AND EXISTS (SELECT 1 FROM "public"."contact" AS "t1" WHERE "t1"."account" = "t0"."id")')).not.toEqual([]);
    expect(bad('UPDATE "public"."account" SET "name" = $2 WHERE "id" = $1')).not.toEqual([]);
    expect(bad('INSERT INTO "public"."account" ("id", "org_id") VALUES ($1::text, $2::text)', ['a', 'org_other'])).not.toEqual([]);
    // Rows taken apart from a JSON parameter: pinned by $1 in the select list, not by a field of the document, nor when the SELECT reads a table.
    expect(bad('INSERT INTO "public"."account" ("id", "org_id") SELECT r."c0", $1::text FROM json_to_recordset($2::json) AS r("c0" text)', ['org_x', '[]'])).toEqual([]);
    expect(bad('INSERT INTO "public"."account" ("id", "org_id") SELECT r."c0", r."c1" FROM json_to_recordset($2::json) AS r("c0" text, "c1" text)', ['org_x', '[]'])).not.toEqual([]);
    expect(bad('INSERT INTO "public"."account" ("id", "org_id") SELECT "t"."id", $1::text FROM "public"."contact" AS "t"', ['org_x'])).not.toEqual([]);
    expect(bad('SELECT "t0"."id" FROM "public"."account" AS "t0" WHERE "t0"."org_id" = $1', ['org_other'])).not.toEqual([]);
    expect(bad('SELECT "t0"."id" FROM "public"."account" AS "t0" WHERE "t0"."org_id" = $1 AND "t0"."is_deleted" = false')).toEqual([]);
  });
});
