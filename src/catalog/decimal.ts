/**
 * The text form of a number column's value, one rule for every path that reads one: the record
 * filter and connector (`numberOf` in filter/values.ts) and the record write path (records/values.ts).
 *
 * A decimal is optional whitespace, an optional sign, digits with an optional point (`12`, `12.`,
 * `12.5`, `.5`), an optional exponent (`e3`, `E-3`), optional whitespace. Hexadecimal, `Infinity`,
 * `NaN`, `1_000`, `1,5` and the empty string are not decimals. "Whitespace" is what
 * `String.prototype.trim` strips (the regular expression class `\s`).
 *
 * Read by one forward scan, never a regular expression: the expression this replaces,
 * `^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$`, backtracks quadratically over a long run of
 * digits that ends in a bad character (10,000 characters took 300 ms, 50,000 took 7 s).
 */

/** Longest text read as a decimal; longer ones are refused before a character is looked at. */
export const MAX_DECIMAL_LENGTH = 10_000;

/**
 * The number `text` spells as a decimal, or null when it is not one or is longer than
 * MAX_DECIMAL_LENGTH. Out-of-range values come back as they would from `Number` (`1e999` is
 * Infinity, `1e-999` is 0): the caller says whether a non-finite number is acceptable.
 */
export function decimalOf(text: string): number | null {
  const n = text.length;
  if (n > MAX_DECIMAL_LENGTH) return null;
  let start = 0;
  while (start < n && isSpace(text.charCodeAt(start))) start++;
  let end = n;
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
  let i = start;
  let c = text.charCodeAt(i);
  if (i < end && (c === PLUS || c === MINUS)) c = text.charCodeAt(++i);
  let whole = 0;
  while (i < end && isDigit(c)) (c = text.charCodeAt(++i)), whole++;
  let fraction = 0;
  if (i < end && c === POINT) {
    c = text.charCodeAt(++i);
    while (i < end && isDigit(c)) (c = text.charCodeAt(++i)), fraction++;
  }
  if (whole === 0 && fraction === 0) return null;
  if (i < end && (c === LOWER_E || c === UPPER_E)) {
    c = text.charCodeAt(++i);
    if (i < end && (c === PLUS || c === MINUS)) c = text.charCodeAt(++i);
    let exponent = 0;
    while (i < end && isDigit(c)) (c = text.charCodeAt(++i)), exponent++;
    if (exponent === 0) return null;
  }
  if (i !== end) return null;
  // What remains is a StrDecimalLiteral, which Number reads exactly as the old path did.
  return Number(text.slice(start, end));
}

const PLUS = 0x2b;
const MINUS = 0x2d;
const POINT = 0x2e;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** WhiteSpace and LineTerminator of ECMAScript: what `trim()` strips and `\s` matches. */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}
