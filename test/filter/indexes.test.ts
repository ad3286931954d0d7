import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogDdl } from '../../src/catalog/ddl.js';
import { compileConnectorPage, compileFilter } from '../../src/filter/index.js';
import { connectorRecords } from '../../src/query/filter.js';
import { fixtureData, loadFixtureCatalog, loadIntoDatabase } from '../../fixtures/index.js';
import { emptyPglite } from '../support/pglite-template.js';

/**
 * The indexes the filter and connector rely on: with `searchIndexes` and `keysetIndexes` the DDL
 * creates them, and PostgreSQL's planner picks them for global_search and for a connector page
 * (sequential scans disabled, so the plan shows whether an index can serve the query at all).
 */

const catalog = loadFixtureCatalog('crm');
let db: PGlite;

beforeAll(async () => {
  db = await emptyPglite({ extensions: { pg_trgm } });
  for (const s of catalogDdl(catalog, { searchIndexes: true, keysetIndexes: true })) await db.query(s);
  await loadIntoDatabase(db, catalog, fixtureData('crm'), { skipDdl: true });
  await db.query('ANALYZE');
}, 120_000);
afterAll(async () => {
  await db?.close();
});

async function plan(sql: string, params: unknown[]): Promise<string> {
  await db.query('SET enable_seqscan = off');
  const r = await db.query<Record<string, string>>(`EXPLAIN ${sql}`, params);
  await db.query('RESET enable_seqscan');
  return r.rows.map((x) => Object.values(x)[0]).join('\n');
}

describe('filter indexes', () => {
  it('the DDL options add pg_trgm, trigram indexes and partial keyset indexes, and nothing by default', () => {
    const plain = catalogDdl(catalog);
    const full = catalogDdl(catalog, { searchIndexes: true, keysetIndexes: true });
    expect(plain.some((s) => /trgm|keyset/.test(s))).toBe(false);
    expect(full).toContain('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    expect(full).toContain('CREATE INDEX "contact_updated_at_keyset_idx" ON "public"."contact" ("org_id", "updated_at", "id") WHERE "is_deleted" = false');
    expect(full).toContain('CREATE INDEX "contact_updated_at_deleted_keyset_idx" ON "public"."contact" ("org_id", "updated_at", "id") WHERE "is_deleted" = true');
    expect(full).toContain('CREATE INDEX "contact_email_trgm_idx" ON "public"."contact" USING gin ("email" gin_trgm_ops)');
  });

  it('global_search can be served by the trigram indexes alone', async () => {
    const { sql, params } = compileFilter({ query: { fields: ['id'], filters: { and: [{ field: '', operator: 'global_search', value: 'harbor' }] } } }, { catalog, slug: 'contact', orgId: 'org_acme' });
    // On a table this small the tenant's B-tree indexes win; without them (dropped inside a
    // transaction that is rolled back) the plan shows the trigram indexes serve the search.
    await db.query('BEGIN');
    const others = await db.query<{ indexname: string }>("SELECT indexname FROM pg_indexes WHERE tablename = 'contact' AND indexdef NOT LIKE '%gin_trgm_ops%' AND indexname <> 'contact_pkey'");
    for (const { indexname } of others.rows) await db.query(`DROP INDEX "${indexname}"`);
    await db.query('ALTER TABLE contact DROP CONSTRAINT contact_pkey');
    const p = await plan(sql, params);
    await db.query('ROLLBACK');
    expect(p).toMatch(/Bitmap Index Scan on contact_name_trgm_idx/);
    expect(p).toMatch(/Bitmap Index Scan on contact_email_trgm_idx/);
  });

  it('a connector page after a token is a range scan of the keyset index', async () => {
    const options = { catalog, slug: 'contact', orgId: 'org_acme', tokenSecret: 'index-test-secret-0123456789', pageSize: 5, now: Date.UTC(2100, 0, 1) };
    const body = { query: { fields: ['name'], filter: { and: [{ field: 'updated_at', operator: 'gte', value: 0 }] } } };
    const first = await connectorRecords(db, body, options);
    const { sql, params } = compileConnectorPage({ ...body, next_token: first.next_token }, options);
    expect(sql).toContain('("t0"."updated_at", "t0"."id") > (');
    const p = await plan(sql, params);
    expect(p).toMatch(/Index (Only )?Scan using contact_updated_at_keyset_idx/);
    expect(p).toMatch(/Index Cond: .*ROW\(updated_at, id\) > ROW/);
    expect(p).not.toMatch(/Sort/);
  });

  it('the tombstones of a page with include_deleted are a range scan of the deleted rows\' keyset index', async () => {
    await db.query('ALTER TABLE contact ADD COLUMN IF NOT EXISTS deleted_at bigint');
    const options = { catalog, slug: 'contact', orgId: 'org_acme', tokenSecret: 'index-test-secret-0123456789', pageSize: 5, now: Date.UTC(2100, 0, 1) };
    const body = { query: { fields: ['name'], filter: { and: [{ field: 'updated_at', operator: 'gte', value: 0 }] } }, include_deleted: true };
    const first = await connectorRecords(db, body, options);
    const { sql, params } = compileConnectorPage({ ...body, next_token: first.next_token }, options);
    const p = await plan(sql, params);
    expect(p).toMatch(/Index (Only )?Scan using contact_updated_at_keyset_idx/);
    expect(p).toMatch(/Index Scan using contact_updated_at_deleted_keyset_idx/);
    expect(p).not.toMatch(/Seq Scan/);
  });
});
