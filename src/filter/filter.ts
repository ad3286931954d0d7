import type * as B from '../bind/bound.js';
import type { Catalog, ColumnDef } from '../catalog/types.js';
import { compileBound, type OutputColumn } from '../compile.js';
import { OqlError } from '../diagnostics/diagnostic.js';
import { didYouMean } from '../diagnostics/suggest.js';
import { ConditionBuilder, type ConditionLimits } from './conditions.js';
import { SPAN, columnNode, resolvePath, splitPath, type ColumnPath } from './paths.js';
import { Problems, at, get, has, isPlainObject, kindOf, show } from './problems.js';
import { categoryOf, int8 } from './values.js';
import { invalidSlug, requireTenant } from '../rules.js';

export interface FilterOptions {
  readonly catalog: Catalog;
  /** The object of the request path. */
  readonly slug: string;
  /** The caller's tenant: every table reference is restricted to it. */
  readonly orgId: string;
  /** The objects the caller may read; others are unknown to the filter. */
  readonly access?: Iterable<string>;
  /** Largest page_size accepted. Default 1000. */
  readonly maxPageSize?: number;
  /** Deepest nesting of and/or groups. Default 10, at most 64. */
  readonly maxDepth?: number;
  /** Most conditions (groups and leaves) in one body. Default 200. */
  readonly maxConditions?: number;
}

export const DEFAULT_PAGE_SIZE = 100;
export const DEFAULT_MAX_PAGE_SIZE = 1000;
export const DEFAULT_MAX_DEPTH = 10;
export const DEFAULT_MAX_CONDITIONS = 200;
/**
 * The highest `maxDepth` a caller may set: the builder, planner and emitter walk the condition
 * tree recursively, so its depth is capped here, as the query language caps its nesting at 64.
 */
export const MAX_DEPTH_OPTION = 64;
const MAX_FIELDS = 500;
const MAX_SORT = 20;

export interface CompiledFilter {
  readonly sql: string;
  readonly params: unknown[];
  readonly columns: OutputColumn[];
}

/**
 * A compiled filter body with the step that finishes its answer: whoever runs the statement hands
 * `finish` the decoded rows and returns what it gives back, so the rules of the answer stay here.
 */
export interface FinishedFilter extends CompiledFilter {
  /** The records of the answer from the statement's decoded rows (empty values as null). */
  readonly finish: (records: Record<string, unknown>[]) => Record<string, unknown>[];
}

/** What the two front ends share: the checked object, access and tenant. */
export interface Target {
  readonly catalog: Catalog;
  readonly slug: string;
  readonly access: ReadonlySet<string> | null;
}

export function target(options: { catalog: Catalog; slug: string; orgId: string; access?: Iterable<string> }): Target {
  requireTenant(options.orgId);
  const access = options.access === undefined ? null : new Set(options.access);
  const { catalog, slug } = options;
  if (typeof slug !== 'string' || !catalog.objects.has(slug) || (access && !access.has(slug))) {
    throw invalidSlug(slug, [...catalog.objects.keys()].filter((k) => !access || access.has(k)));
  }
  return { catalog, slug, access };
}

/** The output of one field path: `owner.name` → a to-one column, keyed as written. */
export function fieldOutput(t: Target, field: string, path: string, problems: Problems): { out: B.BoundOutput; def: ColumnDef } | null {
  const segments = splitPath(field);
  const r = segments ? resolvePath(t.catalog, t.slug, segments, t.access) : { error: `${show(field)} is not a field name or dot path` };
  if ('error' in r) {
    problems.add('UNKNOWN_FIELD', path, field, r.error);
    return null;
  }
  if (r.ok.kind === 'virtual') {
    problems.add('UNKNOWN_FIELD', path, field, `'${field}' is a one-to-many relation: it holds no value of its own to return or sort by`);
    return null;
  }
  const p: ColumnPath = r.ok;
  return { out: { key: field, expr: columnNode(0, p, p.def), type: p.def.type, span: SPAN }, def: p.def };
}

/** Every stored column of the object, in catalog order. */
export function storedFields(catalog: Catalog, slug: string): string[] {
  return [...catalog.objects.get(slug)!.columns.values()].filter((c) => c.column !== null && c.type !== 'virtual').map((c) => c.slug);
}

