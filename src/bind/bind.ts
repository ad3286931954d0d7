import type { Catalog, ObjectDef } from '../catalog/types.js';
import { hintZone, isZone, parseDateText, repairDateString, type DateComparisonOp } from '../diagnostics/dates.js';
import type { DiagnosticBag } from '../diagnostics/diagnostic.js';
import type { Span } from '../diagnostics/span.js';
import { didYouMean } from '../diagnostics/suggest.js';
import type * as A from '../syntax/ast.js';
import { forEachChild } from '../syntax/ast.js';
import type * as B from './bound.js';
import { forEachBoundChild, isAggregate, sameExpr, shapeOf } from './exprs.js';
import { NameResolver, existsForm, existsParts, nearName, nullAt, sourceOf, type Scope } from './names.js';
import { bindCall } from './functions.js';
import { commonType, compareTypes, describe, isNumeric, unifyCompared, unifyNumbers } from './types.js';
import { numberLiteral } from '../validate/numbers.js';
import { exampleCondition, examplesFor, type Examples } from '../syntax/examples.js';
import { typeNull, typeOutput } from './nulls.js';

export interface BindOptions {
  readonly catalog: Catalog;
  /** The request slug: the top-level FROM must name this object. */
  readonly slug: string;
  /** Most relation hops in one dot path. Default 6. */
  readonly maxPathDepth?: number;
  /** The zone of date hints when the query names none (see ValidateOptions.timeZone). */
  readonly timeZone?: string;
}

type Clause = 'select' | 'where' | 'group' | 'having' | 'order';

interface Ctx {
  readonly scope: Scope;
  readonly clause: Clause;
}

/** Resolves names and types of a validated query against the catalog. */
export function bind(select: A.Select, bag: DiagnosticBag, options: BindOptions): B.BoundQuery | null {
  const binder = new Binder(bag, options);
  const slug = select.from.object.name;
  const object = options.catalog.objects.get(slug);
  if (!object || slug !== options.slug) {
    const known = [...options.catalog.objects.keys()];
    const detail = !object
      ? `'${sourceOf(bag, select.from.object)}' is not an object${hintSuffix(didYouMean(slug, known))}`
      : `the query reads from '${slug}' but the request slug is '${options.slug}'`;
    // Only suggest FROM <request slug> when that slug is an object (not a plural or a typo).
    const requested = options.catalog.objects.has(options.slug)
      ? `send slug '${slug}', or query FROM ${options.slug}`
      : `send slug '${slug}'; there is no object '${options.slug}'${hintSuffix(didYouMean(options.slug, known))}`;
    bag.error('INVALID_SLUG', select.from.object.span, `Invalid slug: ${detail}`, !object ? `the objects are ${known.join(', ')}` : requested);
    return null;
  }
  return binder.query(select, object, null);
}

function hintSuffix(h: string | undefined): string {
  return h ? ` (${h})` : '';
}

/** Did-you-mean searches over a query's output names per text (see orderItem). */
const MAX_NEAR_SEARCHES = 100;

class Binder {
  private nextScope = 0;
  private nearSearches = 0;
  /** Made at the first ORDER BY name that needs a hint (an error path): a weak map per compile costs every collection. */
  private orderNamesOf: WeakMap<readonly B.BoundOutput[], { candidates: readonly string[]; list: string }> | null = null;
  private readonly names: NameResolver;
  private zoneCache: string | undefined;

  constructor(
    private readonly bag: DiagnosticBag,
    private readonly options: BindOptions,
  ) {
    this.names = new NameResolver(bag, options.catalog, options.maxPathDepth ?? 6);
  }

  /** The zone hints speak in; looked up only when a hint needs it. */
  private readonly zone = (): string => (this.zoneCache ??= hintZone(this.bag.source, this.options.timeZone));
  private readonly examples = (): Examples => examplesFor(this.options);

  query(sel: A.Select, object: ObjectDef, parent: Scope | null): B.BoundQuery {
    const scope: Scope = { id: this.nextScope++, object, name: sel.from.alias?.name ?? object.slug, parent, fromEnd: (sel.from.alias ?? sel.from.object).span.end };
    const outputs: B.BoundOutput[] = [];
    for (const item of sel.items) outputs.push(...this.selectItem(item, scope));
    this.checkDuplicateKeys(outputs, parent === null);
    const where = sel.where ? this.condition(sel.where, { scope, clause: 'where' }) : null;
    const groupBy = sel.groupBy.map((g) => this.groupItem(g, scope, outputs));
    if (sel.having) this.aliasesInHaving(sel, scope);
    const having = sel.having ? this.condition(sel.having, { scope, clause: 'having' }) : null;
    const orderBy = sel.orderBy.map((o) => ({ expr: this.orderItem(o, scope, outputs, sel.distinct), direction: o.direction, nulls: o.nulls }));
    const aggregated =
      groupBy.length > 0 || outputs.some((o) => isAggregate(o.expr)) || (having !== null && isAggregate(having));
    const q: B.BoundQuery = {
      kind: 'Query',
      scope: scope.id,
      object: object.slug,
      distinct: sel.distinct,
      outputs,
      where,
      groupBy,
      having,
      orderBy,
      limit: sel.limit ? this.limitValue(sel.limit) : null,
      offset: sel.offset ? this.limitValue(sel.offset) : null,
      aggregated,
      span: sel.span,
    };
    if (aggregated) this.checkGrouping(q);
    return q;
  }

