import type { IToken } from 'chevrotain';
import type * as A from './ast.js';
import { tokenSpan } from './leaves.js';

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

const BINARY: Record<string, number> = {
  OR,
  AND,
  '=': COMPARE,
  '<>': COMPARE,
  '!=': COMPARE,
  '<': COMPARE,
  '<=': COMPARE,
  '>': COMPARE,
  '>=': COMPARE,
  '&&': OTHER,
  '+': ADD,
  '-': ADD,
  '*': MULTIPLY,
  '/': MULTIPLY,
  '%': MULTIPLY,
};

function power(item: Item): number {
  switch (item.kind) {
    case 'binary':
      return BINARY[item.token.image.toUpperCase()]!;
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
  let i = 0;
  // Logical nodes built from this chain; one that came from inside parentheses is a finished
  // operand and is not merged into this chain's AND/OR.
  const chained = new Map<A.Expr, A.Expr[]>();

  const expr = (min: number): A.Expr => {
    // Prefix run: collect, read the operand, then apply from the innermost outwards, letting
    // each prefix take the infix operators that bind tighter than itself.
    const prefixes: IToken[] = [];
    while (items[i]!.kind === 'prefix') prefixes.push((items[i++] as { token: IToken }).token);
    let left = (items[i++] as { expr: A.Expr }).expr;
    for (let p = prefixes.length - 1; p >= 0; p--) {
      const t = prefixes[p]!;
      const isNot = t.image.toUpperCase() === 'NOT';
      left = infix(left, isNot ? NOT : SIGN);
      left = {
        kind: 'Unary',
        op: isNot ? 'NOT' : (t.image as '-' | '+'),
        operand: left,
        span: { start: t.startOffset, end: left.span.end },
      };
    }
    return infix(left, min);
  };

  const infix = (left: A.Expr, min: number): A.Expr => {
    while (i < items.length) {
      const item = items[i]!;
      const p = power(item);
      if (p <= min) break;
      i++;
      left = apply(left, item, p);
    }
    return left;
  };

  const apply = (left: A.Expr, item: Item, p: number): A.Expr => {
    switch (item.kind) {
      case 'binary': {
        const right = expr(p);
        const op = item.token.image.toUpperCase();
        if (op === 'AND' || op === 'OR') {
          // n-ary AND/OR keep long filter chains shallow; parentheses stay separate nodes.
          // The operand list of a chain built here is ours to extend: appending (not copying)
          // keeps a 10,000-term filter linear.
          const own = left.kind === 'Logical' && left.op === op ? chained.get(left) : undefined;
          const operands = own ?? [left];
          operands.push(right);
          const node: A.Expr = { kind: 'Logical', op, operands, span: { start: left.span.start, end: right.span.end } };
          chained.set(node, operands);
          return node;
        }
        return {
          kind: 'Binary',
          op: op as A.BinaryOp,
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
  };

  return expr(0);
}
