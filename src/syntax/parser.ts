import { EmbeddedActionsParser, type IToken, type TokenType } from 'chevrotain';
import type { Span } from '../diagnostics/span.js';
import type * as A from './ast.js';
import * as T from './tokens.js';

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

function tokenSpan(t: IToken): Span {
  return { start: t.startOffset, end: t.startOffset + t.image.length };
}

function identFrom(t: IToken): A.Ident {
  if (t.tokenType === T.QuotedIdentifier) {
    return { kind: 'Ident', name: t.image.slice(1, -1).replace(/""/g, '"'), quoted: true, span: tokenSpan(t) };
  }
  return { kind: 'Ident', name: t.image.toLowerCase(), quoted: false, span: tokenSpan(t) };
}

function between(a: { span: Span }, b: { span: Span }): Span {
  return { start: a.span.start, end: b.span.end };
}

export class OqlParser extends EmbeddedActionsParser {
  constructor(validate: boolean) {
    super(T.allTokens, { maxLookahead: 3, recoveryEnabled: false, skipValidations: !validate });
    this.performSelfAnalysis();
  }

  /** Span from a start offset to the end of the last consumed token. */
  private upTo(start: number): Span {
    const last = this.LA(0);
    return { start, end: last.startOffset + last.image.length };
  }

