import type { Catalog, ColumnDef, LogicalType, ObjectDef } from './types.js';
import { invalidSlug } from '../rules.js';

// The connector form of the catalog: the entity lists and entity schemas of the flowconnector
// and syncconnector endpoints.

export interface EntityListItem {
  entity_identifier: string;
  label: string;
  description: string;
  has_nested_entities: boolean;
  is_writable: boolean;
}

export type EntityDataType = 'String' | 'Boolean' | 'DateTime' | 'Integer' | 'Float';

export interface EntityField {
  field_name: string;
  data_type: EntityDataType;
  data_type_label: string;
  label: string;
  description: string;
  is_primary_key: boolean;
  is_deprecated: boolean;
  read_properties: {
    is_retrievable: boolean;
    is_nullable: boolean;
    is_queryable: boolean;
    is_timestamp_field_for_incremental_queries: boolean;
  };
}

export interface EntitySchema extends EntityListItem {
  fields: EntityField[];
}

/** The object of a request slug, or the 'Invalid slug' error compile gives for an unknown one. */
export function requireObject(catalog: Catalog, slug: unknown): ObjectDef {
  const obj = typeof slug === 'string' ? catalog.objects.get(slug) : undefined;
  if (obj) return obj;
  throw invalidSlug(slug, [...catalog.objects.keys()]);
}

/** Every object as a connector entity, in catalog order. */
export function entities(catalog: Catalog): EntityListItem[] {
  return [...catalog.objects.values()].map(listItem);
}

export interface EntitySchemaOptions {
  /**
   * List `is_deleted` and `deleted_at` after the columns: the fields every record of a records sync
   * with include_deleted carries (the syncconnector form). Only for a catalog whose records
   * can be deleted, and an object with no field of those names.
   */
  readonly lifecycleFields?: boolean;
}

/**
 * One object with its fields: every stored column (one-to-many relations hold no value and are
 * left out), the id first. `created_at` and `updated_at` are the incremental-sync timestamps.
 */
export function entitySchema(catalog: Catalog, slug: string, options: EntitySchemaOptions = {}): EntitySchema {
  const obj = requireObject(catalog, slug);
  const fields = [...obj.columns.values()].filter((c) => c.type !== 'virtual').map((c) => field(catalog, c));
  if (options.lifecycleFields && catalog.mapping.softDeleteColumn !== null && !LIFECYCLE_FIELDS.some((f) => obj.columns.has(f.field_name))) fields.push(...LIFECYCLE_FIELDS);
  return { ...listItem(obj), fields };
}

/** Sent, not stored as catalog columns: a sync cannot filter on them (not queryable). */
const lifecycleField = (field_name: string, data_type: EntityDataType, data_type_label: string, label: string, description: string, is_nullable: boolean): EntityField => ({
  field_name, data_type, data_type_label, label, description, is_primary_key: false, is_deprecated: false,
  read_properties: { is_retrievable: true, is_nullable, is_queryable: false, is_timestamp_field_for_incremental_queries: false },
});

const LIFECYCLE_FIELDS: readonly EntityField[] = [
  lifecycleField('is_deleted', 'Boolean', 'bool', 'Is deleted', 'true on a tombstone (a deleted record), false on a live record; sent by a records sync with include_deleted', false),
  lifecycleField('deleted_at', 'DateTime', 'timestamp', 'Deleted at', 'When the record was deleted; null on a live record, and on a record deleted before the service kept it; sent with include_deleted', true),
];

function listItem(obj: ObjectDef): EntityListItem {
  return {
    entity_identifier: obj.slug,
    label: obj.displayName,
    description: `${obj.pluralName} (object '${obj.slug}')`,
    // Records are flat: a relation is the related record's id, never a nested entity.
    has_nested_entities: false,
    is_writable: true,
  };
}

const DATA_TYPES: Readonly<Record<Exclude<LogicalType, 'virtual'>, readonly [EntityDataType, string]>> = {
  id: ['String', 'varchar'],
  text: ['String', 'varchar'],
  email: ['String', 'email'],
  phone: ['String', 'phone'],
  url: ['String', 'url'],
  number: ['Float', 'float'],
  integer: ['Integer', 'integer'],
  currency: ['Float', 'currency'],
  boolean: ['Boolean', 'bool'],
  date: ['DateTime', 'date'],
  datetime: ['DateTime', 'timestamp'],
  enum: ['String', 'enum'],
  multiselect: ['String', 'multiselect'],
  relation: ['String', 'relation'],
  json: ['String', 'json'],
};

function field(catalog: Catalog, col: ColumnDef): EntityField {
  const [dataType, label] = DATA_TYPES[col.type as Exclude<LogicalType, 'virtual'>];
  const isTimestamp = (col.slug === 'updated_at' || col.slug === 'created_at') && (col.type === 'datetime' || col.type === 'date');
  return {
    field_name: col.slug,
    data_type: dataType,
    data_type_label: label,
    label: col.displayName,
    description: describeColumn(catalog, col),
    is_primary_key: col.type === 'id',
    is_deprecated: false,
    read_properties: {
      is_retrievable: true,
      is_nullable: col.type !== 'id' && !col.required,
      is_queryable: true,
      is_timestamp_field_for_incremental_queries: isTimestamp,
    },
  };
}

function describeColumn(catalog: Catalog, col: ColumnDef): string {
  switch (col.type) {
    case 'id':
      return 'Record identifier';
    case 'relation': {
      const target = col.relation?.kind === 'to-one' ? catalog.objects.get(col.relation.object) : undefined;
      return `Id of a ${target?.displayName ?? col.relation?.object ?? 'related'} record`;
    }
    case 'enum':
      return `One of: ${(col.options ?? []).join(', ')}`;
    case 'multiselect':
      return `Any of: ${(col.options ?? []).join(', ')}`;
    case 'date':
      return `${col.displayName}: a date (UTC midnight)`;
    case 'datetime':
      return `${col.displayName}: a date and time`;
    default:
      return col.displayName;
  }
}
