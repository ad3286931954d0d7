import type { Span } from '../diagnostics/span.js';

/**
 * The syntax tree. Every node is immutable data with a `kind` discriminant and the span of the
 * text it came from. Constructs the dialect forbids but the parser recognises (casts to other
 * types, subscripts, EXTRACT, FILTER, window calls, CURRENT_DATE) have nodes too, so the
 * validator can reject each one at its exact span.
 */

export interface Ident {
  readonly kind: 'Ident';
  /** Folded to lower case unless the identifier was double-quoted. */
  readonly name: string;
  readonly quoted: boolean;
  readonly span: Span;
}

export interface Select {
  readonly kind: 'Select';
  readonly distinct: boolean;
  readonly items: readonly SelectItem[];
  readonly from: FromItem;
  readonly where: Expr | null;
  readonly groupBy: readonly Expr[];
  readonly having: Expr | null;
  readonly orderBy: readonly OrderItem[];
  readonly limit: NumberLit | null;
  readonly offset: NumberLit | null;
  readonly span: Span;
}

export interface SelectItem {
  readonly kind: 'SelectItem';
  readonly expr: Expr;
  readonly alias: Ident | null;
  readonly span: Span;
}

export interface FromItem {
  readonly kind: 'FromItem';
  readonly object: Ident;
  readonly alias: Ident | null;
  readonly span: Span;
}

export interface OrderItem {
  readonly kind: 'OrderItem';
  readonly expr: Expr;
  readonly direction: 'ASC' | 'DESC' | null;
  readonly nulls: 'FIRST' | 'LAST' | null;
  readonly span: Span;
}

export interface StringLit {
  readonly kind: 'String';
  readonly value: string;
  readonly span: Span;
}

export interface NumberLit {
  readonly kind: 'Number';
  /** The literal as written (`10`, `2.5`, `1e3`), so no precision is lost before binding. */
  readonly text: string;
  readonly isInteger: boolean;
  readonly span: Span;
}

export interface BooleanLit {
  readonly kind: 'Boolean';
  readonly value: boolean;
  readonly span: Span;
}

export interface NullLit {
  readonly kind: 'Null';
  readonly span: Span;
}

/** A name or a dot path: `amount`, `o.amount`, `owner.manager.email`. */
export interface Path {
  readonly kind: 'Path';
  readonly parts: readonly Ident[];
  readonly span: Span;
}

/** `*` or `alias.*` in a select list, and the `*` of `COUNT(*)`. */
export interface StarExpr {
  readonly kind: 'Star';
  readonly qualifier: Ident | null;
  readonly span: Span;
}

export interface Call {
  readonly kind: 'Call';
  readonly name: Ident;
  readonly args: readonly Expr[];
  readonly distinct: boolean;
  /** Forbidden: `FILTER (WHERE ...)`. */
  readonly filter: Expr | null;
  /** Forbidden: the span of `OVER (...)`, when present. */
  readonly over: Span | null;
  readonly span: Span;
}

export type UnaryOp = '-' | '+' | 'NOT';
export interface Unary {
  readonly kind: 'Unary';
  readonly op: UnaryOp;
  readonly operand: Expr;
  readonly span: Span;
}

export type ArithmeticOp = '+' | '-' | '*' | '/' | '%';
export type ComparisonOp = '=' | '<>' | '!=' | '<' | '<=' | '>' | '>=';
/** `&&` is multiselect overlap; `||`, `@>` and `<@` are recognised only to be rejected. */
export type BinaryOp = ArithmeticOp | ComparisonOp | '&&';

export interface Binary {
  readonly kind: 'Binary';
  readonly op: BinaryOp;
  readonly left: Expr;
  readonly right: Expr;
  readonly opSpan: Span;
  readonly span: Span;
}

/** AND and OR are n-ary so long filter chains stay shallow. */
export interface Logical {
  readonly kind: 'Logical';
  readonly op: 'AND' | 'OR';
  readonly operands: readonly Expr[];
  readonly span: Span;
}

export interface IsNull {
  readonly kind: 'IsNull';
  readonly operand: Expr;
  readonly negated: boolean;
  readonly span: Span;
}

export interface Between {
  readonly kind: 'Between';
  readonly operand: Expr;
  readonly low: Expr;
  readonly high: Expr;
  readonly negated: boolean;
  readonly span: Span;
}

export interface Like {
  readonly kind: 'Like';
  readonly operand: Expr;
  readonly pattern: Expr;
  readonly caseInsensitive: boolean;
  readonly negated: boolean;
  readonly span: Span;
}

export interface InList {
  readonly kind: 'InList';
  readonly operand: Expr;
  readonly items: readonly Expr[];
  readonly negated: boolean;
  readonly span: Span;
}

export interface InSubquery {
  readonly kind: 'InSubquery';
  readonly operand: Expr;
  readonly query: Select;
  readonly negated: boolean;
  readonly span: Span;
}

/** `EXISTS (...)`; `NOT EXISTS` is a `Unary` NOT around it. */
export interface Exists {
  readonly kind: 'Exists';
  readonly query: Select;
  readonly span: Span;
}

export interface Subquery {
  readonly kind: 'Subquery';
  readonly query: Select;
  readonly span: Span;
}

export interface WhenClause {
  readonly kind: 'When';
  readonly when: Expr;
  readonly then: Expr;
  readonly span: Span;
}

export interface CaseExpr {
  readonly kind: 'Case';
  /** The operand of a simple CASE (`CASE stage WHEN 'won' THEN ...`), null for a searched CASE. */
  readonly operand: Expr | null;
  readonly whens: readonly WhenClause[];
  readonly else: Expr | null;
  readonly span: Span;
}