export function readFields(t: Target, v: unknown, path: string, problems: Problems, required: boolean): { outputs: B.BoundOutput[]; fields: string[] } {
  if (v === undefined && !required) {
    const fields = storedFields(t.catalog, t.slug);
    return { outputs: fields.map((f) => fieldOutput(t, f, path, problems)!.out), fields };
  }
  if (!Array.isArray(v)) {
    problems.add('INVALID_BODY', path, 'fields', v === undefined ? 'fields is required: the list of fields to return' : `fields must be a list of field names, not ${kindOf(v)}`);
    return { outputs: [], fields: [] };
  }
  if (v.length === 0) problems.add('INVALID_BODY', path, 'fields', 'fields is empty; name at least one field, or leave fields out for all of them');
  if (v.length > MAX_FIELDS) {
    problems.add('LIMIT_EXCEEDED', path, 'fields', `fields names more than ${MAX_FIELDS} fields`);
    return { outputs: [], fields: [] };
  }
  const outputs: B.BoundOutput[] = [];
  const fields: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < v.length && !problems.full; i++) {
    const f: unknown = v[i];
    if (typeof f !== 'string') {
      problems.add('INVALID_BODY', at(path, i), '', `a field name must be a string, not ${kindOf(f)}`);
      continue;
    }
    if (seen.has(f)) continue; // a repeated field is returned once
    const o = fieldOutput(t, f, at(path, i), problems);
    if (o) {
      outputs.push(o.out);
      fields.push(f);
      seen.add(f);
    }
  }
  return { outputs, fields };
}

function readSort(t: Target, v: unknown, path: string, problems: Problems): B.BoundOrder[] {
  const order: B.BoundOrder[] = [];
  if (v !== undefined) {
    if (!Array.isArray(v)) problems.add('INVALID_BODY', path, 'sort', `sort must be a list of {field, direction}, not ${kindOf(v)}`);
    else if (v.length > MAX_SORT) problems.add('LIMIT_EXCEEDED', path, 'sort', `sort has more than ${MAX_SORT} entries`);
    else {
      v.forEach((s, i) => {
        const p = at(path, i);
        if (!isPlainObject(s)) {
          problems.add('INVALID_BODY', p, '', `a sort entry must be an object {field, direction}, not ${kindOf(s)}`);
          return;
        }
        for (const key of Object.keys(s)) {
          if (problems.full) break;
          if (key !== 'field' && key !== 'direction') problems.add('INVALID_BODY', at(p, key), key, () => `'${key}' is not a key of a sort entry (they are field and direction)`);
        }
        const field = get(s, 'field');
        const direction = get(s, 'direction') ?? 'asc';
        let dir: 'ASC' | 'DESC' | null = null;
        if (typeof direction === 'string' && /^(asc|desc)$/i.test(direction)) dir = direction.toUpperCase() as 'ASC' | 'DESC';
        else problems.add('INVALID_VALUE', at(p, 'direction'), typeof field === 'string' ? field : '', `direction must be 'asc' or 'desc', not ${show(direction)}`);
        if (typeof field !== 'string') {
          problems.add('INVALID_BODY', at(p, 'field'), '', field === undefined ? 'the sort entry has no field' : `field must be a string, not ${kindOf(field)}`);
          return;
        }
        const o = fieldOutput(t, field, at(p, 'field'), problems);
        if (!o) return;
        const cat = categoryOf(o.def.type);
        if (cat === 'multiselect' || cat === 'json') {
          problems.add('OPERATOR_NOT_APPLICABLE', at(p, 'field'), field, `'${field}' (${o.def.type}) has no order to sort by`);
          return;
        }
        // Empty values last in both directions; the README's sort section says why.
        if (dir) order.push({ expr: o.out.expr, direction: dir, nulls: 'LAST' });
      });
    }
  }
  // The id last, so equal sort keys still have one order and pages neither overlap nor skip.
  const id = [...t.catalog.objects.get(t.slug)!.columns.values()].find((c) => c.type === 'id')!;
  order.push({ expr: columnNode(0, { hops: [], object: t.slug }, id), direction: 'ASC', nulls: null });
  return order;
}

function readPagination(v: unknown, path: string, problems: Problems, maxPageSize: number): { page: number; size: number } {
  const out = { page: 1, size: Math.min(DEFAULT_PAGE_SIZE, maxPageSize) };
  if (v === undefined) return out;
  if (!isPlainObject(v)) {
    problems.add('INVALID_BODY', path, 'pagination', `pagination must be an object {page, page_size}, not ${kindOf(v)}`);
    return out;
  }
  for (const key of Object.keys(v)) {
    if (problems.full) break;
    if (key !== 'page' && key !== 'page_size') problems.add('INVALID_BODY', at(path, key), key, () => `'${key}' is not a key of pagination (they are page and page_size)`);
  }
  const page = get(v, 'page');
  const size = get(v, 'page_size');
  if (page !== undefined) {
    if (typeof page === 'number' && Number.isSafeInteger(page) && page >= 1) out.page = page;
    else problems.add('INVALID_VALUE', at(path, 'page'), 'page', `page must be a whole number from 1, not ${show(page)}`);
  }
  if (size !== undefined) {
    if (typeof size === 'number' && Number.isSafeInteger(size) && size >= 1 && size <= maxPageSize) out.size = size;
    else if (typeof size === 'number' && Number.isSafeInteger(size) && size > maxPageSize) problems.add('LIMIT_EXCEEDED', at(path, 'page_size'), 'page_size', `page_size is at most ${maxPageSize}, not ${size}`);
    else problems.add('INVALID_VALUE', at(path, 'page_size'), 'page_size', `page_size must be a whole number from 1 to ${maxPageSize}, not ${show(size)}`);
  }
  if (!Number.isSafeInteger((out.page - 1) * out.size)) problems.add('INVALID_VALUE', at(path, 'page'), 'page', `page ${out.page} is beyond any result`);
  return out;
}

