import { OqlError, type Diagnostic } from '../diagnostics/diagnostic.js';
import type { DiagnosticCode } from '../diagnostics/codes.js';
import { didYouMean } from '../diagnostics/suggest.js';
import type { ColumnDef, ColumnProperties, LogicalType } from './types.js';

// Turns either payload form into drafts: catalog objects before physical names and cross-object
// checks, which load.ts adds.

export const LOGICAL_TYPES: readonly LogicalType[] = Object.freeze([
  'id', 'text', 'email', 'phone', 'url', 'number', 'integer', 'currency', 'boolean',
  'date', 'datetime', 'enum', 'multiselect', 'relation', 'virtual', 'json',
] as const);

/** The example deployment's `column_data_type` codes (shared/examples/type-codes.json). */
export const DEFAULT_TYPE_CODES: Readonly<Record<string, LogicalType>> = Object.freeze({
  '1': 'text', '5': 'email', '7': 'phone', '9': 'boolean', '11': 'number', '15': 'enum',
  '17': 'multiselect', '19': 'datetime', '21': 'date', '25': 'relation',
});

/** A catalog in the making: one per object, the same for both payload forms. */
export interface Draft {
  slug: string;
  objectId: string;
  /** The service payload's object this draft was read from (catalogPayload gives it back unchanged). */
  source?: Record<string, unknown>;
  displayName: string;
  pluralName: string;
  columns: DraftColumn[];
}
export type DraftColumn = Omit<ColumnDef, 'column'>;

/** Catalog problems are collected, so a bad payload is reported whole rather than one fix at a time. */
export class Problems {
  readonly list: Diagnostic[] = [];
  add(code: DiagnosticCode, message: string, hint?: string): void {
    if (this.list.length < 100) this.list.push(OqlError.plain(code, message, hint).diagnostics[0]!);
  }
  throwIfAny(): void {
    if (this.list.length > 0) throw new OqlError(this.list);
  }
}

export function draftsOf(payload: unknown, codes: Map<string, LogicalType>, p: Problems): Draft[] {
  if (Array.isArray(payload)) return serviceDrafts(payload, codes, p);
  if (isRecord(payload)) {
    if (isRecord(payload.objects)) return compactDrafts(payload, p);
    if ('data' in payload || 'success' in payload) {
      if (payload.success === false) {
        const why = typeof payload.message === 'string' ? `: ${payload.message}` : '';
        p.add('CATALOG_INVALID', `the catalog payload reports success: false${why}`);
        return [];
      }
      const data = payload.data;
      if (Array.isArray(data)) return serviceDrafts(data, codes, p);
      if (isRecord(data) && 'org_object_columns' in data) return serviceDrafts([data], codes, p);
      p.add('CATALOG_INVALID', `catalog envelope: data must be an array of objects, got ${describe(data)}`);
      return [];
    }
    if ('org_object_columns' in payload) return serviceDrafts([payload], codes, p);
  }
  p.add(
    'CATALOG_INVALID',
    `catalog payload must be an array of objects, a {success, data} envelope or {"objects": {...}}, got ${describe(payload)}`,
  );
  return [];
}

function serviceDrafts(items: readonly unknown[], codes: Map<string, LogicalType>, p: Problems): Draft[] {
  const drafts: Draft[] = [];
  items.forEach((item, i) => {
    if (!isRecord(item)) return p.add('CATALOG_INVALID', `object #${i}: expected an object, got ${describe(item)}`);
    const slug = item.slug;
    if (!isSlug(slug)) return p.add('CATALOG_INVALID', `object #${i}: slug must be a non-empty string, got ${describe(slug)}`);
    const cols = item.org_object_columns;
    if (!Array.isArray(cols)) {
      return p.add('CATALOG_INVALID', `object '${slug}': org_object_columns must be an array, got ${describe(cols)}`);
    }
    const columns: DraftColumn[] = [];
    cols.forEach((col, j) => {
      if (!isRecord(col)) return p.add('CATALOG_INVALID', `object '${slug}': column #${j} is ${describe(col)}, not an object`);
      if (!isSlug(col.slug)) return p.add('CATALOG_INVALID', `object '${slug}': column #${j} has no slug`);
      if (flag(col.is_archived)) return;
      const draft = serviceColumn(slug, col, col.slug, codes, p);
      if (draft) columns.push(draft);
    });
    drafts.push({ slug, objectId: text(item.id, `obj_${slug}`), source: item, displayName: text(item.display_singular_name, slug), pluralName: text(item.display_plural_name, slug), columns });
  });
  return drafts;
}

