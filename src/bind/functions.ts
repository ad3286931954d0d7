import type { DiagnosticBag, Fix } from '../diagnostics/diagnostic.js';
import type * as A from '../syntax/ast.js';
import { FUNCTIONS } from '../validate/functions.js';
import type * as B from './bound.js';
import { exampleCondition, type Examples } from '../syntax/examples.js';
import { typeNull } from './nulls.js';
import { commonType, describe, isNumeric, unifyNumbers } from './types.js';

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
export function bindCall<C>(e: A.Call, binder: ArgBinder<C>, ctx: C, bag: DiagnosticBag, zone: () => string, examples: () => Examples): B.BExpr {
  const spec = FUNCTIONS.get(e.name.name);
  const star = e.args.length === 1 && e.args[0]!.kind === 'Star';
  if (!spec || e.args.length < spec.minArgs || e.args.length > spec.maxArgs || (star && spec.name !== 'count')) {
    for (const a of e.args) if (a.kind !== 'Star') binder.expr(a, ctx);
    return { kind: 'Null', type: 'null', span: e.span };
  }
  const args: B.BExpr[] = [];
  if (!star) for (const a of e.args) args.push(binder.expr(a, ctx));
  return new CallTyping(e, spec.name as B.FunctionName, star, args, bag, zone).bind(examples);
}

/** What binds a call's arguments: the binder, in the clause and scope of the call. */
export interface ArgBinder<C> {
  expr(a: A.Expr, ctx: C): B.BExpr;
}

const isMinMaxArgument = (t: B.ValueType): boolean => t !== 'multiselect' && t !== 'text[]' && t !== 'json' && t !== 'boolean';
const isText = (t: B.ValueType): boolean => t === 'text';
const isTime = (t: B.ValueType): boolean => TIME.has(t);
const isInstant = (t: B.ValueType): boolean => t === 'timestamptz';

/**
 * The typing of one call whose arguments are bound: methods rather than closures made per call,
 * which a compile of a long report made by the dozen.
 */
class CallTyping {
  constructor(
    private readonly e: A.Call,
    private readonly fn: B.FunctionName,
    private readonly star: boolean,
    private readonly args: B.BExpr[],
    private readonly bag: DiagnosticBag,
    private readonly zone: () => string,
  ) {}

  /** An untyped NULL argument takes the type the function needs there (see typeNull). */
  private needs(i: number, type: B.ValueType): void {
    if (this.args[i]) this.args[i] = typeNull(this.args[i]!, type);
  }

  private show(x: { span: A.Expr['span'] }): string {
    return this.bag.source.slice(x.span.start, x.span.end);
  }

  private expect(arg: B.BExpr | undefined, ok: (t: B.ValueType) => boolean, what: string, hint?: string, fix?: Fix): void {
    if (arg && !ok(arg.type) && arg.type !== 'null') {
      this.bag.error('TYPE_MISMATCH', arg.span, `${this.fn}() needs ${what}, but '${this.show(arg)}' is a ${describe(arg.type)}`, hint, fix);
    }
  }

  /** An epoch column where a timestamp is needed: the timestamp of its instant in the hint zone. */
  private asTimestamp(arg: B.BExpr | undefined): Fix | undefined {
    return arg?.type === 'epoch' ? { range: [arg.span.start, arg.span.end], text: `to_timestamp(${this.show(arg)} / 1000) AT TIME ZONE '${this.zone()}'` } : undefined;
  }

  /**
   * The arguments with the second, when given, a whole-number literal from `min` to INT4_MAX
   * bound as int4 (left(text, int) and round(numeric, int): PostgreSQL finds those functions only
   * with an int4 there); anything else there is an INVALID_ARGUMENT with `message` and `hint`.
   */
  private int4Second(min: number, message: string, hint: string): readonly B.BExpr[] {
    const second = this.args[1];
    if (!second) return this.args;
    const ok = second.kind === 'Value' && typeof second.value === 'number' && Number.isInteger(second.value) && second.value >= min && second.value <= INT4_MAX;
    if (!ok) this.bag.error('INVALID_ARGUMENT', second.span, message, hint);
    return second.kind === 'Value' ? [this.args[0]!, { ...second, pgType: 'int4' as const }] : this.args;
  }

  private call(type: B.ValueType, bound: readonly B.BExpr[] = this.args): B.BCall {
    return { kind: 'Call', fn: this.fn, args: bound, distinct: this.e.distinct, star: this.star, type, span: this.e.span };
  }