  private limitValue(n: A.NumberLit): B.BValue {
    // The validator kept LIMIT within its maximum and OFFSET within bigint; above 2^53 the text is exact.
    const value = Number(n.text);
    const exact = n.isInteger && !Number.isSafeInteger(value) ? BigInt(n.text).toString() : value;
    return { kind: 'Value', value: exact, pgType: 'int8', type: 'number', span: n.span };
  }

  // ---- select list ----

  private selectItem(item: A.SelectItem, scope: Scope): B.BoundOutput[] {
    const e = item.expr;
    if (e.kind === 'Star') return this.star(e, scope);
    const expr = this.expr(e, { scope, clause: 'select' });
    let key: string;
    if (item.alias) key = item.alias.name;
    else if (e.kind === 'Path') key = this.pathKey(e, scope);
    else key = '?column?';
    const type = expr.kind === 'Column' ? expr.logical : expr.type;
    return [{ key, expr, type, span: item.span }];
  }

  /** The output key of a bare column: the path as written, less a leading FROM alias. */
  private pathKey(p: A.Path, scope: Scope): string {
    // A bare name (most select items) is its own key: no array, no join.
    if (p.parts.length === 1) return p.parts[0]!.name;
    const names = p.parts.map((x) => x.name);
    if (names.length > 1 && names[0] === scope.name && !scope.object.columns.has(names[0]!)) names.shift();
    return names.join('.');
  }

  private star(e: A.StarExpr, scope: Scope): B.BoundOutput[] {
    if (e.qualifier && e.qualifier.name !== scope.name) {
      this.bag.error('UNKNOWN_COLUMN', e.qualifier.span, `'${sourceOf(this.bag, e.qualifier)}' is not the name of the FROM object`, `write ${scope.name}.* or *`);
      return [];
    }
    const outputs: B.BoundOutput[] = [];
    for (const col of scope.object.columns.values()) {
      if (col.type === 'virtual') continue;
      outputs.push({ key: col.slug, expr: this.names.columnRef(scope, [], scope.object, col, e.span), type: col.type, span: e.span });
    }
    return outputs;
  }

  private checkDuplicateKeys(outputs: readonly B.BoundOutput[], top: boolean): void {
    if (!top) return;
    const seen = new Map<string, B.BoundOutput>();
    for (const o of outputs) {
      const prev = seen.get(o.key);
      if (prev && o.key !== '?column?') {
        this.bag.error('DUPLICATE_KEY', o.span, `the output key '${o.key}' is used twice`, `give one of the two an alias: ... AS ${o.key}_2`);
      }
      seen.set(o.key, o);
    }
  }

  // ---- GROUP BY and ORDER BY ----

  private groupItem(g: A.Expr, scope: Scope, outputs: readonly B.BoundOutput[]): B.BExpr {
    this.bag.step();
    // PostgreSQL: an input column wins over an output alias of the same name.
    if (g.kind === 'Path' && g.parts.length === 1 && !this.resolvesAsColumn(g.parts[0]!.name, scope)) {
      const out = outputs.find((o) => o.key === g.parts[0]!.name);
      if (out) return out.expr;
    }
    if (g.kind === 'Number' && g.isInteger) return this.ordinal(g, outputs)?.expr ?? nullAt(g.span);
    return this.expr(g, { scope, clause: 'group' });
  }

  private orderItem(o: A.OrderItem, scope: Scope, outputs: readonly B.BoundOutput[], distinct: boolean): B.BExpr {
    this.bag.step();
    const e = o.expr;
    // PostgreSQL: in ORDER BY an output name wins over an input column.
    if (e.kind === 'Path' && e.parts.length === 1) {
      const index = outputs.findIndex((x) => x.key === e.parts[0]!.name);
      if (index >= 0) return { kind: 'OutputRef', index, type: outputs[index]!.expr.type, span: e.span };
    }
    if (e.kind === 'Number' && e.isInteger) {
      const out = this.ordinal(e, outputs);
      return out ? { kind: 'OutputRef', index: outputs.indexOf(out), type: out.expr.type, span: e.span } : nullAt(e.span);
    }
    if (e.kind === 'Path' && e.parts.length === 1 && !e.parts[0]!.quoted && !this.inAnyScope(e.parts[0]!.name, scope)) {
      // Most often a misspelt alias: list the output names, which ORDER BY reads first.
      const names = this.orderNames(outputs, scope);
      // A search costs one edit distance per output (up to 200): the first few misspelt names
      // get one, so that thousands of them cost no more than their own diagnostics.
      const near = this.nearSearches++ < MAX_NEAR_SEARCHES ? nearName(e.parts[0]!.name, names.candidates, e.span) : undefined;
      this.bag.error(
        'UNKNOWN_COLUMN',
        e.span,
        `'${sourceOf(this.bag, e)}' is neither an output alias nor a column of '${scope.object.slug}'`,
        `${near?.hint ? `${near.hint}; ` : ''}ORDER BY can name the output aliases ${names.list}, a column of ${scope.object.slug}, or a select item's position`,
        near?.fix,
      );
      return nullAt(e.span);
    }
    const bound = this.expr(e, { scope, clause: 'order' });
    const index = outputs.findIndex((x) => sameExpr(x.expr, bound));
    if (index >= 0) return { kind: 'OutputRef', index, type: bound.type, span: e.span };
    if (distinct) {
      this.bag.error(
        'ORDER_NOT_SELECTED',
        e.span,
        `with SELECT DISTINCT, ORDER BY '${sourceOf(this.bag, e)}' must be one of the selected items`,
        'add it to the select list, or order by a selected item',
      );
    }
    return bound;
  }

