import type { TokenType } from 'chevrotain';

/**
 * Tokens of the object query language. Keywords are case-insensitive and fall back to
 * `Identifier` when they are a prefix of a longer word (`selection`, `order_total`).
 *
 * Two keyword categories:
 * - `Keyword`: every keyword; any keyword may follow AS as an output alias.
 * - `NonReserved`: keywords that may also be column names or function names (`first`,
 *   `last`, `zone`, `filter`...). Object slugs such as `user` are never keywords.
 *
 * The types are plain objects written with Chevrotain's field names: the compiler's lexer
 * (lex.ts) and parser (descent.ts) read them without loading Chevrotain, and the Chevrotain
 * grammar (grammar.ts, loaded for the first text the compiler's parser gives up on) builds its
 * own token types from them one for one, by name.
 */

/** Every type in definition order: a type's categories and longer alternative come before it. */
export const definedTokens: TokenType[] = [];

/** GROUP of the tokens the lexer drops (white space, comments). */
export const SKIPPED = 'skipped';

interface TokenSpec {
  /** What the token matches; none for a category, which only groups other types. */
  pattern?: RegExp;
  categories?: TokenType[];
  longerAlt?: TokenType;
  skipped?: boolean;
  lineBreaks?: boolean;
  startChars?: string[];
}

function define(name: string, spec: TokenSpec = {}): TokenType {
  const t: TokenType = {
    name,
    PATTERN: spec.pattern,
    CATEGORIES: spec.categories ?? [],
    LONGER_ALT: spec.longerAlt,
    GROUP: spec.skipped ? SKIPPED : undefined,
    LINE_BREAKS: spec.lineBreaks,
    START_CHARS_HINT: spec.startChars,
    // The compiler's own numbering (parse.ts indexes a table by it); the twins get Chevrotain's.
    tokenTypeIdx: definedTokens.length + 1,
  };
  definedTokens.push(t);
  return t;
}

export const Identifier = define('Identifier', { pattern: /[A-Za-z_][A-Za-z0-9_$]*/ });
export const Keyword = define('Keyword');
export const NonReserved = define('NonReserved');

const keywordTokens: TokenType[] = [];

function keyword(word: string, nonReserved = false): TokenType {
  const t = define(word, {
    pattern: new RegExp(word, 'i'),
    longerAlt: Identifier,
    categories: nonReserved ? [Keyword, NonReserved] : [Keyword],
    // Given hints, Chevrotain skips analysing 53 regexes when its lexer is built.
    startChars: [word.charAt(0).toUpperCase(), word.charAt(0).toLowerCase()],
    lineBreaks: false,
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
export const StringLiteral = define('StringLiteral', { pattern: /'(?:[^']|'')*'(?!')/, lineBreaks: true });
export const UnterminatedString = define('UnterminatedString', { pattern: /'(?:[^']|'')*/, lineBreaks: true });
export const QuotedIdentifier = define('QuotedIdentifier', { pattern: /"(?:[^"]|"")+"(?!")/, lineBreaks: true });
export const UnterminatedIdentifier = define('UnterminatedIdentifier', { pattern: /"(?:[^"]|"")*/, lineBreaks: true });
export const NumberLiteral = define('NumberLiteral', { pattern: /(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?/ });
export const Parameter = define('Parameter', { pattern: /\$\d+/ });

export const WhiteSpace = define('WhiteSpace', { pattern: /\s+/, skipped: true, lineBreaks: true });
export const LineComment = define('LineComment', { pattern: /--[^\n\r]*/, skipped: true });
export const BlockComment = define('BlockComment', { pattern: /\/\*[\s\S]*?\*\//, skipped: true, lineBreaks: true });
export const UnterminatedComment = define('UnterminatedComment', { pattern: /\/\*[\s\S]*/, lineBreaks: true });

export const DoubleColon = define('DoubleColon', { pattern: /::/ });
export const Colon = define('Colon', { pattern: /:/ });
export const Comma = define('Comma', { pattern: /,/ });
export const Dot = define('Dot', { pattern: /\./ });
export const Semicolon = define('Semicolon', { pattern: /;/ });
export const LParen = define('LParen', { pattern: /\(/ });
export const RParen = define('RParen', { pattern: /\)/ });
export const LBracket = define('LBracket', { pattern: /\[/ });
export const RBracket = define('RBracket', { pattern: /]/ });

export const ComparisonOp = define('ComparisonOp');
/** Operators binding tighter than comparisons: && and arithmetic. */
export const ArithmeticOp = define('ArithmeticOp');
export const NotEqual = define('NotEqual', { pattern: /<>|!=/, categories: [ComparisonOp] });
export const LessEqual = define('LessEqual', { pattern: /<=/, categories: [ComparisonOp] });
export const GreaterEqual = define('GreaterEqual', { pattern: />=/, categories: [ComparisonOp] });
export const Equal = define('Equal', { pattern: /=/, categories: [ComparisonOp] });
export const Less = define('Less', { pattern: /</, categories: [ComparisonOp] });
export const Greater = define('Greater', { pattern: />/, categories: [ComparisonOp] });
export const Overlap = define('Overlap', { pattern: /&&/, categories: [ArithmeticOp] });
export const Concat = define('Concat', { pattern: /\|\|/ });
export const Contains = define('Contains', { pattern: /@>/ });
export const ContainedBy = define('ContainedBy', { pattern: /<@/ });
export const Plus = define('Plus', { pattern: /\+/, categories: [ArithmeticOp] });
export const Minus = define('Minus', { pattern: /-/, categories: [ArithmeticOp] });
export const Star = define('Star', { pattern: /\*/, categories: [ArithmeticOp] });
export const Slash = define('Slash', { pattern: /\//, categories: [ArithmeticOp] });
export const Percent = define('Percent', { pattern: /%/, categories: [ArithmeticOp] });
/** Any other PostgreSQL operator character run: recognised so it can be rejected by name. */
export const OtherOperator = define('OtherOperator', { pattern: /[~!@#^&|`?]+/ });

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
