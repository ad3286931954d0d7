import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixtureData, FIXTURE_NAMES, loadFixtureCatalog } from '../../fixtures/index.js';
import { allPages } from '../../src/lint/docs.js';
import { parseDescent } from '../../src/syntax/descent.js';
import { lex } from '../../src/syntax/lex.js';
import { parseWithGrammar } from '../../src/syntax/parse.js';
import { corpus } from '../../bench/corpus.js';
import { REVENUE_QUERIES, revenueText } from '../../bench/schemas/revenue-crm-queries.js';
import { grammarArb, KEYWORDS, mutationArb, PUNCT, spliceArb, tokens, type Target } from '../fuzz/inputs.js';
import { configureFastCheck, runs } from '../props/harness.js';
import { buildSchema, printQuery, queryArb } from '../support/querygen.js';

/**
 * The hand-written parser the compiler runs (descent.ts) against the Chevrotain grammar
 * (parser.ts), its oracle: on every text, both accept or both reject, and where they accept the
 * trees are identical — node for node, span for span. Texts: the benchmark corpora, every
 * example of the diagnostic pages, generated valid queries, loosely grammatical statements,
 * valid queries with a foreign expression spliced in, and random token mutations of valid ones.
 */

type Verdict = { readonly accepted: false } | { readonly accepted: true; readonly tree: unknown };

function chevrotain(text: string): Verdict | null {
  const lexed = lex(text);
  if (lexed.errorOffset >= 0 || lexed.tokens.length === 0) return null;
  const parsed = parseWithGrammar(lexed.tokens);
  return parsed.error ? { accepted: false } : { accepted: true, tree: parsed.ast };
}

function descent(text: string): Verdict | null {
  const lexed = lex(text);
  if (lexed.errorOffset >= 0 || lexed.tokens.length === 0) return null;
  const tree = parseDescent(lexed.tokens);
  return tree === null ? { accepted: false } : { accepted: true, tree };
}

const counts = { accepted: 0, rejected: 0 };

/** Both parsers agree on `text`; throws with the text when they do not. */
function agree(text: string): void {
  const want = chevrotain(text);
  const got = descent(text);
  if (want === null || got === null) return;
  if (want.accepted !== got.accepted) {
    throw new Error(`the grammar ${want.accepted ? 'accepts' : 'rejects'} and the hand-written parser ${got.accepted ? 'accepts' : 'rejects'}: ${JSON.stringify(text)}`);
  }
  if (want.accepted && got.accepted) expect(got.tree, text).toStrictEqual(want.tree);
  counts[want.accepted ? 'accepted' : 'rejected']++;
}

let targets: Target[] = [];
const seed = configureFastCheck('descent');

beforeAll(() => {
  targets = FIXTURE_NAMES.map((name) => {
    const catalog = loadFixtureCatalog(name);
    return { name, catalog, schema: buildSchema(name, catalog, fixtureData(name)) };
  });
});

describe('the hand-written parser agrees with the grammar', () => {
  it('on the benchmark corpora and every example of the diagnostic pages', () => {
    const texts = [
      ...corpus().map((q) => q.text),
      ...REVENUE_QUERIES.map((q, i) => revenueText(q, i + 1)),
      ...allPages().flatMap((p) => [p.wrong, p.right].filter((x): x is string => x !== undefined)),
    ];
    expect(texts.length).toBeGreaterThan(150);
    for (const text of texts) agree(text);
    // Both kinds occur, so neither half of the agreement is vacuous.
    expect(counts.accepted).toBeGreaterThan(100);
    expect(counts.rejected).toBeGreaterThan(10);
  });

  it('on generated valid queries of both fixtures', () => {
    fc.assert(fc.property(queryArb(targets.map((t) => t.schema)), (q) => agree(printQuery(q))), { numRuns: runs(400, 20_000), seed });
  });

  it('on loosely grammatical statements and valid queries with a loose expression spliced in', () => {
    for (const t of targets) {
      fc.assert(fc.property(grammarArb(t), (text) => agree(text)), { numRuns: runs(400, 20_000), seed });
      const valid = queryArb([t.schema]).map((q) => ({ text: printQuery(q), object: q.object }));
      fc.assert(fc.property(spliceArb(t, valid), ({ text }) => agree(text)), { numRuns: runs(300, 20_000), seed });
    }
  });

  it('on random token mutations of valid queries', () => {
    for (const t of targets) {
      const valid = queryArb([t.schema]).map((q) => printQuery(q));
      fc.assert(
        fc.property(valid, fc.array(mutationArb(t), { minLength: 1, maxLength: 4 }), (text, mutations) => {
          agree(mutations.reduce((toks, m) => m(toks), tokens(text)).join(' '));
        }),
        { numRuns: runs(800, 50_000), seed },
      );
    }
  });

  it('on random sequences of keywords, punctuation and names after SELECT', () => {
    const word = fc.oneof(fc.constantFrom(...KEYWORDS), fc.constantFrom(...PUNCT), fc.constantFrom('a', 'b', 'x.y', "'s'", '1', '2.5', 'count', 'first', 'time', 'zone', '"Q"'));
    fc.assert(fc.property(fc.array(word, { maxLength: 14 }), (words) => agree(`SELECT ${words.join(' ')}`)), { numRuns: runs(2000, 100_000), seed });
  });
});