  /** The names ORDER BY may use in one query, and their list for hints: made once per query, not per item. */
  private orderNames(outputs: readonly B.BoundOutput[], scope: Scope): { candidates: readonly string[]; list: string } {
    const cache = (this.orderNamesOf ??= new WeakMap());
    let names = cache.get(outputs);
    if (!names) {
      const keys = outputs.map((o) => o.key).filter((k) => k !== '?column?');
      names = { candidates: [...new Set([...keys, ...scope.object.columns.keys()])], list: keys.join(', ') || '(none)' };
      cache.set(outputs, names);
    }
    return names;
  }

  private ordinal(n: A.NumberLit, outputs: readonly B.BoundOutput[]): B.BoundOutput | undefined {
    const i = Number(n.text);
    const out = outputs[i - 1];
    if (!out) {
      this.bag.error('INVALID_ORDINAL', n.span, `there is no select item number ${n.text}; the select list has ${outputs.length}`, `write a number from 1 to ${outputs.length}, or the item's alias`);
    }
    return out;
  }

  private resolvesAsColumn(name: string, scope: Scope): boolean {
    return scope.object.columns.has(name);
  }

  private inAnyScope(name: string, scope: Scope): boolean {
    for (let s: Scope | null = scope; s; s = s.parent) if (s.name === name || s.object.columns.has(name)) return true;
    return false;
  }

  /**
   * HAVING cannot name an output alias (PostgreSQL evaluates it before the select list): for
   * `COUNT(id) AS n ... HAVING n > 5` say so and give `HAVING COUNT(id) > 5`. Reported before
   * the name is bound, so the plain UNKNOWN_COLUMN for the same span is not repeated.
   */
  private aliasesInHaving(sel: A.Select, scope: Scope): void {
    const visit = (n: A.Node): void => {
      if (n.kind === 'Exists' || n.kind === 'Subquery' || n.kind === 'InSubquery') return;
      if (n.kind === 'Path' && n.parts.length === 1 && !this.inAnyScope(n.parts[0]!.name, scope)) {
        const item = sel.items.find((i) => i.alias?.name === n.parts[0]!.name);
        if (item) {
          const text = sourceOf(this.bag, item.expr);
          const expr = item.expr.kind === 'Path' || item.expr.kind === 'Call' ? text : `(${text})`;
          this.bag.error(
            'UNKNOWN_COLUMN',
            n.span,
            `HAVING cannot name the output alias '${n.parts[0]!.name}'; repeat its expression`,
            `write ${expr} instead of ${n.parts[0]!.name}`,
            { range: [n.span.start, n.span.end], text: expr },
          );
        }
        return;
      }
      forEachChild(n, visit);
    };
    visit(sel.having!);
  }

  /** Every column outside an aggregate must be grouped (PostgreSQL would reject it when run). */
  private checkGrouping(q: B.BoundQuery): void {
    // GROUP BY items by shape: each node is compared with the few of its shape, not with all.
    const groups = new Map<number, B.BExpr[]>();
    // A node can be a GROUP BY item only if it is of the kind of one: nodes of other kinds skip the shape.
    const kinds = new Set<B.BExpr['kind']>();
    for (const g of q.groupBy) {
      kinds.add(g.kind);
      const shape = shapeOf(g);
      const same = groups.get(shape);
      if (same) same.push(g);
      else groups.set(shape, [g]);
    }
    // Without GROUP BY no node can match one: no shape is worth computing (an aggregate over the
    // whole table, `count(DISTINCT id)`, is the common case).
    const grouped = groups.size > 0;
    const check = (e: B.BExpr): void => {
      if (grouped && kinds.has(e.kind) && groups.get(shapeOf(e))?.some((g) => sameExpr(g, e))) return;
      switch (e.kind) {
        case 'Column':
          if (e.scope !== q.scope) return; // an outer reference is constant within this query
          this.bag.error(
            'UNGROUPED_COLUMN',
            e.span,
            `'${sourceOf(this.bag, e)}' is neither aggregated nor in GROUP BY`,
            `add it to GROUP BY, or aggregate it: max(${sourceOf(this.bag, e)})`,
          );
          return;
        case 'Call':
          if (isAggregate(e)) return;
          e.args.forEach(check);
          return;
        case 'Exists':
        case 'Subquery':
        case 'InSubquery':
          if (e.kind === 'InSubquery') check(e.operand);
          return;
        default:
          forEachBoundChild(e, check);
      }
    };
    for (const o of q.outputs) check(o.expr);
    if (q.having) check(q.having);
    for (const o of q.orderBy) if (o.expr.kind !== 'OutputRef') check(o.expr);
  }

