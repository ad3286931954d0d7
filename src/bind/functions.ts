import type { DiagnosticBag, Fix } from '../diagnostics/diagnostic.js';
import type * as A from '../syntax/ast.js';
import { FUNCTIONS } from '../validate/functions.js';
import type * as B from './bound.js';
import { exampleCondition, type Examples } from '../syntax/examples.js';
import { typeNull } from './nulls.js';
import { commonType, describe, isNumeric } from './types.js';

/** round(numeric, int4): larger digits would fail in PostgreSQL, not here. */
const INT4_MAX = 2_147_483_647;
const TIME = new Set<B.ValueType>(['timestamp', 'timestamptz', 'calendar_date', 'null']);
const DATE_PART_FIELDS = new Set([
  'epoch', 'year', 'quarter', 'month', 'week', 'day', 'dow', 'isodow', 'doy', 'hour', 'minute', 'second',
  'milliseconds', 'microseconds', 'decade', 'century', 'millennium', 'isoyear', 'julian', 'timezone', 'timezone_hour', 'timezone_minute',
]);
const DATE_TRUNC_FIELDS = new Set(['microseconds', 'milliseconds', 'second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year', 'decade', 'century', 'millennium']);

/**
 * Types a whitelisted function call. Arity and the whitelist itself were checked by the
 * validator; calls it rejected bind to NULL so binding can go on and report more.
 */
