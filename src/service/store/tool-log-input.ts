/**
 * The arguments of a tool call as the tool log can keep them: jsonb (and text) refuse a NUL and a
 * lone surrogate, and an entry has a size cap. Whatever a call was given, its entry can be written:
 *
 * - a NUL or a lone surrogate, in a value or a key, is written as the six characters of its JSON
 *   escape (`\u0000`, `\ud800`), as text;
 * - nesting past MAX_DEPTH is written as a note in its place;
 * - when the JSON is over `maxBytes`, the longest strings are cut to one common length, the
 *   longest that fits (the others are kept whole); when even that cannot fit (the structure alone
 *   is too big, or it has more than MAX_NODES values), the entry is `{ "input_prefix": … }`, the
 *   beginning of the JSON text.
 *
 * The work is bounded by the cap and MAX_NODES, not by the size of the arguments: a tool call is
 * written on the event loop every tenant shares.
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

/** Nodes (values, keys) the cutting walk visits at most: past it, the entry is the JSON text's beginning. */
const MAX_NODES = 20_000;

class TooManyNodes extends Error {}

/**
 * A copy holding storable strings only, cut at MAX_DEPTH (`cut.at` is then set); throws
 * TooManyNodes past MAX_NODES, so an argument of a million small values costs no more than that.
 */
function escaped(value: unknown, depth: number, cut: { at: boolean; nodes: number; maxChars: number }, strings: string[]): unknown {
  if (++cut.nodes > MAX_NODES) throw new TooManyNodes();
  if (typeof value === 'string') {
    // No more of a string than the entry's bytes can be kept: the rest is never escaped or measured.
    if (value.length > cut.maxChars) cut.at = true;
    const s = storableText(value.length > cut.maxChars ? value.slice(0, cut.maxChars) : value);
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
  for (const k in value) {
    if (!Object.prototype.hasOwnProperty.call(value, k)) continue;
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined || typeof v === 'function') continue;
    if (++cut.nodes > MAX_NODES) throw new TooManyNodes();
    out[storableText(k)] = escaped(v, depth + 1, cut, strings);
  }
  return out;
}

/**
 * The beginning of the JSON of `value`, escaped as `escaped` does, written only until it is past
 * `maxChars`: an argument of a million values costs the beginning, not the whole.
 */
function jsonBeginning(value: unknown, maxChars: number): string {
  const parts: string[] = [];
  let length = 0;
  const full = new Error('full');
  const put = (text: string): void => {
    parts.push(text);
    length += text.length;
    if (length > maxChars) throw full;
  };
  const text = (s: string): string => JSON.stringify(storableText(s.length > maxChars ? s.slice(0, maxChars) : s));
  const write = (v: unknown, depth: number): void => {
    if (typeof v === 'string') return put(text(v));
    if (v === null || typeof v !== 'object') return put(JSON.stringify(typeof v === 'number' && !Number.isFinite(v) ? null : v) ?? 'null');
    if (depth >= MAX_DEPTH) return put(text(`[nested deeper than ${MAX_DEPTH} levels]`));
    if (Array.isArray(v)) {
      put('[');
      v.forEach((x, i) => {
        if (i > 0) put(',');
        write(x, depth + 1);
      });
      return put(']');
    }
    put('{');
    let first = true;
    for (const k in v) {
      if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
      const x = (v as Record<string, unknown>)[k];
      if (x === undefined || typeof x === 'function') continue;
      put(`${first ? '' : ','}${text(k)}:`);
      first = false;
      write(x, depth + 1);
    }
    return put('}');
  };
  try {
    write(value, 0);
  } catch (e) {
    if (e !== full) throw e;
  }
  return parts.join('');
}

function prefixEntry(json: string, maxBytes: number): StorableInput {
  const room = Math.max(0, maxBytes - bytes('{"input_prefix":""}'));
  return { json: JSON.stringify({ input_prefix: cutTo(json, room) }), truncated: true };
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
  const given = input === undefined ? {} : input;
  const cut = { at: false, nodes: 0, maxChars: maxBytes };
  const strings: string[] = [];
  let value: unknown;
  try {
    value = escaped(given, 0, cut, strings);
  } catch (e) {
    if (!(e instanceof TooManyNodes)) throw e;
    return prefixEntry(jsonBeginning(given, maxBytes), maxBytes);
  }
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
  return prefixEntry(whole, maxBytes);
}

export interface StorableResponse {
  /** The text to store, at most `maxBytes` bytes of UTF-8. */
  readonly text: string;
  readonly truncated: boolean;
}

/**
 * What a tool answered, as the log can keep it: a NUL or a lone surrogate written as its escape
 * (text refuses them, as jsonb does), and past `maxBytes` of UTF-8 the longest beginning that
 * fits, cut between characters of the answer (never inside a surrogate pair or an escape). The
 * work is bounded by the cap, not by the answer's length.
 */
export function storableResponse(answer: string, maxBytes: number): StorableResponse {
  const fits = (n: number): boolean => bytes(storableText(answer.slice(0, n))) <= maxBytes;
  // Each character takes at least one byte: nothing past `maxBytes` characters can be kept.
  if (answer.length <= maxBytes && fits(answer.length)) return { text: storableText(answer), truncated: false };
  let lo = 0;
  let hi = Math.min(answer.length, maxBytes);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  const last = answer.charCodeAt(lo - 1);
  const next = answer.charCodeAt(lo);
  if (last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) lo--;
  return { text: storableText(answer.slice(0, lo)), truncated: true };
}
