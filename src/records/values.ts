import { MAX_DECIMAL_LENGTH, decimalOf } from '../catalog/decimal.js';
import type { ColumnDef, ObjectDef } from '../catalog/types.js';
import type { ValidationError } from '../diagnostics/diagnostic.js';
import { didYouMean } from '../diagnostics/suggest.js';
import { checkPhone, phoneRules, type PhoneLibrary } from './phone.js';

/**
 * The `error_code` of each validation entry a record write can produce, with its meaning.
 * Public and stable, like the diagnostic codes.
 */
export const RECORD_ERROR_CODES = Object.freeze({
  PARSE_INVALID_FORMAT: 'The value has the right JSON type but not the form the column needs (an email without @, a phone number that is not valid, a date that is not at UTC midnight).',
  TYPE_MISMATCH: 'The value has the wrong JSON type for the column (an object for a text column, a string for a boolean).',
  REQUIRED: 'A required column is missing, null or empty on create, or set to null or empty on update.',
  UNKNOWN_FIELD: 'The record has a field that is not a column of the object.',
  READ_ONLY_FIELD: 'The record sets a field only the service writes: id, created_at, updated_at, created_by, updated_by, search_field, object_id, org_id, a system column, or a one-to-many relation.',
  INVALID_OPTION: 'An enum or multiselect value that is not one of the column\'s option slugs (meta_data lists them).',
  NOT_UNIQUE: 'A unique column\'s value is already held by another live record of the organization, or by an earlier record of the same request.',
  INVALID_RELATION: 'A relation names no live record of the related object in the caller\'s organization.',
  INVALID_RECORD: 'A record (or the request body) is not a JSON object of the expected shape.',
  INVALID_ID: 'An upsert element\'s id is not a string, or names no live record of the caller\'s organization.',
  TOO_LONG: 'A text value is longer than its type allows (text 100,000 characters, url 2,048, email 254, phone 64).',
} as const);

export type RecordErrorCode = keyof typeof RECORD_ERROR_CODES;

/** Fields a client may not write: the library sets them (or, as object_id, derives them). */
export const SYSTEM_FIELDS: ReadonlySet<string> = new Set([
  'id', 'created_at', 'updated_at', 'created_by', 'updated_by', 'search_field', 'object_id', 'org_id', 'system_created_at', 'is_deleted',
]);

const MAX_PROBLEMS = 10_000;
/**
 * Did-you-mean searches of one write: enough for every typo a person makes, not one per key of
 * a generated record (10,000 unknown keys cost 40 ms of searching for hints nobody reads).
 */
const MAX_HINTS = 100;

/** Every problem of every record, in the service's validation_errors shape. */
export class RecordProblems {
  readonly list: ValidationError[] = [];
  private hints = 0;
  constructor(private readonly objectSlug: string) {}

  add(recordIndex: number | null, field: string, code: RecordErrorCode, message: string, metaData: string | null = null): void {
    if (this.list.length < MAX_PROBLEMS) {
      this.list.push({ object_slug: this.objectSlug, field, message, error_code: code, record_index: recordIndex, meta_data: metaData });
    }
  }

  get size(): number {
    return this.list.length;
  }

  /** No further problem will be listed: the rest of a record need not be read (its write fails anyway). */
  get full(): boolean {
    return this.list.length >= MAX_PROBLEMS;
  }

  /** Whether the next problem may search a did-you-mean: it will be listed, and is among the first MAX_HINTS to ask. */
  takeHint(): boolean {
    if (this.full || this.hints >= MAX_HINTS) return false;
    this.hints++;
    return true;
  }
}

export function isPlainRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Columns a client may write: stored, not the id, not system-maintained. */
export function isWritable(col: ColumnDef): boolean {
  return col.column !== null && col.type !== 'id' && col.type !== 'virtual' && !col.isSystem && !SYSTEM_FIELDS.has(col.slug);
}

/** Whether any value of these records is a phone number to check (then libphonenumber-js is loaded). */
export function needsPhone(obj: ObjectDef, records: readonly unknown[]): boolean {
  return records.some((r) => isPlainRecord(r) && Object.keys(r).some((k) => obj.columns.get(k)?.type === 'phone' && typeof r[k] === 'string' && r[k] !== ''));
}

/**
 * Checks one record's own fields (no database): returns the values to store by column slug,
 * converted to what the column holds, with problems added to `problems`. `create` also checks
 * that every required column has a value. `allowId` lets the upsert's `id` through.
 */
