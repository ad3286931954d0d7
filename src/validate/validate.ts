import { hintZone, type DateComparisonOp } from '../diagnostics/dates.js';
import type { DiagnosticBag } from '../diagnostics/diagnostic.js';
import { didYouMean } from '../diagnostics/suggest.js';
import { examplesFor, type Examples, type HintSource } from '../syntax/examples.js';
import type * as A from '../syntax/ast.js';
import { forEachChild } from '../syntax/ast.js';
import { FUNCTIONS, UNSUPPORTED_FUNCTIONS } from './functions.js';
import { INT8_MAX, numberLiteral, offsetFits } from './numbers.js';

/** Dialect rules that need no schema (docs/query-language.md#rules); hints take their example names from `catalog` when given. */
export interface ValidateOptions extends HintSource {
  /** Largest accepted LIMIT. Default 10,000. */
  maxLimit?: number;
  /** Most select items accepted in one select list. Default 200. */
  maxSelectItems?: number;
  /**
   * The zone date hints are written in when the query names none with AT TIME ZONE: a date
   * string is read as that zone's wall clock. Default 'UTC'.
   */
  timeZone?: string;
}

type Limits = Required<Omit<ValidateOptions, keyof HintSource>>;

export const DEFAULT_VALIDATE_OPTIONS: Limits = { maxLimit: 10_000, maxSelectItems: 200, timeZone: 'UTC' };

type Clause = 'select' | 'where' | 'group' | 'having' | 'order';

interface Context {
  readonly clause: Clause;
  /** The aggregate call we are inside, if any. */
  readonly aggregate: A.Call | null;
}

const DATE_STRING = /^\s*\d{4}-\d{1,2}-\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?\s*$/;

/** DATE_STRING.test, the pattern run only on strings long enough and with a dash (few are). */
function isDateString(s: string): boolean {
  return s.length >= 8 && s.includes('-') && DATE_STRING.test(s);
}
const COMPARISON = new Set(['=', '<>', '!=', '<', '<=', '>', '>=']);

/**
 * Reports every dialect problem of the tree into `bag`. Returns false when a select list is over
 * its cap: the text is refused for its size, and the stages after this one, whose work the cap
 * bounds, must not run on it (the items past the cap are not looked at here either).
 */
export function validate(select: A.Select, bag: DiagnosticBag, options: ValidateOptions = {}): boolean {
  const limits: Limits = {
    maxLimit: options.maxLimit ?? DEFAULT_VALIDATE_OPTIONS.maxLimit,
    maxSelectItems: options.maxSelectItems ?? DEFAULT_VALIDATE_OPTIONS.maxSelectItems,
    timeZone: options.timeZone ?? DEFAULT_VALIDATE_OPTIONS.timeZone,
  };
  const validator = new Validator(bag, limits, options);
  validator.select(select, true);
  return !validator.overCap;
}

class Validator {
  private zoneCache: string | undefined;
  /** A select list had more items than the cap. */
  overCap = false;

  constructor(
    private readonly bag: DiagnosticBag,
    private readonly options: Limits,
    private readonly hints: HintSource,
  ) {}

  /** Example names for hints, from the catalog in hand. */
  private get examples(): Examples {
    return examplesFor(this.hints);
  }

  /** The zone hints speak in; only looked up when a hint needs it. */
  private get zone(): string {
    return (this.zoneCache ??= hintZone(this.bag.source, this.options.timeZone));
  }

  select(s: A.Select, top: boolean): void {
    // The cap bounds the work on the items: reported once, at the first item past it, and the
    // items from there on are not checked (16,000 of them would each get their diagnostics).
    const items = s.items.length > this.options.maxSelectItems ? s.items.slice(0, this.options.maxSelectItems) : s.items;
    if (items !== s.items) {
      this.overCap = true;
      this.bag.error(
        'TOO_MANY_SELECT_ITEMS',
        s.items[this.options.maxSelectItems]!.span,
        `the select list has ${s.items.length} items; the maximum is ${this.options.maxSelectItems}`,
        'split the report into several queries',
      );
    }
    let aliases: FreeAliases | undefined;
    for (const item of items) {
      this.expr(item.expr, { clause: 'select', aggregate: null });
      if (top && !item.alias && item.expr.kind !== 'Path' && item.expr.kind !== 'Star') {
        const text = this.bag.source.slice(item.expr.span.start, item.expr.span.end);
        const alias = (aliases ??= new FreeAliases(this.namesIn(s))).take(suggestAlias(item.expr));
        this.bag.error(
          'MISSING_ALIAS',
          item.expr.span,
          `the select item ${quote(text)} needs an alias`,
          `write ${shorten(text)} AS ${alias}`,
          { range: [item.expr.span.end, item.expr.span.end], text: ` AS ${alias}` },
        );
      }
    }
    this.from(s.from);
    if (s.where) this.expr(s.where, { clause: 'where', aggregate: null });
    for (const g of s.groupBy) this.expr(g, { clause: 'group', aggregate: null });
    if (s.having) this.expr(s.having, { clause: 'having', aggregate: null });
    for (const o of s.orderBy) this.expr(o.expr, { clause: 'order', aggregate: null });
    this.limit(s, top);
  }

