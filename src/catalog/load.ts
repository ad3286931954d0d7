import { OqlError } from '../diagnostics/diagnostic.js';
import { didYouMean } from '../diagnostics/suggest.js';
import { DEFAULT_TYPE_CODES, Problems, describe, draftsOf, isLogicalType, isRecord, typeHint, type Draft, type DraftColumn } from './payload.js';
import { identifierProblem } from './quote.js';
import { rememberSource } from './sources.js';
import type { Catalog, ColumnDef, LogicalType, ObjectDef, PhysicalMapping, ToOneRelation, VirtualRelation } from './types.js';

export { DEFAULT_TYPE_CODES, LOGICAL_TYPES } from './payload.js';

export interface CatalogOptions {
  /** `column_data_type` code → logical type name. Replaces (does not extend) DEFAULT_TYPE_CODES. */
  typeCodes?: Readonly<Record<string, string>>;
  schema?: string;
  tenantColumn?: string;
  softDeleteColumn?: string | null;
  idColumn?: string;
  /** Column holding the search form of each record's name (written by the record functions); null for none. Default `search_field`. */
  searchColumn?: string | null;
  /** Physical table of an object; default the slug. */
  tableName?: (objectSlug: string) => string;
  /** Physical column of a column; default the slug. The `id` column always maps to `idColumn`. */
  columnName?: (objectSlug: string, columnSlug: string) => string;
}

/**
 * Builds a Catalog from either payload form, detected by shape:
 *
 * - the service's object list: a bare array of objects, the `{success, data}`
 *   envelope around it, or a single object (the object-details response);
 * - the compact hand-written form:
 *
 * ```json
 * { "objects": {
 *     "ticket": {
 *       "displayName": "Ticket", "pluralName": "Tickets",            // optional
 *       "columns": {
 *         "subject":  "text",                                         // a logical type name
 *         "assignee": { "type": "relation", "object": "agent" },
 *         "priority": { "type": "enum", "options": ["low", "high"] },  // in rank order
 *         "comments": { "type": "virtual", "object": "comment", "via": "ticket" },
 *         "name":     { "type": "text", "primary": true, "system": false, "displayName": "Name" }
 *       } } } }
 * ```
 *
 * `description` keys are allowed (and ignored) at every level; any other unknown key is an
 * error, so typos in hand-written files surface. Every object gets an `id` column.
 * Throws an OqlError with a CATALOG_* code listing every problem found.
 */
export function loadCatalog(payload: unknown, options: CatalogOptions = {}): Catalog {
  const mapping = mappingOf(options);
  const codes = typeCodesOf(options.typeCodes);
  const p = new Problems();
  const drafts = draftsOf(payload, codes, p);
  const objects = build(drafts, mapping, options, p);
  p.throwIfAny();
  return Object.freeze({ objects, mapping, version: catalogVersion(objects, mapping) });
}

/** loadCatalog on JSON text, with a catalog error (not a SyntaxError) for malformed JSON. */
export function loadCatalogText(text: string, options?: CatalogOptions): Catalog {
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch (e) {
    throw OqlError.plain('CATALOG_INVALID', `catalog is not valid JSON: ${(e as Error).message}`);
  }
  return loadCatalog(payload, options);
}

export function catalogObject(catalog: Catalog, slug: string): ObjectDef | undefined {
  return catalog.objects.get(slug);
}

function mappingOf(o: CatalogOptions): PhysicalMapping {
  const mapping: PhysicalMapping = Object.freeze({
    schema: o.schema ?? 'public',
    tenantColumn: o.tenantColumn ?? 'org_id',
    softDeleteColumn: o.softDeleteColumn === undefined ? 'is_deleted' : o.softDeleteColumn,
    idColumn: o.idColumn ?? 'id',
    searchColumn: o.searchColumn === undefined ? 'search_field' : o.searchColumn,
  });
  const names: [string, unknown][] = [['schema', mapping.schema], ['tenantColumn', mapping.tenantColumn], ['idColumn', mapping.idColumn]];
  if (mapping.softDeleteColumn !== null) names.push(['softDeleteColumn', mapping.softDeleteColumn]);
  if (mapping.searchColumn !== null) names.push(['searchColumn', mapping.searchColumn]);
  for (const [key, value] of names) {
    const problem = typeof value === 'string' ? identifierProblem(value) : 'is not a string';
    if (problem) throw OqlError.plain('INVALID_OPTIONS', `catalog option ${key} ${problem}`);
  }
  const cols = names.slice(1).map(([, v]) => v);
  if (new Set(cols).size !== cols.length) {
    throw OqlError.plain('INVALID_OPTIONS', `catalog options idColumn, tenantColumn, softDeleteColumn and searchColumn must differ (got ${cols.join(', ')})`);
  }
  return mapping;
}

