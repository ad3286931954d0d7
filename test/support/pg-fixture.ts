import pg from 'pg';
import { afterAll, beforeAll, expect } from 'vitest';
import { fixtureData, loadFixtureCatalog, loadIntoDatabase, type FixtureName } from '../../fixtures/index.js';
import type { Catalog } from '../../src/catalog/types.js';
import type { Row } from '../../fixtures/index.js';
import { pgServerAvailable, startPgServer, type PgServer } from './pg-server.js';

/**
 * One throwaway PostgreSQL 15 cluster for a test file with fixtures loaded, each fixture in its
 * own database (the fixtures share table names). The binaries are required: without them the
 * file fails, it does not skip.
 */
export interface PgFixtures {
  /** The pool of a fixture's (or an extra catalog's) database. */
  pool(name: string): pg.Pool;
  catalog(name: string): Catalog;
  /** The server itself, for a database of a test's own. */
  server(): PgServer;
}

export interface PgFixtureOptions {
  /** Load the fixtures' generated rows (default true); false leaves the tables empty. */
  readonly data?: boolean;
  /** More databases: a catalog of a test's own and its rows. */
  readonly extra?: Readonly<Record<string, { readonly catalog: Catalog; readonly rows: ReadonlyMap<string, readonly Row[]> }>>;
}

export function pgFixtures(fixtures: readonly FixtureName[], options: PgFixtureOptions = {}): PgFixtures {
  let server: PgServer | undefined;
  const pools = new Map<string, pg.Pool>();
  const catalogs = new Map<string, Catalog>(fixtures.map((n) => [n, loadFixtureCatalog(n)] as const));
  for (const [name, e] of Object.entries(options.extra ?? {})) catalogs.set(name, e.catalog);
  const names = [...catalogs.keys()];
  const rowsOf = (name: string): ReadonlyMap<string, readonly Row[]> => {
    const extra = options.extra?.[name];
    if (extra) return extra.rows;
    return options.data === false ? new Map() : fixtureData(name as FixtureName);
  };

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
      await loadIntoDatabase(pool, catalogs.get(name)!, rowsOf(name));
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
