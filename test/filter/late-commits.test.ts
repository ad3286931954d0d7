import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogDdl, loadCatalog, withAuditFields } from '../../src/catalog/index.js';
import { type ConnectorOptions } from '../../src/filter/index.js';
import { connectorRecords } from '../../src/query/filter.js';
import { bulkCreate, updateRecord, type Writable } from '../../src/records/index.js';
import { startPgDatabase } from '../support/pg-cluster.js';
import { pgServerAvailable, type PgServer } from '../support/pg-server.js';
import { emptyPglite } from '../support/pglite-template.js';

/**
 * Late commits in incremental sync (docs/connector.md). A write transaction that took its
 * stamp, then stays open while other writers commit newer rows and a connector sync pages past
 * them, must still have its row delivered once it commits: at least once, duplicates allowed.
 * The held transaction is the record functions' own (bulkCreate), kept open at its COMMIT on a
 * real PostgreSQL 15 connection; the truth is read from the table with plain SQL.
 */

const catalog = withAuditFields(loadCatalog({ objects: { ticket: { columns: { subject: { type: 'text', primary: true } } } } }));
const SECRET = 'late-commit-test-secret-0123456789';
const ORG = 'org_a';
const OTHER = 'org_b';
const ctx = (orgId: string, userId = `u_${orgId}`) => ({ catalog, orgId, userId });
const options = (orgId: string, pageSize: number): ConnectorOptions => ({ catalog, slug: 'ticket', orgId, tokenSecret: SECRET, pageSize, syncLagMs: 0 });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Walk {
  /** Every record delivered, in order: id and its updated_at in epoch ms. */
  readonly records: { id: string; at: number }[];
  readonly pages: number;
}

/** One sync: `updated_at gte from`, walked to the last page; `between` runs after each page but the last. */
async function walk(db: pg.Pool | PGlite, from: number, o: ConnectorOptions, between?: (page: number) => Promise<void>): Promise<Walk> {
  const records: { id: string; at: number }[] = [];
  let token: string | null = null;
  for (let pages = 1; ; pages++) {
    if (pages > 1000) throw new Error('the sync does not end');
    const body = { query: { fields: ['updated_at'], filter: { and: [{ field: 'updated_at', operator: 'gte', value: from }] } }, next_token: token };
    const page = await connectorRecords(db, body, o);
    for (const r of page.records) records.push({ id: r.id as string, at: Date.parse(r.updated_at as string) });
    token = page.next_token;
    if (token === null) return { records, pages };
    await between?.(pages);
  }
}

/** Syncs as a client does (each from the largest updated_at seen) until one delivers nothing new. */
async function syncUntilQuiet(db: pg.Pool | PGlite, from: number, o: ConnectorOptions, seen: Map<string, Set<number>>): Promise<number> {
  for (let round = 0; round < 20; round++) {
    // A write in the very millisecond of the sync's start waits for the next sync.
    await pause(2);
    const w = await walk(db, from, o);
    let fresh = 0;
    for (const r of w.records) {
      const times = seen.get(r.id) ?? new Set<number>();
      if (!times.has(r.at)) fresh++;
      times.add(r.at);
      seen.set(r.id, times);
      from = Math.max(from, r.at);
    }
    if (fresh === 0) return from;
  }
  throw new Error('the syncs never became quiet');
}

/** A statement on either driver (their `query` signatures differ only in overloads). */
function sql<T>(db: pg.Pool | PGlite, text: string, params: unknown[]): Promise<{ rows: T[] }> {
  return (db as unknown as { query(text: string, params: unknown[]): Promise<{ rows: T[] }> }).query(text, params);
}

/** id → updated_at of every live record of the organization, read with plain SQL. */
async function truth(db: pg.Pool | PGlite, orgId: string): Promise<Map<string, number>> {
  const { rows } = await sql<{ id: string; at: string | number }>(db, 'SELECT id, updated_at AS at FROM public.ticket WHERE org_id = $1 AND NOT is_deleted', [orgId]);
  return new Map(rows.map((r) => [r.id, Number(r.at)]));
}

/** A connection whose COMMIT waits until `release()`: the record function's transaction stays open, its rows written. */
function heldAtCommit(client: pg.Client): { db: Writable; atCommit: Promise<void>; release: () => void } {
  let release!: () => void;
  let reached!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const atCommit = new Promise<void>((resolve) => (reached = resolve));
  const db: Writable = {
    async query(text: string, params?: unknown[]) {
      if (text === 'COMMIT') {
        reached();
        await gate;
      }
      return client.query(text, params);
    },
  };
  return { db, atCommit, release };
}

function expectDelivered(seen: Map<string, Set<number>>, expected: Map<string, number>): void {
  const missing = [...expected].filter(([id, at]) => !seen.get(id)?.has(at)).map(([id, at]) => `${id}@${at}`);
  expect(missing).toEqual([]);
  const foreign = [...seen.keys()].filter((id) => !expected.has(id));
  expect(foreign).toEqual([]);
}

