import type * as A from './ast.js';
import * as T from './tokens.js';

/**
 * Prints a syntax tree back as canonical query text: upper-case keywords, one line, single
 * spaces, and parentheses only where the grammar needs them. The law it keeps:
 * `parse(printQuery(parse(q)))` equals `parse(q)` apart from spans.
 *
 * Identifiers print bare when the lexer would read them back as the same unquoted name, and in
 * double quotes otherwise. A name written in quotes stays quoted, so `quoted` survives the trip.
 */

const KEYWORD_SET = new Set(T.KEYWORDS);
/** Keywords the grammar also accepts as names (`first`, `zone`, `filter`...). */
const NON_RESERVED = new Set(
  T.allTokens.filter((t) => (t.CATEGORIES ?? []).includes(T.NonReserved)).map((t) => t.name),
);
/** Words the FROM clause never takes as an alias unless AS precedes them. */
const JOIN_WORDS = new Set(['join', 'left', 'right', 'full', 'inner', 'cross', 'natural', 'outer', 'using', 'lateral']);
const BARE = /^[a-z_][a-z0-9_$]*$/;

/** Binding strength, loosest first; the order is the parser's (see parser.ts). */
const enum Prec {
  Or = 1,
  And,
  Not,
  Is,
  Comparison,
  Predicate,
  Other,
  Additive,
  Multiplicative,
  AtTimeZone,
  Unary,
  Cast,
  Primary,
}

type NameContext = 'name' | 'alias';

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** `alias` is the position after AS, where any keyword is a name. */
function printIdent(id: A.Ident, context: NameContext = 'name'): string {
  if (id.quoted || !BARE.test(id.name)) return quoteIdent(id.name);
  const word = id.name.toUpperCase();
  if (!KEYWORD_SET.has(word) || context === 'alias' || NON_RESERVED.has(word)) return id.name;
  return quoteIdent(id.name);
}

/** A catalog name as the query text must spell it (quoted when it is a reserved word). */
export function printName(name: string): string {
  return printIdent({ kind: 'Ident', name, quoted: false, span: { start: 0, end: 0 } } as A.Ident);
}

function printString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

export function printQuery(select: A.Select): string {
  const parts = ['SELECT'];
  if (select.distinct) parts.push('DISTINCT');
  parts.push(select.items.map(printSelectItem).join(', '));
  parts.push('FROM', printIdent(select.from.object));
  const alias = select.from.alias;
  if (alias) {
    if (!alias.quoted && JOIN_WORDS.has(alias.name)) parts.push('AS');
    parts.push(printIdent(alias));
  }
  if (select.where) parts.push('WHERE', printExpr(select.where));
  if (select.groupBy.length > 0) parts.push('GROUP BY', select.groupBy.map((e) => printExpr(e)).join(', '));
  if (select.having) parts.push('HAVING', printExpr(select.having));
  if (select.orderBy.length > 0) parts.push('ORDER BY', select.orderBy.map(printOrderItem).join(', '));
  if (select.limit) parts.push('LIMIT', select.limit.text);
  if (select.offset) parts.push('OFFSET', select.offset.text);
  return parts.join(' ');
}

function printSelectItem(item: A.SelectItem): string {
  const expr = printExpr(item.expr);
  return item.alias ? `${expr} AS ${printIdent(item.alias, 'alias')}` : expr;
}

function printOrderItem(item: A.OrderItem): string {
  let s = printExpr(item.expr);
  if (item.direction) s += ` ${item.direction}`;
  if (item.nulls) s += ` NULLS ${item.nulls}`;
  return s;
}

export function printExpr(e: A.Expr): string {
  return printBare(e);
}

/** Prints `e` in a position that needs at least binding strength `min`, in parentheses if weaker. */
function sub(e: A.Expr, min: Prec = Prec.Or): string {
  const text = printBare(e);
  return precedence(e) < min ? `(${text})` : text;
}

function precedence(e: A.Expr): Prec {
  switch (e.kind) {
    case 'Logical':
      return e.op === 'OR' ? Prec.Or : Prec.And;
    case 'Unary':
      return e.op === 'NOT' ? Prec.Not : Prec.Unary;
    case 'IsNull':
      return Prec.Is;
    case 'Binary':
      return binaryPrecedence(e.op);
    case 'Between':
    case 'Like':
    case 'InList':
    case 'InSubquery':
      return Prec.Predicate;
    case 'AtTimeZone':
      return Prec.AtTimeZone;
    case 'Cast':
      return Prec.Cast;
    case 'String':
    case 'Number':
    case 'Boolean':
    case 'Null':
    case 'Path':
    case 'Star':
    case 'Call':
    case 'Exists':
    case 'Subquery':
    case 'Case':
    case 'Array':
    case 'Extract':
    case 'DateKeyword':
      return Prec.Primary;
    default: {
      const never: never = e;
      throw new Error(`unhandled expression ${(never as A.Expr).kind}`);
    }
  }
}

