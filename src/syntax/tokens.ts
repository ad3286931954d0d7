import { createToken, Lexer, type TokenType } from 'chevrotain';

/**
 * Tokens of the object query language. Keywords are case-insensitive and fall back to
 * `Identifier` when they are a prefix of a longer word (`selection`, `order_total`).
 *
 * Two keyword categories:
 * - `Keyword`: every keyword; any keyword may follow AS as an output alias.
 * - `NonReserved`: keywords that may also be column names or function names (`first`,
 *   `last`, `zone`, `filter`...). Object slugs such as `user` are never keywords.
 */

export const Identifier = createToken({ name: 'Identifier', pattern: /[A-Za-z_][A-Za-z0-9_$]*/ });
export const Keyword = createToken({ name: 'Keyword', pattern: Lexer.NA });
export const NonReserved = createToken({ name: 'NonReserved', pattern: Lexer.NA });

const keywordTokens: TokenType[] = [];

function keyword(word: string, nonReserved = false): TokenType {
  const t = createToken({
    name: word,
    pattern: new RegExp(word, 'i'),
    longer_alt: Identifier,
    categories: nonReserved ? [Keyword, NonReserved] : [Keyword],
    // Given hints, Chevrotain skips analysing 53 regexes when the lexer is built (cold start).
    start_chars_hint: [word.charAt(0).toUpperCase(), word.charAt(0).toLowerCase()],
    line_breaks: false,
  });
  keywordTokens.push(t);
  return t;
}

export const Select = keyword('SELECT');
export const From = keyword('FROM');
export const Where = keyword('WHERE');
export const Group = keyword('GROUP');
export const By = keyword('BY');
export const Having = keyword('HAVING');
export const Order = keyword('ORDER');
export const Limit = keyword('LIMIT');
export const Offset = keyword('OFFSET');
export const And = keyword('AND');
export const Or = keyword('OR');
export const Not = keyword('NOT');
export const As = keyword('AS');
export const Case = keyword('CASE');
export const When = keyword('WHEN');
export const Then = keyword('THEN');
export const Else = keyword('ELSE');
export const End = keyword('END');
export const In = keyword('IN');
export const Is = keyword('IS');
export const Null = keyword('NULL');
export const True = keyword('TRUE');
export const False = keyword('FALSE');
export const Like = keyword('LIKE');
export const ILike = keyword('ILIKE');
export const Between = keyword('BETWEEN');
export const Exists = keyword('EXISTS');
export const Distinct = keyword('DISTINCT');
export const All = keyword('ALL');
export const ArrayKw = keyword('ARRAY');
export const Join = keyword('JOIN');
export const On = keyword('ON');
export const Union = keyword('UNION');
export const Intersect = keyword('INTERSECT');
export const Except = keyword('EXCEPT');
export const With = keyword('WITH');
export const CurrentDate = keyword('CURRENT_DATE');
export const CurrentTimestamp = keyword('CURRENT_TIMESTAMP');
export const CurrentTime = keyword('CURRENT_TIME');
export const LocalTimestamp = keyword('LOCALTIMESTAMP');
export const LocalTime = keyword('LOCALTIME');
export const Asc = keyword('ASC', true);
export const Desc = keyword('DESC', true);
export const Nulls = keyword('NULLS', true);
export const First = keyword('FIRST', true);
export const Last = keyword('LAST', true);
export const At = keyword('AT', true);
export const Time = keyword('TIME', true);
export const Zone = keyword('ZONE', true);
export const Filter = keyword('FILTER', true);
export const Over = keyword('OVER', true);
// Reserved, unlike in PostgreSQL, so `EXTRACT(` needs no parser gate; no CRM column is called extract.
export const Extract = keyword('EXTRACT');

