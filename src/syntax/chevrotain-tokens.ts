import { createToken, Lexer, type ITokenConfig, type TokenType } from 'chevrotain';
import * as P from './tokens.js';

/**
 * Chevrotain's twin of every token type in tokens.ts, built from its fields: the grammar
 * (parser.ts) and the lexer the tests hold lex.ts to (grammar.ts) work on these.
 */

const twins = new Map<string, TokenType>();
for (const t of P.definedTokens) {
  // Only the fields a type sets: Chevrotain treats a present-but-undefined key as set.
  const config: ITokenConfig = { name: t.name, pattern: t.PATTERN ?? Lexer.NA };
  if (t.CATEGORIES!.length > 0) config.categories = t.CATEGORIES!.map(twin);
  if (t.LONGER_ALT) config.longer_alt = twin(t.LONGER_ALT as TokenType);
  if (t.GROUP === P.SKIPPED) config.group = Lexer.SKIPPED;
  if (t.LINE_BREAKS !== undefined) config.line_breaks = t.LINE_BREAKS;
  if (t.START_CHARS_HINT) config.start_chars_hint = t.START_CHARS_HINT;
  twins.set(t.name, createToken(config));
}

/**
 * The twin of a type of tokens.ts, by name: the compiler's tokens may come from another copy of
 * that module (the grammar is bundled on its own).
 */
export function twin(t: TokenType): TokenType {
  const found = twins.get(t.name);
  if (!found) throw new Error(`no Chevrotain token type for ${t.name}`);
  return found;
}

type TokenExports = { readonly [K in keyof typeof P as (typeof P)[K] extends TokenType ? K : never]: TokenType };

function isTokenType(value: unknown): value is TokenType {
  return typeof value === 'object' && value !== null && twins.has((value as TokenType).name);
}

const exported: Record<string, TokenType> = {};
for (const [key, value] of Object.entries(P)) if (isTokenType(value)) exported[key] = twin(value);

/** tokens.ts's exports, each the Chevrotain twin: `chevrotainTokens.Select` and so on. */
export const chevrotainTokens = { ...(exported as TokenExports), allTokens: P.allTokens.map(twin) };
