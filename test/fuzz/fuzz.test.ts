import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { check, compile, compileCount } from '../../src/compile.js';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import { prepareSyntaxErrors } from '../../src/syntax/parse.js';
import { lint } from '../../src/lint/lint.js';
import { loadFixtureCatalog, FIXTURE_NAMES, fixtureData } from '../../fixtures/index.js';
import { configureFastCheck, PROPERTY_TIMEOUT, runs } from '../props/harness.js';
import { buildSchema, printQuery, queryArb } from '../support/querygen.js';
import { grammarArb, KEYWORDS, mutationArb, PUNCT, spliceArb, tokens, WEIRD, type Target } from './inputs.js';
import { checkSqlStructure, loadSqlParser } from './sql-structure.js';

/**
 * Fuzzing `compile`: grammar-based random statements, mutations of valid queries, random
 * bytes and hostile inputs. Laws:
 * - the only thing that may be thrown is an OqlError with a code and spans inside the input;
 * - every input finishes within a generous bound (gross hangs only; no tight timing);
 * - check() and lint() never throw for any input;
 * - whatever compiles yields SQL the real PostgreSQL parser accepts, with every table
 *   reference tenant- and soft-delete-guarded, whitelisted functions only, and no value of the
 *   query text outside bind parameters (test/fuzz/sql-structure.ts).
 */

configureFastCheck('fuzz');

/** Generous bounds that catch hangs, not slowness: random inputs are small; hostile ones are up to maxLength (100,000 chars). */
const HANG_MS = 2_000;
const HOSTILE_HANG_MS = 15_000;
const ORG = 'org_fuzz';

let targets: Target[] = [];

const stats = { inputs: 0, rejected: 0, compiled: 0, slowest: 0, codes: new Map<string, number>() };
const perTest = new Map<string, { inputs: number; compiled: number }>();
let current = '';

/** Lets the test worker answer its RPC now and then: a long synchronous run times it out. */
async function breathe(): Promise<void> {
  if (stats.inputs % 25 === 0) await new Promise((resolve) => setImmediate(resolve));
}

function begin(name: string): void {
  current = name;
  perTest.set(name, { inputs: 0, compiled: 0 });
}

beforeAll(async () => {
  await loadSqlParser();
  // The grammar that explains syntax errors is loaded on first use (src/syntax/parse.ts), as the
  // service does at start: under the test runner that first load transforms a large file, which
  // is not the time of any input.
  prepareSyntaxErrors();
  targets = FIXTURE_NAMES.map((name) => {
    const catalog = loadFixtureCatalog(name);
    return { name, catalog, schema: buildSchema(name, catalog, fixtureData(name)) };
  });
});

afterAll(() => {
  const codes = [...stats.codes].sort((a, b) => b[1] - a[1]).map(([c, n]) => `${c} ${n}`);
  const tests = [...perTest].map(([name, t]) => `${name}: ${t.inputs} inputs, ${t.compiled} compiled`);
  console.log(
    `[fuzz] ${tests.join('\n  ')}\n  total ${stats.inputs} inputs: ${stats.compiled} compiled (SQL structurally checked), ${stats.rejected} rejected with OqlError; slowest ${stats.slowest.toFixed(0)} ms\n  codes: ${codes.join(', ')}`,
  );
});

function show(text: string): string {
  const s = JSON.stringify(text);
  return s.length > 400 ? `${s.slice(0, 300)}…(${text.length} chars)…${s.slice(-60)}` : s;
}

function assertSpans(e: OqlError, text: string): void {
  const bad = (s: { start: number; end: number } | undefined): boolean =>
    !s || !Number.isInteger(s.start) || !Number.isInteger(s.end) || s.start < 0 || s.end < s.start || s.end > text.length;
  if (typeof e.code !== 'string' || e.code.length === 0) throw new Error(`OqlError without a code for ${show(text)}`);
  if (bad(e.span)) throw new Error(`OqlError ${e.code} with span ${JSON.stringify(e.span)} outside [0, ${text.length}] for ${show(text)}`);
  for (const d of e.diagnostics) {
    if (bad(d.span) || d.span.line < 1 || d.span.column < 1) throw new Error(`diagnostic ${d.code} with span ${JSON.stringify(d.span)} for ${show(text)}`);
  }
}

