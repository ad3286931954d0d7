import type * as B from '../bind/bound.js';
import { isRowFreeComputation } from '../bind/exprs.js';
import { quoteIdent } from '../catalog/quote.js';
import { pathKey, type LogicalPlan, type ScopePlan, type TableRef } from '../plan/plan.js';
import { outputName } from './output-names.js';

/**
 * Writes PostgreSQL from a logical plan. Text is appended as the tree is walked; every value
 * goes through `value()`, which writes `$n::type` and pushes the parameter, and every
 * identifier goes through `quoteIdent` with a physical name from the catalog. Nothing of the
 * query text reaches the SQL any other way: output columns are named `c0, c1, ...` and the
 * caller maps them back to their keys.
 */

export interface EmitOptions {
  readonly orgId: string;
  /** Pins NOW() to this instant as a parameter; otherwise NOW() is the server's. */
  readonly now?: Date;
}

export interface EmittedSql {
  readonly sql: string;
  readonly params: unknown[];
  /** Index into `params` of the pinned NOW(), or -1. The tenant id is always `params[0]`. */
  readonly nowIndex: number;
}

export function emitQuery(plan: LogicalPlan, options: EmitOptions): EmittedSql {
  return emitRows(plan, options).query;
}

/**
 * Where the top-level ORDER BY sits in a row query's text, when cutting it out gives exactly
 * the text `emitCount` writes inside its wrapper: the clause introduced no parameter of its
 * own, so every later `$n` keeps its number. Null when it did.
 */
export interface OrderCut {
  readonly start: number;
  readonly end: number;
}

/** The row query and where its count can be cut from it, in one pass over the plan. */
export function emitRows(plan: LogicalPlan, options: EmitOptions): { readonly query: EmittedSql; readonly orderCut: OrderCut | null } {
  const w = new SqlWriter(plan, options);
  w.query(plan.query, true);
  return { query: w.result(), orderCut: w.orderCut };
}

const COUNT_OPEN = 'SELECT count(*) AS "count" FROM (';
const COUNT_CLOSE = ') AS "q"';

/** `SELECT count(*) FROM (<query>) q`: the inner LIMIT stops the scan, as the service's count does. */
export function emitCount(plan: LogicalPlan, options: EmitOptions): EmittedSql {
  const w = new SqlWriter(plan, options);
  w.raw(COUNT_OPEN);
  // How many rows pass LIMIT/OFFSET does not depend on their order; without ORDER BY the
  // scan can stop at the LIMIT instead of sorting every match first.
  w.query(plan.query, true, { order: false });
  w.raw(COUNT_CLOSE);
  return w.result();
}

/** The text `emitCount` writes, cut from an already emitted row query instead of a second emit. */
export function countFromRows(query: EmittedSql, cut: OrderCut): EmittedSql {
  const sql = `${COUNT_OPEN}${query.sql.slice(0, cut.start)}${query.sql.slice(cut.end)}${COUNT_CLOSE}`;
  return { sql, params: query.params, nowIndex: query.nowIndex };
}

const CASTS: Record<B.BValue['pgType'], string> = {
  text: 'text',
  int8: 'int8',
  int4: 'int4',
  numeric: 'numeric',
  boolean: 'boolean',
  'text[]': 'text[]',
};

/** The SQL type of a NULL the binder typed (see typeNull); a NULL of type 'null' stays bare. */
const NULL_TYPES: Record<B.ValueType, string | null> = {
  text: 'text',
  number: 'numeric',
  boolean: 'boolean',
  epoch: 'int8',
  timestamp: 'timestamp',
  timestamptz: 'timestamptz',
  calendar_date: 'date',
  multiselect: 'text[]',
  'text[]': 'text[]',
  json: 'jsonb',
  null: null,
};

/**
 * Quoted identifiers, by name: the catalog's physical names, its schema and the planner's
 * aliases, written again and again, each once per reference. The quoted form is a function of
 * the name alone (whichever catalog it comes from), made by `quoteIdent`, which also refuses a
 * name PostgreSQL cannot take; kept here it is one lookup instead of a scan and a new string
 * per reference. Bounded like `quoteIdent`'s own table: past it, names are quoted each time.
 */
const QUOTED = new Map<string, string>();
const MAX_QUOTED = 10_000;

function quoted(name: string): string {
  let q = QUOTED.get(name);
  if (q === undefined) {
    q = quoteIdent(name);
    if (QUOTED.size < MAX_QUOTED) QUOTED.set(name, q);
  }
  return q;
}

const WITH_ORDER = { order: true } as const;