// A closing quote is never followed by another quote: `'it''s` is one unterminated string, not
// the string 'it' followed by an unterminated 's.
export const StringLiteral = createToken({ name: 'StringLiteral', pattern: /'(?:[^']|'')*'(?!')/, line_breaks: true });
export const UnterminatedString = createToken({ name: 'UnterminatedString', pattern: /'(?:[^']|'')*/, line_breaks: true });
export const QuotedIdentifier = createToken({ name: 'QuotedIdentifier', pattern: /"(?:[^"]|"")+"(?!")/, line_breaks: true });
export const UnterminatedIdentifier = createToken({ name: 'UnterminatedIdentifier', pattern: /"(?:[^"]|"")*/, line_breaks: true });
export const NumberLiteral = createToken({ name: 'NumberLiteral', pattern: /(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?/ });
export const Parameter = createToken({ name: 'Parameter', pattern: /\$\d+/ });

export const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /\s+/, group: Lexer.SKIPPED, line_breaks: true });
export const LineComment = createToken({ name: 'LineComment', pattern: /--[^\n\r]*/, group: Lexer.SKIPPED });
export const BlockComment = createToken({ name: 'BlockComment', pattern: /\/\*[\s\S]*?\*\//, group: Lexer.SKIPPED, line_breaks: true });
export const UnterminatedComment = createToken({ name: 'UnterminatedComment', pattern: /\/\*[\s\S]*/, line_breaks: true });

export const DoubleColon = createToken({ name: 'DoubleColon', pattern: /::/ });
export const Colon = createToken({ name: 'Colon', pattern: /:/ });
export const Comma = createToken({ name: 'Comma', pattern: /,/ });
export const Dot = createToken({ name: 'Dot', pattern: /\./ });
export const Semicolon = createToken({ name: 'Semicolon', pattern: /;/ });
export const LParen = createToken({ name: 'LParen', pattern: /\(/ });
export const RParen = createToken({ name: 'RParen', pattern: /\)/ });
export const LBracket = createToken({ name: 'LBracket', pattern: /\[/ });
export const RBracket = createToken({ name: 'RBracket', pattern: /]/ });

export const ComparisonOp = createToken({ name: 'ComparisonOp', pattern: Lexer.NA });
/** Operators binding tighter than comparisons: && and arithmetic. */
export const ArithmeticOp = createToken({ name: 'ArithmeticOp', pattern: Lexer.NA });
export const NotEqual = createToken({ name: 'NotEqual', pattern: /<>|!=/, categories: [ComparisonOp] });
export const LessEqual = createToken({ name: 'LessEqual', pattern: /<=/, categories: [ComparisonOp] });
export const GreaterEqual = createToken({ name: 'GreaterEqual', pattern: />=/, categories: [ComparisonOp] });
export const Equal = createToken({ name: 'Equal', pattern: /=/, categories: [ComparisonOp] });
export const Less = createToken({ name: 'Less', pattern: /</, categories: [ComparisonOp] });
export const Greater = createToken({ name: 'Greater', pattern: />/, categories: [ComparisonOp] });
export const Overlap = createToken({ name: 'Overlap', pattern: /&&/, categories: [ArithmeticOp] });
export const Concat = createToken({ name: 'Concat', pattern: /\|\|/ });
export const Contains = createToken({ name: 'Contains', pattern: /@>/ });
export const ContainedBy = createToken({ name: 'ContainedBy', pattern: /<@/ });
export const Plus = createToken({ name: 'Plus', pattern: /\+/, categories: [ArithmeticOp] });
export const Minus = createToken({ name: 'Minus', pattern: /-/, categories: [ArithmeticOp] });
export const Star = createToken({ name: 'Star', pattern: /\*/, categories: [ArithmeticOp] });
export const Slash = createToken({ name: 'Slash', pattern: /\//, categories: [ArithmeticOp] });
export const Percent = createToken({ name: 'Percent', pattern: /%/, categories: [ArithmeticOp] });
/** Any other PostgreSQL operator character run: recognised so it can be rejected by name. */
export const OtherOperator = createToken({ name: 'OtherOperator', pattern: /[~!@#^&|`?]+/ });

/** Order matters: longer and more specific patterns first. */
export const allTokens: TokenType[] = [
  WhiteSpace,
  LineComment,
  BlockComment,
  UnterminatedComment,
  StringLiteral,
  UnterminatedString,
  QuotedIdentifier,
  UnterminatedIdentifier,
  NumberLiteral,
  Parameter,
  DoubleColon,
  Colon,
  Comma,
  Dot,
  Semicolon,
  LParen,
  RParen,
  LBracket,
  RBracket,
  ContainedBy,
  NotEqual,
  LessEqual,
  GreaterEqual,
  Equal,
  Less,
  Greater,
  Overlap,
  Concat,
  Contains,
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  OtherOperator,
  Keyword,
  NonReserved,
  ComparisonOp,
  ArithmeticOp,
  // Longer keywords before their prefixes (INTERSECT before IN, ORDER before OR, ASC before AS).
  ...[...keywordTokens].sort((a, b) => b.name.length - a.name.length),
  Identifier,
];

/** Upper-case words of every keyword, for did-you-mean hints. */
export const KEYWORDS: readonly string[] = keywordTokens.map((t) => t.name);