const pause = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Runs every entry point on one input and checks the laws. Returns whether it compiled. Long
 * inputs yield to the event loop between stages, so the test worker stays responsive.
 */
async function fuzzOne(text: string, target: Target, slug: string, bound = HANG_MS): Promise<boolean> {
  const long = text.length > 10_000;
  stats.inputs++;
  const options = { catalog: target.catalog, slug, orgId: ORG };
  const started = performance.now();
  let result: ReturnType<typeof compile> | null = null;
  let count: ReturnType<typeof compileCount> | null = null;
  try {
    result = compile(text, options);
    if (long) await pause();
    count = compileCount(text, options);
  } catch (e) {
    if (!(e instanceof OqlError)) throw new Error(`compile threw ${(e as Error)?.name ?? typeof e}: ${(e as Error)?.message ?? String(e)}\n  input: ${show(text)}`);
    if (result) throw new Error(`compile accepted but compileCount rejected (${e.code}): ${show(text)}`);
    assertSpans(e, text);
    stats.codes.set(e.code, (stats.codes.get(e.code) ?? 0) + 1);
  }
  const compiled = result !== null;
  let ms = performance.now() - started;
  if (long) await pause();
  if (result?.kind === 'query') {
    const structure = checkSqlStructure(result.sql, result.params, target.catalog);
    if (structure.problems.length) throw new Error(`compiled SQL breaks the structural rules: ${structure.problems.join('; ')}\n  query: ${show(text)}\n  sql: ${result.sql}`);
  }
  if (count?.kind === 'query') {
    const counted = checkSqlStructure(count.sql, count.params, target.catalog, { count: true });
    if (counted.problems.length) throw new Error(`count SQL breaks the structural rules: ${counted.problems.join('; ')}\n  query: ${show(text)}\n  sql: ${count.sql}`);
  }
  if (long) await pause();
  const again = performance.now();
  try {
    check(text, options);
    if (long) await pause();
    lint(text, options);
  } catch (e) {
    throw new Error(`check/lint threw ${(e as Error)?.name}: ${(e as Error)?.message}\n  input: ${show(text)}`);
  }
  ms = Math.max(ms, (performance.now() - again) / 2);
  stats.slowest = Math.max(stats.slowest, ms);
  if (ms > bound) throw new Error(`${ms.toFixed(0)} ms for one input (bound ${bound} ms): ${show(text)}`);
  const mine = perTest.get(current);
  if (mine) {
    mine.inputs++;
    if (compiled) mine.compiled++;
  }
  if (compiled) stats.compiled++;
  else stats.rejected++;
  return compiled;
}

// ---------------------------------------------------------------- the structure check itself

describe('the structure check', () => {
  const catalog = loadFixtureCatalog('crm');
  const guarded = (tail: string) => `SELECT "t0"."id" AS "c0" FROM "public"."opportunity" AS "t0" WHERE "t0"."org_id" = $1 AND "t0"."is_deleted" = false AND ("t0"."created_at" >= ${tail})`;

  it('takes a comparison side computed once, as the compiler writes a date boundary', async () => {
    await loadSqlParser();
    const c = compile("SELECT id FROM opportunity WHERE created_at >= date_part('epoch', date_trunc('month', NOW() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC') * 1000 LIMIT 10", { catalog, slug: 'opportunity', orgId: 'org_acme' });
    if (c.kind !== 'query') throw new Error('restricted');
    expect(c.sql).toContain('>= (SELECT date_part(');
    expect(checkSqlStructure(c.sql, c.params, catalog).problems).toEqual([]);
  });

  it('refuses a subquery without FROM that holds more than its one expression, and one that reads a table unguarded', async () => {
    await loadSqlParser();
    expect(checkSqlStructure(guarded('(SELECT $2::int8 WHERE true)'), ['org_acme', 1], catalog).problems).toEqual(['a subquery without FROM holds 1 expressions and whereClause']);
    expect(checkSqlStructure(guarded('(SELECT $2::int8, $2::int8)'), ['org_acme', 1], catalog).problems).toEqual(['a subquery without FROM holds 2 expressions and no clause']);
    expect(checkSqlStructure(guarded('(SELECT max("t1"."created_at") FROM "public"."opportunity" AS "t1")'), ['org_acme'], catalog).problems)
      .toEqual(['t1 (opportunity) has no t1.org_id = $1 in the WHERE of its SELECT', 't1 (opportunity) has no t1.is_deleted = false in the WHERE of its SELECT']);
  });
});

