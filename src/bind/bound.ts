import type { ColumnDef, ObjectDef } from '../catalog/types.js';
import type { Span } from '../diagnostics/span.js';

/**
 * The bound tree: the query with every name resolved against the catalog and every
 * expression typed. It is plain, serialisable data (objects and columns are referred to by
 * slug) so the planner, a second frontend or a test can build and read it.
 */

/** Types of values as the compiler reasons about them. `epoch` is a date/datetime column's bigint milliseconds. */
export type ValueType =
  | 'text'
  | 'number'
  | 'boolean'
  | 'epoch'
  | 'timestamp'
  | 'timestamptz'
  /** A PostgreSQL `date` (from `::date`), as opposed to a date column's epoch milliseconds. */
  | 'calendar_date'
  | 'multiselect'
  | 'text[]'
  | 'json'
  | 'null';

/** One relation step of a dot path. */
export interface Hop {
  readonly kind: 'to-one' | 'virtual';
  /** The relation column's slug on the object the hop starts from. */
  readonly via: string;
  /** The slug of the object the hop arrives at. */
  readonly object: string;
}

export interface BColumn {
  readonly kind: 'Column';
  /** The scope (FROM item) the path starts from. */
  readonly scope: number;
  readonly hops: readonly Hop[];
  /** Slug of the object that owns the column, after the hops. */
  readonly object: string;
  readonly column: string;
  /** Logical type from the catalog (`enum`, `datetime`...). */
  readonly logical: ColumnDef['type'];
  readonly type: ValueType;
  readonly span: Span;
}

/** A literal from the query text; it always becomes a bind parameter. */
export interface BValue {
  readonly kind: 'Value';
  readonly value: string | number | boolean | readonly string[];
  /** The Postgres type the parameter is cast to. */
  readonly pgType: 'text' | 'int8' | 'int4' | 'numeric' | 'boolean' | 'text[]';
  readonly type: ValueType;
  readonly span: Span;
}

export interface BNull {
  readonly kind: 'Null';
  readonly type: ValueType;
  readonly span: Span;
}

export type FunctionName =
  | 'count'
  | 'sum'
  | 'avg'
  | 'min'
  | 'max'
  | 'lower'
  | 'upper'
  | 'concat'
  | 'trim'
  | 'left'
  | 'abs'
  | 'round'
  | 'coalesce'
  | 'date_trunc'
  | 'to_timestamp'
  | 'date_part'
  | 'if'
  | 'now';

export interface BCall {
  readonly kind: 'Call';
  readonly fn: FunctionName;
  readonly args: readonly BExpr[];
  readonly distinct: boolean;
  /** `count(*)`. */
  readonly star: boolean;
  readonly type: ValueType;
  readonly span: Span;
}

export interface BUnary {
  readonly kind: 'Unary';
  readonly op: '-' | 'NOT';
  readonly operand: BExpr;
  readonly type: ValueType;
  readonly span: Span;
}

export interface BBinary {
  readonly kind: 'Binary';
  readonly op: '+' | '-' | '*' | '/' | '%' | '=' | '<>' | '<' | '<=' | '>' | '>=' | '&&';
  readonly left: BExpr;
  readonly right: BExpr;
  readonly type: ValueType;
  readonly span: Span;
}

export interface BLogical {
  readonly kind: 'Logical';
  readonly op: 'AND' | 'OR';
  readonly operands: readonly BExpr[];
  readonly type: 'boolean';
  readonly span: Span;
}

export interface BIsNull {
  readonly kind: 'IsNull';
  readonly operand: BExpr;
  readonly negated: boolean;
  readonly type: 'boolean';
  readonly span: Span;
}

/** `x = ARRAY[NULL]`: the multiselect is null or has no elements. Never null itself. */
export interface BIsEmpty {
  readonly kind: 'IsEmpty';
  readonly operand: BExpr;
  readonly negated: boolean;
  readonly type: 'boolean';
  readonly span: Span;
}

export interface BBetween {
  readonly kind: 'Between';
  readonly operand: BExpr;
  readonly low: BExpr;
  readonly high: BExpr;
  readonly negated: boolean;
  readonly type: 'boolean';
  readonly span: Span;
}

export interface BLike {
  readonly kind: 'Like';
  readonly operand: BExpr;
  readonly pattern: BExpr;
  readonly caseInsensitive: boolean;
  readonly negated: boolean;
  readonly type: 'boolean';
  readonly span: Span;
}

