import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, databaseOf, type OqlServer } from '../../src/server/index.js';
import { API_KEYS_ENV, KEYS, call } from './support.js';
import { emptyPglite } from '../support/pglite-template.js';

/**
 * `searchIndexes`: trigram indexes on every text column and the search column, made by the
 * server at start on its embedded database, used by a `contains` filter, and refused clearly
 * where pg_trgm cannot be created.
 */

let server: OqlServer;
let url: string;

beforeAll(async () => {
  server = await createServer({ memory: true, searchIndexes: true, apiKeys: API_KEYS_ENV, env: {}, log: false });
  await server.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
}, 180_000);

afterAll(async () => {
  await server?.close();
});

interface IndexRow { tablename: string; indexdef: string }

async function trigramIndexes(db: OqlServer['db']): Promise<IndexRow[]> {
  return (await db.query<IndexRow>("SELECT tablename, indexdef FROM pg_indexes WHERE schemaname = 'public' AND indexdef LIKE '%gin_trgm_ops%' ORDER BY 1, 2")).rows;
}

describe('search indexes', () => {
  it('cover every text-like column of every object, and the search column', async () => {
    const found = await trigramIndexes(server.db);
    for (const obj of server.catalog.objects.values()) {
      const wanted = [...obj.columns.values()]
        .filter((c) => c.column !== null && ['text', 'email', 'phone', 'url'].includes(c.type))
        .map((c) => c.column!)
        .concat(['search_field']);
      const have = found.filter((r) => r.tablename === obj.table).map((r) => /USING gin \((\w+) gin_trgm_ops\)/.exec(r.indexdef)?.[1]);
      expect(new Set(have), obj.slug).toEqual(new Set(wanted));
    }
  });

  it('serve a contains filter that sees only its own organization', async () => {
    for (const [key, org] of [[KEYS.acmeAdmin, 'org_acme'], [KEYS.globexAdmin, 'org_globex']] as const) {
      const a = await call(url, 'POST', '/api/v1/org/objects/lead/record/bulk_create', { key, body: [{ name: `Zyxwv ${org}`, company: 'Trigram Works' }] });
      expect(a.status, a.text).toBe(200);
    }
    for (const [key, org] of [[KEYS.acmeAdmin, 'org_acme'], [KEYS.globexAdmin, 'org_globex']] as const) {
      const f = await call(url, 'POST', '/api/v1/org/objects/lead/filter', { key, body: { query: { fields: ['name'], filters: { and: [{ field: 'name', operator: 'contains', value: 'yxw' }] } } } });
      expect(f.status, f.text).toBe(200);
      expect(f.json.data.records.map((r: { name: string }) => r.name)).toEqual([`Zyxwv ${org}`]);
    }
  });

  it('survive a restart on the same directory without the flag, where writes still work', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'oql-trgm-'));
    try {
      const first = await createServer({ dataDir: dir, searchIndexes: true, apiKeys: API_KEYS_ENV, env: {}, log: false });
      await first.close();
      const again = await createServer({ dataDir: dir, apiKeys: API_KEYS_ENV, env: {}, log: false });
      try {
        expect((await trigramIndexes(again.db)).length).toBeGreaterThan(0);
        await again.app.listen({ port: 0, host: '127.0.0.1' });
        const at = `http://127.0.0.1:${(again.app.server.address() as AddressInfo).port}`;
        const w = await call(at, 'POST', '/api/v1/org/objects/lead/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'Qwertz after restart' }] });
        expect(w.status, w.text).toBe(200);
        const f = await call(at, 'POST', '/api/v1/org/objects/lead/filter', { key: KEYS.acmeAdmin, body: { query: { fields: ['name'], filters: { and: [{ field: 'name', operator: 'contains', value: 'wertz after' }] } } } });
        expect(f.json.data.records).toEqual([expect.objectContaining({ name: 'Qwertz after restart' })]);
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('are not made unless asked for', async () => {
    const plain = await createServer({ memory: true, env: {}, log: false });
    try {
      expect(await trigramIndexes(plain.db)).toEqual([]);
    } finally {
      await plain.close();
    }
  }, 120_000);

  it('stop the start with a clear error where pg_trgm cannot be created', async () => {
    const bare = await emptyPglite();
    try {
      const failed = await createServer({ db: databaseOf(bare), searchIndexes: true, env: {}, log: false }).then(() => null, (e) => e);
      expect(failed).toMatchObject({ code: 'DATABASE_ERROR', message: 'search indexes need the PostgreSQL extension pg_trgm, which this database cannot create' });
    } finally {
      await bare.close();
    }
  }, 120_000);
});