  bind(examples: () => Examples): B.BExpr {
    switch (this.fn) {
      case 'count':
        return this.call('number');
      case 'sum':
      case 'avg':
        this.needs(0, 'number');
        this.expect(this.args[0], isNumeric, 'a number');
        return this.call('number');
      case 'min':
      case 'max':
        this.expect(
          this.args[0],
          isMinMaxArgument,
          'a number, text or date',
          this.args[0]?.type === 'boolean' ? `count the true ones instead: COUNT(CASE WHEN ${this.show(this.args[0])} THEN 1 END)` : undefined,
        );
        return this.call(this.args[0]!.type);
      case 'lower':
      case 'upper':
      case 'trim':
        this.needs(0, 'text');
        this.expect(this.args[0], isText, 'text');
        return this.call('text');
      case 'left': {
        this.needs(0, 'text');
        this.expect(this.args[0], isText, 'text');
        return this.call('text', this.int4Second(0, `the length of left() must be a whole number from 0 to ${INT4_MAX}`,
          `write left(${this.args[0] ? this.show(this.args[0]) : 'name'}, 100)`));
      }
      case 'concat':
        return this.call('text');
      case 'abs':
        this.needs(0, 'number');
        this.expect(this.args[0], isNumeric, 'a number');
        return this.call('number');
      case 'round': {
        this.needs(0, 'number');
        this.expect(this.args[0], isNumeric, 'a number');
        return this.call('number', this.int4Second(-INT4_MAX, `the digits of round() must be a whole number of at most ${INT4_MAX} in size`, 'write round(x, 2)'));
      }
      case 'coalesce': {
        const type = commonType(this.args, this.bag, (x) => this.show(x));
        return this.call(type, unifyNumbers(this.args.map((a) => typeNull(a, type))));
      }
      case 'date_trunc': {
        fieldArg(this.args[0], DATE_TRUNC_FIELDS, 'date_trunc', this.bag);
        // With a zone, date_trunc takes an instant (timestamptz); without, a local timestamp.
        this.needs(1, this.args[2] ? 'timestamptz' : 'timestamp');
        this.needs(2, 'text');
        this.expect(this.args[1], isTime, 'a timestamp', this.args[1]?.type === 'epoch' ? `convert the epoch first: ${this.fn}(${this.show(this.args[0]!)}, to_timestamp(${this.show(this.args[1])} / 1000) AT TIME ZONE '${this.zone()}')` : undefined, this.asTimestamp(this.args[1]));
        if (this.args[2]) {
          this.expect(this.args[2], isText, 'a time zone name');
          this.expect(this.args[1], isInstant, 'a timestamp with time zone when a zone is given');
        }
        return this.call(this.args[1]!.type === 'timestamptz' ? 'timestamptz' : this.args[1]!.type === 'null' ? 'timestamp' : this.args[1]!.type === 'calendar_date' ? 'timestamp' : this.args[1]!.type);
      }
      case 'to_timestamp':
        this.needs(0, 'number');
        this.expect(this.args[0], isNumeric, 'epoch seconds (a number)', 'write to_timestamp(field / 1000): the columns hold milliseconds');
        return this.call('timestamptz');
      case 'date_part':
        fieldArg(this.args[0], DATE_PART_FIELDS, 'date_part', this.bag);
        this.needs(1, 'timestamp');
        this.expect(this.args[1], isTime, 'a timestamp', this.args[1]?.type === 'epoch' ? `convert the epoch first: ${this.fn}(${this.show(this.args[0]!)}, to_timestamp(${this.show(this.args[1])} / 1000) AT TIME ZONE '${this.zone()}')` : undefined, this.asTimestamp(this.args[1]));
        return this.call('number');
      case 'if': {
        const cond = this.args[0]!;
        if (cond.type !== 'boolean' && cond.type !== 'null') {
          const ex = examples();
          this.bag.error('TYPE_MISMATCH', cond.span, `the first argument of if() must be a condition, but '${this.show(cond)}' is a ${describe(cond.type)}`, `write if(${exampleCondition(ex)}, ${ex.number ?? '1'}, 0)`);
        }
        const type = commonType(this.args.slice(1), this.bag, (x) => this.show(x));
        return this.call(type, [typeNull(cond, 'boolean'), ...unifyNumbers([typeNull(this.args[1]!, type), typeNull(this.args[2]!, type)])]);
      }
      case 'now':
        return { kind: 'Now', type: 'timestamptz', span: this.e.span };
      default: {
        const never: never = this.fn;
        throw new Error(`unhandled function ${String(never)}`);
      }
    }
  }
}

function fieldArg(arg: B.BExpr | undefined, fields: ReadonlySet<string>, fn: string, bag: DiagnosticBag): void {
  if (arg?.kind !== 'Value' || typeof arg.value !== 'string') return; // the validator reports non-literals
  if (!fields.has(arg.value.toLowerCase())) {
    bag.error('INVALID_ARGUMENT', arg.span, `'${arg.value}' is not a field ${fn}() knows`, `the fields are ${[...fields].join(', ')}`);
  }
}
