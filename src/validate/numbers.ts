/**
 * How a number literal reaches PostgreSQL, and which literals cannot. PostgreSQL types an
 * integer literal as int8 when it fits and numeric beyond; a literal with a point or an
 * exponent is numeric. Parameters follow the same typing, and carry the literal's own text
 * whenever a JavaScript number would round it (above 2^53), so the database sees the exact
 * value. A literal beyond double precision (1e400, or 1e-400, which is not zero) is refused:
 * no row could carry it back as a number, and silently rounding it is how it went wrong.
 */

export const INT8_MAX = 9223372036854775807n;

export type NumberLiteral =
  | { readonly ok: true; readonly value: number | string; readonly pgType: 'int8' | 'numeric' }
  | { readonly ok: false; readonly problem: string; readonly hint: string };

const INTEGER = /^\d+$/;

export function numberLiteral(text: string): NumberLiteral {
  const n = Number(text);
  if (!Number.isFinite(n)) {
    return { ok: false, problem: `the number ${shorten(text)} is beyond double precision (about 1.8e308)`, hint: 'write a number of at most 1e308 in size' };
  }
  if (INTEGER.test(text)) {
    if (Number.isSafeInteger(n)) return { ok: true, value: n, pgType: 'int8' };
    const exact = BigInt(text).toString();
    return { ok: true, value: exact, pgType: BigInt(exact) <= INT8_MAX ? 'int8' : 'numeric' };
  }
  if (n === 0 && /[1-9]/.test(text.replace(/[eE].*$/, ''))) {
    return { ok: false, problem: `the number ${shorten(text)} is too small for double precision and would become 0`, hint: 'write 0, or a number of at least 1e-307 in size' };
  }
  return { ok: true, value: text, pgType: 'numeric' };
}

/** Whether an OFFSET (a whole number) fits the bigint PostgreSQL takes there. */
export function offsetFits(text: string): boolean {
  return BigInt(text) <= INT8_MAX;
}

function shorten(s: string): string {
  return s.length > 40 ? `${s.slice(0, 20)}...${s.slice(-10)}` : s;
}