  // ---- expressions ----

  private condition(e: A.Expr, ctx: Ctx): B.BExpr {
    return this.expectBoolean(this.expr(e, ctx), ctx.clause === 'where' ? 'WHERE' : 'HAVING');
  }

  /** `b`, which must be a condition: reported when it is not, typed boolean when it is NULL. */
  private expectBoolean(b: B.BExpr, where: string): B.BExpr {
    if (b.type !== 'boolean' && b.type !== 'null') {
      this.bag.error('TYPE_MISMATCH', b.span, `${where} needs a condition, but '${sourceOf(this.bag, b)}' is a ${describe(b.type)}`, `compare it with something, e.g. ${exampleCondition(examplesFor(this.options))}`);
    }
    return typeNull(b, 'boolean');
  }

  expr(e: A.Expr, ctx: Ctx): B.BExpr {
    this.bag.step();
    switch (e.kind) {
      case 'String':
        return { kind: 'Value', value: e.value, pgType: 'text', type: 'text', span: e.span };
      case 'Number':
        return numberValue(e);
      case 'Boolean':
        return { kind: 'Value', value: e.value, pgType: 'boolean', type: 'boolean', span: e.span };
      case 'Null':
        return { kind: 'Null', type: 'null', span: e.span };
      case 'Path':
        return this.names.path(e, ctx.scope);
      case 'Star':
        this.bag.error('SYNTAX_ERROR', e.span, '* is only accepted as the whole select list or in count(*)', 'name the columns');
        return nullAt(e.span);
      case 'Call':
        return bindCall(e, this, ctx, this.bag, this.zone, this.examples);
      case 'Unary':
        return this.unary(e, ctx);
      case 'Binary':
        return this.binary(e, ctx);
      case 'Logical': {
        const operands = e.operands.map((o) => this.expectBoolean(this.expr(o, ctx), e.op));
        return { kind: 'Logical', op: e.op, operands, type: 'boolean', span: e.span };
      }
      case 'IsNull':
        return { kind: 'IsNull', operand: this.expr(e.operand, ctx), negated: e.negated, type: 'boolean', span: e.span };
      case 'Between': {
        const bare = this.expr(e.operand, ctx);
        const [operand, low, high] = unifyCompared([bare, this.coerce(this.expr(e.low, ctx), bare), this.coerce(this.expr(e.high, ctx), bare)]) as [B.BExpr, B.BExpr, B.BExpr];
        this.comparable(operand, low, e.span, 'between');
        this.comparable(operand, high, e.span, 'between');
        return { kind: 'Between', operand, low, high, negated: e.negated, type: 'boolean', span: e.span };
      }
      case 'Like': {
        const operand = typeNull(this.expr(e.operand, ctx), 'text');
        const pattern = typeNull(this.expr(e.pattern, ctx), 'text');
        for (const side of [operand, pattern]) {
          if (side.type !== 'text' && side.type !== 'null') {
            this.bag.error('TYPE_MISMATCH', side.span, `${e.caseInsensitive ? 'ILIKE' : 'LIKE'} matches text, but '${sourceOf(this.bag, side)}' is a ${describe(side.type)}`, 'compare numbers and dates with = < > or BETWEEN');
          }
        }
        // PostgreSQL rejects a pattern ending in its escape character only when the query runs.
        if (pattern.kind === 'Value' && typeof pattern.value === 'string' && /(?:^|[^\\])(?:\\\\)*\\$/.test(pattern.value)) {
          this.bag.error(
            'INVALID_ARGUMENT',
            pattern.span,
            `the ${e.caseInsensitive ? 'ILIKE' : 'LIKE'} pattern '${pattern.value}' ends with the escape character \\`,
            'write \\\\ for a literal backslash, or remove the trailing \\',
          );
        }
        return { kind: 'Like', operand, pattern, caseInsensitive: e.caseInsensitive, negated: e.negated, type: 'boolean', span: e.span };
      }
      case 'InList': {
        const bare = this.expr(e.operand, ctx);
        const [operand, ...items] = unifyCompared([bare, ...e.items.map((i) => this.coerce(this.expr(i, ctx), bare))]) as [B.BExpr, ...B.BExpr[]];
        for (const i of items) {
          this.comparable(operand, i, i.span, 'in');
          this.checkOption(operand, i);
        }
        return { kind: 'InList', operand, items, negated: e.negated, type: 'boolean', span: e.span };
      }
      case 'InSubquery':
        return this.inSubquery(e, ctx);
      case 'Exists':
        return { kind: 'Exists', query: this.subquery(e.query, ctx), type: 'boolean', span: e.span };
      case 'Subquery': {
        const query = this.subquery(e.query, ctx);
        this.singleColumn(query, e.span);
        return { kind: 'Subquery', query, type: query.outputs[0]?.expr.type ?? 'null', span: e.span };
      }
      case 'Case':
        return this.caseExpr(e, ctx);
      case 'Array': {
        const items = e.items.map((i) => this.expr(i, ctx));
        for (const i of items) {
          if (i.type !== 'text' && i.type !== 'null') {
            const quoted = i.kind === 'Value' ? `'${String(i.value).replace(/'/g, "''")}'` : `'${examplesFor(this.options).multiselect?.option ?? 'option'}'`;
            this.bag.error('TYPE_MISMATCH', i.span, `multiselect arrays hold option slugs (text), but '${sourceOf(this.bag, i)}' is a ${describe(i.type)}`, `quote the option: ARRAY[${quoted}]`);
          }
        }
        return { kind: 'Array', items, type: 'text[]', span: e.span };
      }
      case 'Cast': {
        const operand = this.expr(e.operand, ctx);
        // Casts other than ::date are reported by the validator; do not add a ::date complaint.
        if (e.type !== 'date') return operand;
        if (!['timestamp', 'timestamptz', 'calendar_date', 'null'].includes(operand.type)) {
          this.bag.error(
            'TYPE_MISMATCH',
            e.span,
            `::date needs a timestamp, but '${sourceOf(this.bag, operand)}' is a ${describe(operand.type)}`,
            operand.type === 'epoch' ? `write to_timestamp(${sourceOf(this.bag, operand)} / 1000)::date` : 'cast a timestamp such as to_timestamp(field / 1000)',
          );
        }
        return { kind: 'Cast', operand, to: 'date', type: 'calendar_date', span: e.span };
      }
      case 'AtTimeZone': {
        // A NULL instant reads as timestamptz (AT TIME ZONE then gives a local timestamp, as typed below).
        const operand = typeNull(this.expr(e.operand, ctx), 'timestamptz');
        const zone = typeNull(this.expr(e.zone, ctx), 'text');
        if (zone.type !== 'text' && zone.type !== 'null') {
          this.bag.error('TYPE_MISMATCH', zone.span, 'AT TIME ZONE needs a zone name', `write AT TIME ZONE '${this.zone()}'`);
        }
        let type: B.ValueType = 'timestamp';
        if (operand.type === 'timestamp') type = 'timestamptz';
        else if (operand.type !== 'timestamptz' && operand.type !== 'null') {
          this.bag.error(
            'TYPE_MISMATCH',
            operand.span,
            `AT TIME ZONE needs a timestamp, but '${sourceOf(this.bag, operand)}' is a ${describe(operand.type)}`,
            operand.type === 'epoch' ? `convert the epoch first: to_timestamp(${sourceOf(this.bag, operand)} / 1000) AT TIME ZONE '${this.zone()}'` : 'use NOW() or to_timestamp(field / 1000)',
          );
        }
        return { kind: 'AtTimeZone', operand, zone, type, span: e.span };
      }
      case 'Extract':
      case 'DateKeyword':
        // Reported by the validator; bind to something harmless so binding can go on.
        return nullAt(e.span);
      default: {
        const never: never = e;
        throw new Error(`unhandled expression ${(never as A.Expr).kind}`);
      }
    }
  }

