import { catalogDdl } from '../catalog/ddl.js';
import { quoteQualified } from '../catalog/quote.js';
import type { Catalog } from '../catalog/types.js';
import { OqlError } from '../diagnostics/diagnostic.js';
import type { ServiceDb, ServiceTx } from './types.js';
import { nameColumn, searchText } from '../records/shape.js';

export interface DatabaseOptions {
  /** A PostgreSQL server (node-postgres Pool): postgres://user:password@host:5432/db. */
  readonly database?: string | undefined;
  /** Where embedded PGlite keeps its files. Default ./.oql-data. */
  readonly dataDir?: string | undefined;
  /** Embedded PGlite in memory: nothing is kept. */
  readonly memory?: boolean | undefined;
  /** Connections of the pg Pool. Default 10. */
  readonly poolSize?: number | undefined;
  /** Trigram indexes for contains, starts_with and global_search (needs pg_trgm). Default off. */
  readonly searchIndexes?: boolean | undefined;
}

export const DEFAULT_DATA_DIR = './.oql-data';

/** Opens the service's database: a pg Pool for `database`, otherwise embedded PGlite. */
export async function openServiceDb(options: DatabaseOptions = {}): Promise<ServiceDb> {
  if (options.database !== undefined) {
    if (options.dataDir !== undefined || options.memory) {
      throw OqlError.plain('INVALID_OPTIONS', '--database cannot be combined with --data-dir or --memory', 'pick one: a server URL, or an embedded database');
    }
    return openPool(options.database, options.poolSize ?? 10);
  }
  if (options.dataDir !== undefined && options.memory) {
    throw OqlError.plain('INVALID_OPTIONS', '--data-dir and --memory exclude each other', 'drop --memory to keep data in the directory');
  }
  return openPglite(options.memory ? undefined : options.dataDir ?? DEFAULT_DATA_DIR);
}

/** Wraps an already open PGlite instance or pg Pool (tests share one per file). Closing it is the caller's business. */
export function serviceDbOf(raw: unknown, label = 'database'): ServiceDb {
  const handle = raw as { transaction?: unknown; exec?: unknown; connect?: unknown };
  if (typeof handle.transaction === 'function' && typeof handle.exec === 'function') return pgliteDb(raw as PgliteLike, label, async () => {});
  if (typeof handle.connect === 'function') return poolDb(raw as PoolLike, label, async () => {});
  throw new TypeError('serviceDbOf takes a PGlite instance or a pg Pool');
}

