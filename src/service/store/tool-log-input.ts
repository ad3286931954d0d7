/**
 * The arguments of a tool call as the tool log can keep them: jsonb (and text) refuse a NUL and a
 * lone surrogate, and an entry has a size cap. Whatever a call was given, its entry can be written:
 *
 * - a NUL or a lone surrogate, in a value or a key, is written as the six characters of its JSON
 *   escape (`\u0000`, `\ud800`), as text;
 * - nesting past MAX_DEPTH is written as a note in its place;
 * - when the JSON is over `maxBytes`, the longest strings are cut to one common length, the
 *   longest that fits (the others are kept whole); when even that cannot fit (the structure alone
 *   is too big), the entry is `{ "input_prefix": … }`, the beginning of the JSON text.
 *
 * `truncated` says whether anything was cut, so the listing can say the entry is not the whole call.
 */

export interface StorableInput {
  /** The JSON text to store, at most `maxBytes` bytes of UTF-8. */
  readonly json: string;
  readonly truncated: boolean;
}

/** Deeper nesting than this is cut: no call of a tool nests that deep, and it keeps the walk small. */
export const MAX_DEPTH = 64;

const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The string with every character jsonb refuses written as its escape. */
export function storableText(s: string): string {
  UNSTORABLE.lastIndex = 0;
  if (!UNSTORABLE.test(s)) return s;
  return s.replace(UNSTORABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function bytes(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** A copy holding storable strings only, cut at MAX_DEPTH; `cut.at` is set when something was. */
function escaped(value: unknown, depth: number, cut: { at: boolean }, strings: string[]): unknown {
  if (typeof value === 'string') {
    const s = storableText(value);
    strings.push(s);
    return s;
  }
  if (value === null || typeof value !== 'object') {
    // JSON's own values; anything else (undefined, a function) is what JSON.stringify makes of it.
    return typeof value === 'number' && !Number.isFinite(value) ? null : value;
  }
  if (depth >= MAX_DEPTH) {
    cut.at = true;
    return `[nested deeper than ${MAX_DEPTH} levels]`;
  }
  if (Array.isArray(value)) return value.map((v) => escaped(v, depth + 1, cut, strings));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || typeof v === 'function') continue;
    out[storableText(k)] = escaped(v, depth + 1, cut, strings);
  }
  return out;
}

/** The longest beginning of `s` whose JSON form is at most `max` bytes, never splitting a surrogate pair. */
function cutTo(s: string, max: number): string {
  let lo = 0;
  // Each character takes at least one byte: nothing past `max` characters can fit.
  let hi = Math.min(s.length, max);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (bytes(JSON.stringify(s.slice(0, mid))) <= max) lo = mid;
    else hi = mid - 1;
  }
  const code = s.charCodeAt(lo - 1);
  return code >= 0xd800 && code <= 0xdbff ? s.slice(0, lo - 1) : s.slice(0, lo);
}

/** Every string longer (in JSON bytes) than `cap` cut to it; keys are kept. */
function cutStrings(value: unknown, cap: number): unknown {
  if (typeof value === 'string') return bytes(JSON.stringify(value)) > cap ? cutTo(value, cap) : value;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => cutStrings(v, cap));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cutStrings(v, cap)]));
}

/**
 * The largest length every string may keep so that the strings together take at most `budget`
 * bytes (water-filling: strings shorter than it stay whole). -1 when not even empty strings fit.
 */
function commonCap(sizes: number[], budget: number): number {
  const EMPTY = 2;
  if (sizes.length * EMPTY > budget) return -1;
  sizes.sort((a, b) => a - b);
  let left = budget;
  for (let i = 0; i < sizes.length; i++) {
    const share = Math.floor(left / (sizes.length - i));
    if (sizes[i]! > share) return share;
    left -= sizes[i]!;
  }
  return Number.MAX_SAFE_INTEGER;
}

export function storableInput(input: unknown, maxBytes: number): StorableInput {
  const cut = { at: false };
  const strings: string[] = [];
  const value = escaped(input === undefined ? {} : input, 0, cut, strings);
  const whole = JSON.stringify(value);
  if (bytes(whole) <= maxBytes) return { json: whole, truncated: cut.at };

  const sizes = strings.map((s) => bytes(JSON.stringify(s)));
  const structure = bytes(whole) - sizes.reduce((a, b) => a + b, 0);
  // Each try leaves more room: cutting a string may change its escapes' share of its bytes.
  for (let slack = 0; slack < 4; slack++) {
    const cap = commonCap(sizes, maxBytes - structure - slack * Math.ceil(maxBytes / 16));
    if (cap < 2) break;
    const json = JSON.stringify(cutStrings(value, cap));
    if (bytes(json) <= maxBytes) return { json, truncated: true };
  }
  const room = Math.max(0, maxBytes - bytes('{"input_prefix":""}'));
  return { json: JSON.stringify({ input_prefix: cutTo(whole, room) }), truncated: true };
}