/** The quoted names of the first output columns, made once (`"c0"`, `"c1"`...). */
const QUOTED_OUTPUTS: readonly string[] = Array.from({ length: 64 }, (_, i) => quoteIdent(outputName(i)));

function quotedOutput(i: number): string {
  return i < QUOTED_OUTPUTS.length ? QUOTED_OUTPUTS[i]! : quoted(outputName(i));
}

const COMPARISONS = new Set<B.BBinary['op']>(['=', '<>', '<', '<=', '>', '>=']);

class SqlWriter {
  private out = '';
  private readonly params: unknown[];
  /** Parameter number of each value written so far, by SQL type, then by the value itself. */
  private readonly seen = new Map<string, Map<unknown, number>>();
  private nowIndex = -1;
  /** Inside a WHERE or HAVING (`compared`). */
  private filtering = 0;
  /** Set by the top-level query(): see OrderCut. */
  orderCut: OrderCut | null = null;
  /** What follows a table's alias in its guards: `."tenant" = $1`, and ` AND ` ... `."deleted" = false` when soft-deleting. */
  private readonly tenantGuard: string;
  private readonly deletedGuard: string | null;
  /** `"schema".` */
  private readonly schemaPrefix: string;

  constructor(
    private readonly plan: LogicalPlan,
    private readonly options: EmitOptions,
  ) {
    this.params = [options.orgId];
    this.tenantGuard = `.${quoted(plan.tenantColumn)} = $1`;
    this.deletedGuard = plan.softDeleteColumn ? `.${quoted(plan.softDeleteColumn)} = false` : null;
    this.schemaPrefix = `${quoted(plan.schema)}.`;
  }

  result(): EmittedSql {
    return { sql: this.out, params: this.params, nowIndex: this.nowIndex };
  }

  raw(s: string): void {
    this.out += s;
  }

  /**
   * Appends `$n::type`, reusing the number of an identical earlier value (GROUP BY must match
   * SELECT), and returns n.
   */
  private value(v: unknown, pgType: string): number {
    // Strings, numbers and booleans are their own keys (a Map tells 1 from '1' and 0 from
    // false, and String() tells no two numbers apart that SameValueZero does not); an array
    // (of options) is keyed by its JSON, apart. No key string is built for the common values.
    const json = typeof v === 'object';
    const key = json ? JSON.stringify(v) : v;
    const kind = json ? `${pgType} json` : pgType;
    let byValue = this.seen.get(kind);
    if (byValue === undefined) this.seen.set(kind, (byValue = new Map()));
    let n = byValue.get(key);
    if (n === undefined) {
      this.params.push(v);
      n = this.params.length;
      byValue.set(key, n);
    }
    this.out += `$${n}::${pgType}`;
    return n;
  }

  private column(table: string, column: string): void {
    this.out += `${quoted(table)}.${quoted(column)}`;
  }

  query(q: B.BoundQuery, top: boolean, options: { order: boolean } = WITH_ORDER): void {
    const scope = this.plan.scopes[q.scope]!;
    this.raw(q.distinct ? 'SELECT DISTINCT ' : 'SELECT ');
    for (let i = 0; i < q.outputs.length; i++) {
      if (i) this.raw(', ');
      this.expr(q.outputs[i]!.expr, false);
      if (top) this.raw(` AS ${quotedOutput(i)}`);
    }
    this.raw(' FROM ');
    this.table(scope.from);
    for (const j of scope.joins) {
      this.raw(' LEFT JOIN ');
      this.table(j);
      this.raw(' ON ');
      this.column(j.alias, j.onColumn);
      this.raw(' = ');
      this.column(j.fromAlias, j.fromColumn);
      this.guards(j, ' AND ');
    }
    this.raw(' WHERE ');
    this.guards(scope.from, '');
    if (q.where) {
      this.raw(' AND ');
      this.filtering++;
      this.expr(q.where, true);
      this.filtering--;
    }
    if (q.groupBy.length) {
      this.raw(' GROUP BY ');
      this.list(q.groupBy);
    }
    if (q.having) {
      this.raw(' HAVING ');
      this.filtering++;
      this.expr(q.having, false);
      this.filtering--;
    }
    const orderStart = this.out.length;
    const paramsBefore = this.params.length;
    if (q.orderBy.length && options.order) {
      this.raw(' ORDER BY ');
      q.orderBy.forEach((o, i) => {
        if (i) this.raw(', ');
        this.expr(o.expr, false);
        if (o.direction) this.raw(` ${o.direction}`);
        if (o.nulls) this.raw(` NULLS ${o.nulls}`);
      });
    }
    if (top) this.orderCut = this.params.length === paramsBefore ? { start: orderStart, end: this.out.length } : null;
    if (q.limit) {
      this.raw(' LIMIT ');
      this.value(q.limit.value, 'int8');
    }
    if (q.offset) {
      this.raw(' OFFSET ');
      this.value(q.offset.value, 'int8');
    }
  }

