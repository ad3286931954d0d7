import type { IRecognitionException, IToken } from 'chevrotain';
import { createRequire } from 'node:module';
import { DiagnosticBag, OqlError } from '../diagnostics/diagnostic.js';
import type { Span } from '../diagnostics/span.js';
import { nodeBeyondDepth, treeDepth, type Select } from './ast.js';
import { classifySyntaxError } from './classify.js';
import { exampleQuery, examplesFor, type Examples, type HintSource } from './examples.js';
import { parseDescent } from './descent.js';
import type * as Grammar from './grammar.js';
import { lex } from './lex.js';
import * as T from './tokens.js';

/** The limits, and where hints take their example names from (see examples.ts). */
export interface SyntaxLimits extends HintSource {
  /** Longest accepted query text, in characters. Default 100,000. */
  maxLength?: number;
  /** Deepest accepted nesting of parentheses, brackets, CASE and prefix operators. Default 64. */
  maxNesting?: number;
  /** Deepest accepted syntax tree (long operator chains count too). Default 400. */
  maxTreeDepth?: number;
}

export const DEFAULT_SYNTAX_LIMITS: Required<Omit<SyntaxLimits, keyof HintSource>> = { maxLength: 100_000, maxNesting: 64, maxTreeDepth: 400 };

/** Set by the build: the grammar's own file beside the bundle. */
declare const OQL_GRAMMAR_FILE: string | undefined;
let grammarModule: typeof Grammar | undefined;

/**
 * The Chevrotain grammar (grammar.ts), loaded on first use. Half of the bundle's size and a
 * third of its import time: only a text the compiler's parser gives up on (or a test) needs it.
 * `require`, because parsing is synchronous: the build makes the grammar a CommonJS file, and
 * from the sources grammar-source.cjs bundles it.
 */
function grammar(): typeof Grammar {
  return (grammarModule ??= createRequire(import.meta.url)(typeof OQL_GRAMMAR_FILE === 'string' ? OQL_GRAMMAR_FILE : './grammar-source.cjs') as typeof Grammar);
}

/**
 * Loads the grammar and builds its parser now, not at the first text the compiler's parser
 * gives up on: a long-running process (the service) pays the 70 to 100 ms at start-up instead
 * of in its first answer to a query with a syntax error.
 */
export function prepareSyntaxErrors(): void {
  grammar().getParser();
}

/** Chevrotain's lexer built from the token definitions, the tests' oracle for lex.ts. */
export function getLexer(): ReturnType<typeof Grammar.getLexer> {
  return grammar().getLexer();
}

/** The Chevrotain parser, built once per process. */
export function getParser(): ReturnType<typeof Grammar.getParser> {
  return grammar().getParser();
}

/**
 * Parses the compiler's tokens with the Chevrotain grammar: the diagnostic of a text descent.ts
 * rejects, and the tests' oracle for descent.ts.
 */
export function parseWithGrammar(tokens: readonly IToken[]): ReturnType<typeof Grammar.parseTokens> {
  return grammar().parseTokens(tokens);
}

/** What checkTokens does with a token, by its type's index: most types are one load and a pass. */
const PASS = 0;
const OPENS = 1;
const CLOSES = 2;
const REPORT = 3;
const CHECK = checkTable();

/** Built in a function, not by loops at the top of the module (see lex.ts, characterClasses). */
function checkTable(): Uint8Array {
  const check = new Uint8Array(T.definedTokens.length + 1);
  for (const t of [T.LParen, T.LBracket, T.Case]) check[t.tokenTypeIdx!] = OPENS;
  for (const t of [T.RParen, T.RBracket, T.End]) check[t.tokenTypeIdx!] = CLOSES;
  for (const t of [T.UnterminatedString, T.UnterminatedIdentifier, T.UnterminatedComment]) check[t.tokenTypeIdx!] = REPORT;
  return check;
}
/** Tree levels that need no token of their own: Select > SelectItem > Path > Ident, OrderItem. */
export const TREE_WRAPPERS = 6;
/**
 * Parses one query into its syntax tree, reporting every problem into `bag`. Returns null when
 * the text cannot be parsed. Never throws for bad input and never recurses deeper than the
 * configured nesting: the nesting is measured on the token stream before the parser runs.
 */
