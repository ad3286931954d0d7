import { EmbeddedActionsParser, type IOrAlt, type IToken } from 'chevrotain';
import type { Span } from '../diagnostics/span.js';
import type * as A from './ast.js';
import { climb, type Item } from './climb.js';
import { between, identFrom, numberNode, tokenSpan } from './leaves.js';
import { chevrotainTokens as T } from './chevrotain-tokens.js';

/**
 * The grammar, written as an embedded-actions parser so the AST is built while parsing with no
 * intermediate concrete syntax tree. Precedence follows PostgreSQL (lowest first): OR, AND,
 * NOT, IS, comparison, BETWEEN/IN/LIKE, other operators (&&), + -, * / %, AT TIME ZONE,
 * unary + -, :: casts.
 *
 * Forbidden constructs that would only clutter the grammar (JOIN, UNION, FILTER, OVER,
 * subscripts, ||) are not rules: they surface as the offending token of a syntax error and
 * `classify.ts` turns that into a precise diagnostic.
 */

const TYPE_CONTINUATIONS = new Set(['precision', 'varying', 'without']);
const JOIN_WORDS = new Set(['join', 'left', 'right', 'full', 'inner', 'cross', 'natural', 'outer', 'using', 'lateral']);

export class OqlParser extends EmbeddedActionsParser {
  /**
   * Item lists of the expressions being read, innermost last. Rules append to the top list
   * instead of receiving it as an argument, so their alternatives capture no local state and
   * are built once (see operandAlts).
   */
  private readonly itemLists: Item[][] = [];
  private infixAlts?: IOrAlt<void>[];
  private boundAlts?: IOrAlt<void>[];
  private operandAlts?: IOrAlt<A.Expr>[];
  private prefixAlts?: IOrAlt<IToken>[];
  private nameAlts?: IOrAlt<IToken>[];
  private partAlts?: IOrAlt<IToken>[];

  constructor(validate: boolean) {
    super(T.allTokens, { maxLookahead: 3, recoveryEnabled: false, skipValidations: !validate });
    this.performSelfAnalysis();
  }

  private items(): Item[] {
    return this.itemLists[this.itemLists.length - 1]!;
  }

  /** Span from a start offset to the end of the last consumed token. */
  private upTo(start: number): Span {
    const last = this.LA(0);
    return { start, end: last.startOffset + last.image.length };
  }

  public query = this.RULE('query', (): A.Select => {
    // A syntax error abandons the lists of the expressions it interrupted.
    this.ACTION(() => (this.itemLists.length = 0));
    const select = this.SUBRULE(this.selectStatement);
    this.OPTION(() => this.CONSUME(T.Semicolon));
    return select;
  });

  private selectStatement = this.RULE('selectStatement', (): A.Select => {
    const start = this.CONSUME(T.Select);
    let distinct = false;
    this.OPTION(() => {
      this.OR([
        { ALT: () => { this.CONSUME(T.Distinct); distinct = true; } },
        { ALT: () => this.CONSUME(T.All) },
      ]);
    });
    const items: A.SelectItem[] = [];
    this.AT_LEAST_ONE_SEP({ SEP: T.Comma, DEF: () => items.push(this.SUBRULE(this.selectItem)) });
    this.CONSUME(T.From);
    const from = this.SUBRULE(this.fromItem);
    let where: A.Expr | null = null;
    let having: A.Expr | null = null;
    const groupBy: A.Expr[] = [];
    let orderBy: A.OrderItem[] = [];
    let limit: A.NumberLit | null = null;
    let offset: A.NumberLit | null = null;
    this.OPTION2(() => {
      this.CONSUME(T.Where);
      where = this.SUBRULE(this.expression);
    });
    this.OPTION3(() => {
      this.CONSUME(T.Group);
      this.CONSUME(T.By);
      this.AT_LEAST_ONE_SEP2({ SEP: T.Comma, DEF: () => groupBy.push(this.SUBRULE2(this.expression)) });
    });
    this.OPTION4(() => {
      this.CONSUME(T.Having);
      having = this.SUBRULE3(this.expression);
    });
    this.OPTION5(() => {
      orderBy = this.SUBRULE(this.orderByClause);
    });
    this.OPTION6(() => {
      this.OR2([
        {
          ALT: () => {
            this.CONSUME(T.Limit);
            limit = this.SUBRULE(this.numberLiteral);
            this.OPTION7(() => {
              this.CONSUME(T.Offset);
              offset = this.SUBRULE2(this.numberLiteral);
            });
          },
        },
        {
          ALT: () => {
            this.CONSUME2(T.Offset);
            offset = this.SUBRULE3(this.numberLiteral);
            this.OPTION8(() => {
              this.CONSUME2(T.Limit);
              limit = this.SUBRULE4(this.numberLiteral);
            });
          },
        },
      ]);
    });
    return this.ACTION(() => ({
      kind: 'Select' as const,
      distinct,
      items,
      from,
      where,
      groupBy,
      having,
      orderBy,
      limit,
      offset,
      span: this.upTo(start.startOffset),
    }));
  });

