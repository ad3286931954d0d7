import type { IToken, TokenType } from 'chevrotain';
import type { Span } from '../diagnostics/span.js';
import type * as A from './ast.js';
import { climb, type Item } from './climb.js';
import { between, identFrom, numberNode, tokenSpan } from './leaves.js';
import * as T from './tokens.js';

/**
 * The parser the compiler runs on the way to a valid query: recursive descent over the token
 * array, building exactly the tree of the Chevrotain grammar in parser.ts (which stays the
 * documented grammar, the source of grammar/ and the oracle of the tests). It accepts what
 * that grammar accepts and nothing else; on the first token it cannot take it gives up, and
 * `parseInto` asks the Chevrotain parser, whose error the diagnostics are made from. So a valid
 * query never pays for building the Chevrotain parser (tens of milliseconds at the first
 * query) or for its per-rule machinery, and an invalid one is reported exactly as before.
 *
 * Like the grammar it recurses only per bracket and CASE: operator chains are item lists read
 * in loops and folded by `climb`.
 */

/** Thrown to abandon a parse; preallocated, so giving up costs no stack trace. */
const GIVE_UP = { giveUp: true } as const;

const IDENT = new Set<TokenType>([T.Identifier, T.QuotedIdentifier]);
const NON_RESERVED = new Set<TokenType>(T.allTokens.filter((t) => (t.CATEGORIES ?? []).includes(T.NonReserved)));
const KEYWORD = new Set<TokenType>(T.allTokens.filter((t) => (t.CATEGORIES ?? []).includes(T.Keyword)));
const COMPARISON = new Set<TokenType>(T.allTokens.filter((t) => (t.CATEGORIES ?? []).includes(T.ComparisonOp)));
const ARITHMETIC = new Set<TokenType>(T.allTokens.filter((t) => (t.CATEGORIES ?? []).includes(T.ArithmeticOp)));
const DATE_KEYWORDS = new Set<TokenType>([T.CurrentDate, T.CurrentTimestamp, T.CurrentTime, T.LocalTimestamp, T.LocalTime]);
const PREDICATE_STARTS = new Set<TokenType>([T.Between, T.Like, T.ILike, T.In]);
const TYPE_CONTINUATIONS = new Set(['precision', 'varying', 'without']);
const JOIN_WORDS = new Set(['join', 'left', 'right', 'full', 'inner', 'cross', 'natural', 'outer', 'using', 'lateral']);

/**
 * What the hot paths ask of a token type, as bits in a table indexed by its tokenTypeIdx: one
 * load where a Set lookup per question was a call into the runtime's hash table.
 */
const NAME = 1; // identifier, quoted identifier or non-reserved keyword
const INFIX = 2; // AND, OR, a comparison or an arithmetic operator
const ARITHMETIC_OP = 4;
const PREDICATE = 8; // BETWEEN, LIKE, ILIKE, IN
const FLAGS = tokenFlags();

/** Built in a function, not by a loop at the top of the module (see lex.ts, characterClasses). */
function tokenFlags(): Uint8Array {
  const flags = new Uint8Array(Math.max(...T.allTokens.map((t) => t.tokenTypeIdx!)) + 1);
  for (const t of T.allTokens) {
    flags[t.tokenTypeIdx!] =
      (IDENT.has(t) || NON_RESERVED.has(t) ? NAME : 0) |
      (t === T.Or || t === T.And || COMPARISON.has(t) || ARITHMETIC.has(t) ? INFIX : 0) |
      (ARITHMETIC.has(t) ? ARITHMETIC_OP : 0) |
      (PREDICATE_STARTS.has(t) ? PREDICATE : 0);
  }
  return flags;
}

function flagsOf(type: TokenType | undefined): number {
  return type === undefined ? 0 : FLAGS[type.tokenTypeIdx!]!;
}

/**
 * The syntax tree of a query, or null when the grammar does not accept it; then `stop.at` is the
 * index of the token it could not take (the token count when the text ended early).
 */
export function parseDescent(tokens: readonly IToken[], stop?: { at: number }): A.Select | null {
  const parser = new Descent(tokens);
  try {
    return parser.query();
  } catch (e) {
    if (e !== GIVE_UP) throw e;
    if (stop) stop.at = parser.position;
    return null;
  }
}