  private unary(e: A.Unary, ctx: Ctx): B.BExpr {
    const bare = this.expr(e.operand, ctx);
    if (e.op === 'NOT') return { kind: 'Unary', op: 'NOT', operand: this.expectBoolean(bare, 'NOT'), type: 'boolean', span: e.span };
    const operand = typeNull(bare, 'number');
    if (!isNumeric(operand.type) && operand.type !== 'null') {
      this.bag.error('TYPE_MISMATCH', e.span, `unary ${e.op} needs a number, but '${sourceOf(this.bag, operand)}' is a ${describe(operand.type)}`);
    }
    if (e.op === '+') return operand;
    // Fold the sign into a number literal so `-5` is one parameter, not an expression.
    if (operand.kind === 'Value' && typeof operand.value === 'number') return { ...operand, value: -operand.value, span: e.span };
    if (operand.kind === 'Value' && typeof operand.value === 'string' && (operand.pgType === 'numeric' || operand.pgType === 'int8')) {
      return { ...operand, value: operand.value.startsWith('-') ? operand.value.slice(1) : `-${operand.value}`, span: e.span };
    }
    return { kind: 'Unary', op: '-', operand, type: operand.type === 'epoch' ? 'number' : operand.type, span: e.span };
  }

  private binary(e: A.Binary, ctx: Ctx): B.BExpr {
    const bareLeft = this.expr(e.left, ctx);
    const bareRight = this.expr(e.right, ctx);
    switch (e.op) {
      case '+':
      case '-':
      case '*':
      case '/':
      case '%': {
        const left = typeNull(bareLeft, 'number');
        const right = typeNull(bareRight, 'number');
        for (const side of [left, right]) {
          if (!isNumeric(side.type) && side.type !== 'null') {
            // `now() - 86400000`: the timestamp's own epoch milliseconds make the arithmetic work.
            const epoch = side.type === 'timestamptz' ? `date_part('epoch', ${sourceOf(this.bag, side)})*1000` : undefined;
            this.bag.error(
              'TYPE_MISMATCH',
              side.span,
              `arithmetic needs numbers, but '${sourceOf(this.bag, side)}' is a ${describe(side.type)}`,
              side.type === 'text' ? 'join text with concat(a, b)' : epoch ? `dates are epoch milliseconds: write ${epoch}` : side.type.startsWith('timestamp') ? 'do arithmetic on the epoch milliseconds columns themselves' : undefined,
              epoch ? { range: [side.span.start, side.span.end], text: epoch } : undefined,
            );
          }
        }
        const [l, r] = unifyNumbers([left, right]) as [B.BExpr, B.BExpr];
        return { kind: 'Binary', op: e.op, left: l, right: r, type: 'number', span: e.span };
      }
      case '&&': {
        const left = typeNull(bareLeft, 'text[]');
        const right = typeNull(bareRight, 'text[]');
        if (left.type !== 'multiselect' && left.type !== 'text[]' && left.type !== 'null') {
          this.bag.error('TYPE_MISMATCH', left.span, `&& tests a multiselect, but '${sourceOf(this.bag, left)}' is a ${describe(left.type)}`, `for one value write ${sourceOf(this.bag, left)} = 'x', for several IN ('x', 'y')`);
        }
        if (right.type !== 'text[]' && right.type !== 'multiselect' && right.type !== 'null') {
          this.bag.error('TYPE_MISMATCH', right.span, `&& needs an array on the right, but '${sourceOf(this.bag, right)}' is a ${describe(right.type)}`, "write ARRAY['a', 'b']");
        }
        if (right.kind === 'Array') for (const i of right.items) this.checkOption(left, i);
        return { kind: 'Binary', op: '&&', left, right, type: 'boolean', span: e.span };
      }
      default:
        return this.comparison(e.op === '!=' ? '<>' : e.op, bareLeft, bareRight, e.span);
    }
  }

