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

/**
 * A problem's message, or a function that writes it: a message with a did-you-mean hint or a
 * rendering of the client's value is written only when the problem is reported.
 */
export type Message = string | (() => string);

/** Collects every problem of one body, so the caller sees all of them in one 400. */
export class Problems {
  readonly list: ValidationError[] = [];

  constructor(private readonly slug: string) {}

  add(code: FilterErrorCode, path: string, field: string, message: Message): void {
    // Bounded: a body with a million bad values gets a readable error, not a million entries,
    // and the entries beyond the first MAX_REPORTED cost no hint search and no rendering.
    if (this.full) return;
    const text = typeof message === 'string' ? message : message();
    this.list.push({ object_slug: this.slug, field, message: text, error_code: code, record_index: null, meta_data: path });
  }

  get any(): boolean {
    return this.list.length > 0;
  }

  /** Nothing more will be reported: a loop over the rest of a body's keys can stop. */
  get full(): boolean {
    return this.list.length >= MAX_REPORTED;
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

const SHOWN = 60;

/**
 * A short, safe rendering of a client value for a message: its JSON, cut to 60 characters. It
 * reads no more of the value than it prints (a 10 MB string or an array nested 100,000 deep
 * costs the same as `[1]`), and walks nesting with its own stack, never recursion.
 */
export function show(v: unknown): string {
  if (typeof v === 'string') return cut(`'${v.slice(0, SHOWN)}`, v.length + 1, "'");
  if (typeof v !== 'object' || v === null) return scalarJson(v) ?? String(typeof v === 'bigint' ? 'bigint' : v);
  let out = '';
  // Each frame is an array or object being written, with the position reached in it.
  type Frame = { list: readonly unknown[]; i: number } | { obj: Record<string, unknown>; keys: Iterator<string>; first: boolean };
  const stack: Frame[] = [];
  const open = (x: object): void => {
    if (Array.isArray(x)) {
      out += '[';
      stack.push({ list: x, i: 0 });
    } else {
      out += '{';
      stack.push({ obj: x as Record<string, unknown>, keys: ownKeys(x), first: true });
    }
  };
  const value = (x: unknown, inArray: boolean): void => {
    if (typeof x === 'object' && x !== null) open(x);
    else out += scalarJson(x) ?? (inArray ? 'null' : '');
  };
  open(v);
  while (stack.length > 0 && out.length <= SHOWN) {
    const top = stack[stack.length - 1]!;
    if ('list' in top) {
      if (top.i >= top.list.length) {
        out += ']';
        stack.pop();
        continue;
      }
      if (top.i > 0) out += ',';
      value(top.list[top.i++], true);
    } else {
      const next = top.keys.next();
      if (next.done) {
        out += '}';
        stack.pop();
        continue;
      }
      const x = top.obj[next.value];
      if (scalarJson(x) === undefined && (typeof x !== 'object' || x === null)) continue; // JSON leaves out undefined and functions
      if (!top.first) out += ',';
      top.first = false;
      out += `${JSON.stringify(next.value.slice(0, SHOWN))}:`;
      value(x, false);
    }
  }
  return cut(out, stack.length > 0 ? Infinity : out.length, '');
}

/** `text`, or its first 57 characters and `...` when the whole (of length `length`) is longer than 60. */
function cut(text: string, length: number, close: string): string {
  return length + close.length > SHOWN ? `${text.slice(0, SHOWN - 3)}...` : `${text}${close}`;
}

/** JSON of a non-object, as JSON.stringify writes it (strings cut first); undefined where JSON has none. */
function scalarJson(x: unknown): string | undefined {
  switch (typeof x) {
    case 'string':
      return JSON.stringify(x.slice(0, SHOWN));
    case 'number':
      return Number.isFinite(x) ? String(x) : 'null';
    case 'boolean':
      return String(x);
    default:
      return x === null ? 'null' : undefined;
  }
}

/** Own enumerable string keys, one at a time: an object of 100,000 keys is not listed to print three. */
function* ownKeys(o: object): Iterator<string> {
  for (const k in o) if (Object.prototype.hasOwnProperty.call(o, k)) yield k;
}

export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}