export function bindCall(e: A.Call, bindArg: (a: A.Expr) => B.BExpr, bag: DiagnosticBag, zone: () => string, examples: () => Examples): B.BExpr {
  const spec = FUNCTIONS.get(e.name.name);
  const star = e.args.length === 1 && e.args[0]!.kind === 'Star';
  if (!spec || e.args.length < spec.minArgs || e.args.length > spec.maxArgs || (star && spec.name !== 'count')) {
    for (const a of e.args) if (a.kind !== 'Star') bindArg(a);
    return { kind: 'Null', type: 'null', span: e.span };
  }
  const fn = spec.name as B.FunctionName;
  const args: B.BExpr[] = star ? [] : e.args.map(bindArg);
  /** An untyped NULL argument takes the type the function needs there (see typeNull). */
  const needs = (i: number, type: B.ValueType): void => {
    if (args[i]) args[i] = typeNull(args[i]!, type);
  };
  const show = (x: { span: A.Expr['span'] }): string => bag.source.slice(x.span.start, x.span.end);
  const expect = (arg: B.BExpr | undefined, ok: (t: B.ValueType) => boolean, what: string, hint?: string, fix?: Fix): void => {
    if (arg && !ok(arg.type) && arg.type !== 'null') {
      bag.error('TYPE_MISMATCH', arg.span, `${fn}() needs ${what}, but '${show(arg)}' is a ${describe(arg.type)}`, hint, fix);
    }
  };
  // An epoch column where a timestamp is needed: the timestamp of its instant in the hint zone.
  const asTimestamp = (arg: B.BExpr | undefined): Fix | undefined =>
    arg?.type === 'epoch' ? { range: [arg.span.start, arg.span.end], text: `to_timestamp(${show(arg)} / 1000) AT TIME ZONE '${zone()}'` } : undefined;
  const call = (type: B.ValueType, bound: readonly B.BExpr[] = args): B.BCall => ({ kind: 'Call', fn, args: bound, distinct: e.distinct, star, type, span: e.span });

  switch (fn) {
    case 'count':
      return call('number');
    case 'sum':
    case 'avg':
      needs(0, 'number');
      expect(args[0], isNumeric, 'a number');
      return call('number');
    case 'min':
    case 'max':
      expect(
        args[0],
        (t) => t !== 'multiselect' && t !== 'text[]' && t !== 'json' && t !== 'boolean',
        'a number, text or date',
        args[0]?.type === 'boolean' ? `count the true ones instead: COUNT(CASE WHEN ${show(args[0])} THEN 1 END)` : undefined,
      );
      return call(args[0]!.type);
    case 'lower':
    case 'upper':
    case 'trim':
      needs(0, 'text');
      expect(args[0], (t) => t === 'text', 'text');
      return call('text');
    case 'left': {
      needs(0, 'text');
      expect(args[0], (t) => t === 'text', 'text');
      const length = args[1];
      if (length && !(length.kind === 'Value' && typeof length.value === 'number' && Number.isInteger(length.value) && length.value >= 0 && length.value <= INT4_MAX)) {
        bag.error('INVALID_ARGUMENT', length.span, `the length of left() must be a whole number from 0 to ${INT4_MAX}`, `write left(${args[0] ? show(args[0]) : 'name'}, 100)`);
      }
      // left(text, int): the length parameter must be int4 for PostgreSQL to find the function.
      return call('text', length?.kind === 'Value' ? [args[0]!, { ...length, pgType: 'int4' as const }] : args);
    }
    case 'concat':
      return call('text');
    case 'abs':
      needs(0, 'number');
      expect(args[0], isNumeric, 'a number');
      return call('number');
    case 'round': {
      needs(0, 'number');
      expect(args[0], isNumeric, 'a number');
      const digits = args[1];
      if (digits && !(digits.kind === 'Value' && typeof digits.value === 'number' && Number.isInteger(digits.value) && Math.abs(digits.value) <= INT4_MAX)) {
        bag.error('INVALID_ARGUMENT', digits.span, `the digits of round() must be a whole number of at most ${INT4_MAX} in size`, 'write round(x, 2)');
      }
      // round(numeric, int): the digits parameter must be int4 for PostgreSQL to find the function.
      const bound = digits?.kind === 'Value' ? [args[0]!, { ...digits, pgType: 'int4' as const }] : args;
      return call('number', bound);
    }
    case 'coalesce': {
      const type = commonType(args, bag, show);
      return call(type, args.map((a) => typeNull(a, type)));
    }
    case 'date_trunc': {
      fieldArg(args[0], DATE_TRUNC_FIELDS, 'date_trunc', bag);
      // With a zone, date_trunc takes an instant (timestamptz); without, a local timestamp.
      needs(1, args[2] ? 'timestamptz' : 'timestamp');
      needs(2, 'text');
      expect(args[1], (t) => TIME.has(t), 'a timestamp', args[1]?.type === 'epoch' ? `convert the epoch first: ${fn}(${show(args[0]!)}, to_timestamp(${show(args[1])} / 1000) AT TIME ZONE '${zone()}')` : undefined, asTimestamp(args[1]));
      if (args[2]) {
        expect(args[2], (t) => t === 'text', 'a time zone name');
        expect(args[1], (t) => t === 'timestamptz', 'a timestamp with time zone when a zone is given');
      }
      return call(args[1]!.type === 'timestamptz' ? 'timestamptz' : args[1]!.type === 'null' ? 'timestamp' : args[1]!.type === 'calendar_date' ? 'timestamp' : args[1]!.type);
    }
    case 'to_timestamp':
      needs(0, 'number');
      expect(args[0], isNumeric, 'epoch seconds (a number)', 'write to_timestamp(field / 1000): the columns hold milliseconds');
      return call('timestamptz');
    case 'date_part':
      fieldArg(args[0], DATE_PART_FIELDS, 'date_part', bag);
      needs(1, 'timestamp');
      expect(args[1], (t) => TIME.has(t), 'a timestamp', args[1]?.type === 'epoch' ? `convert the epoch first: ${fn}(${show(args[0]!)}, to_timestamp(${show(args[1])} / 1000) AT TIME ZONE '${zone()}')` : undefined, asTimestamp(args[1]));
      return call('number');
    case 'if': {
      const cond = args[0]!;
      if (cond.type !== 'boolean' && cond.type !== 'null') {
        const ex = examples();
        bag.error('TYPE_MISMATCH', cond.span, `the first argument of if() must be a condition, but '${show(cond)}' is a ${describe(cond.type)}`, `write if(${exampleCondition(ex)}, ${ex.number ?? '1'}, 0)`);
      }
      const type = commonType(args.slice(1), bag, show);
      return call(type, [typeNull(cond, 'boolean'), typeNull(args[1]!, type), typeNull(args[2]!, type)]);
    }
    case 'now':
      return { kind: 'Now', type: 'timestamptz', span: e.span };
    default: {
      const never: never = fn;
      throw new Error(`unhandled function ${String(never)}`);
    }
  }
}

function fieldArg(arg: B.BExpr | undefined, fields: ReadonlySet<string>, fn: string, bag: DiagnosticBag): void {
  if (arg?.kind !== 'Value' || typeof arg.value !== 'string') return; // the validator reports non-literals
  if (!fields.has(arg.value.toLowerCase())) {
    bag.error('INVALID_ARGUMENT', arg.span, `'${arg.value}' is not a field ${fn}() knows`, `the fields are ${[...fields].join(', ')}`);
  }
}