class Descent {
  private i = 0;

  constructor(private readonly tokens: readonly IToken[]) {}

  get position(): number {
    return this.i;
  }

  // ---- token access

  private type(k = 0): TokenType | undefined {
    return this.tokens[this.i + k]?.tokenType;
  }

  private is(type: TokenType, k = 0): boolean {
    return this.tokens[this.i + k]?.tokenType === type;
  }

  private take(type: TokenType): IToken {
    const t = this.tokens[this.i];
    if (t === undefined || t.tokenType !== type) throw GIVE_UP;
    this.i++;
    return t;
  }

  private takeIf(type: TokenType): IToken | null {
    const t = this.tokens[this.i];
    if (t === undefined || t.tokenType !== type) return null;
    this.i++;
    return t;
  }

  private takeIn(types: ReadonlySet<TokenType>): IToken {
    const t = this.tokens[this.i];
    if (t === undefined || !types.has(t.tokenType)) throw GIVE_UP;
    this.i++;
    return t;
  }

  /** Identifier, quoted identifier or a non-reserved keyword. */
  private isName(k = 0): boolean {
    return (flagsOf(this.type(k)) & NAME) !== 0;
  }

  private name(): IToken {
    if (!this.isName()) throw GIVE_UP;
    return this.tokens[this.i++]!;
  }

  /** Span from `start` to the end of the last token taken. */
  private upTo(start: number): Span {
    const last = this.tokens[this.i - 1]!;
    return { start, end: last.startOffset + last.image.length };
  }

  // ---- statements

  query(): A.Select {
    const select = this.selectStatement();
    this.takeIf(T.Semicolon);
    if (this.i !== this.tokens.length) throw GIVE_UP;
    return select;
  }

  private selectStatement(): A.Select {
    const start = this.take(T.Select);
    let distinct = false;
    if (this.takeIf(T.Distinct)) distinct = true;
    else this.takeIf(T.All);
    const items: A.SelectItem[] = [this.selectItem()];
    while (this.takeIf(T.Comma)) items.push(this.selectItem());
    this.take(T.From);
    const from = this.fromItem();
    let where: A.Expr | null = null;
    let having: A.Expr | null = null;
    const groupBy: A.Expr[] = [];
    let orderBy: A.OrderItem[] = [];
    let limit: A.NumberLit | null = null;
    let offset: A.NumberLit | null = null;
    if (this.takeIf(T.Where)) where = this.expression();
    if (this.takeIf(T.Group)) {
      this.take(T.By);
      groupBy.push(this.expression());
      while (this.takeIf(T.Comma)) groupBy.push(this.expression());
    }
    if (this.takeIf(T.Having)) having = this.expression();
    if (this.is(T.Order)) orderBy = this.orderByClause();
    if (this.takeIf(T.Limit)) {
      limit = numberNode(this.take(T.NumberLiteral));
      if (this.takeIf(T.Offset)) offset = numberNode(this.take(T.NumberLiteral));
    } else if (this.takeIf(T.Offset)) {
      offset = numberNode(this.take(T.NumberLiteral));
      if (this.takeIf(T.Limit)) limit = numberNode(this.take(T.NumberLiteral));
    }
    return { kind: 'Select', distinct, items, from, where, groupBy, having, orderBy, limit, offset, span: this.upTo(start.startOffset) };
  }

  private selectItem(): A.SelectItem {
    const star = this.takeIf(T.Star);
    if (star) {
      const expr: A.StarExpr = { kind: 'Star', qualifier: null, span: tokenSpan(star) };
      return { kind: 'SelectItem', expr, alias: null, span: expr.span };
    }
    if (this.isName() && this.is(T.Dot, 1) && this.is(T.Star, 2)) {
      const q = identFrom(this.name());
      this.i++;
      const s = this.tokens[this.i++]!;
      const expr: A.StarExpr = { kind: 'Star', qualifier: q, span: { start: q.span.start, end: s.startOffset + 1 } };
      return { kind: 'SelectItem', expr, alias: null, span: expr.span };
    }
    const expr = this.expression();
    let alias: A.Ident | null = null;
    if (this.takeIf(T.As)) alias = this.aliasName();
    else if (this.is(T.Identifier) || this.is(T.QuotedIdentifier)) alias = identFrom(this.tokens[this.i++]!);
    return { kind: 'SelectItem', expr, alias, span: alias ? between(expr, alias) : expr.span };
  }