  /**
   * The names an alias must not take: the other output keys (a second one is DUPLICATE_KEY) and
   * every name the query reads (in ORDER BY an output alias wins over a column of that name, so
   * it would change what the query orders by). With `*`, the columns of the object it expands to.
   */
  private namesIn(s: A.Select): Set<string> {
    const names = new Set<string>();
    for (const item of s.items) {
      if (item.alias) names.add(item.alias.name);
      else if (item.expr.kind === 'Path') names.add(item.expr.parts.map((p) => p.name).join('.'));
      else if (item.expr.kind === 'Star') for (const c of this.hints.catalog?.objects.get(s.from.object.name)?.columns.keys() ?? []) names.add(c);
    }
    const visit = (n: A.Node): void => {
      if (n.kind === 'Path') for (const p of n.parts) names.add(p.name);
      else forEachChild(n, visit);
    };
    visit(s);
    return names;
  }

  private from(f: A.FromItem): void {
    if (f.object.name.startsWith('pg_')) this.systemReference(f.object);
  }

  private limit(s: A.Select, top: boolean): void {
    if (!s.limit) {
      if (top) {
        const end = s.span.end;
        this.bag.error('MISSING_LIMIT', { start: end, end }, 'the query must end with a LIMIT', 'add LIMIT 100 at the end of the query', { range: [end, end], text: ' LIMIT 100' });
      }
    } else {
      const n = Number(s.limit.text);
      if (!s.limit.isInteger || n < 1) {
        this.bag.error('INVALID_LIMIT', s.limit.span, `LIMIT ${s.limit.text} is not a positive whole number`, 'write a whole number of rows, such as LIMIT 100');
      } else if (n > this.options.maxLimit) {
        this.bag.error(
          'LIMIT_TOO_LARGE',
          s.limit.span,
          `LIMIT ${s.limit.text} is larger than the maximum of ${this.options.maxLimit}`,
          `write LIMIT ${this.options.maxLimit} or less, and page with OFFSET`,
        );
      }
    }
    if (s.offset && !s.offset.isInteger) {
      this.bag.error('INVALID_LIMIT', s.offset.span, `OFFSET ${s.offset.text} is not a whole number`, 'write a whole number of rows to skip, such as OFFSET 100');
    } else if (s.offset && !offsetFits(s.offset.text)) {
      this.bag.error('NUMBER_OUT_OF_RANGE', s.offset.span, `OFFSET ${s.offset.text} is beyond the largest bigint (${INT8_MAX})`, `write an OFFSET of at most ${INT8_MAX}`);
    }
  }

