import { AUDIT_FIELDS } from '../catalog/audit-fields.js';
import { columnSqlType } from '../catalog/ddl.js';
import { quoteIdent, quoteQualified } from '../catalog/quote.js';
import type { Catalog } from '../catalog/types.js';
import { databaseOf } from '../run/database-of.js';
import type { Tx } from '../run/database.js';
import type { Writable } from './db.js';

/** The tables of a schema, each with the names of its columns, as the database has them now. */
export async function tableColumns(db: Tx, schema: string): Promise<Map<string, Set<string>>> {
  const { rows } = await db.query<{ table_name: string; column_name: string | null }>(
    `SELECT c.relname AS table_name, a.attname AS column_name
       FROM pg_catalog.pg_class c
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')`,
    [schema]);
  const tables = new Map<string, Set<string>>();
  for (const r of rows) {
    const table = String(r.table_name);
    if (!tables.has(table)) tables.set(table, new Set());
    if (r.column_name !== null) tables.get(table)!.add(String(r.column_name));
  }
  return tables;
}

/**
 * Start-up migration: adds the audit columns (created_at, updated_at, created_by, updated_by) to
 * existing tables of the catalog that lack them — tables made before every object carried the
 * audit fields. Each is `ALTER TABLE … ADD COLUMN IF NOT EXISTS` of a nullable column: no table
 * rewrite, safe when two instances start at once, and rows written before it read back null
 * there. Tables not created yet are left to the DDL. Returns each column added, as
 * `"schema"."table"."column"`.
 */
export async function addMissingAuditColumns(db: Writable, catalog: Catalog): Promise<string[]> {
  const { schema } = catalog.mapping;
  const database = databaseOf(db);
  const tables = await tableColumns(database, schema);
  const added: string[] = [];
  for (const obj of catalog.objects.values()) {
    const have = tables.get(obj.table);
    if (!have) continue;
    for (const field of AUDIT_FIELDS) {
      const col = obj.columns.get(field.slug);
      const type = col && col.column !== null ? columnSqlType(col.type) : null;
      if (!col || type === null || have.has(col.column!)) continue;
      await database.query(`ALTER TABLE ${quoteQualified(schema, obj.table)} ADD COLUMN IF NOT EXISTS ${quoteIdent(col.column!)} ${type}`, []);
      added.push(`${quoteQualified(schema, obj.table)}.${quoteIdent(col.column!)}`);
    }
  }
  return added;
}