  public query = this.RULE('query', (): A.Select => {
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
        GATE: () => this.LA(2).tokenType === T.Dot && this.LA(3).tokenType === T.Star,
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

  // ---- expressions, lowest precedence first ----

  public expression = this.RULE('expression', (): A.Expr => this.SUBRULE(this.orExpr));

  private orExpr = this.RULE('orExpr', (): A.Expr => {
    const operands = [this.SUBRULE(this.andExpr)];
    this.MANY(() => {
      this.CONSUME(T.Or);
      operands.push(this.SUBRULE2(this.andExpr));
    });
    return this.ACTION(() => logical('OR', operands));
  });

  private andExpr = this.RULE('andExpr', (): A.Expr => {
    const operands = [this.SUBRULE(this.notExpr)];
    this.MANY(() => {
      this.CONSUME(T.And);
      operands.push(this.SUBRULE2(this.notExpr));
    });
    return this.ACTION(() => logical('AND', operands));
  });

  private notExpr = this.RULE('notExpr', (): A.Expr => {
    return this.OR([
      {
        ALT: () => {
          const not = this.CONSUME(T.Not);
          const operand = this.SUBRULE(this.notExpr);
          return this.ACTION(() => ({ kind: 'Unary' as const, op: 'NOT' as const, operand, span: { start: not.startOffset, end: operand.span.end } }));
        },
      },
      { ALT: () => this.SUBRULE(this.isExpr) },
    ]);
  });

  private isExpr = this.RULE('isExpr', (): A.Expr => {
    let expr = this.SUBRULE(this.comparisonExpr);
    this.MANY(() => {
      this.CONSUME(T.Is);
      let negated = false;
      this.OPTION(() => {
        this.CONSUME(T.Not);
        negated = true;
      });
      this.CONSUME(T.Null);
      expr = this.ACTION(() => ({ kind: 'IsNull' as const, operand: expr, negated, span: this.upTo(expr.span.start) }));
    });
    return expr;
  });

  private comparisonExpr = this.RULE('comparisonExpr', (): A.Expr => {
    const left = this.SUBRULE(this.predicateExpr);
    let result = left;
    this.OPTION(() => {
      const op = this.CONSUME(T.ComparisonOp);
      const right = this.SUBRULE2(this.predicateExpr);
      result = this.ACTION(() => binary(op, left, right));
    });
    return result;
  });

  private predicateExpr = this.RULE('predicateExpr', (): A.Expr => {
    const operand = this.SUBRULE(this.otherOpExpr);
    let result = operand;
    this.OPTION(() => {
      let negated = false;
      this.OPTION2(() => {
        this.CONSUME(T.Not);
        negated = true;
      });
      result = this.OR([
        {
          ALT: () => {
            this.CONSUME(T.Between);
            const low = this.SUBRULE2(this.otherOpExpr);
            this.CONSUME(T.And);
            const high = this.SUBRULE3(this.otherOpExpr);
            return this.ACTION(() => ({ kind: 'Between' as const, operand, low, high, negated, span: between(operand, high) }));
          },
        },
        {
          ALT: () => {
            const op = this.OR2([{ ALT: () => this.CONSUME(T.Like) }, { ALT: () => this.CONSUME(T.ILike) }]);
            const pattern = this.SUBRULE4(this.otherOpExpr);
            return this.ACTION(() => ({
              kind: 'Like' as const,
              operand,
              pattern,
              caseInsensitive: op.tokenType === T.ILike,
              negated,
              span: between(operand, pattern),
            }));
          },
        },
        {
          ALT: () => {
            this.CONSUME(T.In);
            this.CONSUME(T.LParen);
            const result = this.OR3([
              {
                ALT: () => {
                  const query = this.SUBRULE(this.selectStatement);
                  return this.ACTION((): A.Expr => ({ kind: 'InSubquery', operand, query, negated, span: operand.span }));
                },
              },
              {
                ALT: () => {
                  const items: A.Expr[] = [];
                  this.AT_LEAST_ONE_SEP({ SEP: T.Comma, DEF: () => items.push(this.SUBRULE(this.expression)) });
                  return this.ACTION((): A.Expr => ({ kind: 'InList', operand, items, negated, span: operand.span }));
                },
              },
            ]);
            this.CONSUME(T.RParen);
            return this.ACTION(() => ({ ...result, span: this.upTo(operand.span.start) }) as A.Expr);
          },
        },
      ]);
    });
    return result;
  });

  private otherOpExpr = this.RULE('otherOpExpr', (): A.Expr => {
    let left = this.SUBRULE(this.additiveExpr);
    this.MANY(() => {
      const op = this.CONSUME(T.Overlap);
      const right = this.SUBRULE2(this.additiveExpr);
      left = this.ACTION(() => binary(op, left, right));
    });
    return left;
  });

  private additiveExpr = this.RULE('additiveExpr', (): A.Expr => {
    let left = this.SUBRULE(this.multiplicativeExpr);
    this.MANY(() => {
      const op = this.OR([{ ALT: () => this.CONSUME(T.Plus) }, { ALT: () => this.CONSUME(T.Minus) }]);
      const right = this.SUBRULE2(this.multiplicativeExpr);
      left = this.ACTION(() => binary(op, left, right));
    });
    return left;
  });

  private multiplicativeExpr = this.RULE('multiplicativeExpr', (): A.Expr => {
    let left = this.SUBRULE(this.atTimeZoneExpr);
    this.MANY(() => {
      const op = this.OR([
        { ALT: () => this.CONSUME(T.Star) },
        { ALT: () => this.CONSUME(T.Slash) },
        { ALT: () => this.CONSUME(T.Percent) },
      ]);
      const right = this.SUBRULE2(this.atTimeZoneExpr);
      left = this.ACTION(() => binary(op, left, right));
    });
    return left;
  });

  private atTimeZoneExpr = this.RULE('atTimeZoneExpr', (): A.Expr => {
    let operand = this.SUBRULE(this.unaryExpr);
    this.MANY(() => {
      this.CONSUME(T.At);
      this.CONSUME(T.Time);
      this.CONSUME(T.Zone);
      const zone = this.SUBRULE2(this.unaryExpr);
      operand = this.ACTION(() => ({ kind: 'AtTimeZone' as const, operand, zone, span: between(operand, zone) }));
    });
    return operand;
  });

  private unaryExpr = this.RULE('unaryExpr', (): A.Expr => {
    return this.OR([
      {
        ALT: () => {
          const op = this.OR2([{ ALT: () => this.CONSUME(T.Minus) }, { ALT: () => this.CONSUME(T.Plus) }]);
          const operand = this.SUBRULE(this.unaryExpr);
          return this.ACTION(() => ({
            kind: 'Unary' as const,
            op: op.image as '-' | '+',
            operand,
            span: { start: op.startOffset, end: operand.span.end },
          }));
        },
      },
      { ALT: () => this.SUBRULE(this.castExpr) },
    ]);
  });

  private castExpr = this.RULE('castExpr', (): A.Expr => {
    let operand = this.SUBRULE(this.primary);
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

  private primary = this.RULE('primary', (): A.Expr => {
    return this.OR({
      IGNORE_AMBIGUITIES: true,
      DEF: [
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
        {
          GATE: () => this.LA(2).tokenType === T.LParen,
          ALT: () => this.SUBRULE(this.extractExpr),
        },
        { ALT: () => this.SUBRULE(this.parenthesized) },
        { ALT: () => this.SUBRULE(this.nameOrCall) },
      ],
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
    // Subqueries keep the parentheses in their span; plain grouping is invisible in the tree.
    return this.ACTION(() => (inner.kind === 'Subquery' ? { ...inner, span: this.upTo(open.startOffset) } : inner));
  });

  private nameOrCall = this.RULE('nameOrCall', (): A.Expr => {
    const first = this.SUBRULE(this.identifier);
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
            parts.push(this.SUBRULE2(this.identifier));
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

function numberNode(t: IToken): A.NumberLit {
  return { kind: 'Number', text: t.image, isInteger: /^\d+$/.test(t.image), span: tokenSpan(t) };
}

function logical(op: 'AND' | 'OR', operands: A.Expr[]): A.Expr {
  if (operands.length === 1) return operands[0]!;
  return { kind: 'Logical', op, operands, span: between(operands[0]!, operands[operands.length - 1]!) };
}

const OPS = new Map<TokenType, A.BinaryOp>([
  [T.Plus, '+'],
  [T.Minus, '-'],
  [T.Star, '*'],
  [T.Slash, '/'],
  [T.Percent, '%'],
  [T.Overlap, '&&'],
  [T.Equal, '='],
  [T.Less, '<'],
  [T.Greater, '>'],
  [T.LessEqual, '<='],
  [T.GreaterEqual, '>='],
]);

function binary(op: IToken, left: A.Expr, right: A.Expr): A.Expr {
  const symbol = OPS.get(op.tokenType) ?? (op.image === '!=' ? '!=' : '<>');
  return { kind: 'Binary', op: symbol, left, right, opSpan: tokenSpan(op), span: between(left, right) };
}