  private selectItem = this.RULE('selectItem', (): A.SelectItem => {
    return this.OR([
      {
        ALT: () => {
          const star = this.CONSUME(T.Star);
          return this.ACTION(() => {
            const expr: A.StarExpr = { kind: 'Star', qualifier: null, span: tokenSpan(star) };
            return { kind: 'SelectItem' as const, expr, alias: null, span: expr.span };
          });
        },
      },
      {
        // LL(3) tells `a.*` from the path `a.b` without a gate (gates force Chevrotain's slow path).
        ALT: () => {
          const q = this.SUBRULE(this.identifier);
          this.CONSUME(T.Dot);
          const star = this.CONSUME2(T.Star);
          return this.ACTION(() => {
            const expr: A.StarExpr = { kind: 'Star', qualifier: q, span: { start: q.span.start, end: star.startOffset + 1 } };
            return { kind: 'SelectItem' as const, expr, alias: null, span: expr.span };
          });
        },
      },
      {
        ALT: () => {
          const expr = this.SUBRULE(this.expression);
          let alias: A.Ident | null = null;
          this.OPTION(() => {
            this.OR2([
              {
                ALT: () => {
                  this.CONSUME(T.As);
                  alias = this.SUBRULE(this.aliasName);
                },
              },
              { ALT: () => (alias = identFrom(this.CONSUME(T.Identifier))) },
              { ALT: () => (alias = identFrom(this.CONSUME(T.QuotedIdentifier))) },
            ]);
          });
          return this.ACTION(() => ({
            kind: 'SelectItem' as const,
            expr,
            alias,
            span: alias ? between(expr, alias) : expr.span,
          }));
        },
      },
    ]);
  });

  /** After AS any word is a name, keywords included (`AS count`, `AS order`). */
  private aliasName = this.RULE('aliasName', (): A.Ident => {
    const t = this.OR([
      { ALT: () => this.CONSUME(T.Identifier) },
      { ALT: () => this.CONSUME(T.QuotedIdentifier) },
      { ALT: () => this.CONSUME(T.Keyword) },
    ]);
    return this.ACTION(() => identFrom(t));
  });

  private fromItem = this.RULE('fromItem', (): A.FromItem => {
    const object = this.SUBRULE(this.identifier);
    let alias: A.Ident | null = null;
    this.OPTION({
      // JOIN words are never aliases, so `FROM account LEFT JOIN ...` reports the JOIN.
      GATE: () => this.LA(1).tokenType === T.As || !JOIN_WORDS.has(this.LA(1).image.toLowerCase()),
      DEF: () => {
        this.OPTION2(() => this.CONSUME(T.As));
        alias = this.SUBRULE2(this.identifier);
      },
    });
    return this.ACTION(() => ({
      kind: 'FromItem' as const,
      object,
      alias,
      span: alias ? between(object, alias) : object.span,
    }));
  });

  private orderByClause = this.RULE('orderByClause', (): A.OrderItem[] => {
    this.CONSUME(T.Order);
    this.CONSUME(T.By);
    const items: A.OrderItem[] = [];
    this.AT_LEAST_ONE_SEP({ SEP: T.Comma, DEF: () => items.push(this.SUBRULE(this.orderItem)) });
    return items;
  });

