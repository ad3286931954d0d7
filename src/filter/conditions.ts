import type * as B from '../bind/bound.js';
import { correlatedExists } from '../bind/exists.js';
import type { Catalog, ColumnDef } from '../catalog/types.js';
import { didYouMean } from '../diagnostics/suggest.js';
import { MAX_PATH_HOPS, SPAN, columnNode, resolvePath, splitPath } from './paths.js';
import { at, get, has, isPlainObject, kindOf, show, type Problems } from './problems.js';
import {
  binary, bool, booleanOf, categoryOf, epochOf, escapeLike, int8, isNull, like, logical, not, numberOf, numeric, text, textArray,
  type Category,
} from './values.js';

/** The operators of the record filter (docs/filter.md#conditions). */
export const OPERATORS = [
  'eq', 'neq', 'gt', 'lt', 'gte', 'lte', 'in', 'nin', 'like', 'ilike', 'starts_with', 'ends_with', 'contains', 'not_contains',
  'between', 'is_empty', 'not_empty', 'exists', 'not_exists', 'global_search', 'leq', 'nleq',
] as const;
export type Operator = (typeof OPERATORS)[number];

const PRESENCE: readonly Operator[] = ['is_empty', 'not_empty', 'exists', 'not_exists'];
const EQUALITY: readonly Operator[] = ['eq', 'neq', 'in', 'nin'];
const ORDERED: readonly Operator[] = ['gt', 'lt', 'gte', 'lte', 'leq', 'nleq', 'between'];
const STRING: readonly Operator[] = ['like', 'ilike', 'starts_with', 'ends_with', 'contains', 'not_contains'];

/** Which operators apply to which kind of field (global_search has no field). */
export const APPLIES: Readonly<Record<Category, ReadonlySet<Operator>>> = {
  text: new Set([...EQUALITY, ...STRING, ...PRESENCE]),
  relation: new Set([...EQUALITY, ...PRESENCE]),
  enum: new Set([...EQUALITY, ...PRESENCE]),
  number: new Set([...EQUALITY, ...ORDERED, ...PRESENCE]),
  time: new Set([...EQUALITY, ...ORDERED, ...PRESENCE]),
  boolean: new Set(['eq', 'neq', ...PRESENCE] as Operator[]),
  multiselect: new Set([...EQUALITY, ...PRESENCE]),
  json: new Set(PRESENCE),
  virtual: new Set(PRESENCE),
};

const OPERATOR_SET: ReadonlySet<string> = new Set(OPERATORS);
const NO_VALUE: ReadonlySet<Operator> = new Set(PRESENCE);
const CONDITION_KEYS = ['field', 'operator', 'value', 'and', 'or'];

/** Longest string value accepted, and most items of an `in`/`nin` list. */
export const MAX_STRING_LENGTH = 10_000;
export const MAX_LIST_LENGTH = 1_000;
/**
 * Most values of one body in all, each list item counting one: every value is a bind parameter
 * (a PostgreSQL statement takes at most 65,535) and costs the compiler a few microseconds, so
 * 200 conditions of 1,000-item lists would be a 200,000-parameter statement no server runs.
 */
export const MAX_VALUES = 5_000;
/**
 * Most characters of all the string values of one body together: each is read a few times
 * (checked, escaped, hashed), and twenty values of the longest length are more than any filter needs.
 */
export const MAX_TEXT = 200_000;

export interface ConditionLimits {
  /** Deepest nesting of and/or groups. */
  readonly maxDepth: number;
  /** Most condition objects (groups and leaves) in one body. */
  readonly maxConditions: number;
}

/**
 * Turns the condition tree of a body into one bound expression over the root object (scope 0),
 * reporting every problem into `problems` with its JSON path. Returns null when any was found.
 */
export class ConditionBuilder {
  private nextScope = 1;
  private conditions = 0;
  private values = 0;
  private textLength = 0;
  /** A limit of the whole body was exceeded: it is reported once and nothing more is read. */
  private stopped = false;