  private comparison(op: '=' | '<>' | '<' | '<=' | '>' | '>=', left: B.BExpr, right: B.BExpr, span: Span): B.BExpr {
    for (const [a, b] of [[left, right], [right, left]] as const) {
      if (a.type === 'multiselect') {
        const emptyTest = b.kind === 'Array' && b.items.length > 0 && b.items.every((i) => i.kind === 'Null');
        if (emptyTest && (op === '=' || op === '<>')) {
          return { kind: 'IsEmpty', operand: a, negated: op === '<>', type: 'boolean', span };
        }
        this.bag.error(
          'MULTISELECT_EQUALITY',
          span,
          `'${sourceOf(this.bag, a)}' is a multiselect: compare it with && or test emptiness with = ARRAY[NULL]`,
          `has any: ${sourceOf(this.bag, a)} && ARRAY['a', 'b']; has none: NOT (${sourceOf(this.bag, a)} && ARRAY['a']); is empty: ${sourceOf(this.bag, a)} = ARRAY[NULL]`,
        );
        return { kind: 'Binary', op, left, right, type: 'boolean', span };
      }
    }
    const [l, r] = unifyCompared([this.coerce(left, right), this.coerce(right, left)]) as [B.BExpr, B.BExpr];
    this.comparable(l, r, span, op);
    this.checkOption(l, r);
    this.checkOption(r, l);
    return { kind: 'Binary', op, left: l, right: r, type: 'boolean', span };
  }

  /** Booleans may be written 0 and 1 (docs/query-language.md#rules): such a literal binds as a boolean. */
  private coerce(value: B.BExpr, other: B.BExpr): B.BExpr {
    if (other.type === 'boolean' && value.kind === 'Value' && (value.value === 0 || value.value === 1) && value.pgType === 'int8') {
      return { kind: 'Value', value: value.value === 1, pgType: 'boolean', type: 'boolean', span: value.span };
    }
    return value;
  }

  private comparable(a: B.BExpr, b: B.BExpr, span: Span, op: DateComparisonOp = 'in'): void {
    const problem = compareTypes(a.type, b.type);
    if (!problem) return;
    if (this.timestampWithDateString(a, b, span, op) || this.timestampWithDateString(b, a, span, op)) return;
    const [col, lit] = a.type === 'epoch' ? [a, b] : [b, a];
    if (col.type === 'epoch' && lit.type === 'text') {
      const text = lit.kind === 'Value' ? String(lit.value) : sourceOf(this.bag, lit);
      // Keep the user's operator: only a whole-day `=`/`<>` becomes a range over the span.
      const whole = op === 'in' || op === 'between' ? lit.span : span;
      const repair = lit.kind === 'Value' ? repairDateString(this.bag.source, lit.span, text, col.span, op, whole, this.zone()) : null;
      this.bag.error(
        'DATE_STRING_COMPARISON',
        lit.span,
        `'${sourceOf(this.bag, col)}' holds epoch milliseconds and cannot be compared with the text '${text}'`,
        repair?.hint ?? `compare with epoch milliseconds, e.g. ${sourceOf(this.bag, col)} >= date_part('epoch', NOW())*1000`,
        repair?.fix,
      );
      return;
    }
    this.bag.error(
      'TYPE_MISMATCH',
      span,
      `cannot compare '${sourceOf(this.bag, a)}' (${describe(a.type)}) with '${sourceOf(this.bag, b)}' (${describe(b.type)})`,
      problem,
    );
  }