  private orderItem = this.RULE('orderItem', (): A.OrderItem => {
    const expr = this.SUBRULE(this.expression);
    let direction: 'ASC' | 'DESC' | null = null;
    let nulls: 'FIRST' | 'LAST' | null = null;
    this.OPTION(() => {
      this.OR([
        { ALT: () => { this.CONSUME(T.Asc); direction = 'ASC'; } },
        { ALT: () => { this.CONSUME(T.Desc); direction = 'DESC'; } },
      ]);
    });
    this.OPTION2(() => {
      this.CONSUME(T.Nulls);
      this.OR2([
        { ALT: () => { this.CONSUME(T.First); nulls = 'FIRST'; } },
        { ALT: () => { this.CONSUME(T.Last); nulls = 'LAST'; } },
      ]);
    });
    return this.ACTION(() => ({ kind: 'OrderItem' as const, expr, direction, nulls, span: this.upTo(expr.span.start) }));
  });

  private numberLiteral = this.RULE('numberLiteral', (): A.NumberLit => {
    const t = this.CONSUME(T.NumberLiteral);
    return this.ACTION(() => numberNode(t));
  });

  // ---- expressions ----
  //
  // One flat rule reads `prefix* operand (infix prefix* operand | postfix)*` and precedence
  // climbing (`climb.ts`) builds the tree. Fourteen nested precedence rules would cost a
  // Chevrotain rule call each per operand; this way parsing is several times faster and the
  // parser recurses only per bracket, never per operator.

  public expression = this.RULE('expression', (): A.Expr => {
    this.ACTION(() => this.itemLists.push([]));
    this.SUBRULE(this.operand);
    this.MANY(() => {
      this.OR((this.infixAlts ??= [
        {
          ALT: () => {
            const op = this.OR2([
              { ALT: () => this.CONSUME(T.Or) },
              { ALT: () => this.CONSUME(T.And) },
              { ALT: () => this.CONSUME(T.ComparisonOp) },
              { ALT: () => this.CONSUME(T.ArithmeticOp) },
            ]);
            this.ACTION(() => this.items().push({ kind: 'binary', token: op }));
            this.SUBRULE2(this.operand);
          },
        },
        { ALT: () => this.SUBRULE(this.atTimeZone) },
        {
          ALT: () => {
            const is = this.CONSUME(T.Is);
            let negated = false;
            this.OPTION(() => {
              this.CONSUME(T.Not);
              negated = true;
            });
            const end = this.CONSUME(T.Null);
            this.ACTION(() => this.items().push({ kind: 'isNull', negated, end: end.startOffset + 4, at: is.startOffset }));
          },
        },
        { ALT: () => this.SUBRULE(this.predicate) },
      ]));
    });
    return this.ACTION(() => climb(this.itemLists.pop()!));
  });

  /** `prefix* castExpr`: NOT, - and + before an operand. */
  private operand = this.RULE('operand', (): void => {
    this.MANY(() => {
      const t = this.OR((this.prefixAlts ??= [{ ALT: () => this.CONSUME(T.Not) }, { ALT: () => this.CONSUME(T.Minus) }, { ALT: () => this.CONSUME(T.Plus) }]));
      this.ACTION(() => this.items().push({ kind: 'prefix', token: t }));
    });
    const e = this.SUBRULE(this.castExpr);
    this.ACTION(() => this.items().push({ kind: 'operand', expr: e }));
  });

  private atTimeZone = this.RULE('atTimeZone', (): void => {
    this.CONSUME(T.At);
    this.CONSUME(T.Time);
    this.CONSUME(T.Zone);
    const zone = this.SUBRULE(this.signedOperand);
    this.ACTION(() => this.items().push({ kind: 'atTimeZone', zone }));
  });

