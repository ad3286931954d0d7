/** Logical column types of the CRM (docs/rest.md#values-by-column-type). */
export type LogicalType =
  | 'id'
  | 'text'
  | 'email'
  | 'phone'
  | 'url'
  | 'number'
  | 'integer'
  | 'currency'
  | 'boolean'
  | 'date' // UTC-midnight epoch milliseconds
  | 'datetime' // epoch milliseconds
  | 'enum' // option slug
  | 'multiselect' // array of option slugs
  | 'relation' // to-one: the id of a record of `relation.object`
  | 'virtual' // one-to-many: records of `relation.object` whose `relation.via` holds our id
  | 'json';

export interface ToOneRelation {
  readonly kind: 'to-one';
  /** Slug of the object whose id this column holds. */
  readonly object: string;
}

export interface VirtualRelation {
  readonly kind: 'virtual';
  /** Slug of the child object. */
  readonly object: string;
  /** Slug of the child's to-one column that holds the parent's id. */
  readonly via: string;
}

export interface ColumnDef {
  readonly slug: string;
  readonly displayName: string;
  readonly type: LogicalType;
  /** Physical column name (virtual relations have none). */
  readonly column: string | null;
  readonly relation: ToOneRelation | VirtualRelation | null;
  /** Option slugs of enum and multiselect columns, in rank order; null for other types. */
  readonly options: readonly string[] | null;
  readonly isPrimary: boolean;
  readonly isSystem: boolean;
  /** A record must have a value here (service `is_required`). */
  readonly required: boolean;
  /** No two live records of one organization share a value here (service `is_unique`). */
  readonly unique: boolean;
  /** The service's column `properties` (phone_number, currency, format, …), or null. */
  readonly properties: ColumnProperties | null;
}

/** Column properties as the service sends them; the record validator reads `phone_number`. */
export type ColumnProperties = Readonly<Record<string, unknown>>;

export interface ObjectDef {
  readonly slug: string;
  /** The service's object id (`id` of the object payload); `obj_<slug>` for the compact form. Records carry it as `object_id`. */
  readonly objectId: string;
  readonly displayName: string;
  readonly pluralName: string;
  /** Physical table name (unqualified). */
  readonly table: string;
  /** Columns by slug, in catalog order; always includes `id`. */
  readonly columns: ReadonlyMap<string, ColumnDef>;
}

export interface PhysicalMapping {
  /** Postgres schema holding the tables. Default `public`. */
  readonly schema: string;
  /** Tenant column on every table (text). Default `org_id`. */
  readonly tenantColumn: string;
  /** Soft-delete column on every table (boolean, false = live), or null when rows are never soft-deleted. Default `is_deleted`. */
  readonly softDeleteColumn: string | null;
  /** The id column on every table. Default `id`. */
  readonly idColumn: string;
  /** Text column on every table holding the search form of the record's name, or null for none. Default `search_field`. */
  readonly searchColumn: string | null;
}

export interface Catalog {
  readonly objects: ReadonlyMap<string, ObjectDef>;
  readonly mapping: PhysicalMapping;
  /** A stable hash of objects and mapping: equal catalogs have equal versions (compile cache key). */
  readonly version: string;
}
