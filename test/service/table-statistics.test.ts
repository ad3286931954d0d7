import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PGlite } from '@electric-sql/pglite';
import { createServer, type OqlServer } from '../../src/server/app.js';
import { databaseOf } from '../../src/run/database-of.js';
import { KEYS, startChangesService, type ChangesHarness } from '../changes/support.js';

/**
 * PGlite runs no autovacuum, so the embedded service analyzes its tables itself. The oracle is
 * PostgreSQL's own record of an ANALYZE: `pg_class.reltuples`, -1 for a table never analyzed,
 * and for a table this small (every row read by the sample) its exact row count.
 */

async function reltuples(db: PGlite, table: string): Promise<number> {
  const { rows } = await db.query<{ reltuples: number }>('SELECT reltuples FROM pg_class WHERE oid = to_regclass($1)', [table]);
  return Number(rows[0]!.reltuples);
}

async function count(db: PGlite, table: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
  return rows[0]!.n;
}

describe('planner statistics on the embedded database', () => {
  let demo: OqlServer;
  let demoDb: PGlite;
  let h: ChangesHarness;

  beforeAll(async () => {
    demoDb = new PGlite();
    demo = await createServer({ db: databaseOf(demoDb), demo: true, env: {} });
    h = await startChangesService('pglite');
  }, 120_000);

  afterAll(async () => {
    await demo?.close();
    await demoDb?.close();
    await h?.close();
  });

  it('analyzes every table that holds rows when the service opens: the demo data is planned with statistics from the first query', async () => {
    expect(demo.demoRows).toBeGreaterThan(0);
    const { rows } = await demoDb.query<{ name: string }>(
      "SELECT format('%I.%I', schemaname, relname) AS name FROM pg_stat_user_tables WHERE schemaname IN ('public', 'oql_service') ORDER BY 1");
    // Every table with rows at the end of start-up (settings, keys, workspaces and the demo's records).
    let filled = 0;
    for (const { name } of rows) {
      const n = await count(demoDb, name);
      if (n === 0) continue;
      filled++;
      expect(await reltuples(demoDb, name), name).toBe(n);
    }
    expect(filled).toBeGreaterThanOrEqual(4);
  });

  it('analyzes a table again once writes through the service grew it by a tenth', async () => {
    const probe = async (sql: string) => (await h.db.query<{ v: number }>(sql)).rows[0]!.v;
    const before = await probe("SELECT reltuples::int AS v FROM pg_class WHERE oid = to_regclass('public.account')");
    for (let i = 0; i < 3; i++) {
      const made = await h.call('POST', '/api/v1/org/objects/account/record/bulk_create', {
        key: i % 2 ? KEYS.acmeAdmin : KEYS.globexAdmin,
        body: Array.from({ length: 400 }, (_, j) => ({ name: `Statistics ${i}-${j}` })),
      });
      expect(made.status, made.text).toBe(200);
    }
    const rows = await probe('SELECT count(*)::int AS v FROM public.account');
    expect(rows).toBeGreaterThanOrEqual(1_200);
    // The look comes a moment after the writes; bounded, it fails with what it saw.
    let seen = before;
    for (let i = 0; i < 300 && seen !== rows; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      seen = await probe("SELECT reltuples::int AS v FROM pg_class WHERE oid = to_regclass('public.account')");
    }
    expect(seen, `reltuples of account after ${rows} rows (was ${before})`).toBe(rows);
  });
});