  /** `[NOT] BETWEEN a AND b`, `[NOT] IN (...)`, `[NOT] LIKE|ILIKE p`. */
  private predicate = this.RULE('predicate', (): void => {
    let negated = false;
    this.OPTION(() => {
      this.CONSUME(T.Not);
      negated = true;
    });
    this.OR([
      {
        ALT: () => {
          this.CONSUME(T.Between);
          const low = this.SUBRULE(this.bound);
          this.CONSUME(T.And);
          const high = this.SUBRULE2(this.bound);
          this.ACTION(() => this.items().push({ kind: 'between', negated, low, high }));
        },
      },
      {
        ALT: () => {
          const op = this.OR2([{ ALT: () => this.CONSUME(T.Like) }, { ALT: () => this.CONSUME(T.ILike) }]);
          const pattern = this.SUBRULE3(this.bound);
          this.ACTION(() => this.items().push({ kind: 'like', negated, caseInsensitive: op.tokenType === T.ILike, pattern }));
        },
      },
      {
        ALT: () => {
          this.CONSUME(T.In);
          this.CONSUME(T.LParen);
          this.OR3([
            {
              ALT: () => {
                const query = this.SUBRULE(this.selectStatement);
                const close = this.CONSUME(T.RParen);
                this.ACTION(() => this.items().push({ kind: 'inSubquery', negated, query, end: close.startOffset + 1 }));
              },
            },
            {
              ALT: () => {
                const list: A.Expr[] = [];
                this.AT_LEAST_ONE_SEP({ SEP: T.Comma, DEF: () => list.push(this.SUBRULE(this.expression)) });
                const close = this.CONSUME2(T.RParen);
                this.ACTION(() => this.items().push({ kind: 'inList', negated, list, end: close.startOffset + 1 }));
              },
            },
          ]);
        },
      },
    ]);
  });

  /**
   * The operand of BETWEEN and LIKE: arithmetic only, so that `x BETWEEN 1 AND 2 AND y` reads
   * BETWEEN's own AND first, as in PostgreSQL.
   */
  private bound = this.RULE('bound', (): A.Expr => {
    this.ACTION(() => this.itemLists.push([]));
    this.SUBRULE(this.signs);
    this.MANY(() => {
      this.OR((this.boundAlts ??= [
        {
          ALT: () => {
            const op = this.CONSUME2(T.ArithmeticOp);
            this.ACTION(() => this.items().push({ kind: 'binary', token: op }));
            this.SUBRULE2(this.signs);
          },
        },
        { ALT: () => this.SUBRULE(this.atTimeZone) },
      ]));
    });
    return this.ACTION(() => climb(this.itemLists.pop()!));
  });

  /** `(- | +)* castExpr` as items. */
  private signs = this.RULE('signs', (): void => {
    this.MANY(() => {
      const t = this.OR([{ ALT: () => this.CONSUME(T.Minus) }, { ALT: () => this.CONSUME(T.Plus) }]);
      this.ACTION(() => this.items().push({ kind: 'prefix', token: t }));
    });
    const e = this.SUBRULE(this.castExpr);
    this.ACTION(() => this.items().push({ kind: 'operand', expr: e }));
  });

  /** A signed operand as an expression: the zone of AT TIME ZONE. */
  private signedOperand = this.RULE('signedOperand', (): A.Expr => {
    this.ACTION(() => this.itemLists.push([]));
    this.SUBRULE(this.signs);
    return this.ACTION(() => climb(this.itemLists.pop()!));
  });

  /** An operand with its `::` casts; one rule, since every operand passes through it. */
  private castExpr = this.RULE('castExpr', (): A.Expr => {
    // Alternatives that capture no local state are built once: an OR's array of closures is
    // otherwise allocated on every call, and every operand passes through here.
    let operand = this.OR({
      IGNORE_AMBIGUITIES: true,
      DEF: (this.operandAlts ??= [
        {
          ALT: () => {
            const t = this.CONSUME(T.StringLiteral);
            return this.ACTION(() => ({ kind: 'String' as const, value: t.image.slice(1, -1).replace(/''/g, "'"), span: tokenSpan(t) }));
          },
        },
        { ALT: () => this.SUBRULE(this.numberLiteral) },
        {
          ALT: () => {
            const t = this.OR2([{ ALT: () => this.CONSUME(T.True) }, { ALT: () => this.CONSUME(T.False) }]);
            return this.ACTION(() => ({ kind: 'Boolean' as const, value: t.tokenType === T.True, span: tokenSpan(t) }));
          },
        },
        {
          ALT: () => {
            const t = this.CONSUME(T.Null);
            return this.ACTION(() => ({ kind: 'Null' as const, span: tokenSpan(t) }));
          },
        },
        { ALT: () => this.SUBRULE(this.dateKeyword) },
        { ALT: () => this.SUBRULE(this.arrayExpr) },
        { ALT: () => this.SUBRULE(this.existsExpr) },
        { ALT: () => this.SUBRULE(this.caseExpr) },
        { ALT: () => this.SUBRULE(this.extractExpr) },
        { ALT: () => this.SUBRULE(this.parenthesized) },
        { ALT: () => this.SUBRULE(this.nameOrCall) },
      ]),
    });
    this.MANY(() => {
      this.CONSUME(T.DoubleColon);
      const type = this.SUBRULE(this.typeName);
      operand = this.ACTION(() => ({
        kind: 'Cast' as const,
        operand,
        type: type.name,
        typeSpan: type.span,
        span: { start: operand.span.start, end: type.span.end },
      }));
    });
    return operand;
  });

