import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogDdl } from '../../src/catalog/index.js';
import { bulkCreate, bulkUpsert, getRecord, updateRecord, type Writable } from '../../src/records/index.js';
import { startPgDatabase } from '../support/pg-cluster.js';
import { type PgServer } from '../support/pg-server.js';
import { recordCatalog } from './support.js';
import { emptyPglite } from '../support/pglite-template.js';

// 50 concurrent writers on the same records: bulk upserts that each create one record and
// update the same shared records, and single-record updates of disjoint fields. Afterwards
// every create is there exactly once, no update of a field is lost, and of 20 writers racing
// for one unique external_id exactly one wins.

const catalog = recordCatalog();
const WRITERS = 50;

interface Db {
  readonly db: Writable;
  rows<T>(sql: string, params?: unknown[]): Promise<T[]>;
}

async function race(d: Db, org: string): Promise<void> {
  const ctx = { catalog, orgId: org, userId: 'u_1' };
  await bulkCreate(d.db, 'thing', [{ name: 'shared one' }, { name: 'shared two' }], ctx);
  const shared = (await d.rows<{ id: string }>('SELECT id FROM thing WHERE org_id = $1 ORDER BY name', [org])).map((r) => r.id);
  const [one, two] = shared as [string, string];

  const upserts = Array.from({ length: WRITERS }, (_, i) =>
    bulkUpsert(d.db, 'thing', {
      // Half of the writers touch the shared records in the opposite order.
      values: i % 2 === 0
        ? [{ name: `created by ${i}` }, { id: one, score: i }, { id: two, count: i }]
        : [{ id: two, count: i }, { id: one, score: i }, { name: `created by ${i}` }],
    }, ctx));
  const fields = ['email', 'site', 'stage'] as const;
  const updates = Array.from({ length: WRITERS }, (_, i) => {
    const field = fields[i % fields.length]!;
    const value = field === 'email' ? `w${i}@example.com` : field === 'site' ? `https://w${i}.example.com` : (['new', 'won', 'lost'] as const)[i % 3];
    return updateRecord(d.db, 'thing', one, { [field]: value }, ctx).then(() => ({ field, value, i }));
  });
  const claims = Array.from({ length: 20 }, (_, i) =>
    bulkCreate(d.db, 'thing', [{ name: `claimant ${i}`, external_id: 'the-one' }], ctx).then(() => 'won', (e: { code?: string; validationErrors?: { error_code: string }[] }) => {
      expect(e.code).toBe('VALIDATION_FAILED');
      expect(e.validationErrors!.map((v) => v.error_code)).toEqual(['NOT_UNIQUE']);
      return 'lost';
    }));
  const [upserted, updated, claimed] = await Promise.all([Promise.all(upserts), Promise.all(updates), Promise.all(claims)]);

  for (const res of upserted) expect([res.records_created, res.records_updated, res.failed_records]).toEqual([1, 2, null]);
  const created = await d.rows<{ name: string }>("SELECT name FROM thing WHERE org_id = $1 AND name LIKE 'created by %' ORDER BY name", [org]);
  expect(created.map((r) => r.name)).toEqual(Array.from({ length: WRITERS }, (_, i) => `created by ${i}`).sort());
  expect(claimed.filter((c) => c === 'won')).toHaveLength(1);
  const owners = await d.rows<{ n: number }>("SELECT count(*)::int AS n FROM thing WHERE org_id = $1 AND external_id = 'the-one'", [org]);
  expect(owners[0]!.n).toBe(1);
  const total = await d.rows<{ n: number }>('SELECT count(*)::int AS n FROM thing WHERE org_id = $1', [org]);
  expect(total[0]!.n).toBe(2 + WRITERS + 1);

  // Each field of the shared record holds the value of one of its writers, and the updates of
  // other fields did not undo it: the record's email, site and stage are each some writer's.
  const final = await getRecord(d.db, 'thing', one, ctx);
  for (const field of fields) {
    const candidates = updated.filter((u) => u.field === field).map((u) => u.value);
    expect(candidates).toContain(final[field]);
  }
  expect(Array.from({ length: WRITERS }, (_, i) => i)).toContain(final.score);
  const second = await getRecord(d.db, 'thing', two, ctx);
  expect(Array.from({ length: WRITERS }, (_, i) => i)).toContain(second.count);
}

describe('concurrent writers on PostgreSQL 15 with a pg Pool', () => {
  let server: PgServer;
  let pool: pg.Pool;
  beforeAll(async () => {
    server = await startPgDatabase();
    pool = new pg.Pool({ connectionString: server.url, max: 20 });
    for (const s of catalogDdl(catalog, { uniqueIndexes: true })) await pool.query(s);
  }, 120_000);
  afterAll(async () => {
    await pool?.end();
    await server?.stop();
  });

  it('loses nothing and duplicates nothing', async () => {
    await race({ db: pool, rows: async (sql, params) => (await pool.query(sql, params)).rows }, 'org_pg');
  }, 120_000);

  it('upserts naming the same records in opposite orders neither deadlock nor lose a write (an object without unique columns, so no lock queues them)', async () => {
    const ctx = { catalog, orgId: 'org_deadlock', userId: 'u_1' };
    await bulkCreate(pool, 'note', [{ body: 'first' }, { body: 'second' }], ctx);
    const [x, y] = (await pool.query<{ id: string }>("SELECT id FROM note WHERE org_id = 'org_deadlock' ORDER BY body")).rows.map((r) => r.id) as [string, string];
    const results = await Promise.all(Array.from({ length: WRITERS }, (_, i) => bulkUpsert(pool, 'note', {
      values: i % 2 === 0 ? [{ id: x, body: `x by ${i}` }, { id: y, body: `y by ${i}` }, { body: `new ${i}` }] : [{ id: y, body: `y by ${i}` }, { id: x, body: `x by ${i}` }, { body: `new ${i}` }],
    }, ctx)));
    for (const r of results) expect([r.records_created, r.records_updated, r.failed_records]).toEqual([1, 2, null]);
    const bodies = (await pool.query<{ body: string }>("SELECT body FROM note WHERE org_id = 'org_deadlock' AND body LIKE 'new %' ORDER BY body")).rows.map((r) => r.body);
    expect(bodies).toEqual(Array.from({ length: WRITERS }, (_, i) => `new ${i}`).sort());
    // Each transaction wrote both notes; the last to commit wrote both, so they name the same writer.
    const final = (await pool.query<{ body: string }>('SELECT body FROM note WHERE id = ANY($1) ORDER BY id', [[x, y].sort()])).rows.map((r) => r.body.split(' by ')[1]);
    expect(final[0]).toBe(final[1]);
  }, 120_000);

  it('works on a single pg Client too, one transaction at a time', async () => {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await race({ db: client, rows: async (sql, params) => (await pool.query(sql, params)).rows }, 'org_client');
    } finally {
      await client.end();
    }
  }, 120_000);
});

describe('concurrent writers on PGlite', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await emptyPglite();
    await db.exec(catalogDdl(catalog, { uniqueIndexes: true }).join(';\n'));
  });
  afterAll(async () => {
    await db.close();
  });

  it('loses nothing and duplicates nothing', async () => {
    await race({ db, rows: async (sql, params) => (await db.query(sql, params)).rows as never[] }, 'org_lite');
  }, 120_000);
});
