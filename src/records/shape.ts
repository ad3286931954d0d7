import { columnSqlType } from '../catalog/ddl.js';
import { quoteIdent, quoteQualified } from '../catalog/quote.js';
import type { Catalog, ColumnDef, ObjectDef } from '../catalog/types.js';
import { decodeValue, put } from '../run/decode.js';

// The statements of the record functions, built from the catalog's physical names only (through
// quoteIdent) with every value a bind parameter. `$1` is always the organization, and every
// statement that reads or changes existing rows carries `tenant = $1` and the soft-delete guard.

/** The object's stored columns (the id aside), in catalog order. */
export function storedColumns(obj: ObjectDef): ColumnDef[] {
  return [...obj.columns.values()].filter((c) => c.column !== null && c.type !== 'id' && c.type !== 'virtual');
}

export function tableOf(catalog: Catalog, obj: ObjectDef): string {
  return quoteQualified(catalog.mapping.schema, obj.table);
}

/** ` AND "is_deleted" = false`, or nothing when rows are never soft-deleted. */
export function liveGuard(catalog: Catalog, alias = ''): string {
  const col = catalog.mapping.softDeleteColumn;
  return col === null ? '' : ` AND ${alias}${quoteIdent(col)} = false`;
}

/** `$n::type` for a column's value; json travels as text. */
export function cast(col: ColumnDef): string {
  return columnSqlType(col.type) ?? 'text';
}

export function paramValue(col: ColumnDef, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  return col.type === 'json' ? JSON.stringify(value) : value;
}

/** The select list of a whole record: id, tenant, search column, then stored columns as k0, k1, … */
export function recordSelect(catalog: Catalog, obj: ObjectDef): string {
  const { idColumn, tenantColumn, searchColumn } = catalog.mapping;
  const items = [`${quoteIdent(idColumn)} AS "id"`, `${quoteIdent(tenantColumn)} AS "org"`];
  items.push(searchColumn === null ? 'NULL::text AS "search"' : `${quoteIdent(searchColumn)} AS "search"`);
  storedColumns(obj).forEach((c, i) => items.push(`${quoteIdent(c.column!)} AS "k${i}"`));
  return items.join(', ');
}

/** Live records of the organization with these ids, whole. Params: [orgId, ids]. */
export function selectRecords(catalog: Catalog, obj: ObjectDef, forUpdate = false): string {
  return `SELECT ${recordSelect(catalog, obj)} FROM ${tableOf(catalog, obj)} WHERE ${quoteIdent(catalog.mapping.tenantColumn)} = $1 AND ${quoteIdent(catalog.mapping.idColumn)} = ANY($2::text[])${liveGuard(catalog)}${forUpdate ? ' FOR UPDATE' : ''}`;
}

/**
 * A row of `recordSelect` as the service returns a record: id, every stored column by slug
 * (decoded like the analytics path: epoch ms and numbers as numbers, multiselects as arrays,
 * null for empty), then search_field, object_id and org_id.
 */
export function toRecord(obj: ObjectDef, row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  put(out, 'id', row.id);
  storedColumns(obj).forEach((c, i) => {
    const v = decodeValue(row[`k${i}`], c.type);
    put(out, c.slug, Array.isArray(v) && v.length === 0 ? null : v);
  });
  put(out, 'search_field', row.search ?? null);
  put(out, 'object_id', obj.objectId);
  put(out, 'org_id', row.org);
  return out;
}

/** The column whose value names the record: the primary column, else `name`. */
export function nameColumn(obj: ObjectDef): ColumnDef | undefined {
  return [...obj.columns.values()].find((c) => c.isPrimary && c.column !== null && c.type !== 'id') ?? obj.columns.get('name');
}

/**
 * The search form of a record's name: Unicode-normalised (NFKC), lower case, inner whitespace
 * collapsed, so `global_search` and prefix indexes match however the name was typed.
 */
export function searchText(name: unknown): string | null {
  if (typeof name !== 'string' && typeof name !== 'number') return null;
  const s = String(name).normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
  return s === '' ? null : s;
}