  /**
   * `to_timestamp(created_at / 1000) AT TIME ZONE 'z' > '2024-01-01'`: a timestamp compared with
   * a date string. Dates are epoch milliseconds, so the settled form compares the column itself
   * with the string's instant, read in the expression's own zone; replacing only the string
   * would compare a timestamp with a number. Reported as DATE_STRING_COMPARISON, like the
   * column compared with the string directly. True when it reported.
   */
  private timestampWithDateString(ts: B.BExpr, lit: B.BExpr, span: Span, op: DateComparisonOp): boolean {
    if (!(ts.type === 'timestamp' || ts.type === 'timestamptz' || ts.type === 'calendar_date')) return false;
    if (lit.kind !== 'Value' || typeof lit.value !== 'string' || parseDateText(lit.value, 'UTC') === null) return false;
    const form = epochForm(ts);
    const zone = form?.zone ?? this.zone();
    const column = form ? sourceOf(this.bag, form.column) : null;
    const whole = op === 'in' || op === 'between' ? lit.span : span;
    // Only a comparison of its own can become `column op ms`; in BETWEEN and IN the operand is shared.
    const repair = column !== null && op !== 'in' && op !== 'between' ? repairDateString(this.bag.source, lit.span, lit.value, ts.span, op, whole, zone, column) : null;
    const ms = parseDateText(lit.value, zone)!.epoch;
    this.bag.error(
      'DATE_STRING_COMPARISON',
      lit.span,
      `'${sourceOf(this.bag, ts)}' is a timestamp and '${lit.value}' a date string: dates are epoch milliseconds, compared as numbers`,
      repair?.hint ?? (column !== null ? `compare ${column} itself with epoch milliseconds, e.g. ${column} >= ${ms}` : `compare the epoch milliseconds column itself, e.g. with ${ms} for '${lit.value}'`),
      repair?.fix,
    );
    return true;
  }

  /** An enum compared with an option slug it does not have is almost always a typo. */
  private checkOption(column: B.BExpr, value: B.BExpr): void {
    if (column.kind !== 'Column' || (column.logical !== 'enum' && column.logical !== 'multiselect')) return;
    if (value.kind !== 'Value' || typeof value.value !== 'string') return;
    const options = this.options.catalog.objects.get(column.object)?.columns.get(column.column)?.options ?? [];
    if (options.includes(value.value)) return;
    // Option slugs are case-sensitive: 'Retail' never matches 'retail'.
    const sameCase = options.filter((o) => o.toLowerCase() === (value.value as string).toLowerCase());
    const literal = sourceOf(this.bag, value);
    if (sameCase.length === 1 && /^'.*'$/s.test(literal)) {
      const text = `'${sameCase[0]!.replace(/'/g, "''")}'`;
      this.bag.warning(
        'UNKNOWN_OPTION',
        value.span,
        `'${value.value}' is not an option of ${column.object}.${column.column} (option slugs are case-sensitive), so this never matches`,
        `write ${text}`,
        { range: [value.span.start, value.span.end], text },
      );
      return;
    }
    const near = didYouMean(value.value, options);
    this.bag.warning(
      'UNKNOWN_OPTION',
      value.span,
      `'${value.value}' is not an option of ${column.object}.${column.column}, so this never matches`,
      `${near ? `${near} ` : ''}the options are ${options.map((o) => `'${o}'`).join(', ')}`,
    );
  }

  private caseExpr(e: A.CaseExpr, ctx: Ctx): B.BExpr {
    let operand = e.operand ? this.expr(e.operand, ctx) : null;
    let whens = e.whens.map((w) => {
      let when = this.expr(w.when, ctx);
      if (operand) {
        when = this.coerce(when, operand);
        this.comparable(operand, when, w.when.span);
        this.checkOption(operand, when);
      } else when = this.expectBoolean(when, 'WHEN');
      return { when, then: this.expr(w.then, ctx) };
    });
    if (operand) {
      // CASE x WHEN y compares x = y: an untyped side takes the other's type, as in a comparison.
      const [o, ...ws] = unifyCompared([operand, ...whens.map((w) => w.when)]);
      operand = o!;
      whens = whens.map((w, i) => ({ when: ws[i]!, then: w.then }));
    }
    const otherwise = e.else ? this.expr(e.else, ctx) : null;
    const results = [...whens.map((w) => w.then), ...(otherwise ? [otherwise] : [])];
    const type = commonType(results, this.bag, sourceOf.bind(null, this.bag));
    const typed = unifyNumbers(results.map((r) => typeNull(r, type)));
    return {
      kind: 'Case',
      operand,
      whens: whens.map((w, i) => ({ when: w.when, then: typed[i]! })),
      else: otherwise && typed[whens.length]!,
      type,
      span: e.span,
    };
  }