  private table(t: TableRef): void {
    this.raw(`${this.schemaPrefix}${quoted(t.table)} AS ${quoted(t.alias)}`);
  }

  /** The tenant and soft-delete predicates every table reference carries. */
  private guards(t: TableRef, lead: string): void {
    const alias = quoted(t.alias);
    this.raw(this.deletedGuard === null ? `${lead}${alias}${this.tenantGuard}` : `${lead}${alias}${this.tenantGuard} AND ${alias}${this.deletedGuard}`);
  }

  private list(items: readonly B.BExpr[]): void {
    items.forEach((e, i) => {
      if (i) this.raw(', ');
      this.expr(e, false);
    });
  }

  private scopeOf(id: number): ScopePlan {
    return this.plan.scopes[id]!;
  }

  private joinAlias(scope: ScopePlan, key: string): string {
    for (const j of scope.joins) if (j.key === key) return j.alias;
    throw new Error(`plan invariant: no join for path ${key}`);
  }

  /**
   * An operand of a comparison (`comparison`: false for arithmetic). In a WHERE or HAVING, a
   * comparison's side that reads no row (`created_at >= date_part('epoch', date_trunc('month', now()
   * AT TIME ZONE 'z') AT TIME ZONE 'z') * 1000`) is written as a scalar subquery: PostgreSQL runs
   * that once for the statement (an InitPlan), where as a filter's operand it would compute it
   * again for every row it reads.
   */
  private compared(e: B.BExpr, comparison: boolean): void {
    if (!comparison || this.filtering === 0 || !isRowFreeComputation(e)) return this.expr(e, true);
    this.raw('(SELECT ');
    this.expr(e, false);
    this.raw(')');
  }