  constructor(
    private readonly catalog: Catalog,
    private readonly root: string,
    private readonly access: ReadonlySet<string> | null,
    private readonly problems: Problems,
    private readonly limits: ConditionLimits,
  ) {}

  /** The filters object of a filter body: and/or groups, nested; `{}` is no filter. */
  tree(v: unknown, path: string): B.BExpr | null {
    if (isPlainObject(v) && Object.keys(v).length === 0) return null;
    return this.node(v, path, 1, false);
  }

  /** The filter of a connector body: `{and: [{field, operator, value}, ...]}`, flat. */
  flat(v: unknown, path: string): B.BExpr | null {
    if (!isPlainObject(v)) {
      this.problems.add('INVALID_BODY', path, 'filter', `filter must be an object like {"and": [...]}, not ${kindOf(v)}`);
      return null;
    }
    for (const key of Object.keys(v)) {
      if (this.problems.full) break;
      if (key !== 'and') this.problems.add('INVALID_BODY', at(path, key), key, () => `the connector filter takes only 'and' (a list of conditions)${key === 'or' ? '' : `; '${key}' is not allowed`}`);
    }
    if (!has(v, 'and')) return null;
    return this.group(get(v, 'and'), at(path, 'and'), 'AND', 1, true);
  }

  /** Field paths from a leaf node used as the incremental-sync key (top-level `gte` on a time field). */
  static leafOf(v: unknown): { field: string; operator: string; value: unknown } | null {
    if (!isPlainObject(v) || typeof v['field'] !== 'string' || typeof v['operator'] !== 'string') return null;
    return { field: v['field'], operator: v['operator'], value: v['value'] };
  }

  private node(v: unknown, path: string, depth: number, flat: boolean): B.BExpr | null {
    if (++this.conditions > this.limits.maxConditions) {
      this.stop(path, '', `the filter has more than ${this.limits.maxConditions} conditions`);
      return null;
    }
    // Once the report is full the body is refused whatever the rest holds: reading it is wasted.
    if (this.problems.full) return null;
    if (!isPlainObject(v)) {
      this.problems.add('INVALID_BODY', path, '', `a condition must be an object, not ${kindOf(v)}`);
      return null;
    }
    for (const key of Object.keys(v)) {
      if (this.problems.full) break;
      if (CONDITION_KEYS.includes(key) && !(flat && (key === 'and' || key === 'or'))) continue;
      this.problems.add('INVALID_BODY', at(path, key), key, () => {
        if (flat && (key === 'and' || key === 'or')) return 'connector conditions do not nest';
        const hint = flat ? undefined : didYouMean(key, CONDITION_KEYS);
        return `'${key}' is not a key of a condition (they are field, operator, value, and, or)${hint ? `; ${hint}` : ''}`;
      });
    }
    const parts: (B.BExpr | null)[] = [];
    const leaf = has(v, 'field') || has(v, 'operator') || has(v, 'value');
    if (leaf) parts.push(this.leaf(v, path, flat));
    if (!flat) {
      if (has(v, 'and')) parts.push(this.group(get(v, 'and'), at(path, 'and'), 'AND', depth, false));
      if (has(v, 'or')) parts.push(this.group(get(v, 'or'), at(path, 'or'), 'OR', depth, false));
    }
    if (parts.length === 0) {
      this.problems.add('INVALID_BODY', path, '', 'a condition needs field and operator, or a list of conditions under and/or');
      return null;
    }
    if (parts.some((p) => p === null)) return null;
    return logical('AND', parts as B.BExpr[]);
  }

  private group(v: unknown, path: string, op: 'AND' | 'OR', depth: number, flat: boolean): B.BExpr | null {
    if (!Array.isArray(v)) {
      this.problems.add('INVALID_BODY', path, '', `${op.toLowerCase()} must be a list of conditions, not ${kindOf(v)}`);
      return null;
    }
    if (v.length === 0) {
      this.problems.add('INVALID_BODY', path, '', `${op.toLowerCase()} is empty; give at least one condition or leave it out`);
      return null;
    }
    if (depth > this.limits.maxDepth) {
      this.problems.add('LIMIT_EXCEEDED', path, '', `conditions are nested deeper than ${this.limits.maxDepth} levels`);
      return null;
    }
    const out: B.BExpr[] = [];
    let failed = false;
    for (let i = 0; i < v.length; i++) {
      if (this.stopped || this.problems.full) return null;
      const e = this.node(v[i], at(path, i), depth + 1, flat);
      if (e) out.push(e);
      else failed = true;
    }
    return failed ? null : logical(op, out);
  }