function typeCodesOf(codes: Readonly<Record<string, string>> | undefined): Map<string, LogicalType> {
  if (codes === undefined) return new Map(Object.entries(DEFAULT_TYPE_CODES));
  if (!isRecord(codes)) throw OqlError.plain('INVALID_OPTIONS', 'catalog option typeCodes must be an object mapping codes to type names');
  const out = new Map<string, LogicalType>();
  for (const [code, name] of Object.entries(codes)) {
    if (!isLogicalType(name)) {
      throw OqlError.plain('INVALID_OPTIONS', `typeCodes: code ${code} maps to unknown type ${JSON.stringify(name)}`, typeHint(String(name)));
    }
    out.set(code, name);
  }
  return out;
}

function build(drafts: Draft[], mapping: PhysicalMapping, o: CatalogOptions, p: Problems): Map<string, ObjectDef> {
  const objects = new Map<string, ObjectDef>();
  const tables = new Map<string, string>();
  for (const d of drafts) {
    if (objects.has(d.slug)) { p.add('CATALOG_DUPLICATE_SLUG', `object '${d.slug}' is defined twice`); continue; }
    const table = physical(o.tableName ? o.tableName(d.slug) : d.slug, `object '${d.slug}'`, 'table', p);
    const clash = tables.get(table);
    if (clash !== undefined) p.add('CATALOG_DUPLICATE_SLUG', `objects '${clash}' and '${d.slug}' both map to table '${table}'`);
    tables.set(table, d.slug);
    const obj = objectDef(d, table, buildColumns(d, mapping, o, p));
    if (d.source) rememberSource(obj, d.source);
    objects.set(d.slug, obj);
  }
  // To-one targets first: a missing object is the root cause of any virtual error it leads to.
  for (const kind of ['to-one', 'virtual']) {
    for (const obj of objects.values()) for (const col of obj.columns.values()) if (col.relation?.kind === kind) checkRelation(obj, col, objects, p);
  }
  return objects;
}

function buildColumns(d: Draft, mapping: PhysicalMapping, o: CatalogOptions, p: Problems): Map<string, ColumnDef> {
  const columns = new Map<string, ColumnDef>();
  const owners = new Map<string, string>([[mapping.tenantColumn, 'the tenant column']]);
  if (mapping.softDeleteColumn !== null) owners.set(mapping.softDeleteColumn, 'the soft-delete column');
  if (mapping.searchColumn !== null) owners.set(mapping.searchColumn, 'the search column');
  const drafts = d.columns.some((c) => c.slug === 'id') ? d.columns : [idDraft(), ...d.columns];
  for (const c of drafts) {
    const where = `column '${d.slug}.${c.slug}'`;
    if (columns.has(c.slug)) { p.add('CATALOG_DUPLICATE_SLUG', `${where} is defined twice`); continue; }
    let column: string | null = null;
    if (c.type !== 'virtual') {
      column = c.type === 'id' ? mapping.idColumn : physical(o.columnName ? o.columnName(d.slug, c.slug) : c.slug, where, 'column', p);
      const owner = owners.get(column);
      if (owner !== undefined) p.add('CATALOG_DUPLICATE_SLUG', `${where} maps to physical column '${column}', which is also ${owner}`, 'rename it with the columnName option');
      owners.set(column, `column '${d.slug}.${c.slug}'`);
    }
    columns.set(c.slug, columnDef(c, column));
  }
  return columns;
}

/**
 * Every ObjectDef and ColumnDef is built by one of these two, with its fields in one order, so
 * all of them share a hidden class whatever payload or step made them. Spread copies of the
 * drafts gave columns a dozen hidden classes between catalogs, and the compiler's reads of a
 * column (type, relation, physical name) went megamorphic on texts over many catalogs.
 */
export function objectDef(o: Omit<ObjectDef, 'table' | 'columns'>, table: string, columns: ReadonlyMap<string, ColumnDef>): ObjectDef {
  return Object.freeze({ slug: o.slug, objectId: o.objectId, displayName: o.displayName, pluralName: o.pluralName, table, columns });
}

