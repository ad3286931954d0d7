import { MAX_IDENTIFIER_BYTES, quoteIdent, quoteQualified } from './quote.js';
import type { Catalog, LogicalType, ObjectDef } from './types.js';

export interface DdlOptions {
  /** Adds IF NOT EXISTS to every CREATE, so the DDL can run against an existing database. */
  ifNotExists?: boolean;
  /** Create the (tenant, relation) indexes. Default true. */
  indexes?: boolean;
  /**
   * Create `(tenant, updated_at, id)` indexes of live rows, from which PostgreSQL serves the
   * connector's keyset pages (`(updated_at, id) > ($t, $id)`) as one range scan. Default false.
   */
  keysetIndexes?: boolean;
  /**
   * Enable pg_trgm and create a trigram GIN index on every column global_search reads (the
   * text, email, phone and url columns), so a case-insensitive substring search uses an index
   * instead of reading the whole table. Default false: the extension must be available.
   */
  searchIndexes?: boolean;
  /**
   * A partial unique index on (tenant, column) over live rows for every unique column
   * (`is_unique`, the id aside), so two concurrent writers can never both store one value.
   * Default false: existing data may hold duplicates (the record functions also check, under a
   * per-organization lock, and report `NOT_UNIQUE`).
   */
  uniqueIndexes?: boolean;
}

/** The Postgres type holding a logical type; null for virtual relations, which have no column. */
export function columnSqlType(type: LogicalType): string | null {
  switch (type) {
    case 'date':
    case 'datetime':
      return 'bigint'; // epoch milliseconds, as the service stores them
    case 'multiselect':
      return 'text[]';
    case 'boolean':
      return 'boolean';
    case 'number':
    case 'integer':
    case 'currency':
      return 'numeric';
    case 'json':
      return 'jsonb';
    case 'virtual':
      return null;
    case 'id':
    case 'text':
    case 'email':
    case 'phone':
    case 'url':
    case 'enum':
    case 'relation':
      return 'text';
    default: {
      const never: never = type;
      throw new TypeError(`no SQL type for ${String(never)}`);
    }
  }
}

/**
 * Statements creating a database that matches the catalog, one per array element, in a fixed
 * order (objects and columns in catalog order), so the same catalog always gives the same DDL.
 */