  /** After AS any word is a name, keywords included (`AS count`, `AS order`). */
  private aliasName(): A.Ident {
    const type = this.type();
    if (type === undefined || !(IDENT.has(type) || KEYWORD.has(type))) throw GIVE_UP;
    return identFrom(this.tokens[this.i++]!);
  }

  private fromItem(): A.FromItem {
    const object = identFrom(this.name());
    let alias: A.Ident | null = null;
    const next = this.tokens[this.i];
    // JOIN words are never aliases, so `FROM account LEFT JOIN ...` reports the JOIN.
    if (next && (next.tokenType === T.As || (this.isName() && !JOIN_WORDS.has(next.image.toLowerCase())))) {
      this.takeIf(T.As);
      alias = identFrom(this.name());
    }
    return { kind: 'FromItem', object, alias, span: alias ? between(object, alias) : object.span };
  }

  private orderByClause(): A.OrderItem[] {
    this.take(T.Order);
    this.take(T.By);
    const items = [this.orderItem()];
    while (this.takeIf(T.Comma)) items.push(this.orderItem());
    return items;
  }

  private orderItem(): A.OrderItem {
    const expr = this.expression();
    let direction: 'ASC' | 'DESC' | null = null;
    let nulls: 'FIRST' | 'LAST' | null = null;
    if (this.takeIf(T.Asc)) direction = 'ASC';
    else if (this.takeIf(T.Desc)) direction = 'DESC';
    if (this.takeIf(T.Nulls)) {
      if (this.takeIf(T.First)) nulls = 'FIRST';
      else if (this.takeIf(T.Last)) nulls = 'LAST';
      else throw GIVE_UP;
    }
    return { kind: 'OrderItem', expr, direction, nulls, span: this.upTo(expr.span.start) };
  }

  // ---- expressions: `prefix* operand (infix prefix* operand | postfix)*`, folded by climb

  private expression(): A.Expr {
    let items: Item[];
    const first = this.type();
    if (first !== T.Not && first !== T.Minus && first !== T.Plus) {
      // Most expressions are one operand (a select item, an argument): no item list for those.
      const expr = this.castExpr();
      if (!this.continuesExpression()) return expr;
      items = [{ kind: 'operand', expr }];
    } else {
      items = [];
      this.operand(items);
    }
    for (;;) {
      const type = this.type();
      if (type === undefined) break;
      const flags = flagsOf(type);
      if ((flags & INFIX) !== 0) {
        items.push({ kind: 'binary', token: this.tokens[this.i++]! });
        this.operand(items);
      } else if (type === T.At) {
        this.atTimeZone(items);
      } else if (type === T.Is) {
        const is = this.tokens[this.i++]!;
        const negated = this.takeIf(T.Not) !== null;
        const end = this.take(T.Null);
        items.push({ kind: 'isNull', negated, end: end.startOffset + 4, at: is.startOffset });
      } else if ((flags & PREDICATE) !== 0 || (type === T.Not && (flagsOf(this.type(1)) & PREDICATE) !== 0)) {
        this.predicate(items);
      } else break;
    }
    return climb(items);
  }

  /** Whether the next token continues an expression after an operand (the loop of `expression`). */
  private continuesExpression(): boolean {
    const type = this.type();
    if (type === undefined) return false;
    return (flagsOf(type) & (INFIX | PREDICATE)) !== 0 || type === T.At || type === T.Is || (type === T.Not && (flagsOf(this.type(1)) & PREDICATE) !== 0);
  }

  /** `(NOT | - | +)* castExpr` as items. */
  private operand(items: Item[]): void {
    for (;;) {
      const type = this.type();
      if (type !== T.Not && type !== T.Minus && type !== T.Plus) break;
      items.push({ kind: 'prefix', token: this.tokens[this.i++]! });
    }
    items.push({ kind: 'operand', expr: this.castExpr() });
  }

  private atTimeZone(items: Item[]): void {
    this.take(T.At);
    this.take(T.Time);
    this.take(T.Zone);
    const zone: Item[] = [];
    this.signs(zone);
    items.push({ kind: 'atTimeZone', zone: climb(zone) });
  }