function positive(name: string, v: number | undefined, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = v ?? fallback;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > max) {
    throw OqlError.plain('INVALID_OPTIONS', `${name} must be a whole number ${max === Number.MAX_SAFE_INTEGER ? 'of at least 1' : `from 1 to ${max}`}, not ${String(v)}`);
  }
  return n;
}

export function limitsOf(options: { maxDepth?: number; maxConditions?: number }): ConditionLimits {
  return {
    maxDepth: positive('maxDepth', options.maxDepth, DEFAULT_MAX_DEPTH, MAX_DEPTH_OPTION),
    maxConditions: positive('maxConditions', options.maxConditions, DEFAULT_MAX_CONDITIONS),
  };
}

const QUERY_KEYS = ['fields', 'filters', 'sort', 'pagination'];

/** The bound query of a filter body; throws the body's every problem as one 400. */
export function bindFilter(body: unknown, options: FilterOptions): B.BoundQuery {
  const t = target(options);
  const maxPageSize = positive('maxPageSize', options.maxPageSize, DEFAULT_MAX_PAGE_SIZE);
  const limits = limitsOf(options);
  const problems = new Problems(t.slug);
  const query = isPlainObject(body) ? get(body, 'query') : undefined;
  if (!isPlainObject(query)) {
    problems.add('INVALID_BODY', isPlainObject(body) ? 'query' : '', 'query', isPlainObject(body) ? `query must be an object {fields, filters, sort, pagination}, not ${query === undefined ? 'missing' : kindOf(query)}` : `the body must be an object {"query": {...}}, not ${kindOf(body)}`);
    problems.throwIfAny('Invalid filter');
  }
  const q = query as Record<string, unknown>;
  for (const key of Object.keys(q)) {
    if (problems.full) break;
    if (!QUERY_KEYS.includes(key)) {
      problems.add('INVALID_BODY', at('query', key), key, () => {
        const hint = didYouMean(key, QUERY_KEYS);
        return `'${key}' is not a key of query (they are fields, filters, sort, pagination)${hint ? `; ${hint}` : ''}`;
      });
    }
  }
  const { outputs } = readFields(t, get(q, 'fields'), 'query.fields', problems, false);
  let where: B.BExpr | null = null;
  if (has(q, 'filters')) where = new ConditionBuilder(t.catalog, t.slug, t.access, problems, limits).tree(get(q, 'filters'), 'query.filters');
  const orderBy = readSort(t, get(q, 'sort'), 'query.sort', problems);
  const { page, size } = readPagination(get(q, 'pagination'), 'query.pagination', problems, maxPageSize);
  problems.throwIfAny('Invalid filter');
  return {
    kind: 'Query',
    scope: 0,
    object: t.slug,
    distinct: false,
    outputs,
    where,
    groupBy: [],
    having: null,
    orderBy,
    limit: int8(size),
    offset: page > 1 ? int8((page - 1) * size) : null,
    aggregated: false,
    span: SPAN,
  };
}

/** Plans and emits a bound query for one tenant through the same stages `compile` uses. */
export function emitFor(bound: B.BoundQuery, catalog: Catalog, orgId: string): CompiledFilter {
  return compileBound(bound, catalog, orgId);
}

/**
 * Compiles a record-filter body (docs/filter.md) to parameterized PostgreSQL for one tenant. Bad
 * bodies throw `OqlError` VALIDATION_FAILED with every problem, each with its JSON path.
 */
export function compileFilter(body: unknown, options: FilterOptions): FinishedFilter {
  return { ...emitFor(bindFilter(body, options), options.catalog, options.orgId), finish: emptyToNull };
}

/** Empty values come back as null: '' text and [] multiselects as well as NULL. */
export function emptyToNull(records: Record<string, unknown>[]): Record<string, unknown>[] {
  for (const r of records) {
    for (const k of Object.keys(r)) {
      const v = r[k];
      if (v === '' || (Array.isArray(v) && v.length === 0)) r[k] = null;
    }
  }
  return records;
}
