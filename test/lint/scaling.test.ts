import { describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import { lint } from '../../src/lint/lint.js';
import { DEFAULT_SYNTAX_LIMITS } from '../../src/syntax/parse.js';
import { loadFixtureCatalog } from '../../fixtures/index.js';
import { growth, largestWithin, MAX_RATIO_FOR_4X, quadratic } from '../support/scaling.js';

/**
 * Compile and lint are linear in their text, construct by construct: each text is grown to the
 * largest the length cap admits, and four times the input may cost at most MAX_RATIO_FOR_4X
 * times the CPU (best of several rounds, so load on the machine does not decide). Quadratic work
 * measures 14 and more at these sizes: the control case shows the bound can fail, and before the
 * diagnostics bag, the free-alias search, the select-list cap and GROUP BY matching were made
 * linear, the constructs marked below failed it (16,000 unknown functions took 9 s to lint).
 */

const catalog = loadFixtureCatalog('crm');
const list = (n: number, item: (i: number) => string, sep = ', '): string => Array.from({ length: n }, (_, i) => item(i)).join(sep);

/** Each construct as a text of n repetitions, from account. */
const CONSTRUCTS: Record<string, (n: number) => string> = {
  // The finding's payload: 80 KB of unknown functions, each also missing its alias.
  'unknown functions': (n) => `SELECT ${list(n, () => 'f(1)')} FROM account LIMIT 10`,
  'unknown columns': (n) => `SELECT id FROM account WHERE ${list(n, () => 'nme = 1', ' OR ')} LIMIT 10`,
  'repeated aliases (a free alias for each)': (n) => `SELECT ${list(n, () => 'count(*)')} FROM account LIMIT 10`,
  'repeated aliases (the same output key)': (n) => `SELECT ${list(n, () => 'id AS x')} FROM account LIMIT 10`,
  'an output alias in HAVING': (n) => `SELECT name, count(*) AS c FROM account GROUP BY name HAVING ${list(n, () => 'c > 1', ' AND ')} LIMIT 10`,
  'one long dot chain': (n) => `SELECT owner${'.manager'.repeat(n)}.name AS m FROM account LIMIT 10`,
  'many dot chains': (n) => `SELECT id FROM account WHERE ${list(n, () => "owner.manager.manager.name = 'x'", ' OR ')} ORDER BY id LIMIT 10`,
  ORs: (n) => `SELECT id FROM account WHERE ${list(n, (i) => `name = 'a${i}'`, ' OR ')} ORDER BY id LIMIT 10`,
  'IN lists': (n) => `SELECT id FROM account WHERE name IN (${list(n, (i) => `'a${i}'`)}) ORDER BY id LIMIT 10`,
  'CASE branches': (n) => `SELECT CASE ${list(n, (i) => `WHEN name = 'a${i}' THEN ${i}`, ' ')} END AS c FROM account ORDER BY id LIMIT 10`,
  'concat arguments': (n) => `SELECT concat(${list(n, () => 'name')}) AS c FROM account ORDER BY id LIMIT 10`,
  'virtual relations': (n) => `SELECT id FROM account WHERE ${list(n, (i) => `contacts.name = 'a${i}'`, ' OR ')} ORDER BY id LIMIT 10`,
  'virtual relations under an aggregate': (n) => `SELECT sum(annual_revenue) AS r FROM account WHERE ${list(n, (i) => (i % 2 ? `opportunities.amount > ${i}` : `contacts.name = 'a${i}'`), ' OR ')} LIMIT 10`,
  'unknown options': (n) => `SELECT id FROM account WHERE ${list(n, (i) => `industry = 'zz${i}'`, ' OR ')} ORDER BY id LIMIT 10`,
  'date strings': (n) => `SELECT id FROM account WHERE ${list(n, () => "created_at > '2024-01-01'", ' OR ')} ORDER BY id LIMIT 10`,
  // Linear, but each misspelt name searched the 200 output names for a did-you-mean: 2 s of CPU.
  'misspelt ORDER BY names beside 200 outputs': (n) => `SELECT ${list(200, (i) => `id AS alias_number_${i}`)} FROM account ORDER BY ${list(n, (i) => `zzalias_numbr_${i}`)} LIMIT 10`,
  'GROUP BY against HAVING': (n) => `SELECT count(*) AS c FROM account GROUP BY ${list(n, (i) => `name = 'a${i}'`)} HAVING ${list(n, (i) => `min(name) <> 'b${i}'`, ' AND ')} LIMIT 10`,
};

const STAGES = {
  lint: (text: string) => void lint(text, { catalog, slug: 'account' }),
  compile: (text: string) => {
    try {
      compile(text, { catalog, slug: 'account', orgId: 'org_scaling', cache: false });
    } catch (e) {
      if (!(e instanceof Error) || e.name !== 'OqlError') throw e;
    }
  },
};

describe('compile and lint grow linearly with the text, up to the length cap', () => {
  for (const [name, make] of Object.entries(CONSTRUCTS)) {
    const large = largestWithin(make, (t) => t.length, DEFAULT_SYNTAX_LIMITS.maxLength);
    const small = Math.floor(large / 4);
    for (const [stage, run] of Object.entries(STAGES)) {
      it(`${name}: ${stage}`, () => {
        const g = growth(make, run, small, large);
        expect(g.ratio, `${stage} of ${small} and ${large} (${make(large).length} characters): ${g.smallMs.toFixed(1)} ms and ${g.largeMs.toFixed(1)} ms`).toBeLessThan(MAX_RATIO_FOR_4X);
      });
    }
  }

  it('the bound fails for quadratic work (the control)', () => {
    const g = growth((n) => n, quadratic, 1500, 6000);
    expect(g.ratio).toBeGreaterThan(MAX_RATIO_FOR_4X);
  });
});

describe('the time one text may hold the thread (maxCompileMs)', () => {
  const ors = CONSTRUCTS.ORs!(2_000);
  const chains = CONSTRUCTS['many dot chains']!(2_000);

  it('past it, lint answers COMPILE_BUDGET_EXCEEDED first, then what it had found', () => {
    const text = ors.replace('WHERE ', 'WHERE f(1) = 1 OR ');
    const diagnostics = lint(text, { catalog, slug: 'account', maxCompileMs: 0 });
    expect(diagnostics[0]).toMatchObject({ code: 'COMPILE_BUDGET_EXCEEDED', severity: 'error', span: { start: 0, end: 0 } });
    expect(diagnostics[0]!.message).toContain('0 ms');
    // Found before the budget ran out: the checks had passed the unknown function.
    expect(diagnostics.map((d) => d.code)).toContain('UNKNOWN_FUNCTION');
  });

  it('past it, compile throws an OqlError with the code, status 400', () => {
    for (const text of [ors, chains]) {
      let error: unknown;
      try {
        compile(text, { catalog, slug: 'account', orgId: 'org_scaling', cache: false, maxCompileMs: 0 });
      } catch (e) {
        error = e;
      }
      expect(error).toMatchObject({ name: 'OqlError', code: 'COMPILE_BUDGET_EXCEEDED', status: 400 });
    }
  });

  it('the largest texts of every construct stay within the default', () => {
    for (const make of Object.values(CONSTRUCTS)) {
      const text = make(largestWithin(make, (t) => t.length, DEFAULT_SYNTAX_LIMITS.maxLength));
      expect(lint(text, { catalog, slug: 'account' }).map((d) => d.code)).not.toContain('COMPILE_BUDGET_EXCEEDED');
    }
  });
});