  /** `[NOT] BETWEEN a AND b`, `[NOT] IN (...)`, `[NOT] LIKE|ILIKE p`. */
  private predicate(items: Item[]): void {
    const negated = this.takeIf(T.Not) !== null;
    if (this.takeIf(T.Between)) {
      const low = this.bound();
      this.take(T.And);
      const high = this.bound();
      items.push({ kind: 'between', negated, low, high });
      return;
    }
    const like = this.takeIf(T.Like) ?? this.takeIf(T.ILike);
    if (like) {
      const pattern = this.bound();
      items.push({ kind: 'like', negated, caseInsensitive: like.tokenType === T.ILike, pattern });
      return;
    }
    this.take(T.In);
    this.take(T.LParen);
    if (this.is(T.Select)) {
      const query = this.selectStatement();
      const close = this.take(T.RParen);
      items.push({ kind: 'inSubquery', negated, query, end: close.startOffset + 1 });
      return;
    }
    const list = [this.expression()];
    while (this.takeIf(T.Comma)) list.push(this.expression());
    const close = this.take(T.RParen);
    items.push({ kind: 'inList', negated, list, end: close.startOffset + 1 });
  }

  /**
   * The operand of BETWEEN and LIKE: arithmetic only, so that `x BETWEEN 1 AND 2 AND y` reads
   * BETWEEN's own AND first, as in PostgreSQL.
   */
  private bound(): A.Expr {
    const items: Item[] = [];
    this.signs(items);
    for (;;) {
      const type = this.type();
      if ((flagsOf(type) & ARITHMETIC_OP) !== 0) {
        items.push({ kind: 'binary', token: this.tokens[this.i++]! });
        this.signs(items);
      } else if (type === T.At) {
        this.atTimeZone(items);
      } else break;
    }
    return climb(items);
  }

  /** `(- | +)* castExpr` as items. */
  private signs(items: Item[]): void {
    while (this.is(T.Minus) || this.is(T.Plus)) items.push({ kind: 'prefix', token: this.tokens[this.i++]! });
    items.push({ kind: 'operand', expr: this.castExpr() });
  }

  /** An operand with its `::` casts. */
  private castExpr(): A.Expr {
    let operand = this.primary();
    while (this.takeIf(T.DoubleColon)) {
      const type = this.typeName();
      operand = { kind: 'Cast', operand, type: type.name, typeSpan: type.span, span: { start: operand.span.start, end: type.span.end } };
    }
    return operand;
  }

  private primary(): A.Expr {
    const t = this.tokens[this.i];
    if (t === undefined) throw GIVE_UP;
    const type = t.tokenType;
    switch (type) {
      case T.StringLiteral:
        this.i++;
        return { kind: 'String', value: t.image.slice(1, -1).replace(/''/g, "'"), span: tokenSpan(t) };
      case T.NumberLiteral:
        this.i++;
        return numberNode(t);
      case T.True:
      case T.False:
        this.i++;
        return { kind: 'Boolean', value: type === T.True, span: tokenSpan(t) };
      case T.Null:
        this.i++;
        return { kind: 'Null', span: tokenSpan(t) };
      case T.ArrayKw:
        return this.arrayExpr();
      case T.Exists:
        return this.existsExpr();
      case T.Case:
        return this.caseExpr();
      case T.Extract:
        return this.extractExpr();
      case T.LParen:
        return this.parenthesized();
      default:
        if (DATE_KEYWORDS.has(type)) {
          this.i++;
          return { kind: 'DateKeyword', name: type.name, span: tokenSpan(t) };
        }
        if ((flagsOf(type) & NAME) !== 0) return this.nameOrCall();
        throw GIVE_UP;
    }
  }