  private inSubquery(e: A.InSubquery, ctx: Ctx): B.BExpr {
    if (e.operand.kind === 'Path') {
      const virtual = this.names.virtualEnd(e.operand, ctx.scope);
      if (virtual) {
        const condition = `id IN (${sourceOf(this.bag, e.query)})`;
        const { test, alias } = existsParts(this.options.catalog, virtual, ctx.scope, condition);
        const exists = `${e.negated ? 'NOT ' : ''}${test}`;
        // With a new alias, the fix spans from the FROM object (where the alias goes) to the IN;
        // only when no qualified name elsewhere uses the object's slug, which the alias would hide.
        const src = this.bag.source;
        const from = ctx.scope.fromEnd;
        const fix = alias === null
          ? { range: [e.span.start, e.span.end] as const, text: exists }
          : from !== undefined && from <= e.span.start && ctx.scope.name === ctx.scope.object.slug && !new RegExp(`\\b${ctx.scope.object.slug}\\s*\\.`).test(src)
            ? { range: [from, e.span.end] as const, text: ` ${alias}${src.slice(from, e.span.start)}${exists}` }
            : undefined;
        this.bag.error(
          'VIRTUAL_IN_SUBQUERY',
          e.operand.span,
          `'${sourceOf(this.bag, e.operand)}' is a one-to-many relation; IN (subquery) on it would silently match nothing`,
          `use ${e.negated ? 'NOT ' : ''}${existsForm(this.options.catalog, virtual, ctx.scope, condition)}`,
          fix,
        );
        return nullAt(e.span);
      }
    }
    let operand = this.expr(e.operand, ctx);
    let query = this.subquery(e.query, ctx);
    this.singleColumn(query, e.query.span);
    const selected = query.outputs[0];
    if (selected) {
      operand = typeNull(operand, selected.expr.type);
      query = typeOutput(query, operand.type);
    }
    const out = query.outputs[0];
    if (out) {
      if (out.expr.kind === 'Column' && out.expr.logical === 'virtual') {
        this.bag.error('VIRTUAL_IN_SUBQUERY', out.span, 'the subquery selects a one-to-many relation', 'use EXISTS with a condition on the child object');
      }
      this.comparable(operand, out.expr, e.span);
    }
    return { kind: 'InSubquery', operand, query, negated: e.negated, type: 'boolean', span: e.span };
  }

  private subquery(sel: A.Select, ctx: Ctx): B.BoundQuery {
    const slug = sel.from.object.name;
    const object = this.options.catalog.objects.get(slug);
    if (!object) {
      this.bag.error(
        'UNKNOWN_OBJECT',
        sel.from.object.span,
        `unknown object '${sourceOf(this.bag, sel.from.object)}'`,
        didYouMean(slug, this.options.catalog.objects.keys()) ?? `the objects are ${[...this.options.catalog.objects.keys()].join(', ')}`,
      );
      // Bind against the outer object so names inside still get checked against something.
      return { ...this.query(sel, ctx.scope.object, ctx.scope), object: slug };
    }
    return this.query(sel, object, ctx.scope);
  }

  private singleColumn(q: B.BoundQuery, span: Span): void {
    if (q.outputs.length !== 1) {
      this.bag.error('SUBQUERY_COLUMNS', span, `a subquery used as a value must select exactly one column, but this one selects ${q.outputs.length}`, 'select a single column, such as SELECT id');
    }
  }
}

/** A number literal as a parameter of the type PostgreSQL gives it (see numberLiteral). */
/** `to_timestamp(x / 1000)` or `to_timestamp(x / 1000) AT TIME ZONE 'z'` of an epoch column: x, and z. */
function epochForm(e: B.BExpr): { column: B.BExpr; zone: string | null } | null {
  let zone: string | null = null;
  let inner = e;
  if (e.kind === 'AtTimeZone') {
    if (e.zone.kind !== 'Value' || typeof e.zone.value !== 'string' || !isZone(e.zone.value)) return null;
    zone = e.zone.value;
    inner = e.operand;
  }
  if (inner.kind !== 'Call' || inner.fn !== 'to_timestamp') return null;
  const arg = inner.args[0];
  if (arg?.kind !== 'Binary' || arg.op !== '/' || arg.left.type !== 'epoch' || arg.right.kind !== 'Value' || arg.right.value !== 1000) return null;
  return { column: arg.left, zone };
}

function numberValue(e: A.NumberLit): B.BExpr {
  const n = numberLiteral(e.text);
  // Out of range was reported by the validator; NULL lets binding go on.
  if (!n.ok) return nullAt(e.span);
  return { kind: 'Value', value: n.value, pgType: n.pgType, type: 'number', span: e.span };
}
