import { outputName } from '../emit/output-names.js';

/**
 * Decoding result values. Two layers:
 *
 * 1. Driver parsers by Postgres type OID (`TEXT_PARSERS`), handed to node-postgres and PGlite per
 *    query: int8 and numeric become numbers (epoch milliseconds, counts, sums) — or strings
 *    when no JSON number holds them exactly (`parseNumber`) — and every
 *    date/time type stays the text Postgres wrote. The session runs with TimeZone UTC and
 *    DateStyle ISO, so that text is `2024-05-01` (date), `2024-05-01 00:00:00` (timestamp) and
 *    `2024-05-01 00:00:00+00` (timestamptz), whatever the host's time zone. The drivers' default
 *    would build JS Dates in the host's local zone.
 * 2. `decodeValue` by the output column's type, for drivers we could not hand parsers to: it
 *    turns numeric strings into numbers, parses array literals and formats Dates.
 *
 * Decoding is by OID first because the output type alone is ambiguous: `date` is both the
 * logical type of a date column (a bigint epoch) and the type of a `::date` cast (a Postgres date).
 */

const OID = {
  int8: 20,
  numeric: 1700,
  date: 1082,
  time: 1083,
  timestamp: 1114,
  timestamptz: 1184,
  interval: 1186,
  timetz: 1266,
} as const;

const raw = (text: string): string => text;

/**
 * int8 and numeric text → a number when a JSON number holds it exactly, else the text itself:
 * integers beyond ±(2^53 − 1), decimals whose digits a double does not keep
 * (`0.1000000000000000055511151231257827`), and NaN and ±Infinity, which JSON has no number for.
 * A client gets `"9007199254740993"`, never 9007199254740992.
 */
export function parseNumber(text: string): number | string {
  const n = Number(text);
  // Fifteen significant digits or fewer always survive a double; nearly every value is that short.
  if (text.length <= 15) return Number.isFinite(n) ? n : text;
  if (!Number.isFinite(n) || (Number.isInteger(n) && !Number.isSafeInteger(n))) return text;
  // The shortest text of the double: equal for canonical text, else compared digit for digit
  // (`100.000000000000000` is still 100).
  const shortest = String(n);
  return shortest === text || sameDecimal(text, shortest) ? n : text;
}

/** Whether two decimal texts (digits, one point, an optional exponent) name the same number. */
function sameDecimal(a: string, b: string): boolean {
  const x = decimalParts(a);
  const y = decimalParts(b);
  return x !== null && y !== null && x.negative === y.negative && x.digits === y.digits && x.exponent === y.exponent;
}

/** `-0012.3400` → { negative, digits: '1234', exponent: -2 }; zero is { false, '', 0 }. */
function decimalParts(text: string): { negative: boolean; digits: string; exponent: number } | null {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(text);
  if (!m) return null;
  const fraction = m[3] ?? '';
  let digits = (m[2]! + fraction).replace(/^0+/, '');
  let exponent = Number(m[4] ?? 0) - fraction.length;
  const trimmed = digits.replace(/0+$/, '');
  exponent += digits.length - trimmed.length;
  digits = trimmed;
  return digits === '' ? { negative: false, digits: '', exponent: 0 } : { negative: m[1] === '-', digits, exponent };
}

export const TEXT_PARSERS: Readonly<Record<number, (text: string) => unknown>> = Object.freeze({
  [OID.int8]: parseNumber,
  [OID.numeric]: parseNumber,
  [OID.date]: raw,
  [OID.time]: raw,
  [OID.timestamp]: raw,
  [OID.timestamptz]: raw,
  [OID.interval]: raw,
  [OID.timetz]: raw,
});

type PgTypeParser = (oid: number, format?: string) => unknown;

/**
 * The per-query `types` option of node-postgres: our parsers first, then the connection's own
 * (so json, arrays and booleans keep their usual parsing). No `pg` import: the library does not
 * depend on the driver.
 */
export function pgTypes(fallback: PgTypeParser | undefined): { getTypeParser: PgTypeParser } {
  return {
    getTypeParser(oid: number, format?: string) {
      const own = TEXT_PARSERS[oid];
      if (own && format !== 'binary') return own;
      return fallback ? fallback(oid, format) : raw;
    },
  };
}

const NUMERIC_TYPES = new Set(['number', 'integer', 'currency', 'epoch', 'date', 'datetime']);
const ARRAY_TYPES = new Set(['multiselect', 'text[]']);