  private typeName(): { name: string; span: Span } {
    const first = this.tokens[this.i];
    if (first === undefined || (first.tokenType !== T.Identifier && !NON_RESERVED.has(first.tokenType))) throw GIVE_UP;
    this.i++;
    const words: string[] = [];
    const continuations: IToken[] = [];
    while (this.is(T.Identifier) && TYPE_CONTINUATIONS.has(this.tokens[this.i]!.image.toLowerCase())) continuations.push(this.tokens[this.i++]!);
    if (this.takeIf(T.With)) {
      this.take(T.Time);
      this.take(T.Zone);
      words.push('with time zone');
    }
    if (this.takeIf(T.Time)) {
      this.take(T.Zone);
      words.push('time zone');
    }
    if (this.takeIf(T.LParen)) {
      const args = [this.take(T.NumberLiteral)];
      if (this.takeIf(T.Comma)) args.push(this.take(T.NumberLiteral));
      this.take(T.RParen);
      words.push(`(${args.map((a) => a.image).join(',')})`);
    }
    if (this.takeIf(T.LBracket)) {
      this.take(T.RBracket);
      words.push('[]');
    }
    const name = [first, ...continuations].map((t) => t.image.toLowerCase()).concat(words).join(' ');
    return { name: name.replace(/ \(/, '(').replace(/ \[\]/, '[]'), span: this.upTo(first.startOffset) };
  }

  private arrayExpr(): A.Expr {
    const start = this.take(T.ArrayKw);
    this.take(T.LBracket);
    const items: A.Expr[] = [];
    if (!this.is(T.RBracket)) {
      items.push(this.expression());
      while (this.takeIf(T.Comma)) items.push(this.expression());
    }
    this.take(T.RBracket);
    return { kind: 'Array', items, span: this.upTo(start.startOffset) };
  }

  private existsExpr(): A.Expr {
    const start = this.take(T.Exists);
    this.take(T.LParen);
    const query = this.selectStatement();
    this.take(T.RParen);
    return { kind: 'Exists', query, span: this.upTo(start.startOffset) };
  }

  private caseExpr(): A.Expr {
    const start = this.take(T.Case);
    const operand = this.is(T.When) ? null : this.expression();
    const whens: A.WhenClause[] = [];
    do {
      const w = this.take(T.When);
      const when = this.expression();
      this.take(T.Then);
      const then = this.expression();
      whens.push({ kind: 'When', when, then, span: { start: w.startOffset, end: then.span.end } });
    } while (this.is(T.When));
    const otherwise = this.takeIf(T.Else) ? this.expression() : null;
    this.take(T.End);
    return { kind: 'Case', operand, whens, else: otherwise, span: this.upTo(start.startOffset) };
  }

  private extractExpr(): A.Expr {
    const start = this.take(T.Extract);
    this.take(T.LParen);
    const field = this.tokens[this.i];
    if (field === undefined || !(field.tokenType === T.Identifier || field.tokenType === T.StringLiteral || KEYWORD.has(field.tokenType))) throw GIVE_UP;
    this.i++;
    this.take(T.From);
    const source = this.expression();
    this.take(T.RParen);
    return { kind: 'Extract', field: field.image.replace(/'/g, '').toLowerCase(), source, span: this.upTo(start.startOffset) };
  }

  private parenthesized(): A.Expr {
    const open = this.take(T.LParen);
    let inner: A.Expr;
    if (this.is(T.Select)) {
      const query = this.selectStatement();
      inner = { kind: 'Subquery', query, span: query.span };
    } else inner = this.expression();
    this.take(T.RParen);
    // Grouping is invisible in the tree, but the node's span takes in the parentheses. The
    // node is new and only ours: its span is set in place, where a spread copy (the grammar's
    // way) gave every parenthesized node a second hidden class, which each later pass saw.
    (inner as { span: Span }).span = this.upTo(open.startOffset);
    return inner;
  }

  private nameOrCall(): A.Expr {
    const first = identFrom(this.name());
    if (this.takeIf(T.LParen)) {
      let distinct = false;
      const args: A.Expr[] = [];
      const star = this.takeIf(T.Star);
      if (star) args.push({ kind: 'Star', qualifier: null, span: tokenSpan(star) });
      else if (!this.is(T.RParen)) {
        if (this.takeIf(T.Distinct)) distinct = true;
        else this.takeIf(T.All);
        args.push(this.expression());
        while (this.takeIf(T.Comma)) args.push(this.expression());
      }
      this.take(T.RParen);
      return { kind: 'Call', name: first, args, distinct, filter: null, over: null, span: this.upTo(first.span.start) };
    }
    const parts = [first];
    while (this.takeIf(T.Dot)) parts.push(identFrom(this.name()));
    return { kind: 'Path', parts, span: this.upTo(first.span.start) };
  }
}