export function catalogDdl(catalog: Catalog, options: DdlOptions = {}): string[] {
  const ine = options.ifNotExists ? 'IF NOT EXISTS ' : '';
  const { schema } = catalog.mapping;
  const out: string[] = [];
  if (schema !== 'public') out.push(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
  if (options.searchIndexes) out.push('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  const indexNames = new Set<string>();
  for (const obj of catalog.objects.values()) {
    out.push(createTable(catalog, obj, ine));
    if (options.indexes === false) continue;
    for (const col of obj.columns.values()) {
      if (col.relation?.kind !== 'to-one' || col.column === null) continue;
      const name = indexName(obj.table, col.column, indexNames);
      out.push(
        `CREATE INDEX ${ine}${quoteIdent(name)} ON ${quoteQualified(schema, obj.table)} (${quoteIdent(catalog.mapping.tenantColumn)}, ${quoteIdent(col.column)})`,
      );
    }
    if (options.uniqueIndexes) out.push(...uniqueIndexes(catalog, obj, ine, indexNames));
    if (options.keysetIndexes) out.push(...keysetIndexes(catalog, obj, ine, indexNames));
    if (options.searchIndexes) out.push(...searchIndexes(catalog, obj, ine, indexNames));
  }
  return out;
}

function keysetIndexes(catalog: Catalog, obj: ObjectDef, ine: string, used: Set<string>): string[] {
  const { tenantColumn, softDeleteColumn, idColumn, schema } = catalog.mapping;
  const updated = obj.columns.get('updated_at');
  if (!updated || updated.column === null || (updated.type !== 'datetime' && updated.type !== 'date')) return [];
  // Partial on live rows: the predicate is the soft-delete guard every query carries.
  const live = softDeleteColumn === null ? '' : ` WHERE ${quoteIdent(softDeleteColumn)} = false`;
  const name = indexName(obj.table, `${updated.column}_keyset`, used);
  const key = `(${quoteIdent(tenantColumn)}, ${quoteIdent(updated.column)}, ${quoteIdent(idColumn)})`;
  const out = [`CREATE INDEX ${ine}${quoteIdent(name)} ON ${quoteQualified(schema, obj.table)} ${key}${live}`];
  // The deleted rows in the same order, for the tombstones of a sync with include_deleted: small,
  // as deleted rows are few and purged.
  if (softDeleteColumn !== null) {
    const deleted = indexName(obj.table, `${updated.column}_deleted_keyset`, used);
    out.push(`CREATE INDEX ${ine}${quoteIdent(deleted)} ON ${quoteQualified(schema, obj.table)} ${key} WHERE ${quoteIdent(softDeleteColumn)} = true`);
  }
  return out;
}

function uniqueIndexes(catalog: Catalog, obj: ObjectDef, ine: string, used: Set<string>): string[] {
  const { tenantColumn, softDeleteColumn, schema } = catalog.mapping;
  const live = softDeleteColumn === null ? '' : ` WHERE ${quoteIdent(softDeleteColumn)} = false`;
  return [...obj.columns.values()]
    .filter((c) => c.unique && c.type !== 'id' && c.column !== null && c.type !== 'multiselect' && c.type !== 'json')
    .map((c) => `CREATE UNIQUE INDEX ${ine}${quoteIdent(indexName(obj.table, `${c.column!}_unique`, used))} ON ${quoteQualified(schema, obj.table)} (${quoteIdent(tenantColumn)}, ${quoteIdent(c.column!)})${live}`);
}

function searchIndexes(catalog: Catalog, obj: ObjectDef, ine: string, used: Set<string>): string[] {
  const columns = [...obj.columns.values()].filter((c) => c.column !== null && (c.type === 'text' || c.type === 'email' || c.type === 'phone' || c.type === 'url')).map((c) => c.column!);
  const search = catalog.mapping.searchColumn;
  if (search && !columns.includes(search)) columns.push(search);
  return columns.map((column) => `CREATE INDEX ${ine}${quoteIdent(indexName(obj.table, `${column}_trgm`, used))} ON ${quoteQualified(catalog.mapping.schema, obj.table)} USING gin (${quoteIdent(column)} gin_trgm_ops)`);
}

function createTable(catalog: Catalog, obj: ObjectDef, ine: string): string {
  const { tenantColumn, softDeleteColumn, idColumn, schema } = catalog.mapping;
  const lines = [`${quoteIdent(idColumn)} text NOT NULL`, `${quoteIdent(tenantColumn)} text NOT NULL`];
  if (softDeleteColumn !== null) lines.push(`${quoteIdent(softDeleteColumn)} boolean NOT NULL DEFAULT false`);
  for (const col of obj.columns.values()) {
    const type = columnSqlType(col.type);
    if (col.type === 'id' || col.column === null || type === null) continue;
    lines.push(`${quoteIdent(col.column)} ${type}`);
  }
  if (catalog.mapping.searchColumn !== null) lines.push(`${quoteIdent(catalog.mapping.searchColumn)} text`);
  lines.push(`PRIMARY KEY (${quoteIdent(tenantColumn)}, ${quoteIdent(idColumn)})`);
  return `CREATE TABLE ${ine}${quoteQualified(schema, obj.table)} (\n  ${lines.join(',\n  ')}\n)`;
}

const encoder = new TextEncoder();

// Index names share one namespace per schema and Postgres truncates past 63 bytes, so a long or
// clashing name is shortened and made unique with a hash of its table and column.
function indexName(table: string, column: string, used: Set<string>): string {
  let name = `${table}_${column}_idx`;
  if (encoder.encode(name).length > MAX_IDENTIFIER_BYTES || used.has(name)) {
    let stem = `${table}_${column}`;
    while (encoder.encode(stem).length > MAX_IDENTIFIER_BYTES - 13) stem = [...stem].slice(0, -1).join('');
    for (let salt = 0; ; salt++) {
      name = `${stem}_${fnv32(`${table}\0${column}\0${salt}`)}_idx`;
      if (!used.has(name)) break;
    }
  }
  used.add(name);
  return name;
}

function fnv32(s: string): string {
  let h = 0x811c9dc5;
  for (const b of encoder.encode(s)) h = Math.imul(h ^ b, 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}
