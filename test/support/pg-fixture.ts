import pg from 'pg';
import { afterAll, beforeAll, expect } from 'vitest';
import { fixtureData, loadFixtureCatalog, loadIntoDatabase, type FixtureName } from '../../fixtures/index.js';
import type { Catalog } from '../../src/catalog/types.js';
import type { Row } from '../../fixtures/index.js';
import { startPgDatabase } from './pg-cluster.js';
import { pgServerAvailable, type PgServer } from './pg-server.js';

/**
 * The fixtures loaded for a test file, each in a database of its own (the fixtures share table
 * names) on the run's PostgreSQL cluster (pg-cluster.ts). The binaries are required: without them
 * the file fails, it does not skip.
 */
export interface PgFixtures {
  /** The pool of a fixture's (or an extra catalog's) database. */
  pool(name: string): pg.Pool;
  catalog(name: string): Catalog;
  /** A fixture's database as a server handle (its `url` names the database). */
  server(name: string): PgServer;
}

export interface PgFixtureOptions {
  /** Load the fixtures' generated rows (default true); false leaves the tables empty. */
  readonly data?: boolean;
  /** More databases: a catalog of a test's own and its rows. */
  readonly extra?: Readonly<Record<string, { readonly catalog: Catalog; readonly rows: ReadonlyMap<string, readonly Row[]> }>>;
}

export function pgFixtures(fixtures: readonly FixtureName[], options: PgFixtureOptions = {}): PgFixtures {
  const databases = new Map<string, PgServer>();
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
    for (const name of names) databases.set(name, await startPgDatabase());
    for (const name of names) {
      const pool = new pg.Pool({ connectionString: databases.get(name)!.url, max: 4 });
      pools.set(name, pool);
      await loadIntoDatabase(pool, catalogs.get(name)!, rowsOf(name));
      await pool.query('ANALYZE');
    }
  }, 180_000);

  afterAll(async () => {
    try {
      for (const p of pools.values()) await p.end();
    } finally {
      for (const d of databases.values()) await d.stop();
    }
  });

  return {
    pool: (name) => {
      const p = pools.get(name);
      if (!p) throw new Error(`fixture ${name} is not loaded (see beforeAll)`);
      return p;
    },
    catalog: (name) => catalogs.get(name)!,
    server: (name) => {
      const d = databases.get(name);
      if (!d) throw new Error(`fixture ${name} has no database (see beforeAll)`);
      return d;
    },
  };
}