function binaryPrecedence(op: A.BinaryOp): Prec {
  switch (op) {
    case '*':
    case '/':
    case '%':
      return Prec.Multiplicative;
    case '+':
    case '-':
      return Prec.Additive;
    case '=':
    case '<>':
    case '!=':
    case '<':
    case '<=':
    case '>':
    case '>=':
      return Prec.Comparison;
    case '&&':
      return Prec.Other;
    default: {
      const never: never = op;
      throw new Error(`unhandled operator ${String(never)}`);
    }
  }
}

function printBare(e: A.Expr): string {
  switch (e.kind) {
    case 'String':
      return printString(e.value);
    case 'Number':
      return e.text;
    case 'Boolean':
      return e.value ? 'TRUE' : 'FALSE';
    case 'Null':
      return 'NULL';
    case 'DateKeyword':
      return e.name;
    case 'Path':
      return e.parts.map((part) => printIdent(part)).join('.');
    case 'Star':
      return e.qualifier ? `${printIdent(e.qualifier)}.*` : '*';
    case 'Call':
      return printCall(e);
    case 'Logical': {
      const next = e.op === 'OR' ? Prec.And : Prec.Not;
      return e.operands.map((o) => sub(o, next)).join(` ${e.op} `);
    }
    case 'Unary': {
      if (e.op === 'NOT') return `NOT ${sub(e.operand, Prec.Not)}`;
      // `- -1` would print as `--1`, which starts a comment: keep the inner sign in parentheses.
      const inner = e.operand.kind === 'Unary' && e.operand.op === '-' && e.op === '-'
        ? `(${printBare(e.operand)})`
        : sub(e.operand, Prec.Unary);
      return `${e.op}${inner}`;
    }
    case 'Binary': {
      // Left-associative: an equal-strength left operand needs no parentheses, a right one does.
      // Comparisons do not chain at all, so both sides must bind tighter.
      const p = binaryPrecedence(e.op);
      const leftMin = p === Prec.Comparison ? p + 1 : p;
      return `${sub(e.left, leftMin)} ${e.op} ${sub(e.right, p + 1)}`;
    }
    case 'IsNull':
      return `${sub(e.operand, Prec.Is)} IS ${e.negated ? 'NOT ' : ''}NULL`;
    case 'Between':
      return `${sub(e.operand, Prec.Other)} ${e.negated ? 'NOT ' : ''}BETWEEN ${sub(e.low, Prec.Other)} AND ${sub(e.high, Prec.Other)}`;
    case 'Like':
      return `${sub(e.operand, Prec.Other)} ${e.negated ? 'NOT ' : ''}${e.caseInsensitive ? 'ILIKE' : 'LIKE'} ${sub(e.pattern, Prec.Other)}`;
    case 'InList':
      return `${sub(e.operand, Prec.Other)} ${e.negated ? 'NOT ' : ''}IN (${e.items.map((i) => sub(i)).join(', ')})`;
    case 'InSubquery':
      return `${sub(e.operand, Prec.Other)} ${e.negated ? 'NOT ' : ''}IN (${printQuery(e.query)})`;
    case 'Exists':
      return `EXISTS (${printQuery(e.query)})`;
    case 'Subquery':
      return `(${printQuery(e.query)})`;
    case 'Case': {
      const parts = ['CASE'];
      if (e.operand) parts.push(sub(e.operand));
      for (const w of e.whens) parts.push('WHEN', sub(w.when), 'THEN', sub(w.then));
      if (e.else) parts.push('ELSE', sub(e.else));
      parts.push('END');
      return parts.join(' ');
    }
    case 'Array':
      return `ARRAY[${e.items.map((i) => sub(i)).join(', ')}]`;
    case 'Cast':
      return `${sub(e.operand, Prec.Cast)}::${e.type}`;
    case 'AtTimeZone':
      return `${sub(e.operand, Prec.AtTimeZone)} AT TIME ZONE ${sub(e.zone, Prec.Unary)}`;
    case 'Extract':
      return `EXTRACT(${BARE.test(e.field) ? e.field : printString(e.field)} FROM ${sub(e.source)})`;
    default: {
      const never: never = e;
      throw new Error(`unhandled expression ${(never as A.Expr).kind}`);
    }
  }
}

function printCall(e: A.Call): string {
  // An unquoted `extract(` would be read back as the EXTRACT special form.
  const name = !e.name.quoted && e.name.name === 'extract' ? quoteIdent(e.name.name) : printIdent(e.name);
  const args = e.args.map((a) => sub(a)).join(', ');
  let s = `${name}(${e.distinct ? 'DISTINCT ' : ''}${args})`;
  if (e.filter) s += ` FILTER (WHERE ${sub(e.filter)})`;
  // The tree keeps only the span of a window clause, not its contents.
  if (e.over) s += ' OVER (...)';
  return s;
}