  private leaf(v: Record<string, unknown>, path: string, flat: boolean): B.BExpr | null {
    const field = get(v, 'field');
    const operator = get(v, 'operator');
    const value = get(v, 'value');
    const fieldName = typeof field === 'string' ? field : '';
    let ok = true;
    if (typeof operator !== 'string') {
      this.problems.add('INVALID_BODY', at(path, 'operator'), fieldName, operator === undefined ? 'the condition has no operator' : `operator must be a string, not ${kindOf(operator)}`);
      ok = false;
    } else if (!OPERATOR_SET.has(operator)) {
      this.problems.add('UNKNOWN_OPERATOR', at(path, 'operator'), fieldName, () => {
        const hint = didYouMean(operator, OPERATORS);
        return `unknown operator ${show(operator)}${hint ? `; ${hint}` : `; the operators are ${OPERATORS.join(', ')}`}`;
      });
      ok = false;
    }
    if (typeof field !== 'string') {
      // global_search may leave the field out; everything else names one.
      if (!(field === undefined && operator === 'global_search')) {
        this.problems.add('INVALID_BODY', at(path, 'field'), '', field === undefined ? 'the condition has no field' : `field must be a string, not ${kindOf(field)}`);
        ok = false;
      }
    }
    const op = operator as Operator;
    if (ok && flat && !NO_VALUE.has(op) && !has(v, 'value')) {
      this.problems.add('INVALID_BODY', at(path, 'value'), fieldName, `the condition has no value; '${op}' needs one`);
      ok = false;
    }
    // Presence operators take no value (docs/filter.md): one given is refused rather than ignored,
    // so a client that meant another operator hears so, and no unread value is kept or hashed.
    if (ok && NO_VALUE.has(op) && value !== undefined && value !== null) {
      this.problems.add('INVALID_VALUE', at(path, 'value'), fieldName, () => `'${op}' takes no value, not ${kindOf(value)}; leave value out or send null`);
      ok = false;
    }
    if (!ok) return null;
    if (op === 'global_search') return this.globalSearch(fieldName, value, path);
    const segments = splitPath(fieldName);
    if (!segments) {
      this.problems.add('UNKNOWN_FIELD', at(path, 'field'), fieldName, fieldName === '' ? `'${op}' needs a field (only global_search takes field "")` : `${show(fieldName)} is not a field name or dot path`);
      return null;
    }
    return this.onPath(0, this.root, segments, fieldName, op, value, path);
  }

  /** A condition on a path from `object` (in `scope`); a one-to-many step becomes EXISTS. */
  private onPath(scope: number, object: string, segments: readonly string[], field: string, op: Operator, value: unknown, path: string): B.BExpr | null {
    const r = resolvePath(this.catalog, object, segments, this.access);
    if ('error' in r) {
      this.problems.add('UNKNOWN_FIELD', at(path, 'field'), field, r.error);
      return null;
    }
    const p = r.ok;
    if (p.kind === 'column') {
      return this.predicate(columnNode(scope, p, p.def), p.def, op, value, path, field);
    }
    if (p.rest.length > 0 && p.hops.length + p.rest.length > MAX_PATH_HOPS + 1) {
      this.problems.add('UNKNOWN_FIELD', at(path, 'field'), field, `'${field}' crosses more than ${MAX_PATH_HOPS} relations`);
      return null;
    }
    // "Any child matches": EXISTS over the child object, correlated on the relation's column,
    // so a parent is returned once however many children match.
    const child = p.relation.relation.object;
    const childScope = this.nextScope++;
    const parentId: B.BColumn = { kind: 'Column', scope, hops: p.hops, object: p.parent, column: this.idColumn(p.parent), logical: 'id', type: 'text', span: SPAN };
    let inner: B.BExpr | null = null;
    let negate = false;
    if (p.rest.length === 0) {
      if (!NO_VALUE.has(op)) {
        this.problems.add('OPERATOR_NOT_APPLICABLE', at(path, 'operator'), field, `'${field}' is a one-to-many relation: it takes ${PRESENCE.join(', ')} (has any / has no records), or filter on one of its fields as '${field}.<field>'`);
        return null;
      }
      negate = op === 'is_empty' || op === 'not_exists';
    } else {
      inner = this.onPath(childScope, child, p.rest, field, op, value, path);
      if (!inner) return null;
    }
    const exists = correlatedExists({ scope: childScope, object: child, via: p.relation.relation.via }, parentId, inner, SPAN);
    return negate ? not(exists) : exists;
  }