export function checkFields(
  obj: ObjectDef, input: Record<string, unknown>, index: number | null, mode: 'create' | 'update',
  phone: PhoneLibrary | null, problems: RecordProblems, allowId = false,
): Map<string, unknown> {
  const values = new Map<string, unknown>();
  let writable: string[] | undefined;
  for (const key of Object.keys(input)) {
    if (problems.full) break;
    const raw = input[key];
    if (key === 'id' && allowId) continue;
    const col = obj.columns.get(key);
    if (!col) {
      if (SYSTEM_FIELDS.has(key)) problems.add(index, key, 'READ_ONLY_FIELD', `'${key}' is set by the service and cannot be written`);
      else {
        let hint: string | undefined;
        if (problems.takeHint()) hint = didYouMean(key, (writable ??= [...obj.columns.values()].filter(isWritable).map((c) => c.slug)));
        problems.add(index, key, 'UNKNOWN_FIELD', `'${key}' is not a field of '${obj.slug}'`, hint ?? null);
      }
      continue;
    }
    if (!isWritable(col)) {
      const why = col.type === 'virtual' ? `'${key}' is a one-to-many relation; set it from the other side (${col.relation?.kind === 'virtual' ? `${col.relation.object}.${col.relation.via}` : 'the child'})` : `'${key}' is set by the service and cannot be written`;
      problems.add(index, key, 'READ_ONLY_FIELD', why);
      continue;
    }
    if (isEmpty(raw)) {
      if (col.required) problems.add(index, key, 'REQUIRED', `'${key}' is required`);
      else values.set(key, null);
      continue;
    }
    const r = convert(col, raw, phone);
    if ('ok' in r) values.set(key, r.ok);
    else problems.add(index, key, r.code, `'${key}' ${r.message}`, r.meta ?? null);
  }
  if (mode === 'create') {
    for (const col of obj.columns.values()) {
      if (col.required && isWritable(col) && !Object.hasOwn(input, col.slug)) problems.add(index, col.slug, 'REQUIRED', `'${col.slug}' is required`);
    }
  }
  return values;
}

/** null, '', an empty multiselect: the column is left empty (read back as null). */
function isEmpty(v: unknown): boolean {
  return v === null || v === undefined || v === '' || (Array.isArray(v) && v.length === 0);
}

type Converted = { ok: unknown } | { code: RecordErrorCode; message: string; meta?: string };