  /** `wrap`: parenthesise compound expressions, as an operand inside a larger one. */
  private expr(e: B.BExpr, wrap: boolean): void {
    switch (e.kind) {
      case 'Column': {
        const scope = this.scopeOf(e.scope);
        const alias = e.hops.length === 0 ? scope.from.alias : this.joinAlias(scope, pathKey(e.hops));
        const col = this.plan.physical.get(e.object)?.get(e.column) ?? e.column;
        this.column(alias, col);
        return;
      }
      case 'Value':
        this.value(e.value, CASTS[e.pgType]);
        return;
      case 'Null': {
        const type = NULL_TYPES[e.type];
        this.raw(type ? `NULL::${type}` : 'NULL');
        return;
      }
      case 'Now':
        if (this.options.now) {
          // A second NOW() reuses the first one's parameter: record its position, not the last one.
          this.nowIndex = this.value(this.options.now.toISOString(), 'timestamptz') - 1;
        } else this.raw('now()');
        return;
      case 'Call':
        this.call(e);
        return;
      case 'Unary':
        if (wrap) this.raw('(');
        this.raw(e.op === 'NOT' ? 'NOT ' : '- ');
        this.expr(e.operand, true);
        if (wrap) this.raw(')');
        return;
      case 'Binary':
        if (wrap) this.raw('(');
        this.compared(e.left, COMPARISONS.has(e.op));
        this.raw(` ${e.op} `);
        this.compared(e.right, COMPARISONS.has(e.op));
        if (wrap) this.raw(')');
        return;
      case 'Logical': {
        if (wrap) this.raw('(');
        const glue = e.op === 'AND' ? ' AND ' : ' OR ';
        for (let i = 0; i < e.operands.length; i++) {
          if (i) this.raw(glue);
          this.expr(e.operands[i]!, true);
        }
        if (wrap) this.raw(')');
        return;
      }
      case 'IsNull':
        if (wrap) this.raw('(');
        this.expr(e.operand, true);
        this.raw(e.negated ? ' IS NOT NULL' : ' IS NULL');
        if (wrap) this.raw(')');
        return;
      case 'IsEmpty':
        // Null or no elements; never null itself, so NOT and OR behave two-valued.
        if (wrap) this.raw('(');
        this.raw('coalesce(cardinality(');
        this.expr(e.operand, false);
        this.raw(e.negated ? '), 0) <> 0' : '), 0) = 0');
        if (wrap) this.raw(')');
        return;
      case 'Between':
        if (wrap) this.raw('(');
        this.compared(e.operand, true);
        this.raw(e.negated ? ' NOT BETWEEN ' : ' BETWEEN ');
        this.compared(e.low, true);
        this.raw(' AND ');
        this.compared(e.high, true);
        if (wrap) this.raw(')');
        return;
      case 'Like':
        if (wrap) this.raw('(');
        this.expr(e.operand, true);
        this.raw(`${e.negated ? ' NOT' : ''} ${e.caseInsensitive ? 'ILIKE' : 'LIKE'} `);
        this.expr(e.pattern, true);
        if (wrap) this.raw(')');
        return;
      case 'InList':
        if (wrap) this.raw('(');
        this.expr(e.operand, true);
        this.raw(e.negated ? ' NOT IN (' : ' IN (');
        this.list(e.items);
        this.raw(')');
        if (wrap) this.raw(')');
        return;
      case 'InSubquery':
        if (wrap) this.raw('(');
        this.expr(e.operand, true);
        this.raw(e.negated ? ' NOT IN (' : ' IN (');
        this.query(e.query, false);
        this.raw(')');
        if (wrap) this.raw(')');
        return;
      case 'Exists':
        this.raw('EXISTS (');
        this.query(e.query, false);
        this.raw(')');
        return;
      case 'Subquery':
        this.raw('(');
        this.query(e.query, false);
        this.raw(')');
        return;
      case 'Case':
        this.raw('CASE');
        if (e.operand) {
          this.raw(' ');
          this.expr(e.operand, true);
        }
        for (const w of e.whens) {
          this.raw(' WHEN ');
          this.expr(w.when, false);
          this.raw(' THEN ');
          this.expr(w.then, false);
        }
        if (e.else) {
          this.raw(' ELSE ');
          this.expr(e.else, false);
        }
        this.raw(' END');
        return;
      case 'Array':
        this.array(e);
        return;
      case 'Cast':
        this.raw('(');
        this.expr(e.operand, false);
        this.raw(')::date');
        return;
      case 'AtTimeZone':
        if (wrap) this.raw('(');
        this.expr(e.operand, true);
        this.raw(' AT TIME ZONE ');
        this.expr(e.zone, true);
        if (wrap) this.raw(')');
        return;
      case 'OutputRef':
        this.raw(quotedOutput(e.index));
        return;
      case 'RowCompare':
        this.raw('(');
        this.list(e.left);
        this.raw(`) ${e.op} (`);
        this.list(e.right);
        this.raw(')');
        return;
      case 'InGroup':
        if (wrap) this.raw('(');
        this.expr(e.operand, true);
        this.raw(' = ANY(array_agg(');
        this.expr(e.member, false);
        this.raw('))');
        if (wrap) this.raw(')');
        return;
      default: {
        const never: never = e;
        throw new Error(`unhandled bound node ${(never as B.BExpr).kind}`);
      }
    }
  }

  /** An array of option slugs is one `text[]` parameter, so the SQL is the same for any length. */
  private array(e: B.BArray): void {
    if (e.items.every((i) => i.kind === 'Value' && typeof i.value === 'string')) {
      this.value(e.items.map((i) => (i as B.BValue).value), 'text[]');
      return;
    }
    this.raw('ARRAY[');
    this.list(e.items);
    this.raw(']::text[]');
  }

  private call(e: B.BCall): void {
    switch (e.fn) {
      case 'count':
        if (e.star) {
          this.raw('count(*)');
          return;
        }
        break;
      case 'round':
        // round(x, n) exists for numeric only; date_part() and avg() of bigints are not numeric.
        if (e.args.length === 2) {
          this.raw('round((');
          this.expr(e.args[0]!, false);
          this.raw(')::numeric, ');
          this.expr(e.args[1]!, false);
          this.raw(')');
          return;
        }
        break;
      case 'min':
      case 'max':
        // min(NULL) fits every type min() has: PostgreSQL would resolve an unknown one to text.
        if (e.args[0]?.kind === 'Null' && e.args[0].type === 'null') {
          this.raw(`${e.fn}(${e.distinct ? 'DISTINCT ' : ''}NULL::text)`);
          return;
        }
        break;
      case 'if':
        throw new Error('if() reaches the emitter only after the planner rewrote it to CASE');
      default:
        break;
    }
    this.raw(`${e.fn}(${e.distinct ? 'DISTINCT ' : ''}`);
    this.list(e.args);
    this.raw(')');
  }
}