/**
 * A numeric string or bigint as `parseNumber` gives it (a number when exact, else the digits);
 * any other text is left alone.
 */
function numberOrSelf(value: string | bigint): number | string {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : String(value);
  return NUMBER_TEXT.test(value) ? parseNumber(value) : value;
}

const NUMBER_TEXT = /^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?|NaN|Infinity)$/i;

/** One result value, by the output column's type. */
export function decodeValue(value: unknown, type: string): unknown {
  if (value === null || value === undefined) return null;
  if (ARRAY_TYPES.has(type)) return typeof value === 'string' ? parseTextArray(value) : value;
  if (NUMERIC_TYPES.has(type)) return typeof value === 'string' || typeof value === 'bigint' ? numberOrSelf(value) : value;
  switch (type) {
    case 'calendar_date':
      return value instanceof Date ? formatDate(value) : value;
    case 'timestamp':
      return value instanceof Date ? formatLocal(value) : value;
    case 'timestamptz':
      return value instanceof Date ? `${formatUtc(value)}+00` : value;
    case 'boolean':
      if (value === 't') return true;
      if (value === 'f') return false;
      return value;
    case 'json':
      // node-postgres and PGlite hand json and jsonb over parsed: a string here is a JSON string
      // value, "0" or "{}" as the record holds it, not a document to parse again.
      return value;
    default:
      return typeof value === 'bigint' ? numberOrSelf(value) : value;
  }
}

/**
 * What decoding needs of an output column: its key and its logical type. The front ends' columns
 * (`OutputColumn` of compile.ts) have this shape; run/ names it here so that it imports no front end.
 */
export interface DecodedColumn {
  readonly key: string;
  readonly type: string;
}

/**
 * Sets a field of a record made here or from a row: any key is an ordinary field, `__proto__`
 * included, which is defined, since assigned it would set the object's prototype. Every other key
 * is assigned: defined, each key would cost the record V8's fast properties (a page of 50 records
 * built and written as JSON took 192 us with every key defined, 70 us assigned).
 */
export function put(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** Result rows (keyed c0, c1, …) → records keyed by the output keys, in select-list order. */
export function decodeRows(rows: readonly Record<string, unknown>[], columns: readonly DecodedColumn[]): Record<string, unknown>[] {
  const names = columns.map((_, i) => outputName(i));
  return rows.map((row) => {
    const record: Record<string, unknown> = {};
    columns.forEach((col, i) => {
      // An alias may be any identifier, __proto__ included.
      put(record, col.key, decodeValue(row[names[i]!], col.type));
    });
    return record;
  });
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
/** As Postgres writes it: `.5`, `.042`, nothing for whole seconds. */
const fraction = (ms: number): string => (ms ? `.${pad(ms, 3).replace(/0+$/, '')}` : '');

/** A driver that parsed a zone-less timestamp made a local Date: its local fields are the text. */
function formatLocal(d: Date): string {
  const ms = d.getMilliseconds();
  return `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}${fraction(ms)}`;
}

/**
 * Drivers disagree on a date's Date: node-postgres makes local midnight, PGlite (`new Date('2024-05-01')`)
 * UTC midnight. Whichever of the two is a midnight names the day.
 */
function formatDate(d: Date): string {
  const utcMidnight = d.getUTCHours() === 0 && d.getUTCMinutes() === 0 && d.getUTCSeconds() === 0 && d.getUTCMilliseconds() === 0;
  return (utcMidnight ? formatUtc(d) : formatLocal(d)).slice(0, 10);
}

function formatUtc(d: Date): string {
  const ms = d.getUTCMilliseconds();
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${fraction(ms)}`;
}

/** A one-dimensional Postgres text[] literal: `{a,"b c",NULL}`. */
export function parseTextArray(literal: string): (string | null)[] | string {
  if (!literal.startsWith('{') || !literal.endsWith('}')) return literal;
  const out: (string | null)[] = [];
  const body = literal.slice(1, -1);
  if (body === '') return out;
  let i = 0;
  while (i <= body.length) {
    if (body[i] === '"') {
      let s = '';
      i++;
      while (i < body.length && body[i] !== '"') {
        if (body[i] === '\\') i++;
        s += body[i] ?? '';
        i++;
      }
      out.push(s);
      i += 2; // closing quote and comma
    } else {
      let end = body.indexOf(',', i);
      if (end < 0) end = body.length;
      const item = body.slice(i, end);
      out.push(item === 'NULL' ? null : item);
      i = end + 1;
    }
  }
  return out;
}