interface PgliteLike {
  query<T>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
  transaction<T>(fn: (tx: ServiceTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

interface PoolClientLike {
  query<T>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
  release(destroy?: boolean | Error): void;
}

interface PoolLike {
  query<T>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
  connect(): Promise<PoolClientLike>;
  end(): Promise<void>;
}

async function openPglite(dataDir: string | undefined): Promise<ServiceDb> {
  const [{ PGlite }, { pg_trgm }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite/contrib/pg_trgm')]);
  let db: PgliteLike;
  try {
    // pg_trgm is always loaded (it costs nothing measurable at start): a data directory whose
    // tables carry trigram indexes cannot be written without it, whatever this start asked for.
    db = (await PGlite.create({ ...(dataDir === undefined ? {} : { dataDir }), extensions: { pg_trgm } })) as unknown as PgliteLike;
  } catch (e) {
    throw OqlError.plain('DATABASE_ERROR', `cannot open the embedded database in '${dataDir}': ${(e as Error).message}`,
      'is another oql serve using this directory? Use --data-dir for another one, or --memory');
  }
  const label = dataDir === undefined ? 'embedded PostgreSQL (PGlite) in memory' : `embedded PostgreSQL (PGlite) in ${dataDir}`;
  return pgliteDb(db, label, () => db.close());
}

function pgliteDb(db: PgliteLike, label: string, close: () => Promise<void>): ServiceDb {
  return {
    kind: 'pglite',
    raw: db,
    label,
    query: (sql, params) => db.query(sql, params),
    transaction: (fn) => db.transaction(fn),
    close,
  };
}

async function openPool(url: string, max: number): Promise<ServiceDb> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw OqlError.plain('INVALID_OPTIONS', `--database '${redact(url)}' is not a URL`, 'for example postgres://user:password@localhost:5432/crm');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw OqlError.plain('INVALID_OPTIONS', `--database must be a postgres:// URL, not ${parsed.protocol}//`, 'for example postgres://user:password@localhost:5432/crm');
  }
  const pg = await import('pg');
  const Pool = pg.Pool ?? (pg as unknown as { default: typeof pg }).default.Pool;
  const pool = new Pool({ connectionString: url, max });
  // An idle client's network error is emitted on the pool; unhandled it would end the process.
  pool.on('error', () => {});
  try {
    await pool.query('SELECT 1');
  } catch (e) {
    await pool.end().catch(() => {});
    throw OqlError.plain('DATABASE_ERROR', `cannot connect to ${redact(url)}: ${(e as Error).message}`, 'check the URL and that the server is running');
  }
  return poolDb(pool as unknown as PoolLike, redact(url), () => pool.end());
}

function poolDb(pool: PoolLike, label: string, close: () => Promise<void>): ServiceDb {
  return {
    kind: 'postgres',
    raw: pool,
    label,
    query: (sql, params) => pool.query(sql, params),
    async transaction(fn) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (e) {
        try {
          await client.query('ROLLBACK');
        } catch (rollbackError) {
          // A connection that cannot roll back is not given back to the pool.
          broken = rollbackError as Error;
        }
        throw e;
      } finally {
        client.release(broken);
      }
    },
    close,
  };
}

/** postgres://user:secret@host/db → postgres://user:***@host/db */
export function redact(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}

// ---- The catalog's tables ----

interface ExpectedTable {
  readonly table: string;
  readonly columns: ReadonlyMap<string, string>;
}

/**
 * The tables the catalog's DDL creates, read back from that DDL, so the check compares against
 * exactly what `catalogDdl` would write (columns other parts of the library add included).
 */
function expectedTables(catalog: Catalog): ExpectedTable[] {
  const out: ExpectedTable[] = [];
  for (const statement of catalogDdl(catalog)) {
    const head = /^CREATE TABLE (?:IF NOT EXISTS )?(?:"(?:[^"]|"")*"\.)?"((?:[^"]|"")*)" \(\n([\s\S]*)\n\)$/.exec(statement);
    if (!head) continue;
    const columns = new Map<string, string>();
    for (const line of head[2]!.split(/,\n/)) {
      const col = /^\s*"((?:[^"]|"")*)"\s+(.+?)(?:\s+(?:NOT NULL|NULL|DEFAULT|PRIMARY|UNIQUE|REFERENCES|CHECK|GENERATED|COLLATE)\b.*)?$/.exec(line);
      if (col) columns.set(col[1]!.replace(/""/g, '"'), normaliseType(col[2]!));
    }
    out.push({ table: head[1]!.replace(/""/g, '"'), columns });
  }
  return out;
}

const TYPE_ALIASES: Record<string, string> = {
  int8: 'bigint', int4: 'integer', int: 'integer', int2: 'smallint', bool: 'boolean', float8: 'double precision',
  float4: 'real', varchar: 'character varying', timestamptz: 'timestamp with time zone', timestamp: 'timestamp without time zone',
};

function normaliseType(type: string): string {
  const t = type.trim().toLowerCase();
  const array = t.endsWith('[]');
  const base = array ? t.slice(0, -2) : t;
  return (TYPE_ALIASES[base] ?? base) + (array ? '[]' : '');
}

/**
 * Creates the catalog's tables (and their indexes) where missing. An existing table that lacks a
 * column of the catalog, or holds it with another type, stops the start: the service never
 * migrates data silently. Columns the catalog does not know are left alone.
 */
