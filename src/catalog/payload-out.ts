import { requireObject } from './entities.js';
import { DEFAULT_TYPE_CODES } from './payload.js';
import { sourceOf } from './sources.js';
import type { Catalog, ColumnDef, LogicalType, ObjectDef } from './types.js';

// The catalog written back in the service's own object shape: the data of
// POST /objects/list and GET /objects/<slug>/, which loadCatalog reads back to an equal catalog.

export interface PayloadOptions {
  /**
   * The organization the payload is for. A catalog loaded from one organization's payload names
   * that organization in every `org_id`; the service shows each caller its own instead.
   */
  readonly orgId?: string | undefined;
}

/** Every object of the catalog, in catalog order. */
export function catalogPayload(catalog: Catalog, options: PayloadOptions = {}): unknown[] {
  return [...catalog.objects.values()].map((obj) => objectOf(catalog, obj, options));
}

/** One object with its columns; an unknown slug is the 'Invalid slug' error. */
export function objectPayload(catalog: Catalog, slug: string, options: PayloadOptions = {}): unknown {
  return objectOf(catalog, requireObject(catalog, slug), options);
}

/** Every `org_id` that names an organization, at any depth, set to `orgId` (in place). */
function ownedBy(value: unknown, orgId: string): unknown {
  if (Array.isArray(value)) {
    for (const v of value) ownedBy(v, orgId);
  } else if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    for (const [key, v] of Object.entries(record)) {
      if (key === 'org_id' && typeof v === 'string') record[key] = orgId;
      else ownedBy(v, orgId);
    }
  }
  return value;
}

/**
 * An object read from the service's payload is given back as the service sent it (a copy),
 * every key included, but for the organization it names; a compact-form object is written out in
 * the same shape (with no organization: it came with none).
 */
function objectOf(catalog: Catalog, obj: ObjectDef, options: PayloadOptions): Record<string, unknown> {
  const source = sourceOf(obj);
  if (source) {
    const copy = structuredClone(source) as Record<string, unknown>;
    return options.orgId === undefined ? copy : (ownedBy(copy, options.orgId) as Record<string, unknown>);
  }
  return {
    id: obj.objectId,
    slug: obj.slug,
    display_singular_name: obj.displayName,
    display_plural_name: obj.pluralName,
    sys_object_id: obj.objectId,
    state: 1,
    org_object_columns: [...obj.columns.values()].map((col) => columnPayload(obj, col)),
  };
}

const CODE_OF = new Map<LogicalType, number>(Object.entries(DEFAULT_TYPE_CODES).map(([code, type]) => [type, Number(code)]));

/**
 * The type code of a column, and `data_type` where no code of the default map says the type:
 * url and json travel as text (1), integer as number (11), and currency as number with
 * properties.currency, or with `data_type` when it has no currency code. loadCatalog reads
 * `data_type` before the code.
 */
function typeOf(col: ColumnDef): { code: number; dataType?: LogicalType } {
  const currencyCode = typeof col.properties?.currency === 'string' && col.properties.currency !== '';
  switch (col.type) {
    case 'id':
      return { code: CODE_OF.get('text')! };
    case 'virtual':
      return { code: CODE_OF.get('relation')! };
    case 'currency':
      return currencyCode ? { code: CODE_OF.get('number')! } : { code: CODE_OF.get('number')!, dataType: 'currency' };
    case 'number':
      return currencyCode ? { code: CODE_OF.get('number')!, dataType: 'number' } : { code: CODE_OF.get('number')! };
    case 'integer':
      return { code: CODE_OF.get('number')!, dataType: 'integer' };
    case 'url':
    case 'json':
      return { code: CODE_OF.get('text')!, dataType: col.type };
    default:
      return { code: CODE_OF.get(col.type)! };
  }
}

/** One column in the service's column shape. */
export function columnPayload(obj: ObjectDef, col: ColumnDef): Record<string, unknown> {
  const { code, dataType } = typeOf(col);
  const rel = col.relation;
  return {
    id: `col_${obj.slug}_${col.slug}`,
    org_id: null,
    org_object_id: obj.objectId,
    display_name: col.displayName,
    slug: col.slug,
    description: null,
    default_value: null,
    help_text: null,
    placeholder: null,
    constraints: null,
    expression: null,
    parent_column_slug: null,
    column_data_type: code,
    ...(dataType ? { data_type: dataType } : {}),
    column_type: col.isSystem ? 'system' : 'standard',
    is_indexed: rel?.kind === 'to-one' || col.type === 'id' ? 1 : 0,
    is_visible: 1,
    is_unique: col.unique ? 1 : 0,
    is_required: col.required ? 1 : 0,
    is_primary: col.isPrimary ? 1 : 0,
    is_archived: 0,
    is_history_field: 0,
    is_formula_type: 0,
    is_json_column: col.type === 'json' ? 1 : 0,
    is_dependent_field: 0,
    is_primary_relation: 0,
    relationship_type: rel?.kind === 'virtual' ? 2 : rel?.kind === 'to-one' ? 6 : 0,
    relation: rel === null
      ? null
      : rel.kind === 'to-one'
        ? { column_slug: 'id', object_slug: rel.object, associated_col_name: null, is_virtual: 0 }
        : { column_slug: rel.via, object_slug: rel.object, associated_col_name: rel.via, is_virtual: 1 },
    enum_group: col.options === null ? null : {
      id: `eg_${obj.slug}_${col.slug}`,
      org_id: null,
      slug: `${obj.slug}_${col.slug}`,
      is_global: 0,
      enum_group_type: 'normal',
      properties: null,
      values: col.options.map((slug, i) => ({
        org_id: null, slug, display_name: slug, rank: i + 1, is_active: 1, is_system_field: 0, color: null, badge_config: null, category: 0, dependent_enum_slugs: null,
      })),
    },
    properties: col.properties === null ? null : structuredClone(col.properties),
    created_at: null,
    updated_at: null,
    created_by: null,
    updated_by: null,
  };
}