// ---------------------------------------------------------------- properties

describe('fuzz: compile', () => {
  const targetArb = (): fc.Arbitrary<Target> => fc.constantFrom(...targets);

  it('compiles every generated valid query to structurally safe SQL', async () => {
    begin('valid generated queries');
    await fc.assert(
      fc.asyncProperty(fc.oneof(...targets.map((target) => queryArb([target.schema]).map((q) => ({ q, target })))), async ({ q, target }) => {
          await breathe();
        const text = printQuery(q);
        expect(await fuzzOne(text, target, q.object), text).toBe(true);
      }),
      { numRuns: runs(300, 5000) },
    );
  }, PROPERTY_TIMEOUT);

  it('grammar-based random statements: OqlError or structurally safe SQL', async () => {
    begin('grammar-based statements');
    await fc.assert(
      fc.asyncProperty(fc.oneof(...targets.map((target) => grammarArb(target).map((text) => ({ text, target })))), fc.boolean(), async ({ text, target }, declared) => {
          await breathe();
        // Declare the FROM object as the slug most of the time, so more inputs reach bind and emit.
        const from = /FROM\s+([A-Za-z_]\w*)/i.exec(text)?.[1] ?? 'account';
        await fuzzOne(text, target, declared ? from : [...target.catalog.objects.keys()][0]!);
      }),
      { numRuns: runs(800, 30_000) },
    );
  }, PROPERTY_TIMEOUT);

  it('valid queries with one loose expression spliced in: OqlError or structurally safe SQL', async () => {
    begin('valid queries with a spliced expression');
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(...targets.map((target) => spliceArb(target, queryArb([target.schema]).map((q) => ({ text: printQuery(q), object: q.object }))).map((s) => ({ ...s, target })))),
        async ({ text, object, target }) => {
          await breathe();
          await fuzzOne(text, target, object);
        },
      ),
      { numRuns: runs(800, 30_000) },
    );
  }, PROPERTY_TIMEOUT);

  it('mutated valid queries (insert, delete, swap, duplicate, replace tokens): OqlError or safe SQL', async () => {
    begin('token mutations of valid queries');
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(...targets.map((target) => fc.tuple(queryArb([target.schema]), fc.array(mutationArb(target), { minLength: 1, maxLength: 4 }), fc.constant(target)))),
        async ([q, edits, target]) => {
          await breathe();
          let toks = tokens(printQuery(q));
          for (const edit of edits) toks = edit(toks);
          await fuzzOne(toks.join(''), target, q.object);
        },
      ),
      { numRuns: runs(800, 30_000) },
    );
  }, PROPERTY_TIMEOUT);

  it('random strings and bytes: OqlError only', async () => {
    begin('random strings and bytes');
    const text = fc.oneof(
      fc.string({ maxLength: 200, unit: 'binary' }),
      fc.string({ maxLength: 200, unit: 'grapheme' }),
      fc.string({ maxLength: 60, unit: fc.constantFrom(...KEYWORDS.map((k) => ` ${k} `), ...PUNCT, ...WEIRD) }),
      fc.uint8Array({ maxLength: 200 }).map((b) => new TextDecoder('utf-8', { fatal: false }).decode(b)),
      fc.uint8Array({ maxLength: 200 }).map((b) => String.fromCharCode(...b)),
      fc.string({ maxLength: 100, unit: 'binary' }).map((s) => `SELECT id FROM account WHERE name = '${s}' LIMIT 5`),
    );
    await fc.assert(
      fc.asyncProperty(text, targetArb(), async (s, target) => {
          await breathe();
        await fuzzOne(s, target, 'account');
      }),
      { numRuns: runs(800, 30_000) },
    );
  }, PROPERTY_TIMEOUT);

  it('hostile inputs: huge literals, deep nesting, unicode, NUL, unterminated tokens', async () => {
    begin('hostile inputs');
    const crm = targets[0]!;
    const q = (where: string, select = 'id'): string => `SELECT ${select} FROM account WHERE ${where} LIMIT 5`;
    const deep = (n: number, open: string, close: string, inner: string): string => open.repeat(n) + inner + close.repeat(n);
    const inputs: string[] = [
      '',
      ' ',
      '\u0000',
      'SELECT',
      `SELECT id FROM account WHERE name = '${'x'.repeat(200_000)}' LIMIT 5`,
      `SELECT id FROM account WHERE name = '${'x'.repeat(99_900)}' LIMIT 5`,
      q(`annual_revenue > ${'9'.repeat(20_000)}`),
      q(`annual_revenue > 0.${'0'.repeat(5_000)}1`),
      q(`annual_revenue > 1e${'9'.repeat(400)}`),
      `SELECT id FROM account LIMIT ${'9'.repeat(1000)}`,
      `SELECT id FROM account LIMIT 5 OFFSET ${'9'.repeat(1000)}`,
      q(deep(64, '(', ')', 'name IS NULL')),
      q(deep(65, '(', ')', 'name IS NULL')),
      q(deep(10_000, '(', ')', 'name IS NULL')),
      q(deep(100_000, '(', '', '')),
      q(`${'NOT '.repeat(10_000)}name IS NULL`),
      q(`annual_revenue = ${'-'.repeat(10_000)}1`),
      q(`annual_revenue = ${'+ '.repeat(10_000)}1`),
      q(Array.from({ length: 5_000 }, (_, i) => `name = 'n${i}'`).join(' OR ')),
      q(Array.from({ length: 5_000 }, (_, i) => `name = 'n${i}'`).join(' AND ')),
      q(`annual_revenue = ${Array.from({ length: 5_000 }, () => '1').join(' + ')}`),
      q(`name IN (${Array.from({ length: 20_000 }, (_, i) => `'${i}'`).join(', ')})`),
      q(`tags && ARRAY[${Array.from({ length: 5_000 }, () => "'key'").join(', ')}]`),
      q(deep(500, 'lower(', ')', 'name') + " = 'x'"),
      q(deep(200, 'CASE WHEN TRUE THEN ', ' END', 'name') + " = 'x'"),
      q(deep(200, 'ARRAY[', ']', "'x'").replace(/^/, 'tags && ')),
      q(deep(60, 'EXISTS (SELECT 1 FROM contact c WHERE ', ')', 'TRUE')),
      `SELECT ${Array.from({ length: 5_000 }, (_, i) => `name AS n${i}`).join(', ')} FROM account LIMIT 5`,
      `SELECT id FROM account ORDER BY ${Array.from({ length: 5_000 }, () => 'name').join(', ')} LIMIT 5`,
      `SELECT id FROM account WHERE ${'owner.'.repeat(5_000)}name = 'x' LIMIT 5`,
    `SELECT id FROM account WHERE ${'owner.manager.'.repeat(3)}name = 'x' LIMIT 5`,
      `SELECT ${'a'.repeat(100_000)} FROM account LIMIT 5`,
      `SELECT "${'a'.repeat(10_000)}" FROM account LIMIT 5`,
      q("name = 'unterminated"),
      q('name = "unterminated'),
      q('name = 1 /* unterminated comment'),
      q("name = '" + "''".repeat(5_000)),
      'SELECT id FROM account /* a /* nested */ comment */ LIMIT 5',
      'SELECT id FROM account -- comment LIMIT 5',
      q("name = 'a\u0000b'"),
      q('name\u0000 = 1'),
      'SELECT\u0000id FROM account LIMIT 5',
      q("name = '\ud83d\ude00\ud83d\ude00'"),
      q("name = '\ud83d'"),
      q("name = '\ude00'"),
      q('\ud83d\ude00 = 1'),
      q('name\ud83d = 1'),
      q("name = '\u202eevil\u202c'"),
      q('\u202ename = 1'),
      q("name = 'e\u0301\u0301\u0301\u0301'"),
      q(`name = 'a${'\u0301'.repeat(10_000)}'`),
      q('nam\u0301e = 1'),
      q("name = '\u05e9\u05dc\u05d5\u05dd'"),
      'SELECT id FROM account\u2028LIMIT 5',
      'SELECT id FROM account\u00a0LIMIT 5',
      '\ufeffSELECT id FROM account LIMIT 5',
      'SELECT id FROM ａccount LIMIT 5',
      'SELECT id FROM account LIMIT 5;;',
      'SELECT id FROM account LIMIT 5; SELECT id FROM account LIMIT 5',
      'SELECT id FROM account LIMIT 5; DROP TABLE account',
      "SELECT id FROM account WHERE name = $$x$$ LIMIT 5",
      "SELECT id FROM account WHERE name = E'\\'' OR 1=1 --' LIMIT 5",
      "SELECT id FROM account WHERE name = U&'\\0041' LIMIT 5",
      'SELECT id FROM account WHERE id = $1 LIMIT 5',
      'SELECT id FROM account WHERE id = $99999999999999999999 LIMIT 5',
      `SELECT id FROM account WHERE ${'('.repeat(63)}name IS NULL${')'.repeat(63)} LIMIT 5`,
      'SELECT id FROM account AS "" LIMIT 5',
      'SELECT id AS "" FROM account LIMIT 5',
      'SELECT id AS """" FROM account LIMIT 5',
      "SELECT date_trunc('day', to_timestamp(created_at / 1000) AT TIME ZONE 'Asia/Kolkata'); DROP TABLE x; --') AS d FROM account GROUP BY 1 LIMIT 5",
      'SELECT id FROM account WHERE 1 = 1 LIMIT 5',
      'select * from account limit 5',
    ];
    // The longest flat AND/OR chains that fit in maxLength (100,000 characters).
    const fill = (term: string, op: string): string => {
      const head = 'SELECT id FROM account WHERE ';
      const n = Math.floor((100_000 - head.length - 8) / (term.length + op.length));
      return `${head}${Array<string>(n).fill(term).join(op)} LIMIT 5`;
    };
    // (Parsing them is superlinear: ~3 s per pass for 12,495 terms; reported, not a hang.)
    inputs.push(fill('1=1', ' AND '));
    const timings: [number, string][] = [];
    for (const text of inputs) {
      const started = performance.now();
      await fuzzOne(text, crm, 'account', HOSTILE_HANG_MS);
      timings.push([performance.now() - started, text]);
    }
    const slow = timings.sort((a, b) => b[0] - a[0]).slice(0, 3);
    console.log(`[fuzz] slowest hostile inputs (all entry points and checks): ${slow.map(([ms, text]) => `${ms.toFixed(0)} ms ${show(text).slice(0, 70)}`).join('; ')}`);
    // The same with the caller's slug pointing elsewhere, and odd slugs.
    for (const slug of ['', 'user', 'pg_class', "account'; --", '\u0000', 'ACCOUNT', 'a'.repeat(10_000)]) await fuzzOne('SELECT id FROM account LIMIT 5', crm, slug);
  }, PROPERTY_TIMEOUT);
});