  private expr(e: A.Expr, ctx: Context): void {
    this.bag.step();
    switch (e.kind) {
      case 'Call':
        this.call(e, ctx);
        return;
      case 'Exists':
      case 'Subquery':
        this.select(e.query, false);
        return;
      case 'InSubquery':
        this.expr(e.operand, ctx);
        this.select(e.query, false);
        if (ctx.clause === 'where') this.dateComparison(e.operand, null, 'in', e.span);
        return;
      case 'Binary':
        if (e.op === '=') this.anyComparison(e);
        this.expr(e.left, ctx);
        this.expr(e.right, ctx);
        if (ctx.clause === 'where' && COMPARISON.has(e.op)) this.dateComparison(e.left, e.right, e.op as DateComparisonOp, e.span);
        return;
      case 'Between':
        forEachChild(e, (c) => this.expr(c as A.Expr, ctx));
        if (ctx.clause === 'where') {
          this.dateComparison(e.operand, e.low, 'between', e.span);
          this.dateComparison(e.operand, e.high, 'between', e.span);
        }
        return;
      case 'InList':
        forEachChild(e, (c) => this.expr(c as A.Expr, ctx));
        if (ctx.clause === 'where') for (const item of e.items) this.dateComparison(e.operand, item, 'in', e.span);
        return;
      case 'Number': {
        const n = numberLiteral(e.text);
        if (!n.ok) this.bag.error('NUMBER_OUT_OF_RANGE', e.span, n.problem, n.hint);
        return;
      }
      case 'Path':
        for (const part of e.parts) if (!part.quoted && part.name.startsWith('pg_')) this.systemReference(part);
        return;
      case 'Star':
        return;
      case 'Cast':
        this.expr(e.operand, ctx);
        if (e.type !== 'date') {
          this.bag.error(
            'UNSUPPORTED_CAST',
            e.typeSpan,
            `casting to ${e.type} is not supported; the only cast is ::date`,
            e.type.startsWith('timestamp')
              ? 'to_timestamp(field / 1000) already gives a timestamp'
              : 'numbers and text need no cast; for a calendar date write to_timestamp(field / 1000)::date',
          );
        }
        return;
      case 'Extract': {
        const text = `date_part('${e.field.toLowerCase()}', ${this.timestampOf(e.source)})`;
        this.bag.error('UNSUPPORTED_EXTRACT', e.span, 'EXTRACT is not supported', `write ${text}`, { range: [e.span.start, e.span.end], text });
        this.expr(e.source, ctx);
        return;
      }
      case 'DateKeyword': {
        const zone = quoteZone(this.zone);
        const today = e.name === 'CURRENT_DATE';
        const text = today ? `date_part('epoch', date_trunc('day', NOW() AT TIME ZONE ${zone}) AT TIME ZONE ${zone})*1000` : "date_part('epoch', NOW())*1000";
        this.bag.error(
          'UNSUPPORTED_DATE_KEYWORD',
          e.span,
          `${e.name} is not supported: dates are epoch milliseconds`,
          today ? `for the start of today in ${this.zone} write ${text}` : `for the current instant in epoch milliseconds write ${text}`,
          { range: [e.span.start, e.span.end], text },
        );
        return;
      }
      default:
        forEachChild(e, (c) => this.expr(c as A.Expr, ctx));
    }
  }

  private call(e: A.Call, ctx: Context): void {
    const name = e.name.name;
    const spec = FUNCTIONS.get(name);
    if (!spec) {
      if (name.startsWith('pg_')) this.systemReference(e.name);
      else if (UNSUPPORTED_FUNCTIONS.has(name)) {
        const hint = UNSUPPORTED_FUNCTIONS.get(name)!({ examples: this.examples, zone: quoteZone(this.zone) });
        this.bag.error('UNSUPPORTED_FUNCTION', e.name.span, `${name}() is not supported`, hint);
      } else {
        this.bag.error(
          'UNKNOWN_FUNCTION',
          e.name.span,
          `unknown function ${quote(this.bag.source.slice(e.name.span.start, e.name.span.end))}`,
          didYouMean(name, FUNCTIONS.keys()) ?? `the functions are ${[...FUNCTIONS.keys()].join(', ')}`,
        );
      }
      for (const a of e.args) if (a.kind !== 'Star') this.expr(a, ctx);
      return;
    }
    const n = e.args.length;
    if (n < spec.minArgs || n > spec.maxArgs) {
      const want = spec.minArgs === spec.maxArgs ? `${spec.minArgs}` : spec.maxArgs >= 100 ? `at least ${spec.minArgs}` : `${spec.minArgs} to ${spec.maxArgs}`;
      this.bag.error(
        'WRONG_ARGUMENT_COUNT',
        e.span,
        `${name}() takes ${want} argument${want === '1' ? '' : 's'} but was given ${n}`,
        `write ${spec.signature}`,
      );
    }
    e.args.forEach((a, i) => {
      if (a.kind === 'Star' && !(name === 'count' && n === 1)) {
        this.bag.error('INVALID_ARGUMENT', a.span, `* is only accepted in count(*), not as an argument of ${name}()`, `write ${spec.signature}`);
      }
      if ((name === 'date_part' || name === 'date_trunc') && i === 0 && a.kind !== 'String') {
        this.bag.error('INVALID_ARGUMENT', a.span, `the first argument of ${name}() must be a quoted field name`, `write ${spec.signature}`);
      }
    });
    if (e.distinct && !spec.aggregate) {
      this.bag.error('INVALID_ARGUMENT', e.span, `DISTINCT is only accepted inside aggregates, not in ${name}()`, 'remove DISTINCT');
    }
    if (spec.aggregate) {
      if (ctx.aggregate) {
        this.bag.error(
          'NESTED_AGGREGATE',
          e.span,
          `the aggregate ${name}() is nested inside ${ctx.aggregate.name.name}()`,
          'aggregate once; to aggregate per group and then again, run two queries',
        );
      } else if (ctx.clause === 'where' || ctx.clause === 'group') {
        this.bag.error(
          'AGGREGATE_NOT_ALLOWED',
          e.span,
          `aggregates such as ${name}() are not allowed in ${ctx.clause === 'where' ? 'WHERE' : 'GROUP BY'}`,
          ctx.clause === 'where' ? 'filter on aggregates with HAVING after GROUP BY' : 'group by plain columns or expressions',
        );
      }
    }
    const inner: Context = spec.aggregate ? { clause: ctx.clause, aggregate: ctx.aggregate ?? e } : ctx;
    for (const a of e.args) if (a.kind !== 'Star') this.expr(a, inner);
  }

