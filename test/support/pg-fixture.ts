import pg from 'pg';
import { afterAll, beforeAll, expect } from 'vitest';
import { fixtureData, loadFixtureCatalog, loadIntoDatabase, type FixtureName } from '../../fixtures/index.js';
import type { Catalog } from '../../src/catalog/types.js';
import { pgServerAvailable, startPgServer, type PgServer } from './pg-server.js';

/**
 * One throwaway PostgreSQL 15 cluster for a test file with fixtures loaded, each fixture in its
 * own database (the fixtures share table names). The binaries are required: without them the
 * file fails, it does not skip.
 */
export interface PgFixtures {
  /** The pool of a fixture's database. */
  pool(name: FixtureName): pg.Pool;
  catalog(name: FixtureName): Catalog;
  /** The server itself, for a database of a test's own. */
  server(): PgServer;
}

export function pgFixtures(names: readonly FixtureName[], options: { readonly data?: boolean } = {}): PgFixtures {
  let server: PgServer | undefined;
  const pools = new Map<FixtureName, pg.Pool>();
  const catalogs = new Map(names.map((n) => [n, loadFixtureCatalog(n)] as const));

  beforeAll(async () => {
    expect(pgServerAvailable(), 'PostgreSQL 15 server binaries are required (apt-get install postgresql-15)').toBe(true);
    server = await startPgServer();
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    try {
      for (const name of names) await admin.query(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    for (const name of names) {
      const pool = new pg.Pool({ connectionString: server.url.replace(/\/postgres$/, `/${name}`), max: 4 });
      pools.set(name, pool);
      await loadIntoDatabase(pool, catalogs.get(name)!, options.data === false ? new Map() : fixtureData(name));
      await pool.query('ANALYZE');
    }
  }, 180_000);

  afterAll(async () => {
    try {
      for (const p of pools.values()) await p.end();
    } finally {
      await server?.stop();
    }
  });

  return {
    pool: (name) => {
      const p = pools.get(name);
      if (!p) throw new Error(`fixture ${name} is not loaded (see beforeAll)`);
      return p;
    },
    catalog: (name) => catalogs.get(name)!,
    server: () => {
      if (!server) throw new Error('the server did not start (see beforeAll)');
      return server;
    },
  };
}