  private idColumn(object: string): string {
    for (const c of this.catalog.objects.get(object)!.columns.values()) if (c.type === 'id') return c.slug;
    return this.catalog.mapping.idColumn;
  }

  private globalSearch(field: string, value: unknown, path: string): B.BExpr | null {
    let ok = true;
    if (field !== '') {
      this.problems.add('INVALID_BODY', at(path, 'field'), field, () => `global_search searches every text field of the object: send field "" (not ${show(field)})`);
      ok = false;
    }
    if (!this.takeValues(1, at(path, 'value'), field)) return null;
    const s = this.string(value, at(path, 'value'), field);
    if (!ok || s === null) return null;
    const columns = searchColumns(this.catalog, this.root).map((c) => ({ kind: 'Column', scope: 0, hops: [], object: this.root, column: c, logical: 'text', type: 'text', span: SPAN }) as B.BColumn);
    // An empty search string is a cleared search box: every record.
    if (s === '' || columns.length === 0) return bool(s === '');
    const pattern = `%${escapeLike(s, false)}%`;
    return logical('OR', columns.map((c) => like(c, pattern, true)));
  }

  private stop(path: string, field: string, message: string): void {
    if (!this.stopped) this.problems.add('LIMIT_EXCEEDED', path, field, message);
    this.stopped = true;
  }

  /** Counts `n` more values against MAX_VALUES before any of them is read. */
  private takeValues(n: number, path: string, field: string): boolean {
    this.values += n;
    if (this.values <= MAX_VALUES) return true;
    this.stop(path, field, `the filter has more than ${MAX_VALUES} values in all (each item of a list counts one)`);
    return false;
  }

  /**
   * The caps on a string value, checked before a character of it is read as text, number or
   * date: its own length, then the characters of all string values of the body so far.
   */
  private sized(v: string, path: string, field: string): boolean {
    if (v.length > MAX_STRING_LENGTH) {
      this.problems.add('LIMIT_EXCEEDED', path, field, `the value is longer than ${MAX_STRING_LENGTH} characters`);
      return false;
    }
    this.textLength += v.length;
    if (this.textLength <= MAX_TEXT) return true;
    this.stop(path, field, `the filter's string values hold more than ${MAX_TEXT} characters in all`);
    return false;
  }

  private string(v: unknown, path: string, field: string): string | null {
    if (typeof v !== 'string') {
      this.problems.add('INVALID_VALUE', path, field, v === undefined ? 'a string value is required' : `expects a string, not ${kindOf(v)}`);
      return null;
    }
    if (!this.sized(v, path, field)) return null;
    // PostgreSQL text cannot hold NUL: say so here rather than let the database fail.
    if (v.includes('\u0000')) {
      this.problems.add('INVALID_VALUE', path, field, 'the value contains a NUL character (\\u0000), which no field can hold');
      return null;
    }
    return v;
  }