export interface BInList {
  readonly kind: 'InList';
  readonly operand: BExpr;
  readonly items: readonly BExpr[];
  readonly negated: boolean;
  readonly type: 'boolean';
  readonly span: Span;
}

export interface BInSubquery {
  readonly kind: 'InSubquery';
  readonly operand: BExpr;
  readonly query: BoundQuery;
  readonly negated: boolean;
  readonly type: 'boolean';
  readonly span: Span;
}

export interface BExists {
  readonly kind: 'Exists';
  readonly query: BoundQuery;
  readonly type: 'boolean';
  readonly span: Span;
}

export interface BSubquery {
  readonly kind: 'Subquery';
  readonly query: BoundQuery;
  readonly type: ValueType;
  readonly span: Span;
}

export interface BCase {
  readonly kind: 'Case';
  readonly operand: BExpr | null;
  readonly whens: readonly { readonly when: BExpr; readonly then: BExpr }[];
  readonly else: BExpr | null;
  readonly type: ValueType;
  readonly span: Span;
}

export interface BArray {
  readonly kind: 'Array';
  readonly items: readonly BExpr[];
  readonly type: 'text[]';
  readonly span: Span;
}

export interface BCast {
  readonly kind: 'Cast';
  readonly operand: BExpr;
  readonly to: 'date';
  readonly type: 'calendar_date';
  readonly span: Span;
}

export interface BAtTimeZone {
  readonly kind: 'AtTimeZone';
  readonly operand: BExpr;
  readonly zone: BExpr;
  readonly type: ValueType;
  readonly span: Span;
}

/**
 * `(a, b) > ($x, $y)`: a row comparison, which PostgreSQL serves from a composite index as one
 * range scan (keyset pagination); the equivalent OR of ANDs is not.
 */
export interface BRowCompare {
  readonly kind: 'RowCompare';
  readonly op: '<' | '<=' | '>' | '>=';
  readonly left: readonly BExpr[];
  readonly right: readonly BExpr[];
  readonly type: 'boolean';
  readonly span: Span;
}

/**
 * `operand = ANY(array_agg(member))`: whether the operand is one of the values `member` takes
 * over the rows of the current group of `member`'s query. The planner builds it (exact
 * aggregates reading each record once per group, src/plan/exact.ts); no query text binds to it.
 */
export interface BInGroup {
  readonly kind: 'InGroup';
  readonly operand: BExpr;
  /** A column of an enclosing aggregated query: `array_agg` aggregates at that query's level. */
  readonly member: BColumn;
  readonly type: 'boolean';
  readonly span: Span;
}

/** A reference to a select item by position (ORDER BY alias or ordinal). */
export interface BOutputRef {
  readonly kind: 'OutputRef';
  readonly index: number;
  readonly type: ValueType;
  readonly span: Span;
}

/** `NOW()`, pinned to a parameter when the caller gives `now`. */
export interface BNow {
  readonly kind: 'Now';
  readonly type: 'timestamptz';
  readonly span: Span;
}

export type BExpr =
  | BColumn
  | BValue
  | BNull
  | BCall
  | BUnary
  | BBinary
  | BLogical
  | BIsNull
  | BIsEmpty
  | BBetween
  | BLike
  | BInList
  | BInSubquery
  | BExists
  | BSubquery
  | BCase
  | BArray
  | BCast
  | BAtTimeZone
  | BOutputRef
  | BNow
  | BRowCompare
  | BInGroup;

export interface BoundOutput {
  /** The key of the column in result rows. */
  readonly key: string;
  readonly expr: BExpr;
  /** Logical type of a plain column, or the value type of a computed one. */
  readonly type: string;
  readonly span: Span;
}

export interface BoundOrder {
  readonly expr: BExpr;
  readonly direction: 'ASC' | 'DESC' | null;
  readonly nulls: 'FIRST' | 'LAST' | null;
}

export interface BoundQuery {
  readonly kind: 'Query';
  readonly scope: number;
  /** Slug of the FROM object. */
  readonly object: string;
  readonly distinct: boolean;
  readonly outputs: readonly BoundOutput[];
  readonly where: BExpr | null;
  readonly groupBy: readonly BExpr[];
  readonly having: BExpr | null;
  readonly orderBy: readonly BoundOrder[];
  readonly limit: BValue | null;
  readonly offset: BValue | null;
  /** True when the select list or HAVING aggregates (so every row of output is a group). */
  readonly aggregated: boolean;
  readonly span: Span;
}

export type { ColumnDef, ObjectDef };