  private systemReference(id: A.Ident): void {
    this.bag.error(
      'UNSUPPORTED_SYSTEM_REFERENCE',
      id.span,
      `${quote(this.bag.source.slice(id.span.start, id.span.end))} refers to a PostgreSQL system object, which queries cannot reach`,
      'query the CRM objects by their slugs',
    );
  }

  /**
   * `'web' = ANY(sources)` is PostgreSQL's array membership; a multiselect says it with &&.
   * Reported here, where both sides are known, so the call's own UNKNOWN_FUNCTION (same code
   * and span) is not reported again with a generic hint.
   */
  private anyComparison(e: A.Binary): void {
    for (const [call, value] of [[e.right, e.left], [e.left, e.right]] as const) {
      if (call.kind !== 'Call' || call.name.name !== 'any' || call.args.length !== 1 || call.args[0]!.kind === 'Star') continue;
      const src = this.bag.source;
      const array = src.slice(call.args[0]!.span.start, call.args[0]!.span.end);
      const text = `${array} && ARRAY[${src.slice(value.span.start, value.span.end)}]`;
      this.bag.error('UNKNOWN_FUNCTION', call.name.span, '= ANY(...) is not supported: a multiselect is tested with &&', `write ${text}`, { range: [e.span.start, e.span.end], text });
      return;
    }
  }

  /** A timestamp form of an EXTRACT source: date columns hold epoch milliseconds. */
  private timestampOf(e: A.Expr): string {
    const text = this.bag.source.slice(e.span.start, e.span.end);
    if (e.kind === 'Path') return `to_timestamp(${text} / 1000) AT TIME ZONE ${quoteZone(this.zone)}`;
    return text;
  }