  /** One value for a field, as a bind parameter of the field's type. */
  private scalar(cat: Category, def: ColumnDef, v: unknown, path: string, field: string): B.BValue | null {
    if (typeof v === 'string' && (cat === 'number' || cat === 'time') && !this.sized(v, path, field)) return null;
    switch (cat) {
      case 'text':
      case 'relation': {
        const s = this.string(v, path, field);
        return s === null ? null : text(s);
      }
      case 'enum':
      case 'multiselect': {
        const s = this.string(v, path, field);
        if (s === null) return null;
        const options = def.options ?? [];
        if (!options.includes(s)) {
          this.problems.add('UNKNOWN_OPTION', path, field, () => {
            const hint = didYouMean(s, options);
            return `${show(s)} is not an option of '${field}'${hint ? ` (${hint})` : ''}; the options are ${options.join(', ')}`;
          });
          return null;
        }
        return text(s);
      }
      case 'number': {
        const n = numberOf(v);
        if (n === null) {
          this.problems.add('INVALID_VALUE', path, field, () => `'${field}' is a number: expects a finite number, not ${show(v)}`);
          return null;
        }
        return numeric(n);
      }
      case 'time': {
        const ms = epochOf(v);
        if (ms === null) {
          this.problems.add('INVALID_VALUE', path, field, () => `'${field}' is a ${def.type}: expects epoch milliseconds (an integer) or an ISO 8601 date-time such as 2024-05-01T10:00:00Z, not ${show(v)}`);
          return null;
        }
        return int8(ms);
      }
      case 'boolean': {
        const b = booleanOf(v);
        if (b === null) {
          this.problems.add('INVALID_VALUE', path, field, () => `'${field}' is a boolean: expects true or false (or 1 or 0), not ${show(v)}`);
          return null;
        }
        return bool(b);
      }
      default:
        this.problems.add('OPERATOR_NOT_APPLICABLE', path, field, `'${field}' (${def.type}) takes no value`);
        return null;
    }
  }

  private list(cat: Category, def: ColumnDef, v: unknown, path: string, field: string, exact?: number): B.BValue[] | null {
    if (!Array.isArray(v)) {
      this.problems.add('INVALID_VALUE', path, field, exact ? `expects a list of ${exact} values [low, high], not ${kindOf(v)}` : `expects a list of values, not ${kindOf(v)}`);
      return null;
    }
    if (exact !== undefined && v.length !== exact) {
      this.problems.add('INVALID_VALUE', path, field, `expects exactly ${exact} values [low, high], not ${v.length}`);
      return null;
    }
    if (v.length > MAX_LIST_LENGTH) {
      this.problems.add('LIMIT_EXCEEDED', path, field, `the list has more than ${MAX_LIST_LENGTH} values`);
      return null;
    }
    if (!this.takeValues(v.length, path, field)) return null;
    const out: B.BValue[] = [];
    let failed = false;
    for (let i = 0; i < v.length; i++) {
      if (this.stopped) return null;
      const x = this.scalar(cat, def, v[i], at(path, i), field);
      if (x) out.push(x);
      else failed = true;
    }
    return failed ? null : out;
  }