function serviceColumn(
  objectSlug: string, col: Record<string, unknown>, slug: string, codes: Map<string, LogicalType>, p: Problems,
): DraftColumn | undefined {
  const where = `column '${objectSlug}.${slug}'`;
  const base = {
    slug, displayName: text(col.display_name, slug), isPrimary: flag(col.is_primary), isSystem: col.column_type === 'system',
    required: flag(col.is_required), unique: flag(col.is_unique), properties: propertiesOf(col.properties),
  };
  if (slug === 'id') return { ...base, type: 'id', relation: null, options: null };
  const rel = col.relation;
  if (rel !== null && rel !== undefined) {
    if (!isRecord(rel)) return void p.add('CATALOG_INVALID', `${where}: relation must be an object, got ${describe(rel)}`);
    const object = rel.object_slug;
    if (!isSlug(object)) return void p.add('CATALOG_INVALID', `${where}: relation has no object_slug`);
    const virtual = rel.is_virtual === undefined || rel.is_virtual === null ? col.relationship_type === 2 : flag(rel.is_virtual);
    if (!virtual) return { ...base, type: 'relation', relation: { kind: 'to-one', object }, options: null };
    const via = rel.column_slug;
    if (!isSlug(via)) return void p.add('CATALOG_INVALID', `${where}: virtual relation has no column_slug`);
    return { ...base, type: 'virtual', relation: { kind: 'virtual', object, via }, options: null };
  }
  const code = col.column_data_type;
  if (!(Number.isInteger(code) || (typeof code === 'string' && /^\d+$/.test(code)))) {
    return void p.add('CATALOG_INVALID', `${where}: column_data_type must be an integer code, got ${describe(code)}`);
  }
  // `data_type` is not the service's: catalogPayload writes it for the logical types that have no
  // code of their own (url, integer, json), so a written catalog reads back to the same types.
  const type = isLogicalType(col.data_type) ? col.data_type : codes.get(String(code));
  if (type === undefined) {
    const known = [...codes].sort((a, b) => Number(a[0]) - Number(b[0])).map(([c, t]) => `${c} (${t})`);
    return void p.add('CATALOG_UNKNOWN_TYPE', `${where}: unknown column_data_type ${String(code)}`, `known codes: ${known.join(', ')}; pass a typeCodes map for this deployment`);
  }
  if (type === 'relation' || type === 'virtual' || type === 'id') {
    return void p.add('CATALOG_INVALID', `${where}: column_data_type ${String(code)} means ${type}, but the column has no relation`);
  }
  const options = type === 'enum' || type === 'multiselect' ? serviceOptions(where, col.enum_group, p) : null;
  // The service's object payload marks money with properties.currency; its type code says only "number".
  if (type !== 'number' || isLogicalType(col.data_type)) return { ...base, type, relation: null, options };
  const money = isRecord(col.properties) && typeof col.properties.currency === 'string' && col.properties.currency !== '';
  return { ...base, type: money ? 'currency' : type, relation: null, options };
}

function serviceOptions(where: string, group: unknown, p: Problems): string[] {
  if (group === null || group === undefined) return [];
  if (!isRecord(group) || !Array.isArray(group.values)) {
    p.add('CATALOG_INVALID', `${where}: enum_group must be an object with a values array`);
    return [];
  }
  const values: { slug: string; rank: number }[] = [];
  group.values.forEach((v, k) => {
    if (isRecord(v) && isSlug(v.slug)) {
      values.push({ slug: v.slug, rank: typeof v.rank === 'number' && Number.isFinite(v.rank) ? v.rank : Infinity });
    } else p.add('CATALOG_INVALID', `${where}: enum value #${k} has no slug`);
  });
  // Array.prototype.sort is stable: equal ranks keep payload order.
  return uniqueOptions(where, values.sort((a, b) => (a.rank === b.rank ? 0 : a.rank < b.rank ? -1 : 1)).map((v) => v.slug), p);
}

function uniqueOptions(where: string, options: string[], p: Problems): string[] {
  const seen = new Set<string>();
  for (const o of options) {
    if (seen.has(o)) p.add('CATALOG_DUPLICATE_SLUG', `${where}: duplicate option '${o}'`);
    seen.add(o);
  }
  return [...seen];
}

const COMPACT_OBJECT_KEYS = new Set(['displayName', 'pluralName', 'columns', 'description']);
const COMPACT_COLUMN_KEYS = new Set(['type', 'displayName', 'object', 'via', 'options', 'primary', 'system', 'required', 'unique', 'properties', 'description']);

