import { columnSqlType } from '../catalog/ddl.js';
import type { LogicalType } from '../catalog/types.js';
import type { DiagnosticBag } from '../diagnostics/diagnostic.js';
import type { BExpr, ValueType } from './bound.js';
import { unifyNulls } from './nulls.js';

export function columnValueType(t: LogicalType): ValueType {
  switch (t) {
    case 'number':
    case 'integer':
    case 'currency':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'date':
    case 'datetime':
      return 'epoch';
    case 'multiselect':
      return 'multiselect';
    case 'json':
      return 'json';
    default:
      return 'text';
  }
}

export function isNumeric(t: ValueType): boolean {
  return t === 'number' || t === 'epoch';
}

/**
 * Values compared, combined in arithmetic or chosen among (CASE, coalesce, if): when one of them
 * is numeric in PostgreSQL, a whole number among them binds as numeric too. Sent as int8, it
 * would be compared or combined through `$n::numeric`, a cast PostgreSQL makes again for every
 * row a generic plan reads (a named statement's, after its first runs), where the value is the
 * same either way.
 */
export function unifyNumbers(exprs: readonly BExpr[]): BExpr[] {
  if (!exprs.some(isNumericInPostgres)) return [...exprs];
  return exprs.map((e) => (e.kind === 'Value' && e.pgType === 'int8' ? { ...e, pgType: 'numeric' } : e));
}

/**
 * Values compared with each other (a comparison, BETWEEN, IN, CASE x WHEN): an untyped NULL takes
 * the others' type (`unifyNulls`), then a whole number beside a numeric value binds as numeric.
 */
export function unifyCompared(exprs: readonly BExpr[]): BExpr[] {
  return unifyNumbers(unifyNulls(exprs));
}

/**
 * A column stored as numeric (number, integer, currency), arithmetic with one, round() (written
 * over numeric), or a sum, abs, min, max, CASE, coalesce or if() of one.
 */
function isNumericInPostgres(e: BExpr): boolean {
  switch (e.kind) {
    case 'Column':
      return columnSqlType(e.logical) === 'numeric';
    case 'Binary':
      return e.type === 'number' && (isNumericInPostgres(e.left) || isNumericInPostgres(e.right));
    case 'Unary':
      return e.op === '-' && isNumericInPostgres(e.operand);
    case 'Case':
      return e.whens.some((w) => isNumericInPostgres(w.then)) || (e.else !== null && isNumericInPostgres(e.else));
    case 'Call':
      switch (e.fn) {
        case 'round':
          return true;
        case 'sum':
        case 'abs':
        case 'min':
        case 'max':
        case 'coalesce':
        case 'if':
          return e.args.some(isNumericInPostgres);
        default:
          return false;
      }
    default:
      return false;
  }
}

type Family = 'text' | 'number' | 'boolean' | 'time' | 'array' | 'json' | 'any';

function family(t: ValueType): Family {
  switch (t) {
    case 'number':
    case 'epoch':
      return 'number';
    case 'timestamp':
    case 'timestamptz':
    case 'calendar_date':
      return 'time';
    case 'multiselect':
    case 'text[]':
      return 'array';
    case 'null':
      return 'any';
    default:
      return t;
  }
}

/** Why two values cannot be compared, or undefined when they can. */
export function compareTypes(a: ValueType, b: ValueType): string | undefined {
  const fa = family(a);
  const fb = family(b);
  if (fa === 'any' || fb === 'any' || fa === fb) return undefined;
  if ((fa === 'time' && fb === 'number') || (fa === 'number' && fb === 'time')) {
    return "convert one side: epoch milliseconds are date_part('epoch', <timestamp>)*1000";
  }
  if (fa === 'text' && fb === 'number') return 'quote the number to compare text, or compare with a number column';
  if (fa === 'number' && fb === 'text') return 'write the number without quotes';
  if (fa === 'boolean' || fb === 'boolean') return 'booleans compare with 1, 0, TRUE or FALSE';
  return 'compare values of the same type';
}

/** The type of CASE / coalesce / if results; mixing text and numbers is an error as in PostgreSQL. */
export function commonType(exprs: readonly BExpr[], bag: DiagnosticBag, show: (e: BExpr) => string): ValueType {
  let type: ValueType = 'null';
  let first: BExpr | undefined;
  for (const e of exprs) {
    if (e.type === 'null') continue;
    if (type === 'null') {
      type = e.type;
      first = e;
      continue;
    }
    if (compareTypes(type, e.type)) {
      bag.error('TYPE_MISMATCH', e.span, `'${show(e)}' is a ${describe(e.type)} but '${show(first!)}' is a ${describe(type)}; all results must have one type`, 'make every branch the same type');
    } else if (type === 'epoch' && e.type === 'number') type = 'number';
  }
  return type;
}

export function describe(t: ValueType): string {
  switch (t) {
    case 'epoch':
      return 'date (epoch milliseconds)';
    case 'timestamptz':
      return 'timestamp with time zone';
    case 'text[]':
      return 'array';
    case 'null':
      return 'NULL';
    default:
      return t;
  }
}