export interface ArrayExpr {
  readonly kind: 'Array';
  readonly items: readonly Expr[];
  readonly span: Span;
}

export interface Cast {
  readonly kind: 'Cast';
  readonly operand: Expr;
  /** The type name, lower case, single-spaced (`date`, `double precision`, `text[]`). */
  readonly type: string;
  readonly typeSpan: Span;
  readonly span: Span;
}

export interface AtTimeZone {
  readonly kind: 'AtTimeZone';
  readonly operand: Expr;
  readonly zone: Expr;
  readonly span: Span;
}

/** Forbidden: `EXTRACT(field FROM source)`. */
export interface ExtractExpr {
  readonly kind: 'Extract';
  readonly field: string;
  readonly source: Expr;
  readonly span: Span;
}

/** Forbidden: CURRENT_DATE, CURRENT_TIMESTAMP, CURRENT_TIME, LOCALTIMESTAMP, LOCALTIME. */
export interface DateKeyword {
  readonly kind: 'DateKeyword';
  readonly name: string;
  readonly span: Span;
}

export type Literal = StringLit | NumberLit | BooleanLit | NullLit;

export type Expr =
  | Literal
  | Path
  | StarExpr
  | Call
  | Unary
  | Binary
  | Logical
  | IsNull
  | Between
  | Like
  | InList
  | InSubquery
  | Exists
  | Subquery
  | CaseExpr
  | ArrayExpr
  | Cast
  | AtTimeZone
  | ExtractExpr
  | DateKeyword;

export type Node = Select | SelectItem | FromItem | OrderItem | WhenClause | Ident | Expr;

/** Calls `visit` on each direct child node of `node`, in source order. */
export function forEachChild(node: Node, visit: (child: Node) => void): void {
  switch (node.kind) {
    case 'Select':
      node.items.forEach(visit);
      visit(node.from);
      if (node.where) visit(node.where);
      node.groupBy.forEach(visit);
      if (node.having) visit(node.having);
      node.orderBy.forEach(visit);
      if (node.limit) visit(node.limit);
      if (node.offset) visit(node.offset);
      return;
    case 'SelectItem':
      visit(node.expr);
      if (node.alias) visit(node.alias);
      return;
    case 'FromItem':
      visit(node.object);
      if (node.alias) visit(node.alias);
      return;
    case 'OrderItem':
      visit(node.expr);
      return;
    case 'When':
      visit(node.when);
      visit(node.then);
      return;
    case 'Path':
      node.parts.forEach(visit);
      return;
    case 'Star':
      if (node.qualifier) visit(node.qualifier);
      return;
    case 'Call':
      visit(node.name);
      node.args.forEach(visit);
      if (node.filter) visit(node.filter);
      return;
    case 'Unary':
      visit(node.operand);
      return;
    case 'Binary':
      visit(node.left);
      visit(node.right);
      return;
    case 'Logical':
      node.operands.forEach(visit);
      return;
    case 'IsNull':
      visit(node.operand);
      return;
    case 'Between':
      visit(node.operand);
      visit(node.low);
      visit(node.high);
      return;
    case 'Like':
      visit(node.operand);
      visit(node.pattern);
      return;
    case 'InList':
      visit(node.operand);
      node.items.forEach(visit);
      return;
    case 'InSubquery':
      visit(node.operand);
      visit(node.query);
      return;
    case 'Exists':
    case 'Subquery':
      visit(node.query);
      return;
    case 'Case':
      if (node.operand) visit(node.operand);
      node.whens.forEach(visit);
      if (node.else) visit(node.else);
      return;
    case 'Array':
      node.items.forEach(visit);
      return;
    case 'Cast':
    case 'AtTimeZone':
      visit(node.operand);
      if (node.kind === 'AtTimeZone') visit(node.zone);
      return;
    case 'Extract':
      visit(node.source);
      return;
    case 'Ident':
    case 'String':
    case 'Number':
    case 'Boolean':
    case 'Null':
    case 'DateKeyword':
      return;
    default: {
      const never: never = node;
      throw new Error(`unhandled node ${(never as Node).kind}`);
    }
  }
}

/**
 * The depth of the tree, computed without recursion so that it is safe to call before any
 * recursive pass; returns the deepest node too, for the error span.
 */
export function treeDepth(root: Node): { depth: number; deepest: Node } {
  let depth = 0;
  let deepest: Node = root;
  const stack: { node: Node; d: number }[] = [{ node: root, d: 1 }];
  while (stack.length > 0) {
    const { node, d } = stack.pop()!;
    if (d > depth) {
      depth = d;
      deepest = node;
    }
    forEachChild(node, (child) => stack.push({ node: child, d: d + 1 }));
  }
  return { depth, deepest };
}

/**
 * The first node found below `limit` levels, or null when the tree is no deeper. Recursion
 * stops at the limit, so the stack it uses is bounded whatever the tree; cheaper than
 * `treeDepth` on the compile path because it allocates no work list.
 */
export function nodeBeyondDepth(root: Node, limit: number): Node | null {
  const probe = new DepthProbe(limit);
  probe.visit(root);
  return probe.found;
}

/** nodeBeyondDepth's walk: the depth in a field, so there is one visitor, not a closure per node. */
class DepthProbe {
  found: Node | null = null;
  private depth = 0;

  constructor(private readonly limit: number) {}

  readonly visit = (node: Node): void => {
    if (this.found) return;
    if (++this.depth > this.limit) this.found = node;
    else forEachChild(node, this.visit);
    this.depth--;
  };
}