export async function ensureCatalogTables(db: ServiceDb, catalog: Catalog, options: { searchIndexes?: boolean } = {}): Promise<{ created: string[]; warnings: string[] }> {
  const { schema } = catalog.mapping;
  const { rows } = await db.query<{ table_name: string; column_name: string; column_type: string }>(
    `SELECT c.relname AS table_name, a.attname AS column_name, format_type(a.atttypid, a.atttypmod) AS column_type
       FROM pg_catalog.pg_attribute a
       JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped`,
    [schema],
  );
  const existing = new Map<string, Map<string, string>>();
  for (const r of rows) {
    let cols = existing.get(r.table_name);
    if (!cols) existing.set(r.table_name, (cols = new Map()));
    cols.set(r.column_name, normaliseType(r.column_type));
  }
  const created: string[] = [];
  const problems: string[] = [];
  for (const want of expectedTables(catalog)) {
    const have = existing.get(want.table);
    if (!have) {
      created.push(want.table);
      continue;
    }
    for (const [column, type] of want.columns) {
      const actual = have.get(column);
      const where = `table ${quoteQualified(schema, want.table)}, column "${column}"`;
      if (actual === undefined) problems.push(`${where} is missing (the catalog needs ${type})`);
      else if (actual !== type) problems.push(`${where} is ${actual}, the catalog needs ${type}`);
    }
  }
  if (problems.length > 0) {
    throw OqlError.plain('SCHEMA_MISMATCH',
      `the database does not match the catalog: ${problems.join('; ')}`,
      'the service does not migrate existing tables: alter them to match (oql ddl prints the expected statements), or start on an empty database');
  }
  // IF NOT EXISTS: creates the missing tables and any missing index, leaves the rest alone. The
  // keyset indexes serve the connector's pages and incremental syncs as range scans.
  for (const statement of catalogDdl(catalog, { ifNotExists: true, keysetIndexes: true })) await db.query(statement);
  // Unique columns get a unique index of live rows, so two concurrent writers cannot both store
  // one value. On a table that already holds duplicates the index cannot exist; the record
  // functions still check uniqueness themselves, so the start goes on and says which one failed.
  const warnings: string[] = [];
  for (const statement of catalogDdl(catalog, { ifNotExists: true, indexes: false, uniqueIndexes: true })) {
    if (!statement.startsWith('CREATE UNIQUE INDEX')) continue;
    try {
      await db.query(statement);
    } catch {
      warnings.push(`could not create ${/INDEX (?:IF NOT EXISTS )?("(?:[^"]|"")*")/.exec(statement)?.[1] ?? 'a unique index'}: the table holds duplicate values`);
    }
  }
  if (options.searchIndexes) await createSearchIndexes(db, catalog);
  return { created, warnings };
}

/**
 * Trigram (GIN) indexes on the text columns and the search column, which serve `contains`,
 * `starts_with` and `global_search` (ILIKE with a leading %) instead of a scan of the tenant's
 * rows. Opt-in: they cost space and write time, and building them on a large table takes a while
 * (once: IF NOT EXISTS leaves them alone afterwards).
 */
async function createSearchIndexes(db: ServiceDb, catalog: Catalog): Promise<void> {
  try {
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  } catch {
    throw OqlError.plain('DATABASE_ERROR', 'search indexes need the PostgreSQL extension pg_trgm, which this database cannot create',
      'install it on the server (Debian: postgresql-contrib) or let a superuser run CREATE EXTENSION pg_trgm; or start without search indexes');
  }
  for (const statement of catalogDdl(catalog, { ifNotExists: true, searchIndexes: true })) {
    if (statement.includes('gin_trgm_ops')) await db.query(statement);
  }
}

/** The organization the demo data and the first key belong to. */
export const DEMO_ORG = 'org_demo';

/**
 * Loads demo data for `org_demo` when every table of the catalog is empty: for the example CRM,
 * believable people, companies and deals (src/demo/demo.ts); for any other catalog, the seeded
 * generator's rows. `search_field` is filled the way record writes fill it, so `global_search`
 * finds demo records too.
 */
export async function loadDemoData(db: ServiceDb, catalog: Catalog, isFixture: boolean): Promise<number> {
  for (const obj of catalog.objects.values()) {
    const { rows } = await db.query(`SELECT 1 FROM ${quoteQualified(catalog.mapping.schema, obj.table)} LIMIT 1`);
    if (rows.length > 0) return 0;
  }
  const { generateRows, insertRows } = await import('../demo/index.js');
  const data = isFixture
    ? await (await import('../demo/demo.js')).demoData(catalog, { organizations: [DEMO_ORG] })
    : generateRows(catalog, { seed: 20240601, tenants: [DEMO_ORG], counts: 200 });
  const searchColumn = catalog.mapping.searchColumn;
  let total = 0;
  await db.transaction(async (tx) => {
    for (const obj of catalog.objects.values()) {
      const rows = data.get(obj.slug);
      if (!rows || rows.length === 0) continue;
      const name = nameColumn(obj)?.column;
      const withSearch = searchColumn && name ? rows.map((r) => ({ ...r, [searchColumn]: searchText(r[name]) })) : rows;
      await insertRows(tx, catalog, obj, withSearch);
      total += rows.length;
    }
  });
  return total;
}