function compactDrafts(payload: Record<string, unknown>, p: Problems): Draft[] {
  unknownKeys('catalog', payload, new Set(['objects', 'description', '$schema']), p);
  const drafts: Draft[] = [];
  for (const [slug, obj] of Object.entries(payload.objects as Record<string, unknown>)) {
    if (!isSlug(slug)) { p.add('CATALOG_INVALID', 'objects: an object slug is empty'); continue; }
    if (!isRecord(obj) || !isRecord(obj.columns)) {
      p.add('CATALOG_INVALID', `object '${slug}': expected {"columns": {...}}, got ${describe(obj)}`);
      continue;
    }
    unknownKeys(`object '${slug}'`, obj, COMPACT_OBJECT_KEYS, p);
    const columns: DraftColumn[] = [];
    for (const [cslug, spec] of Object.entries(obj.columns)) {
      const draft = compactColumn(slug, cslug, spec, p);
      if (draft) columns.push(draft);
    }
    const displayName = text(obj.displayName, humanize(slug));
    drafts.push({ slug, objectId: `obj_${slug}`, displayName, pluralName: text(obj.pluralName, `${displayName}s`), columns });
  }
  return drafts;
}

function compactColumn(objectSlug: string, slug: string, spec: unknown, p: Problems): DraftColumn | undefined {
  const where = `column '${objectSlug}.${slug}'`;
  if (!isSlug(slug)) return void p.add('CATALOG_INVALID', `object '${objectSlug}': a column slug is empty`);
  const s: Record<string, unknown> | undefined = typeof spec === 'string' ? { type: spec } : isRecord(spec) ? spec : undefined;
  if (!s) return void p.add('CATALOG_INVALID', `${where}: expected a type name or {"type": ...}, got ${describe(spec)}`);
  unknownKeys(where, s, COMPACT_COLUMN_KEYS, p);
  const type = s.type;
  if (!isLogicalType(type)) {
    return void p.add('CATALOG_UNKNOWN_TYPE', `${where}: unknown type ${typeof type === 'string' ? JSON.stringify(type) : describe(type)}`, typeHint(typeof type === 'string' ? type : ''));
  }
  if (s.properties !== undefined && s.properties !== null && !isRecord(s.properties)) {
    return void p.add('CATALOG_INVALID', `${where}: "properties" must be an object, got ${describe(s.properties)}`);
  }
  const base = {
    slug, displayName: text(s.displayName, humanize(slug)), isPrimary: s.primary === true, isSystem: s.system === true,
    required: s.required === true, unique: s.unique === true, properties: propertiesOf(s.properties),
  };
  if (slug === 'id') return { ...base, type: 'id', relation: null, options: null };
  if (type === 'id') return void p.add('CATALOG_INVALID', `${where}: only the id column can have type id`);
  if (type === 'relation' || type === 'virtual') {
    if (!isSlug(s.object)) return void p.add('CATALOG_INVALID', `${where}: a ${type} column needs "object"`);
    if (type === 'relation') return { ...base, type, relation: { kind: 'to-one', object: s.object }, options: null };
    if (!isSlug(s.via)) return void p.add('CATALOG_INVALID', `${where}: a virtual column needs "via" (the child's to-one column)`);
    return { ...base, type, relation: { kind: 'virtual', object: s.object, via: s.via }, options: null };
  }
  if (type === 'enum' || type === 'multiselect') {
    const options = s.options;
    if (!Array.isArray(options) || !options.every(isSlug)) {
      return void p.add('CATALOG_INVALID', `${where}: ${type} columns need "options": an array of option slugs`);
    }
    return { ...base, type, relation: null, options: uniqueOptions(where, options, p) };
  }
  return { ...base, type, relation: null, options: null };
}

function unknownKeys(where: string, value: Record<string, unknown>, allowed: Set<string>, p: Problems): void {
  for (const key of Object.keys(value)) {
    if (!allowed.has(key)) p.add('CATALOG_INVALID', `${where}: unknown key '${key}'`, didYouMean(key, allowed) ?? `allowed keys: ${[...allowed].join(', ')}`);
  }
}

export function typeHint(name: string): string {
  return didYouMean(name, LOGICAL_TYPES) ?? `types: ${LOGICAL_TYPES.join(', ')}`;
}

export function isLogicalType(v: unknown): v is LogicalType {
  return typeof v === 'string' && (LOGICAL_TYPES as readonly string[]).includes(v);
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isSlug(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0;
}

/** A frozen deep copy, so a catalog never changes under the caller who passed the payload in. */
function propertiesOf(v: unknown): ColumnProperties | null {
  if (!isRecord(v)) return null;
  return deepFreeze(JSON.parse(JSON.stringify(v)) as Record<string, unknown>);
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const child of Object.values(v)) deepFreeze(child);
    Object.freeze(v);
  }
  return v;
}

function flag(v: unknown): boolean {
  return v === 1 || v === true;
}

function text(v: unknown, fallback: string): string {
  return typeof v === 'string' && v.length > 0 ? v : fallback;
}

function humanize(slug: string): string {
  return slug.split('_').filter(Boolean).map((w) => w[0]!.toUpperCase() + w.slice(1)).join(' ') || slug;
}

export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  if (typeof v === 'object') return 'an object';
  return typeof v === 'number' || typeof v === 'boolean' ? `${typeof v} ${String(v)}` : typeof v;
}
