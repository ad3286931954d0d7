import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { treeDepth } from '../../src/syntax/ast.js';
import { getLexer, parse, TREE_WRAPPERS } from '../../src/syntax/parse.js';

// parseInto skips the tree-depth walk for queries of few tokens, relying on this law.
describe('a syntax tree is never deeper than its token count allows', () => {
  const leaf = fc.constantFrom('a', 'b.c', '1', "'x'", 'NULL', 'count(*)', 'x.y.z', 'ARRAY[NULL]');
  const expr = fc.letrec((tie) => ({
    e: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.tuple(tie('e'), fc.constantFrom('+', '*', 'AND', 'OR', '=', '&&', '<'), tie('e')).map(([a, o, b]) => `${a} ${o} ${b}`),
      tie('e').map((x) => `(${x})`),
      tie('e').map((x) => `NOT ${x}`),
      tie('e').map((x) => `- ${x}`),
      tie('e').map((x) => `CASE WHEN ${x} THEN 1 ELSE ${x} END`),
      tie('e').map((x) => `f(${x})`),
      tie('e').map((x) => `${x} IS NOT NULL`),
      tie('e').map((x) => `(SELECT ${x} FROM t)`),
      tie('e').map((x) => `EXISTS (SELECT 1 FROM t WHERE ${x})`),
      tie('e').map((x) => `${x} IN (${x}, 1)`),
      tie('e').map((x) => `${x} BETWEEN 1 AND ${x}`),
      tie('e').map((x) => `${x} AT TIME ZONE 'UTC'`),
      tie('e').map((x) => `${x}::date`),
    ),
  })).e as fc.Arbitrary<string>;

  it('depth <= tokens + TREE_WRAPPERS', () => {
    fc.assert(
      fc.property(expr, (e) => {
        const q = `SELECT ${e} AS x FROM t WHERE ${e} ORDER BY ${e} LIMIT 1`;
        const tokens = getLexer().tokenize(q).tokens.length;
        let ast;
        try {
          ast = parse(q, { maxTreeDepth: 1_000_000, maxNesting: 1_000_000 });
        } catch {
          fc.pre(false); // the generator can write what the grammar rejects (x BETWEEN 1 AND NOT y)
          return;
        }
        expect(treeDepth(ast).depth).toBeLessThanOrEqual(tokens + TREE_WRAPPERS);
      }),
      { numRuns: 2_000 },
    );
  });
});
