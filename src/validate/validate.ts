import type { DiagnosticBag } from '../diagnostics/diagnostic.js';
import { didYouMean } from '../diagnostics/suggest.js';
import type * as A from '../syntax/ast.js';
import { forEachChild } from '../syntax/ast.js';
import { FUNCTIONS, UNSUPPORTED_FUNCTIONS } from './functions.js';

/** Dialect rules that need no schema (service 4.10). */
export interface ValidateOptions {
  /** Largest accepted LIMIT. Default 10,000. */
  maxLimit?: number;
  /** Most select items accepted in one select list. Default 200. */
  maxSelectItems?: number;
}

export const DEFAULT_VALIDATE_OPTIONS: Required<ValidateOptions> = { maxLimit: 10_000, maxSelectItems: 200 };

type Clause = 'select' | 'where' | 'group' | 'having' | 'order';

interface Context {
  readonly clause: Clause;
  /** The aggregate call we are inside, if any. */
  readonly aggregate: A.Call | null;
}

const DATE_STRING = /^\s*\d{4}-\d{1,2}-\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?\s*$/;
const COMPARISON = new Set(['=', '<>', '!=', '<', '<=', '>', '>=']);

export function validate(select: A.Select, bag: DiagnosticBag, options: ValidateOptions = {}): void {
  const limits: Required<ValidateOptions> = {
    maxLimit: options.maxLimit ?? DEFAULT_VALIDATE_OPTIONS.maxLimit,
    maxSelectItems: options.maxSelectItems ?? DEFAULT_VALIDATE_OPTIONS.maxSelectItems,
  };
  new Validator(bag, limits).select(select, true);
}

class Validator {
  constructor(
    private readonly bag: DiagnosticBag,
    private readonly options: Required<ValidateOptions>,
  ) {}

  select(s: A.Select, top: boolean): void {
    if (s.items.length > this.options.maxSelectItems) {
      const extra = s.items[this.options.maxSelectItems]!;
      this.bag.error(
        'TOO_MANY_SELECT_ITEMS',
        extra.span,
        `the select list has ${s.items.length} items; the maximum is ${this.options.maxSelectItems}`,
        'split the report into several queries',
      );
    }
    for (const item of s.items) {
      this.expr(item.expr, { clause: 'select', aggregate: null });
      if (top && !item.alias && item.expr.kind !== 'Path' && item.expr.kind !== 'Star') {
        const text = this.bag.source.slice(item.expr.span.start, item.expr.span.end);
        const alias = suggestAlias(item.expr);
        this.bag.error(
          'MISSING_ALIAS',
          item.expr.span,
          `the select item ${quote(text)} needs an alias`,
          `write ${shorten(text)} AS ${alias}`,
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

  private from(f: A.FromItem): void {
    if (f.object.name.startsWith('pg_')) this.systemReference(f.object);
  }

  private limit(s: A.Select, top: boolean): void {
    if (!s.limit) {
      if (top) {
        const end = s.span.end;
        this.bag.error('MISSING_LIMIT', { start: end, end }, 'the query must end with a LIMIT', 'add LIMIT 100 at the end of the query');
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
    }
  }

  private expr(e: A.Expr, ctx: Context): void {
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
        if (ctx.clause === 'where') this.dateComparison(e.operand, null);
        return;
      case 'Binary':
        this.expr(e.left, ctx);
        this.expr(e.right, ctx);
        if (ctx.clause === 'where' && COMPARISON.has(e.op)) this.dateComparison(e.left, e.right);
        return;
      case 'Between':
        forEachChild(e, (c) => this.expr(c as A.Expr, ctx));
        if (ctx.clause === 'where') {
          this.dateComparison(e.operand, e.low);
          this.dateComparison(e.operand, e.high);
        }
        return;
      case 'InList':
        forEachChild(e, (c) => this.expr(c as A.Expr, ctx));
        if (ctx.clause === 'where') for (const item of e.items) this.dateComparison(e.operand, item);
        return;
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
      case 'Extract':
        this.bag.error(
          'UNSUPPORTED_EXTRACT',
          e.span,
          'EXTRACT is not supported',
          `write date_part('${e.field}', ${this.bag.source.slice(e.source.span.start, e.source.span.end)})`,
        );
        this.expr(e.source, ctx);
        return;
      case 'DateKeyword':
        this.bag.error(
          'UNSUPPORTED_DATE_KEYWORD',
          e.span,
          `${e.name} is not supported: dates are epoch milliseconds`,
          e.name === 'CURRENT_DATE'
            ? "for the start of today write date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata')*1000"
            : "for the current instant in epoch milliseconds write date_part('epoch', NOW())*1000",
        );
        return;
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
        this.bag.error('UNSUPPORTED_FUNCTION', e.name.span, `${name}() is not supported`, UNSUPPORTED_FUNCTIONS.get(name));
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
   * Dates are epoch milliseconds, so a date string or a to_timestamp(...) value on either side
   * of a WHERE comparison is wrong: say so with the epoch form of what the user meant.
   */
  private dateComparison(a: A.Expr, b: A.Expr | null): void {
    for (const [side, other] of [[a, b], [b, a]] as const) {
      if (side?.kind === 'String' && DATE_STRING.test(side.value)) {
        const column = other ? this.bag.source.slice(other.span.start, other.span.end) : 'created_at';
        const ms = Date.parse(side.value.includes('T') || side.value.includes(' ') ? side.value.trim().replace(' ', 'T') : `${side.value.trim()}T00:00:00Z`);
        this.bag.error(
          'DATE_STRING_COMPARISON',
          side.span,
          `the date string ${quote(side.value)} cannot be compared: dates are epoch milliseconds`,
          Number.isFinite(ms)
            ? `compare with the epoch value: ${column} >= ${ms} (${new Date(ms).toISOString()})`
            : `compare with an epoch value in milliseconds, e.g. ${column} >= 1704067200000`,
        );
        return;
      }
    }
    for (const side of [a, b]) {
      const ts = side && findToTimestamp(side);
      if (ts) {
        const other = side === a ? b : a;
        const column = ts.args[0] ? epochColumn(this.bag.source, ts.args[0]) : 'created_at';
        const otherText = other ? this.bag.source.slice(other.span.start, other.span.end) : '';
        this.bag.error(
          'TO_TIMESTAMP_COMPARISON',
          ts.span,
          'to_timestamp(...) cannot be compared in WHERE: compare epoch milliseconds instead',
          otherText
            ? `compare the column itself with an epoch bound: ${column} >= date_part('epoch', <timestamp> AT TIME ZONE '<zone>')*1000`
            : `compare ${column} with an epoch value in milliseconds`,
        );
        return;
      }
    }
  }
}

function findToTimestamp(e: A.Expr): A.Call | null {
  if (e.kind === 'Call' && e.name.name === 'to_timestamp') return e;
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
