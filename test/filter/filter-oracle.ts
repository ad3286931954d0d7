import type { Catalog } from '../../src/catalog/types.js';
import type { Oracle, Row } from '../support/oracle.js';

/**
 * An independent reference of the record filter's semantics (README, "Record filter"), over
 * the fixture rows as they were inserted. It imports nothing from `src/` but the catalog's
 * types: the catalog is read as data (column types, relation targets), every rule is written
 * here again in plain TypeScript, two-valued, straight from the README's table:
 * - empty = null, '' (text), [] (multiselect); positive operators never match empty values;
 *   neq, nin, not_contains, nleq match exactly the records their positive twin does not;
 * - like/ilike: only % is a wildcard; starts_with/ends_with/contains/not_contains/global_search
 *   are literal and case-insensitive;
 * - dot paths through to-one relations reach the visible target (else the value is empty);
 *   a one-to-many step is "some visible child satisfies the rest".
 */

export type Body = Record<string, unknown>;

const TEXTLIKE = new Set(['id', 'text', 'email', 'phone', 'url']);

export class FilterOracle {
  constructor(
    private readonly catalog: Catalog,
    private readonly oracle: Oracle,
  ) {}

  /** Ids of the visible records of `slug` that satisfy `filters` (undefined = all). */
  ids(slug: string, tenant: string, filters: unknown): string[] {
    return this.oracle.live(slug, tenant).filter((r) => filters === undefined || this.node(slug, tenant, r, filters as Body)).map((r) => r['id'] as string);
  }

  node(slug: string, tenant: string, row: Row, n: Body): boolean {
    const parts: boolean[] = [];
    if ('operator' in n) parts.push(this.leaf(slug, tenant, row, n));
    if (Array.isArray(n['and'])) parts.push((n['and'] as Body[]).every((c) => this.node(slug, tenant, row, c)));
    if (Array.isArray(n['or'])) parts.push((n['or'] as Body[]).some((c) => this.node(slug, tenant, row, c)));
    return parts.every(Boolean);
  }

  private leaf(slug: string, tenant: string, row: Row, n: Body): boolean {
    const op = n['operator'] as string;
    if (op === 'global_search') {
      const s = String(n['value']).toLowerCase();
      const cols = [...this.catalog.objects.get(slug)!.columns.values()].filter((c) => c.column !== null && ['text', 'email', 'phone', 'url'].includes(c.type)).map((c) => c.column!);
      if (this.catalog.mapping.searchColumn) cols.push(this.catalog.mapping.searchColumn);
      return cols.some((c) => typeof row[c] === 'string' && (row[c] as string).toLowerCase().includes(s));
    }
    return this.path(slug, tenant, row, (n['field'] as string).split('.'), op, n['value']);
  }

  private path(slug: string, tenant: string, row: Row | null, segs: string[], op: string, value: unknown): boolean {
    const col = this.catalog.objects.get(slug)!.columns.get(segs[0]!)!;
    if (col.relation?.kind === 'virtual') {
      const rel = col.relation;
      const children = row === null ? [] : this.oracle.live(rel.object, tenant).filter((c) => c[this.physical(rel.object, rel.via)] === row['id']);
      if (segs.length === 1) {
        const any = children.length > 0;
        return op === 'exists' || op === 'not_empty' ? any : !any;
      }
      return children.some((c) => this.path(rel.object, tenant, c, segs.slice(1), op, value));
    }
    if (segs.length > 1) {
      const target = row === null ? null : this.oracle.get(col.relation!.object, tenant, row[col.column!]);
      return this.path(col.relation!.object, tenant, target, segs.slice(1), op, value);
    }
    const v = row === null ? null : row[col.column!] ?? null;
    return test(col.type, v, op, value);
  }

  private physical(slug: string, column: string): string {
    return this.catalog.objects.get(slug)!.columns.get(column)!.column!;
  }
}

function empty(type: string, v: unknown): boolean {
  return v === null || (TEXTLIKE.has(type) && v === '') || (type === 'multiselect' && (v as unknown[]).length === 0);
}

/** A value of a body as the stored form: ISO strings to epoch ms, numeric strings to numbers, 1/0 to booleans. */
function stored(type: string, x: unknown): unknown {
  if ((type === 'date' || type === 'datetime') && typeof x === 'string') {
    const s = /T|\s/.test(x) && !/[zZ]|[+-]\d\d:\d\d$/.test(x) ? `${x}Z` : x;
    return Date.parse(s);
  }
  if (['number', 'integer', 'currency'].includes(type) && typeof x === 'string') return Number(x);
  if (type === 'boolean' && typeof x === 'number') return x === 1;
  return x;
}

function likeRegex(pattern: string, flags: string): RegExp {
  const body = pattern.split('%').map((p) => p.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')).join('[\\s\\S]*');
  return new RegExp(`^${body}$`, flags);
}

export function test(type: string, v: unknown, op: string, raw: unknown): boolean {
  const isEmpty = empty(type, v);
  const positive = (o: string, x: unknown): boolean => {
    if (v === null) return false;
    const val = stored(type, x);
    switch (o) {
      case 'eq':
        return type === 'multiselect' ? (v as string[]).includes(val as string) : v === val;
      case 'in':
        return (raw as unknown[]).some((i) => positive('eq', i));
      case 'gt':
        return (v as number) > (val as number);
      case 'gte':
        return (v as number) >= (val as number);
      case 'lt':
        return (v as number) < (val as number);
      case 'lte':
      case 'leq':
        return (v as number) <= (val as number);
      case 'between':
        return (v as number) >= (stored(type, (x as unknown[])[0]) as number) && (v as number) <= (stored(type, (x as unknown[])[1]) as number);
      case 'like':
        return likeRegex(x as string, 'u').test(v as string);
      case 'ilike':
        return likeRegex(x as string, 'iu').test(v as string);
      case 'starts_with':
        return (v as string).toLowerCase().startsWith((x as string).toLowerCase());
      case 'ends_with':
        return (v as string).toLowerCase().endsWith((x as string).toLowerCase());
      case 'contains':
        return (v as string).toLowerCase().includes((x as string).toLowerCase());
      default:
        throw new Error(`oracle: no positive operator ${o}`);
    }
  };
  switch (op) {
    case 'is_empty':
      return isEmpty;
    case 'not_empty':
      return !isEmpty;
    case 'exists':
      return v !== null;
    case 'not_exists':
      return v === null;
    case 'neq':
      return !positive('eq', raw);
    case 'nin':
      return !positive('in', raw);
    case 'not_contains':
      return !positive('contains', raw);
    case 'nleq':
      return !positive('leq', raw);
    default:
      return positive(op, raw);
  }
}