  private typeName = this.RULE('typeName', (): { name: string; span: Span } => {
    const first = this.OR([{ ALT: () => this.CONSUME(T.Identifier) }, { ALT: () => this.CONSUME(T.NonReserved) }]);
    const words: string[] = [];
    const continuations: IToken[] = [];
    this.MANY({
      GATE: () => TYPE_CONTINUATIONS.has(this.LA(1).image.toLowerCase()),
      DEF: () => continuations.push(this.CONSUME2(T.Identifier)),
    });
    this.OPTION(() => {
      this.CONSUME(T.With);
      this.CONSUME(T.Time);
      this.CONSUME(T.Zone);
      words.push('with time zone');
    });
    this.OPTION2(() => {
      this.CONSUME3(T.Time);
      this.CONSUME2(T.Zone);
      words.push('time zone');
    });
    this.OPTION3(() => {
      this.CONSUME(T.LParen);
      const args = [this.CONSUME(T.NumberLiteral)];
      this.OPTION4(() => {
        this.CONSUME(T.Comma);
        args.push(this.CONSUME2(T.NumberLiteral));
      });
      this.CONSUME(T.RParen);
      this.ACTION(() => words.push(`(${args.map((a) => a.image).join(',')})`));
    });
    this.OPTION5(() => {
      this.CONSUME(T.LBracket);
      this.CONSUME(T.RBracket);
      words.push('[]');
    });
    return this.ACTION(() => {
      const name = [first, ...continuations].map((t) => t.image.toLowerCase()).concat(words).join(' ');
      return { name: name.replace(/ \(/, '(').replace(/ \[\]/, '[]'), span: this.upTo(first.startOffset) };
    });
  });

  private dateKeyword = this.RULE('dateKeyword', (): A.Expr => {
    const t = this.OR([
      { ALT: () => this.CONSUME(T.CurrentDate) },
      { ALT: () => this.CONSUME(T.CurrentTimestamp) },
      { ALT: () => this.CONSUME(T.CurrentTime) },
      { ALT: () => this.CONSUME(T.LocalTimestamp) },
      { ALT: () => this.CONSUME(T.LocalTime) },
    ]);
    return this.ACTION(() => ({ kind: 'DateKeyword' as const, name: t.tokenType.name, span: tokenSpan(t) }));
  });

  private arrayExpr = this.RULE('arrayExpr', (): A.Expr => {
    const start = this.CONSUME(T.ArrayKw);
    this.CONSUME(T.LBracket);
    const items: A.Expr[] = [];
    this.MANY_SEP({ SEP: T.Comma, DEF: () => items.push(this.SUBRULE(this.expression)) });
    this.CONSUME(T.RBracket);
    return this.ACTION(() => ({ kind: 'Array' as const, items, span: this.upTo(start.startOffset) }));
  });

  private existsExpr = this.RULE('existsExpr', (): A.Expr => {
    const start = this.CONSUME(T.Exists);
    this.CONSUME(T.LParen);
    const query = this.SUBRULE(this.selectStatement);
    this.CONSUME(T.RParen);
    return this.ACTION(() => ({ kind: 'Exists' as const, query, span: this.upTo(start.startOffset) }));
  });

  private caseExpr = this.RULE('caseExpr', (): A.Expr => {
    const start = this.CONSUME(T.Case);
    let operand: A.Expr | null = null;
    this.OPTION(() => (operand = this.SUBRULE(this.expression)));
    const whens: A.WhenClause[] = [];
    this.AT_LEAST_ONE(() => {
      const w = this.CONSUME(T.When);
      const when = this.SUBRULE2(this.expression);
      this.CONSUME(T.Then);
      const then = this.SUBRULE3(this.expression);
      whens.push(this.ACTION(() => ({ kind: 'When' as const, when, then, span: { start: w.startOffset, end: then.span.end } })));
    });
    let otherwise: A.Expr | null = null;
    this.OPTION2(() => {
      this.CONSUME(T.Else);
      otherwise = this.SUBRULE4(this.expression);
    });
    this.CONSUME(T.End);
    return this.ACTION(() => ({ kind: 'Case' as const, operand, whens, else: otherwise, span: this.upTo(start.startOffset) }));
  });

  private extractExpr = this.RULE('extractExpr', (): A.Expr => {
    const start = this.CONSUME(T.Extract);
    this.CONSUME(T.LParen);
    const field = this.OR([
      { ALT: () => this.CONSUME(T.Identifier) },
      { ALT: () => this.CONSUME(T.Keyword) },
      { ALT: () => this.CONSUME(T.StringLiteral) },
    ]);
    this.CONSUME(T.From);
    const source = this.SUBRULE(this.expression);
    this.CONSUME(T.RParen);
    return this.ACTION(() => ({
      kind: 'Extract' as const,
      field: field.image.replace(/'/g, '').toLowerCase(),
      source,
      span: this.upTo(start.startOffset),
    }));
  });

  private parenthesized = this.RULE('parenthesized', (): A.Expr => {
    const open = this.CONSUME(T.LParen);
    const inner = this.OR([
      {
        ALT: () => {
          const query = this.SUBRULE(this.selectStatement);
          return this.ACTION((): A.Expr => ({ kind: 'Subquery', query, span: query.span }));
        },
      },
      { ALT: () => this.SUBRULE(this.expression) },
    ]);
    this.CONSUME(T.RParen);
    // Grouping is invisible in the tree, but the node's span takes in the parentheses, so that
    // enclosing spans (`(a + b) * c`, `NOT (x && y)`) stay balanced.
    return this.ACTION(() => ({ ...inner, span: this.upTo(open.startOffset) }));
  });

  private nameOrCall = this.RULE('nameOrCall', (): A.Expr => {
    // Identifier tokens are consumed inline: a rule call per name part is measurable here.
    const firstToken = this.OR9(
      (this.nameAlts ??= [
        { ALT: () => this.CONSUME(T.Identifier) },
        { ALT: () => this.CONSUME(T.QuotedIdentifier) },
        { ALT: () => this.CONSUME(T.NonReserved) },
      ]),
    );
    const first = this.ACTION(() => identFrom(firstToken));
    return this.OR([
      {
        ALT: () => {
          this.CONSUME(T.LParen);
          let distinct = false;
          const args: A.Expr[] = [];
          this.OPTION(() => {
            this.OR2([
              {
                ALT: () => {
                  const star = this.CONSUME(T.Star);
                  args.push(this.ACTION(() => ({ kind: 'Star' as const, qualifier: null, span: tokenSpan(star) })));
                },
              },
              {
                ALT: () => {
                  this.OPTION2(() => {
                    this.OR3([
                      { ALT: () => { this.CONSUME(T.Distinct); distinct = true; } },
                      { ALT: () => this.CONSUME(T.All) },
                    ]);
                  });
                  this.AT_LEAST_ONE_SEP({ SEP: T.Comma, DEF: () => args.push(this.SUBRULE(this.expression)) });
                },
              },
            ]);
          });
          this.CONSUME(T.RParen);
          return this.ACTION((): A.Expr => ({
            kind: 'Call',
            name: first,
            args,
            distinct,
            filter: null,
            over: null,
            span: this.upTo(first.span.start),
          }));
        },
      },
      {
        ALT: () => {
          const parts = [first];
          this.MANY(() => {
            this.CONSUME(T.Dot);
            const t = this.OR8(
              (this.partAlts ??= [
                { ALT: () => this.CONSUME2(T.Identifier) },
                { ALT: () => this.CONSUME2(T.QuotedIdentifier) },
                { ALT: () => this.CONSUME2(T.NonReserved) },
              ]),
            );
            this.ACTION(() => parts.push(identFrom(t)));
          });
          return this.ACTION((): A.Expr => ({ kind: 'Path', parts, span: this.upTo(first.span.start) }));
        },
      },
    ]);
  });

  private identifier = this.RULE('identifier', (): A.Ident => {
    const t = this.OR([
      { ALT: () => this.CONSUME(T.Identifier) },
      { ALT: () => this.CONSUME(T.QuotedIdentifier) },
      { ALT: () => this.CONSUME(T.NonReserved) },
    ]);
    return this.ACTION(() => identFrom(t));
  });
}