  /** The predicate of one condition; its meaning per operator is the README's filter table. */
  private predicate(c: B.BColumn, def: ColumnDef, op: Operator, value: unknown, path: string, field: string): B.BExpr | null {
    const cat = categoryOf(def.type);
    if (!APPLIES[cat].has(op)) {
      this.problems.add('OPERATOR_NOT_APPLICABLE', at(path, 'operator'), field, () => `operator '${op}' does not apply to '${field}' (${def.type}); it takes ${[...APPLIES[cat]].join(', ')}`);
      return null;
    }
    const vpath = at(path, 'value');
    const empty = isEmpty(c, cat);
    switch (op) {
      case 'is_empty':
        return empty;
      case 'not_empty':
        return notEmpty(c, cat);
      case 'exists':
        return isNull(c, true);
      case 'not_exists':
        return isNull(c);
      case 'in':
      case 'nin': {
        const items = this.list(cat, def, value, vpath, field);
        if (!items) return null;
        // `in []` matches nothing and `nin []` everything, as the sets say.
        if (items.length === 0) return bool(op === 'nin');
        const has = cat === 'multiselect'
          ? binary('&&', c, textArray(items.map((i) => i.value as string)))
          : ({ kind: 'InList', operand: c, items, negated: false, type: 'boolean', span: SPAN } as B.BInList);
        return op === 'in' ? has : orEmpty(c, has);
      }
      case 'between': {
        const items = this.list(cat, def, value, vpath, field, 2);
        if (!items) return null;
        const [low, high] = items as [B.BValue, B.BValue];
        if ((low.value as number) > (high.value as number)) {
          this.problems.add('INVALID_RANGE', vpath, field, () => `the range is reversed: ${show(value)} has its low end above its high end`);
          return null;
        }
        return { kind: 'Between', operand: c, low, high, negated: false, type: 'boolean', span: SPAN };
      }
      case 'like':
      case 'ilike':
      case 'starts_with':
      case 'ends_with':
      case 'contains':
      case 'not_contains': {
        if (!this.takeValues(1, vpath, field)) return null;
        const s = this.string(value, vpath, field);
        if (s === null) return null;
        if (op === 'like' || op === 'ilike') return like(c, escapeLike(s, true), op === 'ilike');
        const lit = escapeLike(s, false);
        const pattern = op === 'starts_with' ? `${lit}%` : op === 'ends_with' ? `%${lit}` : `%${lit}%`;
        return op === 'not_contains' ? orEmpty(c, like(c, pattern, true)) : like(c, pattern, true);
      }
      default: {
        if (!this.takeValues(1, vpath, field)) return null;
        const x = this.scalar(cat, def, value, vpath, field);
        if (!x) return null;
        if (cat === 'multiselect') {
          const has = binary('&&', c, textArray([x.value as string]));
          return op === 'eq' ? has : orEmpty(c, has);
        }
        switch (op) {
          case 'eq':
            return binary('=', c, x);
          case 'neq':
            return orEmpty(c, binary('=', c, x));
          case 'gt':
            return binary('>', c, x);
          case 'gte':
            return binary('>=', c, x);
          case 'lt':
            return binary('<', c, x);
          case 'lte':
          case 'leq':
            return binary('<=', c, x);
          case 'nleq':
            return orEmpty(c, binary('<=', c, x));
          default:
            throw new Error(`unhandled operator ${op}`);
        }
      }
    }
  }
}

/**
 * The negative operators: NOT of the positive test, with empty fields included (a record with
 * no value "is not equal to X"). Every positive test here is null exactly when the column is,
 * so `c IS NULL OR NOT p` is its complement. Written so rather than `NOT coalesce(p, false)`:
 * PostgreSQL estimates `IS NULL` and `NOT p` from the column's statistics but a coalesce() at a
 * flat guess of one half, and twenty such guesses made it plan a 50-condition filter as if it
 * matched nothing (a full scan and sort instead of stopping at the page's LIMIT; bench/filter.ts).
 */
function orEmpty(c: B.BColumn, positive: B.BExpr): B.BExpr {
  return logical('OR', [isNull(c), not(positive)]);
}

/** Empty: null, or '' for text, or no elements for a multiselect. Never null itself. */
function isEmpty(c: B.BColumn, cat: Category): B.BExpr {
  if (cat === 'multiselect') return { kind: 'IsEmpty', operand: c, negated: false, type: 'boolean', span: SPAN };
  if (cat === 'text') return logical('OR', [isNull(c), binary('=', c, text(''))]);
  return isNull(c);
}

function notEmpty(c: B.BColumn, cat: Category): B.BExpr {
  if (cat === 'multiselect') return { kind: 'IsEmpty', operand: c, negated: true, type: 'boolean', span: SPAN };
  if (cat === 'text') return logical('AND', [isNull(c, true), binary('<>', c, text(''))]);
  return isNull(c, true);
}

/** The columns global_search looks in: the text-like stored columns, and the derived search column. */
export function searchColumns(catalog: Catalog, object: string): string[] {
  const out: string[] = [];
  for (const c of catalog.objects.get(object)!.columns.values()) {
    if (c.column !== null && (c.type === 'text' || c.type === 'email' || c.type === 'phone' || c.type === 'url')) out.push(c.slug);
  }
  const search = catalog.mapping.searchColumn;
  if (search && !out.includes(search)) out.push(search);
  return out;
}