export function columnDef(c: Omit<ColumnDef, 'column'>, column: string | null): ColumnDef {
  return Object.freeze({
    slug: c.slug,
    displayName: c.displayName,
    type: c.type,
    column,
    relation: c.relation,
    options: c.options && Object.freeze([...c.options]),
    isPrimary: c.isPrimary,
    isSystem: c.isSystem,
    required: c.required,
    unique: c.unique,
    properties: c.properties,
  });
}

function idDraft(): DraftColumn {
  return { slug: 'id', displayName: 'ID', type: 'id', relation: null, options: null, isPrimary: false, isSystem: true, required: false, unique: true, properties: null };
}

function checkRelation(obj: ObjectDef, col: ColumnDef, objects: Map<string, ObjectDef>, p: Problems): void {
  const rel = col.relation;
  if (rel === null) return;
  const where = `column '${obj.slug}.${col.slug}'`;
  const target = objects.get(rel.object);
  if (!target) {
    p.add('CATALOG_MISSING_OBJECT', `${where}: relation to unknown object '${rel.object}'`, didYouMean(rel.object, objects.keys()) ?? `known objects: ${[...objects.keys()].join(', ')}`);
    return;
  }
  if (rel.kind === 'to-one') return;
  const child = target.columns.get(rel.via);
  if (child && isToOneTo(child.relation, obj.slug)) return;
  if (child?.relation?.kind === 'to-one' && !objects.has(child.relation.object)) return; // reported already
  // Only a broken relation pays for listing the candidates (a valid catalog has many virtual relations).
  const backRefs = [...target.columns.values()].filter((c) => isToOneTo(c.relation, obj.slug)).map((c) => c.slug);
  const hint = backRefs.length > 0 ? `to-one columns of '${target.slug}' that point at '${obj.slug}': ${backRefs.join(', ')}` : `'${target.slug}' has no to-one column pointing at '${obj.slug}'`;
  if (!child) p.add('CATALOG_BAD_VIRTUAL', `${where}: virtual relation via '${target.slug}.${rel.via}', which does not exist`, didYouMean(rel.via, backRefs) ?? hint);
  else {
    const is = child.relation?.kind === 'to-one' ? `a to-one relation to '${child.relation.object}'` : `of type ${child.type}`;
    p.add('CATALOG_BAD_VIRTUAL', `${where}: virtual relation via '${target.slug}.${rel.via}', which is ${is}, not a to-one relation to '${obj.slug}'`, hint);
  }
}

function isToOneTo(rel: ToOneRelation | VirtualRelation | null, object: string): boolean {
  return rel?.kind === 'to-one' && rel.object === object;
}

function physical(name: unknown, where: string, what: string, p: Problems): string {
  if (typeof name !== 'string') {
    p.add('INVALID_OPTIONS', `${where}: the ${what} name function returned ${describe(name)}, not a string`);
    return String(name);
  }
  const problem = identifierProblem(name);
  if (problem) p.add('CATALOG_INVALID', `${where}: ${what} name ${JSON.stringify(name.slice(0, 80))} ${problem}`);
  return name;
}

/**
 * Two 32-bit FNV-1a lanes (different offset bases) over pairs of UTF-16 units of a canonical JSON
 * form: stable across processes, no node:crypto, and fast on large catalogs (BigInt
 * arithmetic per byte took a third of a second on 100,000 columns).
 */
export function catalogVersion(objects: ReadonlyMap<string, ObjectDef>, mapping: PhysicalMapping): string {
  const canonical = JSON.stringify([
    [mapping.schema, mapping.tenantColumn, mapping.softDeleteColumn, mapping.idColumn, mapping.searchColumn],
    [...objects.values()].map((o) => [o.slug, o.objectId, o.displayName, o.pluralName, o.table,
      [...o.columns.values()].map((c) => [c.slug, c.displayName, c.type, c.column, c.relation, c.options, c.isPrimary, c.isSystem, c.required, c.unique, c.properties])]),
  ]);
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  // Two UTF-16 units per step: half the steps, which the first load of a process runs unoptimized.
  const n = canonical.length;
  for (let i = 0; i < n; i += 2) {
    const c = canonical.charCodeAt(i) | ((i + 1 < n ? canonical.charCodeAt(i + 1) : 0xffff) << 16);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (a >>> 15);
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}

