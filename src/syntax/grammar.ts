import { Lexer, type IRecognitionException, type IToken } from 'chevrotain';
import type { Select } from './ast.js';
import { chevrotainTokens, twin } from './chevrotain-tokens.js';
import { OqlParser } from './parser.js';

/**
 * The Chevrotain side of the syntax, built into a file of its own (dist/grammar.cjs) and loaded
 * by parse.ts at the first text the compiler's parser gives up on: a process that compiles only
 * valid queries never reads Chevrotain. Also the tests' oracles: the grammar for descent.ts and
 * the lexer for lex.ts.
 */

let lexer: Lexer | undefined;
let parser: OqlParser | undefined;

// Grammar self-validation costs tens of milliseconds: tests turn it on, builds turn it off.
function validateGrammar(): boolean {
  return typeof process !== 'undefined' && process.env?.OQL_VALIDATE_GRAMMAR === '1';
}

/** Chevrotain's lexer built from the token definitions: the specification lex.ts reproduces. */
export function getLexer(): Lexer {
  return (lexer ??= new Lexer(chevrotainTokens.allTokens, {
    positionTracking: 'onlyOffset',
    ensureOptimizations: false,
    skipValidations: !validateGrammar(),
  }));
}

/** The parser is built once per process and reused: building it is the expensive part. */
export function getParser(): OqlParser {
  return (parser ??= new OqlParser(validateGrammar()));
}

export type GrammarResult = { readonly ast: Select; readonly error?: undefined } | { readonly ast: null; readonly error: IRecognitionException };

/**
 * Parses the compiler's tokens (lex.ts) with the grammar. The exception's token is a copy at the
 * same offset as the compiler's own, which classify.ts looks up by offset.
 */
export function parseTokens(tokens: readonly IToken[]): GrammarResult {
  const p = getParser();
  p.input = tokens.map((t) => {
    const type = twin(t.tokenType);
    return { image: t.image, startOffset: t.startOffset, tokenType: type, tokenTypeIdx: type.tokenTypeIdx! } as IToken;
  });
  const ast = p.query();
  return p.errors.length > 0 ? { ast: null, error: p.errors[0]! } : { ast };
}
