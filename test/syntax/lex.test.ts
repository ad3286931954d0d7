import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lex } from '../../src/syntax/lex.js';
import { getLexer } from '../../src/syntax/parse.js';
import { KEYWORDS, PUNCT, WEIRD } from '../fuzz/inputs.js';
import { corpus } from '../../bench/corpus.js';

/**
 * The compiler's hand-written lexer against Chevrotain's lexer built from the same token
 * definitions (src/syntax/tokens.ts), the specification it must reproduce token for token.
 */

interface Shown {
  readonly tokens: readonly string[];
  readonly error: number;
}

function ours(text: string): Shown {
  const r = lex(text);
  return { tokens: r.tokens.map((t) => `${t.tokenType.name}@${t.startOffset}:${t.image}`), error: r.errorOffset };
}

function oracle(text: string): Shown {
  const r = getLexer().tokenize(text);
  const error = r.errors.length ? r.errors[0]!.offset : -1;
  // Ours stops at the first error; Chevrotain goes on past it.
  const tokens = r.tokens.filter((t) => error < 0 || t.startOffset < error);
  for (const t of r.tokens) expect(t.tokenTypeIdx).toBe(t.tokenType.tokenTypeIdx);
  return { tokens: tokens.map((t) => `${t.tokenType.name}@${t.startOffset}:${t.image}`), error };
}

const seeds = process.env.OQL_SEED ? { seed: Number(process.env.OQL_SEED) } : {};
const deep = process.env.OQL_DEEP === '1';

describe('lex', () => {
  it('reads the benchmark corpus as Chevrotain does', () => {
    for (const q of corpus()) expect(ours(q.text), q.id).toEqual(oracle(q.text));
  });

  it('reads hand-picked edge cases as Chevrotain does', () => {
    const cases = [
      '', ' ', 'selection order_total ORDER ord', 'select$ SELECT sElEcT current_timestamp CURRENT_TIMESTAMPS', "'it''s' 'a''' '''' 'open",
      '"a""b" "" """" "x', '1. .5 1.e5 1e+ 1E-3x 12.34.56 .e5 ..', '$1 $ $x $12a', ':: : ::: <@ <> <= < >= > != ! !!= ~!= &&& || | @> @ @@ #^`?',
      '-- comment\nSELECT /* block */ 1 /* open', '--\r\n-', '/*/ x */ /**/', 'a\u00a0b\u2028c\ufeffd\u000be', 'é', 'a\ud83d\ude00', '\u0000', 'ſelect',
      "SELECT x FROM t WHERE y = 'a' -- trailing", 'a.b.c.5', 'x::date::text', '1::int8', "ARRAY['a'] && ARRAY[NULL]",
    ];
    for (const c of cases) expect(ours(c), JSON.stringify(c)).toEqual(oracle(c));
  });

  it('reads random token soups as Chevrotain does', () => {
    const piece = fc.oneof(
      fc.constantFrom(...KEYWORDS, ...KEYWORDS.map((k) => k.toLowerCase()), ...PUNCT, ...WEIRD),
      fc.constantFrom(' ', '  ', '\n', 'x', 'name', '_a$', '0', '42', '3.5', "'", '"', '-', '*', '/', '.', 'e', 'E', '+'),
      fc.string({ maxLength: 4 }),
      fc.string({ unit: 'binary', maxLength: 3 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), fc.boolean(), (parts, spaced) => {
        const text = parts.join(spaced ? ' ' : '');
        expect(ours(text)).toEqual(oracle(text));
      }),
      { numRuns: deep ? 50_000 : 3000, ...seeds },
    );
  });
});