export function parseInto(text: string, bag: DiagnosticBag, limits: SyntaxLimits = {}): Select | null {
  // Read the three limits, not a spread: callers pass their whole compile options here.
  const lim: Required<Omit<SyntaxLimits, keyof HintSource>> = {
    maxLength: limits.maxLength ?? DEFAULT_SYNTAX_LIMITS.maxLength,
    maxNesting: limits.maxNesting ?? DEFAULT_SYNTAX_LIMITS.maxNesting,
    maxTreeDepth: limits.maxTreeDepth ?? DEFAULT_SYNTAX_LIMITS.maxTreeDepth,
  };
  if (text.length > lim.maxLength) {
    bag.error(
      'QUERY_TOO_LONG',
      { start: lim.maxLength, end: text.length },
      `the query is ${text.length.toLocaleString('en-US')} characters long; the maximum is ${lim.maxLength.toLocaleString('en-US')}`,
      'split the report into smaller queries, or raise maxLength',
    );
    return null;
  }
  const lexed = lex(text);
  if (lexed.errorOffset >= 0) {
    const offset = lexed.errorOffset;
    const cp = text.codePointAt(offset) ?? 0;
    const shown = cp < 32 || cp === 127 ? `U+${cp.toString(16).toUpperCase().padStart(4, '0')}` : `'${String.fromCodePoint(cp)}'`;
    const width = cp > 0xffff ? 2 : 1;
    bag.error('INVALID_CHARACTER', { start: offset, end: offset + width }, `unexpected character ${shown}`, 'identifiers use letters, digits and _; strings go in single quotes');
    return null;
  }
  const tokens = lexed.tokens;
  if (!checkTokens(text, tokens, bag, lim.maxNesting, limits)) return null;

  // The hand-written parser reads every valid query; only when it gives up is the Chevrotain
  // parser built and asked, and its error becomes the diagnostic (see descent.ts).
  const stop = { at: 0 };
  let ast = parseDescent(tokens, stop);
  if (ast === null) {
    let parsed: ReturnType<typeof parseWithGrammar>;
    try {
      parsed = parseWithGrammar(tokens);
    } catch (e) {
      reportWithoutGrammar(text, tokens, stop.at, e, bag);
      return null;
    }
    if (parsed.error) {
      reportSyntaxError(text, tokens, parsed.error, bag, () => examplesFor(limits));
      return null;
    }
    ast = parsed.ast;
  }
  // Every level of the tree below its few wrapper nodes (select item, path) takes at least one
  // token of its own, so a query of few tokens cannot be deep: skip the walk for those.
  if (tokens.length + TREE_WRAPPERS <= lim.maxTreeDepth) return ast;
  if (nodeBeyondDepth(ast, lim.maxTreeDepth)) {
    // Only now pay for the full measure, to point at the bottom of the deepest chain.
    const { depth, deepest } = treeDepth(ast);
    bag.error(
      'NESTING_TOO_DEEP',
      spanOf(deepest),
      `the expression is nested ${depth} levels deep; the maximum is ${lim.maxTreeDepth}`,
      'break long operator chains into smaller expressions',
    );
    return null;
  }
  return ast;
}

/** Parses or throws an OqlError with every diagnostic. */
export function parse(text: string, limits: SyntaxLimits = {}): Select {
  const bag = new DiagnosticBag(text);
  const ast = parseInto(text, bag, limits);
  if (!ast) throw new OqlError(bag.items, text);
  return ast;
}

function spanOf(node: { span: Span } | object): Span {
  return 'span' in node ? (node as { span: Span }).span : { start: 0, end: 0 };
}

/** Token-level checks: empty input, unterminated literals and comments, nesting depth. */
function checkTokens(text: string, tokens: IToken[], bag: DiagnosticBag, maxNesting: number, hints: HintSource): boolean {
  if (tokens.length === 0) {
    bag.error('EMPTY_QUERY', { start: 0, end: text.length }, 'the query is empty', `write a query such as: ${exampleQuery(examplesFor(hints))}`);
    return false;
  }
  // The parser recurses once per open bracket or CASE and nowhere else (operator chains and
  // prefix runs are read in loops), so bracket depth bounds its stack.
  let depth = 0;
  for (const t of tokens) {
    const check = CHECK[t.tokenTypeIdx]!;
    if (check === OPENS) depth++;
    else if (check === CLOSES) depth = depth > 0 ? depth - 1 : 0;
    else if (check === PASS && depth <= maxNesting) continue;
    const type = t.tokenType;
    const at = { start: t.startOffset, end: t.startOffset + t.image.length };
    if (type === T.UnterminatedString) {
      bag.error('UNTERMINATED_STRING', at, 'the string starting here has no closing quote', "close it with ' (write '' for a quote inside a string)");
      return false;
    }
    if (type === T.UnterminatedIdentifier) {
      bag.error('UNTERMINATED_IDENTIFIER', at, 'the quoted identifier starting here has no closing "', 'close it with ", or write the name without quotes');
      return false;
    }
    if (type === T.UnterminatedComment) {
      bag.error('UNTERMINATED_COMMENT', { start: at.start, end: at.start + 2 }, 'the comment starting here has no closing */', 'close the comment with */');
      return false;
    }
    if (depth > maxNesting) {
      bag.error('NESTING_TOO_DEEP', at, `the query nests deeper than ${maxNesting} levels here`, 'flatten the expression: remove redundant parentheses or split the condition');
      return false;
    }
  }
  return true;
}

function reportSyntaxError(text: string, tokens: IToken[], e: IRecognitionException, bag: DiagnosticBag, examples: () => Examples): void {
  const d = classifySyntaxError(text, tokens, e, examples);
  bag.error(d.code, d.span, d.message, d.hint);
}

/**
 * The diagnostic when the grammar cannot be loaded (a bundler that left dist/grammar.cjs behind):
 * still a syntax error with a code, at the token the compiler's parser stopped on, naming the file.
 */
function reportWithoutGrammar(text: string, tokens: readonly IToken[], at: number, cause: unknown, bag: DiagnosticBag): void {
  const t = tokens[at];
  const why = `the detailed diagnostic needs oql's grammar file (grammar.cjs beside the bundle), which could not be loaded: ${cause instanceof Error ? cause.message.split('\n')[0] : String(cause)}`;
  if (t) bag.error('SYNTAX_ERROR', { start: t.startOffset, end: t.startOffset + t.image.length }, `unexpected '${t.image.slice(0, 40)}'`, why);
  else bag.error('UNEXPECTED_END', { start: text.length, end: text.length }, 'the query ends too early', why);
}
