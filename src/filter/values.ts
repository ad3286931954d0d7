import type * as B from '../bind/bound.js';
import { decimalOf } from '../catalog/decimal.js';
import type { LogicalType } from '../catalog/types.js';

/** How the filter treats a logical type: which operators apply and what a value must be. */
export type Category = 'text' | 'relation' | 'enum' | 'number' | 'time' | 'boolean' | 'multiselect' | 'json' | 'virtual';

export function categoryOf(t: LogicalType): Category {
  switch (t) {
    case 'id':
    case 'text':
    case 'email':
    case 'phone':
    case 'url':
      return 'text';
    case 'relation':
      return 'relation';
    case 'enum':
      return 'enum';
    case 'number':
    case 'integer':
    case 'currency':
      return 'number';
    case 'date':
    case 'datetime':
      return 'time';
    case 'boolean':
      return 'boolean';
    case 'multiselect':
      return 'multiselect';
    case 'json':
      return 'json';
    case 'virtual':
      return 'virtual';
    default: {
      const never: never = t;
      throw new TypeError(`no filter category for ${String(never)}`);
    }
  }
}

// ---- Bound nodes. Spans are placeholders: a body has no source text to point into.

const SPAN = { start: 0, end: 0 } as const;

export function text(v: string): B.BValue {
  return { kind: 'Value', value: v, pgType: 'text', type: 'text', span: SPAN };
}
export function int8(v: number): B.BValue {
  return { kind: 'Value', value: v, pgType: 'int8', type: 'epoch', span: SPAN };
}
export function numeric(v: number): B.BValue {
  return { kind: 'Value', value: v, pgType: 'numeric', type: 'number', span: SPAN };
}
export function bool(v: boolean): B.BValue {
  return { kind: 'Value', value: v, pgType: 'boolean', type: 'boolean', span: SPAN };
}
export function textArray(v: readonly string[]): B.BValue {
  return { kind: 'Value', value: v, pgType: 'text[]', type: 'text[]', span: SPAN };
}
export function binary(op: B.BBinary['op'], left: B.BExpr, right: B.BExpr): B.BBinary {
  return { kind: 'Binary', op, left, right, type: 'boolean', span: SPAN };
}
export function isNull(operand: B.BExpr, negated = false): B.BIsNull {
  return { kind: 'IsNull', operand, negated, type: 'boolean', span: SPAN };
}
export function not(operand: B.BExpr): B.BUnary {
  return { kind: 'Unary', op: 'NOT', operand, type: 'boolean', span: SPAN };
}
export function logical(op: 'AND' | 'OR', operands: readonly B.BExpr[]): B.BExpr {
  return operands.length === 1 ? operands[0]! : { kind: 'Logical', op, operands, type: 'boolean', span: SPAN };
}
export function like(operand: B.BExpr, pattern: string, caseInsensitive: boolean, negated = false): B.BLike {
  return { kind: 'Like', operand, pattern: text(pattern), caseInsensitive, negated, type: 'boolean', span: SPAN };
}

/**
 * A LIKE pattern matching `value` literally. LIKE's default escape character is the backslash,
 * so `\`, `_` and (unless kept as the wildcard) `%` are escaped with it; no ESCAPE clause needed.
 */
export function escapeLike(value: string, keepPercent: boolean): string {
  // One pass that copies the runs between escapes: a replace() callback per match cost three
  // times as much on a search of 5,000 characters that are all `%` and `_`.
  let out = '';
  let from = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === BACKSLASH || c === UNDERSCORE || (c === PERCENT && !keepPercent)) {
      out += `${value.slice(from, i)}\\`;
      from = i;
    }
  }
  return out === '' ? value : out + value.slice(from);
}

const BACKSLASH = 0x5c;
const UNDERSCORE = 0x5f;
const PERCENT = 0x25;

// ---- Values of a body.

/** Epoch milliseconds from a number or an ISO 8601 date or date-time; null when neither. */
export function epochOf(v: unknown): number | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : null;
  if (typeof v !== 'string') return null;
  const m = ISO.exec(v.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  // A date-time without a zone is taken as UTC: the store holds UTC epochs, and a host's
  // local zone must not change what a filter means.
  let ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0), Math.round(Number(`0.${frac ?? '0'}`) * 1000));
  const check = new Date(ms);
  if (check.getUTCFullYear() !== Number(y) || check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d)) return null;
  if (Number(h ?? 0) > 23 || Number(mi ?? 0) > 59 || Number(s ?? 0) > 59) return null;
  if (zone && zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const [zh, zm] = zone.slice(1).split(':').map(Number) as [number, number];
    if (zh > 23 || zm > 59) return null;
    ms -= sign * (zh * 60 + zm) * 60_000;
  }
  return Number.isSafeInteger(ms) ? ms : null;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:\d{2})?)?$/;

/** A finite number from a number or a decimal string (catalog/decimal.ts, shared with record writes). */
export function numberOf(v: unknown): number | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' ? decimalOf(v) : null;
  return n !== null && Number.isFinite(n) ? n : null;
}

export function booleanOf(v: unknown): boolean | null {
  if (v === true || v === 1) return true;
  if (v === false || v === 0) return false;
  return null;
}
