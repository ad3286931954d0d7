import type { ValidationError } from '../diagnostics/diagnostic.js';
import { OqlError } from '../diagnostics/diagnostic.js';

/**
 * `error_code` values of the entries of a rejected filter or connector body. They name what is
 * wrong with one position of the body; `meta_data` of the entry is that position's JSON path.
 */
export const FILTER_ERROR_CODES = {
  /** A key, array or value has the wrong JSON type or shape. */
  INVALID_BODY: 'INVALID_BODY',
  /** A field (or a segment of a dot path) the object does not have. */
  UNKNOWN_FIELD: 'UNKNOWN_FIELD',
  /** An operator name that does not exist. */
  UNKNOWN_OPERATOR: 'UNKNOWN_OPERATOR',
  /** An operator that does not apply to the field's type. */
  OPERATOR_NOT_APPLICABLE: 'OPERATOR_NOT_APPLICABLE',
  /** A value of the wrong type or format for the field and operator. */
  INVALID_VALUE: 'INVALID_VALUE',
  /** An enum or multiselect value that is not one of the field's options. */
  UNKNOWN_OPTION: 'UNKNOWN_OPTION',
  /** A `between` whose low end is above its high end. */
  INVALID_RANGE: 'INVALID_RANGE',
  /** Nesting, condition count, list length, page size or another limit exceeded. */
  LIMIT_EXCEEDED: 'LIMIT_EXCEEDED',
} as const;

export type FilterErrorCode = keyof typeof FILTER_ERROR_CODES;

/** Collects every problem of one body, so the caller sees all of them in one 400. */
export class Problems {
  readonly list: ValidationError[] = [];

  constructor(private readonly slug: string) {}

  add(code: FilterErrorCode, path: string, field: string, message: string): void {
    // Bounded: a body with a million bad values gets a readable error, not a million entries.
    if (this.list.length >= MAX_REPORTED) return;
    this.list.push({ object_slug: this.slug, field, message, error_code: code, record_index: null, meta_data: path });
  }

  get any(): boolean {
    return this.list.length > 0;
  }

  throwIfAny(message: string): void {
    if (this.list.length > 0) throw OqlError.validation(message, this.list);
  }
}

const MAX_REPORTED = 100;

/** `a.b`, `a[2]`: JSON paths as the client would write them. */
export function at(path: string, key: string | number): string {
  return typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Own enumerable keys only: `__proto__` parsed from JSON is an own key and stays data. */
export function has(o: Record<string, unknown>, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, key);
}

export function get(o: Record<string, unknown>, key: string): unknown {
  return has(o, key) ? o[key] : undefined;
}

/** A short, safe rendering of a client value for a message. */
export function show(v: unknown): string {
  let s: string;
  try {
    s = typeof v === 'string' ? `'${v}'` : JSON.stringify(v) ?? String(v);
  } catch {
    s = String(typeof v);
  }
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}