  /**
   * Dates are epoch milliseconds, so a to_timestamp(...) value on either side of a WHERE
   * comparison is wrong: say so with the epoch form of what the user meant, keeping the user's
   * operator and bounds. A date string compared with a date column (or with a timestamp) needs
   * the column's type, so the binder reports it (DATE_STRING_COMPARISON); here a comparison with
   * a date string is left to it.
   */
  private dateComparison(a: A.Expr, b: A.Expr | null, op: DateComparisonOp, whole: A.Expr['span']): void {
    // Both sides without an array or a closure: this runs for every comparison of every WHERE.
    if ((a.kind === 'String' && isDateString(a.value)) || (b !== null && b.kind === 'String' && isDateString(b.value))) return;
    const src = this.bag.source;
    for (let k = 0; k < 2; k++) {
      const side = k === 0 ? a : b;
      const ts = side && findToTimestamp(side);
      if (ts) {
        const other = side === a ? b : a;
        const arg = ts.args[0];
        const column = arg ? epochColumn(src, arg) : (this.examples.date ?? 'the date column');
        const seconds = arg !== undefined && arg.kind === 'Binary' && arg.op === '/' && arg.right.kind === 'Number' && arg.right.text === '1000';
        const unit = seconds ? '' : ` (note: to_timestamp takes seconds and ${column} holds milliseconds, so it would need to_timestamp(${column} / 1000))`;
        const direct = side === ts && other !== null && other.kind !== 'String' && other.kind !== 'Number' && op !== 'between' && op !== 'in';
        if (direct) {
          const [first, second] = side === a ? [ts, other] : [other, ts];
          const epochOf = (x: A.Expr): string => (x === ts ? column : `date_part('epoch', ${src.slice(x.span.start, x.span.end)})*1000`);
          const text = `${src.slice(whole.start, first.span.start)}${epochOf(first)}${src.slice(first.span.end, second.span.start)}${epochOf(second)}${src.slice(second.span.end, whole.end)}`;
          this.bag.error('TO_TIMESTAMP_COMPARISON', ts.span, `to_timestamp(...) cannot be compared in WHERE: compare epoch milliseconds instead${unit}`, `compare the column itself: ${text}`, { range: [whole.start, whole.end], text });
        } else {
          const zone = quoteZone(this.zone);
          this.bag.error(
            'TO_TIMESTAMP_COMPARISON',
            ts.span,
            `to_timestamp(...) cannot be compared in WHERE: compare epoch milliseconds instead${unit}`,
            `compare ${column} itself with epoch milliseconds, e.g. ${column} >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE ${zone}) AT TIME ZONE ${zone})*1000 for since the start of today in ${this.zone}`,
          );
        }
        return;
      }
    }
  }
}

/** A zone name as a SQL string literal. */
export function quoteZone(zone: string): string {
  return `'${zone.replace(/'/g, "''")}'`;
}

function findToTimestamp(e: A.Expr): A.Call | null {
  if (e.kind === 'Call' && e.name.name === 'to_timestamp') return e;
  // A name, a literal: no call under it (most sides of a comparison), and no closure to find so.
  if (e.kind === 'Path' || e.kind === 'String' || e.kind === 'Number' || e.kind === 'Boolean' || e.kind === 'Null') return null;
  if (e.kind === 'Exists' || e.kind === 'Subquery' || e.kind === 'InSubquery') return null;
  let found: A.Call | null = null;
  forEachChild(e, (c) => {
    if (!found && c.kind !== 'Ident' && c.kind !== 'When' && c.kind !== 'Select' && c.kind !== 'SelectItem' && c.kind !== 'FromItem' && c.kind !== 'OrderItem') {
      found = findToTimestamp(c);
    }
  });
  return found;
}

/** `close_date` from `close_date / 1000`. */
function epochColumn(source: string, arg: A.Expr): string {
  const inner = arg.kind === 'Binary' && arg.op === '/' ? arg.left : arg;
  return source.slice(inner.span.start, inner.span.end);
}

function quote(s: string): string {
  return `'${s.length > 60 ? `${s.slice(0, 57)}...` : s}'`;
}

function shorten(s: string): string {
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/**
 * Hands out `alias`, or `alias_2`, `alias_3`... when the query already has that name, each once.
 * The next number to try is kept per alias: names are only ever added, so the first free number
 * never goes down, and each taken name is stepped over once in all, not once per item asking
 * (a thousand `count(*)` would otherwise try 1 + 2 + ... + 1,000 names).
 */
class FreeAliases {
  private readonly next = new Map<string, number>();

  constructor(private readonly taken: Set<string>) {}

  take(alias: string): string {
    let name = alias;
    if (this.taken.has(alias)) {
      let i = this.next.get(alias) ?? 2;
      while (this.taken.has(`${alias}_${i}`)) i++;
      this.next.set(alias, i + 1);
      name = `${alias}_${i}`;
    }
    this.taken.add(name);
    return name;
  }
}

/** A readable alias for an expression: `sum_amount` for SUM(amount), `count` for COUNT(*). */
export function suggestAlias(e: A.Expr): string {
  const words: string[] = [];
  const walk = (n: A.Node): void => {
    if (words.length >= 3) return;
    if (n.kind === 'Call') words.push(n.name.name);
    if (n.kind === 'Path') words.push(n.parts[n.parts.length - 1]!.name);
    if (n.kind !== 'Ident') forEachChild(n, walk);
  };
  walk(e);
  const alias = words.join('_').replace(/[^a-z0-9_]/g, '');
  return alias && /^[a-z_]/.test(alias) ? alias : 'value';
}
