import type { IToken } from 'chevrotain';
import type * as A from './ast.js';
import { tokenSpan } from './leaves.js';
import * as T from './tokens.js';

/**
 * Precedence climbing over the flat item list the parser reads for an expression:
 * `prefix* operand (binary prefix* operand | postfix)*`. Binding powers follow PostgreSQL,
 * lowest first: OR, AND, NOT, IS, comparison, BETWEEN/IN/LIKE, other operators (&&),
 * + -, * / %, AT TIME ZONE, unary + -. All binary operators are left-associative.
 *
 * Runs of prefix operators are handled in a loop, so a long `NOT NOT ...` chain cannot
 * exhaust the stack here; recursion is bounded by the number of precedence levels.
 */

export type Item =
  | { kind: 'operand'; expr: A.Expr }
  | { kind: 'prefix'; token: IToken }
  | { kind: 'binary'; token: IToken }
  | { kind: 'isNull'; negated: boolean; at: number; end: number }
  | { kind: 'atTimeZone'; zone: A.Expr }
  | { kind: 'between'; negated: boolean; low: A.Expr; high: A.Expr }
  | { kind: 'like'; negated: boolean; caseInsensitive: boolean; pattern: A.Expr }
  | { kind: 'inList'; negated: boolean; list: A.Expr[]; end: number }
  | { kind: 'inSubquery'; negated: boolean; query: A.Select; end: number };

const OR = 1;
const AND = 2;
const NOT = 3;
const IS = 4;
const COMPARE = 5;
const PREDICATE = 6;
const OTHER = 7;
const ADD = 8;
const MULTIPLY = 9;
const AT = 10;
const SIGN = 11;

/**
 * Binding power of each binary operator, by token type name: the descent parser's tokens and
 * the grammar's (Chevrotain twins of the same types) both come here, and share the names.
 */
const BINARY = new Map<string, number>([
  [T.Or.name, OR],
  [T.And.name, AND],
  [T.Equal.name, COMPARE],
  [T.NotEqual.name, COMPARE],
  [T.Less.name, COMPARE],
  [T.LessEqual.name, COMPARE],
  [T.Greater.name, COMPARE],
  [T.GreaterEqual.name, COMPARE],
  [T.Overlap.name, OTHER],
  [T.Plus.name, ADD],
  [T.Minus.name, ADD],
  [T.Star.name, MULTIPLY],
  [T.Slash.name, MULTIPLY],
  [T.Percent.name, MULTIPLY],
]);
const AND_NAME = T.And.name;
const OR_NAME = T.Or.name;
const NOT_NAME = T.Not.name;

function power(item: Item): number {
  switch (item.kind) {
    case 'binary':
      return BINARY.get(item.token.tokenType.name)!;
    case 'isNull':
      return IS;
    case 'atTimeZone':
      return AT;
    case 'between':
    case 'like':
    case 'inList':
    case 'inSubquery':
      return PREDICATE;
    default:
      return 0;
  }
}

export function climb(items: readonly Item[]): A.Expr {
  // A lone operand, the most common expression (a select item, an argument): nothing to fold.
  if (items.length === 1 && items[0]!.kind === 'operand') return items[0].expr;
  return new Climb(items).expr(0);
}

/** One fold of an item list: its position, and the AND/OR nodes it built. */
class Climb {
  private i = 0;
  /**
   * Logical nodes built from this chain; one that came from inside parentheses is a finished
   * operand and is not merged into this chain's AND/OR. Made at the first AND or OR.
   */
  private chained: Set<A.Expr> | null = null;

  constructor(private readonly items: readonly Item[]) {}

  expr(min: number): A.Expr {
    const items = this.items;
    // Prefix run: find it, read the operand, then apply from the innermost outwards, letting
    // each prefix take the infix operators that bind tighter than itself.
    const first = this.i;
    while (items[this.i]!.kind === 'prefix') this.i++;
    let left = (items[this.i++] as { expr: A.Expr }).expr;
    for (let p = this.i - 2; p >= first; p--) {
      const t = (items[p] as { token: IToken }).token;
      const isNot = t.tokenType.name === NOT_NAME;
      left = this.infix(left, isNot ? NOT : SIGN);
      left = {
        kind: 'Unary',
        op: isNot ? 'NOT' : (t.image as '-' | '+'),
        operand: left,
        span: { start: t.startOffset, end: left.span.end },
      };
    }
    return this.infix(left, min);
  }

  private infix(left: A.Expr, min: number): A.Expr {
    const items = this.items;
    while (this.i < items.length) {
      const item = items[this.i]!;
      const p = power(item);
      if (p <= min) break;
      this.i++;
      left = this.apply(left, item, p);
    }
    return left;
  }

  private apply(left: A.Expr, item: Item, p: number): A.Expr {
    switch (item.kind) {
      case 'binary': {
        const right = this.expr(p);
        const type = item.token.tokenType.name;
        if (type === AND_NAME || type === OR_NAME) {
          const op = type === AND_NAME ? 'AND' : 'OR';
          // n-ary AND/OR keep long filter chains shallow; parentheses stay separate nodes.
          // The operand list of a chain built here is ours to extend: appending (not copying)
          // keeps a 10,000-term filter linear.
          const chained = (this.chained ??= new Set());
          const own = left.kind === 'Logical' && left.op === op && chained.has(left);
          const operands = own ? (left.operands as A.Expr[]) : [left];
          operands.push(right);
          const node: A.Expr = { kind: 'Logical', op, operands, span: { start: left.span.start, end: right.span.end } };
          chained.add(node);
          return node;
        }
        return {
          kind: 'Binary',
          op: item.token.image as A.BinaryOp,
          left,
          right,
          opSpan: tokenSpan(item.token),
          span: { start: left.span.start, end: right.span.end },
        };
      }
      case 'isNull':
        return { kind: 'IsNull', operand: left, negated: item.negated, span: { start: left.span.start, end: item.end } };
      case 'atTimeZone':
        return { kind: 'AtTimeZone', operand: left, zone: item.zone, span: { start: left.span.start, end: item.zone.span.end } };
      case 'between':
        return { kind: 'Between', operand: left, low: item.low, high: item.high, negated: item.negated, span: { start: left.span.start, end: item.high.span.end } };
      case 'like':
        return {
          kind: 'Like',
          operand: left,
          pattern: item.pattern,
          caseInsensitive: item.caseInsensitive,
          negated: item.negated,
          span: { start: left.span.start, end: item.pattern.span.end },
        };
      case 'inList':
        return { kind: 'InList', operand: left, items: item.list, negated: item.negated, span: { start: left.span.start, end: item.end } };
      case 'inSubquery':
        return { kind: 'InSubquery', operand: left, query: item.query, negated: item.negated, span: { start: left.span.start, end: item.end } };
      default:
        throw new Error(`unexpected ${item.kind} after an operand`);
    }
  }
}
