import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtureCatalog, type Row } from '../../fixtures/index.js';
import { demoData } from '../../src/demo/demo.js';
import { createServer, openDatabase, databaseOf, verifyApiKey, type ServiceDb } from '../../src/server/index.js';
import { expectEnvelope, listen } from './support.js';
import { emptyPglite } from '../support/pglite-template.js';

/**
 * Start-up of the service on a database: tables, demo data, keys, the schema check. `oql keys` and
 * `oql serve` as a user runs them are in startup-cli.test.ts, a file of their own so that the two
 * run side by side.
 */

const catalog = loadFixtureCatalog('crm');
let pglite: PGlite;
let db: ServiceDb;

beforeAll(async () => {
  pglite = await emptyPglite();
  db = databaseOf(pglite);
});

afterAll(async () => {
  await pglite?.close();
});

describe('createServer on an empty database', () => {
  // The demo data's rows for org_demo (fixtures/demo.ts, seeded), independently of the server.
  let demo: Map<string, Row[]>;
  let demoTotal: number;
  beforeAll(async () => {
    demo = await demoData(catalog, { organizations: ['org_demo'] });
    demoTotal = [...demo.values()].reduce((n, rows) => n + rows.length, 0);
  });

  it('creates the tables, loads the demo data and makes one superadmin key for org_demo', async () => {
    const api = await listen({ db, demo: true, createFirstKey: true, env: {} });
    try {
      expect(api.server.demoRows).toBe(demoTotal);
      expect(api.server.firstKey).toMatch(/^oql_[A-Za-z0-9_-]{43}$/);
      const expected = demo.get('opportunity')!.filter((r) => r.is_deleted === false).length;
      const a = await api.call('POST', '/api/v1/reports/count', { key: api.server.firstKey!, body: { query: 'SELECT id FROM opportunity LIMIT 10000', slug: 'opportunity' } });
      expect(a.json).toEqual({ success: true, data: { count: expected } });
      // The key is stored as its SHA-256 hash only.
      const { rows } = await pglite.query<{ key_hash: string; org_id: string; role: string }>('SELECT key_hash, org_id, role FROM oql_service.api_keys');
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ org_id: 'org_demo', role: 'superadmin' });
      expect(rows[0]!.key_hash).not.toContain(api.server.firstKey!.slice(4, 20));
    } finally {
      await api.close();
    }
  });

  it('loads nothing and creates no key on the next start', async () => {
    const again = await createServer({ db, demo: true, createFirstKey: true, env: {} });
    try {
      expect(again.demoRows).toBe(0);
      expect(again.firstKey).toBeUndefined();
      const { rows } = await pglite.query<{ n: number }>('SELECT count(*)::int AS n FROM public.opportunity');
      expect(rows[0]!.n).toBe(demo.get('opportunity')!.length);
    } finally {
      await again.close();
    }
  });

  it('bootstraps OQL_API_KEYS, scoped to their organizations and roles', async () => {
    const api = await listen({ db, env: { OQL_API_KEYS: 'boot-key-one-0000001=org_one:member:u_1, boot-key-two-0000002=org_two:superadmin' } });
    try {
      expect(await verifyApiKey(db, 'boot-key-one-0000001')).toMatchObject({ orgId: 'org_one', role: 'member', userId: 'u_1', via: 'api_key' });
      expect(await verifyApiKey(db, 'boot-key-two-0000002')).toMatchObject({ orgId: 'org_two', role: 'superadmin' });
      expect(await verifyApiKey(db, 'boot-key-two-0000003')).toBeNull();
      expectEnvelope(await api.call('POST', '/api/v1/org/tool/mcp/logs/list/', { key: 'boot-key-one-0000001' }), 403, 'PERMISSION_DENIED');
      expect((await api.call('POST', '/api/v1/org/tool/mcp/logs/list/', { key: 'boot-key-two-0000002' })).status).toBe(200);
    } finally {
      await api.close();
    }
  });

  it('refuses a malformed OQL_API_KEYS without echoing the key', async () => {
    for (const bad of ['short=org_a:member', 'a-long-enough-key-1=org_a:owner', 'a-long-enough-key-2', 'a-long-enough-key-3=org a:member']) {
      const err = await createServer({ db, env: { OQL_API_KEYS: bad } }).then(() => null, (e: Error) => e);
      expect(err).toMatchObject({ code: 'INVALID_OPTIONS' });
      expect(err!.message).toContain('OQL_API_KEYS entry 1');
      expect(err!.message).not.toContain('long-enough-key');
    }
  });

  it('refuses to start on a table that lacks a catalog column or holds it with another type, naming both', async () => {
    await pglite.exec('ALTER TABLE public.lead DROP COLUMN email');
    const missing = await createServer({ db, env: {} }).then(() => null, (e: Error & { code?: string }) => e);
    expect(missing).toMatchObject({ code: 'SCHEMA_MISMATCH' });
    expect(missing!.message).toContain('"public"."lead", column "email" is missing');
    await pglite.exec('ALTER TABLE public.lead ADD COLUMN email integer');
    const typed = await createServer({ db, env: {} }).then(() => null, (e: Error & { code?: string }) => e);
    expect(typed!.message).toContain('"public"."lead", column "email" is integer, the catalog needs text');
    await pglite.exec('ALTER TABLE public.lead ALTER COLUMN email TYPE text');
    await (await createServer({ db, env: {} })).close();
  });

  it('refuses a database URL that is not a postgres:// URL', async () => {
    await expect(openDatabase({ database: 'not a url' })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    await expect(openDatabase({ database: 'mysql://u:secret@localhost/db' })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    const err = await openDatabase({ database: 'postgres://u:secret@127.0.0.1:1/db' }).then(() => null, (e: Error) => e);
    expect(err).toMatchObject({ code: 'DATABASE_ERROR' });
    expect(err!.message).not.toContain('secret');
  });
});