describe('on PostgreSQL 15, with a write transaction held open across pages', () => {
  let server: PgServer | undefined;
  let pool: pg.Pool;

  beforeAll(async () => {
    expect(pgServerAvailable(), 'PostgreSQL 15 server binaries are required (apt-get install postgresql-15)').toBe(true);
    server = await startPgDatabase();
    pool = new pg.Pool({ connectionString: server.url, max: 4 });
    for (const statement of catalogDdl(catalog, { keysetIndexes: true })) await pool.query(statement);
  }, 180_000);

  afterAll(async () => {
    await pool?.end();
    await server?.stop();
  });

  it('delivers the late row on a later sync although newer rows were delivered while it was open', async () => {
    for (const org of [ORG, OTHER]) await bulkCreate(pool, 'ticket', Array.from({ length: 12 }, (_, i) => ({ subject: `seed ${org} ${i}` })), ctx(org));
    const seed = [...(await truth(pool, ORG)).keys()];

    const client = new pg.Client({ connectionString: server!.url });
    await client.connect();
    try {
      const held = heldAtCommit(client);
      const late = bulkCreate(held.db, 'ticket', [{ subject: 'late' }], ctx(ORG, 'u_slow_writer'));
      await held.atCommit;

      // While it is open: newer rows commit, and a sync pages through them with more writes between pages.
      await pause(5);
      for (let i = 0; i < 6; i++) await bulkCreate(pool, 'ticket', [{ subject: `during ${i}` }, { subject: `during ${i}b` }], ctx(ORG));
      await updateRecord(pool, 'ticket', seed[0]!, { subject: 'seed renamed' }, ctx(ORG));
      await bulkCreate(pool, 'ticket', [{ subject: 'other org during' }], ctx(OTHER));
      const seen = new Map<string, Set<number>>();
      const first = await walk(pool, 0, options(ORG, 4), async (page) => {
        await bulkCreate(pool, 'ticket', [{ subject: `between pages ${page}` }], ctx(ORG));
      });
      expect(first.pages).toBeGreaterThanOrEqual(3);
      for (const r of first.records) seen.set(r.id, new Set([...(seen.get(r.id) ?? []), r.at]));

      held.release();
      await late;
      const committed = await truth(pool, ORG);
      const lateRow = (await pool.query<{ id: string }>("SELECT id FROM public.ticket WHERE subject = 'late'")).rows[0]!;
      const lateAt = committed.get(lateRow.id)!;
      // The situation of the bug: rows stamped after the late row committed before it did.
      expect(Math.max(...committed.values())).toBeGreaterThan(lateAt);
      expect([...committed].filter(([id, at]) => id !== lateRow.id && at > lateAt).length).toBeGreaterThan(10);
      // Nothing it delivered while the writer was open is newer than the writer's stamp: the cursor stayed behind it.
      expect(first.records.every((r) => r.at < lateAt)).toBe(true);

      // The client syncs on from the largest updated_at it has seen.
      const from = first.records.reduce((m, r) => Math.max(m, r.at), 0);
      await syncUntilQuiet(pool, from, options(ORG, 4), seen);
      expect(seen.get(lateRow.id)).toEqual(new Set([lateAt]));
      expectDelivered(seen, await truth(pool, ORG));
    } finally {
      await client.end();
    }
  }, 120_000);

  it('is not held back by an open transaction that has written nothing', async () => {
    const reader = new pg.Client({ connectionString: server!.url });
    await reader.connect();
    try {
      await reader.query('BEGIN');
      await reader.query('SELECT count(*) FROM public.ticket');
      await pause(5);
      await bulkCreate(pool, 'ticket', [{ subject: 'after the idle reader began' }], ctx(ORG));
      await pause(2);
      const { records } = await walk(pool, 0, options(ORG, 100));
      expect(new Set(records.map((r) => r.id))).toEqual(new Set((await truth(pool, ORG)).keys()));
    } finally {
      await reader.query('ROLLBACK').catch(() => undefined);
      await reader.end();
    }
  }, 120_000);
});

describe('on PGlite (one connection: no transaction is ever open while a page is read)', () => {
  let db: PGlite;

  beforeAll(async () => {
    db = await emptyPglite();
    await db.exec(catalogDdl(catalog, { keysetIndexes: true }).join(';\n'));
  }, 180_000);

  afterAll(async () => {
    await db?.close();
  });

  it('delivers every row written between pages, each organization its own', async () => {
    for (const org of [ORG, OTHER]) await bulkCreate(db, 'ticket', Array.from({ length: 10 }, (_, i) => ({ subject: `seed ${org} ${i}` })), ctx(org));
    const seen = new Map<string, Set<number>>();
    const first = await walk(db, 0, options(ORG, 3), async (page) => {
      await bulkCreate(db, 'ticket', [{ subject: `between ${page}` }], ctx(page % 2 === 0 ? ORG : OTHER));
      const ids = [...(await truth(db, ORG)).keys()];
      await updateRecord(db, 'ticket', ids[page % ids.length]!, { subject: `renamed at ${page}` }, ctx(ORG));
    });
    expect(first.pages).toBeGreaterThanOrEqual(3);
    for (const r of first.records) seen.set(r.id, new Set([...(seen.get(r.id) ?? []), r.at]));
    await syncUntilQuiet(db, first.records.reduce((m, r) => Math.max(m, r.at), 0), options(ORG, 3), seen);
    expectDelivered(seen, await truth(db, ORG));
  }, 120_000);
});
