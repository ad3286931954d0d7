import { catalogDdl } from '../catalog/ddl.js';
import { quoteQualified } from '../catalog/quote.js';
import type { Catalog } from '../catalog/types.js';
import { OqlError } from '../diagnostics/diagnostic.js';
import type { Database } from '../run/database.js';

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
export async function ensureCatalogTables(db: Database, catalog: Catalog, options: { searchIndexes?: boolean } = {}): Promise<{ created: string[]; warnings: string[] }> {
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
  for (const statement of catalogDdl(catalog, { ifNotExists: true, keysetIndexes: true })) await createIfMissing(db, statement);
  // Unique columns get a unique index of live rows, so two concurrent writers cannot both store
  // one value. On a table that already holds duplicates the index cannot exist; the record
  // functions still check uniqueness themselves, so the start goes on and says which one failed.
  const warnings: string[] = [];
  for (const statement of catalogDdl(catalog, { ifNotExists: true, indexes: false, uniqueIndexes: true })) {
    if (!statement.startsWith('CREATE UNIQUE INDEX')) continue;
    try {
      await createIfMissing(db, statement);
    } catch {
      warnings.push(`could not create ${/INDEX (?:IF NOT EXISTS )?("(?:[^"]|"")*")/.exec(statement)?.[1] ?? 'a unique index'}: the table holds duplicate values`);
    }
  }
  if (options.searchIndexes) await createSearchIndexes(db, catalog);
  return { created, warnings };
}

/** SQLSTATEs of a CREATE … IF NOT EXISTS that lost a race with the same statement of another session. */
const LOST_RACE = new Set(['23505', '42P07', '42710']);

/**
 * Runs a CREATE … IF NOT EXISTS. Two instances starting at once on an empty database send the same
 * statements: IF NOT EXISTS does not see the other's uncommitted table, so the second fails on the
 * catalog's unique index once the first commits. Run again, it finds the object and does nothing.
 * An error that persists (a unique index over duplicate values) is thrown.
 */
async function createIfMissing(db: Database, statement: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await db.query(statement);
      return;
    } catch (e) {
      const state = (e as { cause?: { code?: unknown } }).cause?.code ?? (e as { code?: unknown }).code;
      if (attempt >= 3 || typeof state !== 'string' || !LOST_RACE.has(state)) throw e;
    }
  }
}

/**
 * Trigram (GIN) indexes on the text columns and the search column, which serve `contains`,
 * `starts_with` and `global_search` (ILIKE with a leading %) instead of a scan of the tenant's
 * rows. Opt-in: they cost space and write time, and building them on a large table takes a while
 * (once: IF NOT EXISTS leaves them alone afterwards).
 */
async function createSearchIndexes(db: Database, catalog: Catalog): Promise<void> {
  try {
    await createIfMissing(db, 'CREATE EXTENSION IF NOT EXISTS pg_trgm');
  } catch {
    throw OqlError.plain('DATABASE_ERROR', 'search indexes need the PostgreSQL extension pg_trgm, which this database cannot create',
      'install it on the server (Debian: postgresql-contrib) or let a superuser run CREATE EXTENSION pg_trgm; or start without search indexes');
  }
  for (const statement of catalogDdl(catalog, { ifNotExists: true, searchIndexes: true })) {
    if (statement.includes('gin_trgm_ops')) await createIfMissing(db, statement);
  }
}