const EMAIL = /^[^\s@"(),:;<>[\\\]]+@[^\s@"(),:;<>[\\\]]+\.[^\s@"(),:;<>[\\\]]+$/;
const DAY_MS = 86_400_000;

/**
 * The longest value of each text-like type, in UTF-16 code units as JSON carries them. Bounded on
 * write so that no stored value is large enough for one query to build a response of hundreds of
 * megabytes from it (docs/limits.md).
 */
export const MAX_TEXT_LENGTH = Object.freeze({ text: 100_000, email: 254, phone: 64, url: 2_048, enum: 200, relation: 200 } as const);
const MAX_EPOCH_MS = 8.64e15;

function convert(col: ColumnDef, v: unknown, phone: PhoneLibrary | null): Converted {
  switch (col.type) {
    case 'text':
    case 'email':
    case 'phone':
    case 'url':
    case 'enum':
    case 'relation': {
      if (typeof v !== 'string') return mismatch(v, 'a string');
      const max = MAX_TEXT_LENGTH[col.type];
      if (v.length > max) return { code: 'TOO_LONG', message: `is ${v.length} characters long; a ${col.type} value holds at most ${max}`, meta: `shorten it to ${max} characters` };
      const bad = unstorable(v);
      if (bad) return { code: 'PARSE_INVALID_FORMAT', message: bad };
      return textual(col, v, phone);
    }
    case 'number':
    case 'currency':
    case 'integer': {
      if (typeof v === 'string' && v.length > MAX_DECIMAL_LENGTH) {
        return { code: 'PARSE_INVALID_FORMAT', message: `is not a number: a decimal has at most ${MAX_DECIMAL_LENGTH.toLocaleString('en-US')} characters, not ${v.length.toLocaleString('en-US')}` };
      }
      const n = typeof v === 'number' ? v : typeof v === 'string' ? decimalOf(v) : null;
      if (n === null) return typeof v === 'string' ? { code: 'PARSE_INVALID_FORMAT', message: `is not a number: ${show(v)}` } : mismatch(v, 'a number');
      if (!Number.isFinite(n)) return { code: 'PARSE_INVALID_FORMAT', message: 'must be a finite number' };
      if (col.type === 'integer' && !Number.isSafeInteger(n)) return { code: 'PARSE_INVALID_FORMAT', message: `must be a whole number between -(2^53-1) and 2^53-1, not ${String(n)}` };
      return { ok: n };
    }
    case 'boolean':
      if (v === true || v === 1) return { ok: true };
      if (v === false || v === 0) return { ok: false };
      return typeof v === 'number' ? { code: 'PARSE_INVALID_FORMAT', message: `must be true, false, 1 or 0, not ${String(v)}` } : mismatch(v, 'true, false, 1 or 0');
    case 'date':
    case 'datetime': {
      if (typeof v !== 'number') {
        const iso = typeof v === 'string' ? Date.parse(v) : NaN;
        const hint = Number.isFinite(iso) ? `write epoch milliseconds, e.g. ${col.type === 'date' ? Math.floor(iso / DAY_MS) * DAY_MS : iso}` : undefined;
        return typeof v === 'string' ? { code: 'PARSE_INVALID_FORMAT', message: 'must be epoch milliseconds (a number), not a date string', ...(hint ? { meta: hint } : {}) } : mismatch(v, 'epoch milliseconds');
      }
      if (!Number.isSafeInteger(v) || Math.abs(v) > MAX_EPOCH_MS) return { code: 'PARSE_INVALID_FORMAT', message: `must be whole epoch milliseconds within ±8.64e15, not ${String(v)}` };
      if (col.type === 'date' && v % DAY_MS !== 0) {
        return { code: 'PARSE_INVALID_FORMAT', message: 'is a date: it must be the epoch milliseconds of a UTC midnight', meta: `the UTC midnight before it is ${Math.floor(v / DAY_MS) * DAY_MS}` };
      }
      return { ok: v };
    }
    case 'multiselect': {
      if (!Array.isArray(v)) return mismatch(v, 'an array of option slugs');
      const options = col.options ?? [];
      const out: string[] = [];
      for (const item of v) {
        if (typeof item !== 'string') return mismatch(item, 'option slugs (strings) in the array');
        if (!options.includes(item)) return { code: 'INVALID_OPTION', message: `has no option ${show(item)}`, meta: options.join(', ') };
        if (!out.includes(item)) out.push(item);
      }
      return { ok: out };
    }
    case 'json': {
      const bad = unstorableJson(v, 0);
      return bad ? { code: 'PARSE_INVALID_FORMAT', message: bad } : { ok: v };
    }
    case 'id':
    case 'virtual':
      return { code: 'READ_ONLY_FIELD', message: 'cannot be written' };
    default: {
      const never: never = col.type;
      return { code: 'TYPE_MISMATCH', message: `has an unknown type ${String(never)}` };
    }
  }
}

function textual(col: ColumnDef, v: string, phone: PhoneLibrary | null): Converted {
  switch (col.type) {
    case 'email':
      return v.length <= 254 && EMAIL.test(v) ? { ok: v } : { code: 'PARSE_INVALID_FORMAT', message: `is not an email address: ${show(v)}` };
    case 'url':
      return isUrl(v) ? { ok: v } : { code: 'PARSE_INVALID_FORMAT', message: `is not an http(s) URL or domain: ${show(v)}` };
    case 'phone': {
      if (!phone) throw new Error('phone library not loaded'); // the callers load it first (needsPhone)
      const r = checkPhone(phone, v, phoneRules(col.properties));
      return 'ok' in r ? r : { code: 'PARSE_INVALID_FORMAT', message: `${r.error}: ${show(v)}` };
    }
    case 'enum':
      return col.options?.includes(v) ? { ok: v } : { code: 'INVALID_OPTION', message: `has no option ${show(v)}`, meta: (col.options ?? []).join(', ') };
    default:
      return { ok: v };
  }
}

function isUrl(v: string): boolean {
  if (/\s/.test(v) || v.length > 2048) return false;
  try {
    const u = new URL(/^[a-z][a-z0-9+.-]*:/i.test(v) ? v : `https://${v}`);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.includes('.');
  } catch {
    return false;
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** PostgreSQL text cannot hold NUL, and a lone UTF-16 surrogate would be stored as U+FFFD, not verbatim. */
function unstorable(s: string): string | null {
  if (s.includes('\u0000')) return 'contains a NUL character, which cannot be stored';
  if (LONE_SURROGATE.test(s)) return 'contains an unpaired UTF-16 surrogate, which cannot be stored';
  return null;
}

/** Deepest nesting of a json value a record may store (and of any value a write echoes back). */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether `v` nests arrays or objects more than `max` levels deep. Walks with a stack of its
 * own and stops at the first path too deep: a value nested 100,000 deep costs `max` steps down it.
 */
export function nestedDeeperThan(v: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[v, 0]];
  while (stack.length > 0) {
    const [x, depth] = stack.pop()!;
    if (typeof x !== 'object' || x === null) continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(x) ? x : Object.values(x)) stack.push([child, depth + 1]);
  }
  return false;
}

/** Why a json value cannot be stored, or null. Recursive, but it checks the depth before each level, so never more than MAX_JSON_DEPTH + 1 calls deep. */
function unstorableJson(v: unknown, depth: number): string | null {
  if (depth > MAX_JSON_DEPTH) return `is nested more than ${MAX_JSON_DEPTH} levels deep`;
  if (v === null) return null;
  if (typeof v === 'string') return unstorable(v);
  if (typeof v === 'number') return Number.isFinite(v) ? null : 'holds a number JSON cannot represent';
  if (Array.isArray(v)) {
    for (const x of v) { const bad = unstorableJson(x, depth + 1); if (bad) return bad; }
    return null;
  }
  if (typeof v === 'object' && v !== null) {
    for (const [k, x] of Object.entries(v)) { const bad = unstorable(k) ?? unstorableJson(x, depth + 1); if (bad) return bad; }
    return null;
  }
  return typeof v === 'boolean' ? null : 'is not a JSON value';
}

function mismatch(v: unknown, expected: string): Converted {
  return { code: 'TYPE_MISMATCH', message: `must be ${expected}, not ${kindOf(v)}` };
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return 'a string';
  return `${typeof v === 'number' ? 'the number' : typeof v === 'boolean' ? 'the boolean' : typeof v} ${String(v)}`;
}

function show(v: string): string {
  return JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v);
}
