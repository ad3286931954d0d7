import { OqlError } from '../diagnostics/diagnostic.js';
import { catalogVersion, columnDef, objectDef } from './load.js';
import { columnPayload } from './payload-out.js';
import { rememberSource, sourceOf } from './sources.js';
import type { Catalog, ColumnDef, LogicalType, ObjectDef } from './types.js';

// The audit fields, created_at, updated_at, created_by and updated_by: every record shows them
// (docs/rest.md#system-fields), whatever columns the object's schema declares. The service keeps
// them as its own columns of every table, as it keeps the tenant and search columns: an object
// whose schema lacks one gets it here, stored under the field's own name, written by the record
// functions and read-only to clients.

export interface AuditField {
  readonly slug: 'created_at' | 'updated_at' | 'created_by' | 'updated_by';
  readonly displayName: string;
  readonly type: LogicalType;
}

/** The audit fields every record carries, in the order the service's own objects list them. */
export const AUDIT_FIELDS: readonly AuditField[] = Object.freeze([
  { slug: 'created_at', displayName: 'Created At', type: 'datetime' },
  { slug: 'updated_at', displayName: 'Updated At', type: 'datetime' },
  // The principal's user id, which need not be a record of any object: text, not a relation.
  { slug: 'created_by', displayName: 'Created By', type: 'text' },
  { slug: 'updated_by', displayName: 'Updated By', type: 'text' },
] as const);

/**
 * The catalog with every audit field on every object: the fields an object's schema declares
 * stay as declared (a `created_by` relation to `user` remains one), the missing ones are added
 * as system columns of the same name. The same catalog comes back when nothing is missing.
 * A physical column that already holds another column's data cannot become an audit field:
 * that is a catalog error naming both.
 */
export function withAuditFields(catalog: Catalog): Catalog {
  let changed = false;
  const objects = new Map<string, ObjectDef>();
  for (const obj of catalog.objects.values()) {
    const completed = completeObject(catalog, obj);
    changed ||= completed !== obj;
    objects.set(obj.slug, completed);
  }
  if (!changed) return catalog;
  return Object.freeze({ objects, mapping: catalog.mapping, version: catalogVersion(objects, catalog.mapping) });
}

function completeObject(catalog: Catalog, obj: ObjectDef): ObjectDef {
  const missing = AUDIT_FIELDS.filter((f) => !obj.columns.has(f.slug));
  if (missing.length === 0) return obj;
  const { tenantColumn, softDeleteColumn, idColumn, searchColumn } = catalog.mapping;
  const taken = new Map<string, string>([[tenantColumn, 'the tenant column'], [idColumn, 'the id column']]);
  if (softDeleteColumn !== null) taken.set(softDeleteColumn, 'the soft-delete column');
  if (searchColumn !== null) taken.set(searchColumn, 'the search column');
  for (const c of obj.columns.values()) if (c.column !== null) taken.set(c.column, `column '${obj.slug}.${c.slug}'`);
  const columns = new Map(obj.columns);
  const added: ColumnDef[] = [];
  for (const f of missing) {
    const owner = taken.get(f.slug);
    if (owner !== undefined) {
      throw OqlError.plain('CATALOG_DUPLICATE_SLUG',
        `object '${obj.slug}' has no '${f.slug}' field, and the service cannot add it: its column "${f.slug}" is already ${owner}`,
        `declare '${f.slug}' in the schema, or store ${owner} under another physical name`);
    }
    const col = columnDef({
      slug: f.slug, displayName: f.displayName, type: f.type, relation: null, options: null,
      isPrimary: false, isSystem: true, required: false, unique: false, properties: null,
    }, f.slug);
    columns.set(f.slug, col);
    added.push(col);
  }
  const completed = objectDef(obj, obj.table, columns);
  // An object read from the service's payload is written back as it came, plus the added columns.
  const source = sourceOf(obj);
  if (source) {
    const listed = Array.isArray(source.org_object_columns) ? source.org_object_columns : [];
    // `data_type` names the type whatever type codes the deployment uses.
    const extra = added.map((c) => ({ ...columnPayload(completed, c), data_type: c.type }));
    rememberSource(completed, { ...source, org_object_columns: [...listed, ...extra] });
  }
  return completed;
}
