import { describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import { isOqlError } from '../../src/diagnostics/diagnostic.js';
import { FUNCTIONS } from '../../src/validate/functions.js';
import { pgFixtures } from '../support/pg-fixture.js';

/**
 * Literals PostgreSQL must see as they are written, on PostgreSQL 15.
 *
 * Untyped NULLs: `- NULL`, `sum(NULL)`, `date_trunc('day', NULL)` and the like
 * once reached the database, which cannot choose an operator or function for an argument of
 * unknown type (SQLSTATE 42725) and failed the request with a 500. Every function of the
 * whitelist and every operator is tried here with NULL-typed operands of several forms (the
 * literal, a subquery selecting NULL, CASE and coalesce that yield only NULL) beside typed ones,
 * and each query must either be refused at compile time with a 4xx OqlError or run.
 */

const fx = pgFixtures(['crm']);
const catalog = fx.catalog('crm');

/** Expressions whose type is unknown to PostgreSQL when written this way. */
const NULLS = [
  'NULL',
  '(NULL)',
  '(SELECT NULL FROM lead x LIMIT 1)',
  'CASE WHEN amount > 0 THEN NULL END',
  'coalesce(NULL, NULL)',
  'if(amount > 0, NULL, NULL)',
];

/** One typed expression per value type the dialect has, over opportunity. */
const TYPED: Record<string, string> = {
  number: 'amount',
  integer: '3',
  decimal: '1.5',
  text: 'name',
  literal: "'x'",
  epoch: 'close_date',
  timestamp: "to_timestamp(close_date / 1000) AT TIME ZONE 'UTC'",
  timestamptz: 'to_timestamp(created_at / 1000)',
  date: 'to_timestamp(close_date / 1000)::date',
  boolean: 'amount > 0',
  multiselect: 'sources',
  array: "ARRAY['web']",
  enum: 'stage',
};

/** Valid arguments by position, to stand beside the NULL-typed one. */
const ARGUMENTS: Record<string, readonly (readonly string[])[]> = {
  count: [['amount', 'name']],
  sum: [['amount']],
  avg: [['amount']],
  min: [['amount', 'name', 'close_date']],
  max: [['amount', 'name', 'close_date']],
  lower: [['name']],
  upper: [['name']],
  trim: [['name']],
  left: [['name'], ['3']],
  concat: [['name'], ['amount']],
  abs: [['amount']],
  round: [['amount'], ['2']],
  coalesce: [['amount', 'name'], ['amount', 'name']],
  date_trunc: [["'day'"], [TYPED.timestamp!, TYPED.timestamptz!], ["'UTC'"]],
  to_timestamp: [['close_date / 1000']],
  date_part: [["'epoch'", "'year'"], [TYPED.timestamp!, TYPED.timestamptz!]],
  if: [['amount > 0'], ['amount', 'name'], ['amount', 'name']],
  now: [],
};

function* product(choices: readonly (readonly string[])[]): Generator<string[]> {
  if (choices.length === 0) {
    yield [];
    return;
  }
  for (const head of choices[0]!) for (const rest of product(choices.slice(1))) yield [head, ...rest];
}

/** Calls of every whitelisted function at every arity with at least one NULL-typed argument. */
function functionCalls(): string[] {
  const out = new Set<string>();
  for (const spec of FUNCTIONS.values()) {
    const positions = ARGUMENTS[spec.name]!;
    for (let arity = spec.minArgs; arity <= Math.min(spec.maxArgs, positions.length); arity++) {
      const choices = positions.slice(0, arity).map((typed) => [...typed, ...NULLS]);
      for (const args of product(choices)) {
        if (!args.some((a) => NULLS.includes(a))) continue;
        out.add(`${spec.name}(${args.join(', ')})`);
        if (spec.aggregate && spec.name !== 'count') out.add(`${spec.name}(DISTINCT ${args.join(', ')})`);
      }
    }
  }
  return [...out];
}

const OPERANDS = [...NULLS, ...Object.values(TYPED)];

/** Every operator with a NULL-typed operand on at least one side, the other side of every type. */
function operatorExprs(): string[] {
  const out: string[] = [];
  for (const n of NULLS) {
    out.push(`- ${n}`, `+ ${n}`, `NOT ${n}`, `${n} IS NULL`, `${n} IS NOT NULL`, `(${n})::date`, `${n} AT TIME ZONE 'UTC'`, `${TYPED.timestamp} AT TIME ZONE ${n}`);
    out.push(`${n} = ARRAY[NULL]`, `CASE ${n} WHEN 1 THEN 'a' END`, `CASE amount WHEN ${n} THEN 'a' END`, `${n} IN (SELECT amount FROM opportunity y LIMIT 5)`);
    out.push(`amount IN (SELECT ${n} FROM opportunity y LIMIT 5)`, `name IN (SELECT ${n} FROM opportunity y LIMIT 5)`, `EXISTS (SELECT 1 FROM lead z WHERE ${n})`);
    for (const other of OPERANDS) {
      for (const op of ['+', '-', '*', '/', '%', '=', '<>', '<', '<=', '>', '>=', '&&', 'AND', 'OR', 'LIKE', 'ILIKE', 'NOT LIKE']) {
        out.push(`${n} ${op} ${other}`, `${other} ${op} ${n}`);
      }
      out.push(`${n} BETWEEN ${other} AND ${other}`, `${other} BETWEEN ${n} AND ${other}`, `${n} IN (${other}, ${other})`, `${other} IN (${n})`, `${other} NOT IN (${n}, ${other})`);
      out.push(`CASE WHEN amount > 0 THEN ${n} ELSE ${other} END`, `coalesce(${n}, ${other})`, `if(amount > 0, ${other}, ${n})`, `ARRAY[${n}] && ${other}`);
    }
  }
  return [...new Set(out)];
}

type Outcome = { readonly ok: true } | { readonly ok: false; readonly why: string };

function compiled(query: string): { sql: string; params: unknown[] } {
  const c = compile(query, { catalog, slug: 'opportunity', orgId: 'org_acme' });
  if (c.kind !== 'query') throw new Error('restricted');
  return c;
}

async function tryQuery(query: string): Promise<Outcome> {
  let compiled;
  try {
    compiled = compile(query, { catalog, slug: 'opportunity', orgId: 'org_acme', cache: false });
  } catch (e) {
    if (isOqlError(e) && e.status >= 400 && e.status < 500) return { ok: true };
    return { ok: false, why: `compile threw ${isOqlError(e) ? `${e.code} (${e.status})` : String(e)}` };
  }
  if (compiled.kind !== 'query') return { ok: false, why: 'restricted' };
  try {
    await fx.pool('crm').query(compiled.sql, compiled.params);
    return { ok: true };
  } catch (e) {
    const err = e as { code?: string; message?: string };
    return { ok: false, why: `PostgreSQL ${err.code}: ${err.message}\n    ${compiled.sql}` };
  }
}

async function failures(queries: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const q of queries) {
    const r = await tryQuery(q);
    if (!r.ok) out.push(`${q}\n  ${r.why}`);
  }
  return out;
}

describe('NULL-typed expressions run or are refused, never fail on PostgreSQL', () => {
  it('every whitelisted function has arguments to try', () => {
    for (const spec of FUNCTIONS.values()) expect(ARGUMENTS, spec.name).toHaveProperty(spec.name);
  });

  it('every function of the whitelist, in the select list and as a condition', async () => {
    const calls = functionCalls();
    expect(calls.length).toBeGreaterThan(500);
    const queries = calls.flatMap((c) => [
      `SELECT ${c} AS v FROM opportunity LIMIT 3`,
      `SELECT stage, ${c} AS v FROM opportunity GROUP BY stage ORDER BY v LIMIT 3`,
      `SELECT id FROM opportunity WHERE ${c} IS NULL ORDER BY id LIMIT 3`,
    ]);
    expect(await failures(queries)).toEqual([]);
  }, 300_000);

  it('every operator, in the select list and in WHERE', async () => {
    const exprs = operatorExprs();
    expect(exprs.length).toBeGreaterThan(1000);
    const queries = exprs.flatMap((e) => [`SELECT ${e} AS v FROM opportunity LIMIT 3`, `SELECT id FROM opportunity WHERE ${e} ORDER BY id LIMIT 3`]);
    expect(await failures(queries)).toEqual([]);
  }, 300_000);

  it('the cases of the report compile to a typed NULL and answer NULL', async () => {
    for (const [expr, cast] of [
      ['- NULL', 'NULL::numeric'],
      ['NULL / NULL', 'NULL::numeric'],
      ['sum(NULL)', 'NULL::numeric'],
      ["date_part('epoch', NULL)", 'NULL::timestamp'],
      ["date_trunc('day', NULL)", 'NULL::timestamp'],
    ]) {
      const query = `SELECT ${expr} AS v FROM opportunity LIMIT 1`;
      const compiled = compile(query, { catalog, slug: 'opportunity', orgId: 'org_acme' });
      expect(compiled.sql, expr).toContain(cast);
      if (compiled.kind !== "query") throw new Error("restricted");
      const { rows } = await fx.pool("crm").query(compiled.sql, compiled.params);
      expect(rows, expr).toEqual([{ c0: null }]);
    }
  });
});

describe('numbers beyond 2^53 and beyond double precision', () => {
  const one = async (query: string): Promise<Record<string, unknown>> => {
    const c = compiled(query);
    const { rows } = await fx.pool('crm').query(c.sql, c.params);
    expect(rows.length, query).toBe(1);
    return rows[0];
  };

  it('integer literals reach PostgreSQL exactly, as bigint within its range and numeric beyond', async () => {
    // node-postgres returns bigint and numeric as text, so the values are compared exactly.
    const row = await one('SELECT 9007199254740993 AS a, 9223372036854775807 AS b, 9223372036854775808 AS c, -9007199254740993 AS d, 123456789012345678901234567890 + 1 AS e FROM opportunity LIMIT 1');
    expect(row).toEqual({ c0: '9007199254740993', c1: '9223372036854775807', c2: '9223372036854775808', c3: '-9007199254740993', c4: '123456789012345678901234567891' });
    const c = compiled('SELECT 9007199254740993 AS a, 9223372036854775808 AS c FROM opportunity LIMIT 1');
    expect(c.sql).toMatch(/\$2::int8 AS "c0", \$3::numeric AS "c1"/);
    expect(c.params.slice(1, 3)).toEqual(['9007199254740993', '9223372036854775808']);
  });

  it('comparisons tell apart integers one apart beyond 2^53', async () => {
    const { n } = (await fx.pool('crm').query("SELECT count(*)::int AS n FROM opportunity WHERE org_id = 'org_acme' AND is_deleted = false")).rows[0];
    expect(n).toBeGreaterThan(0);
    const c = compiled('SELECT COUNT(*) AS n FROM opportunity WHERE 9007199254740993 > 9007199254740992 AND -9007199254740993 < -9007199254740992 LIMIT 1');
    expect((await fx.pool('crm').query(c.sql, c.params)).rows[0].c0).toBe(String(n));
  });

  it('decimal literals are exact numerics: 0.1 + 0.2 = 0.3', async () => {
    const row = await one('SELECT 0.1 + 0.2 = 0.3 AS same, 1e300 * 10 AS big, 2.5e-300 AS small FROM opportunity LIMIT 1');
    expect(row.c0).toBe(true);
    expect(row.c1).toBe(`1${'0'.repeat(301)}`);
    expect(Number(row.c2)).toBe(2.5e-300);
  });

  it('a large OFFSET within bigint runs; beyond bigint it is a 400', async () => {
    const c = compiled('SELECT id FROM opportunity ORDER BY id LIMIT 5 OFFSET 9007199254740993');
    expect(c.params).toContain('9007199254740993');
    expect((await fx.pool('crm').query(c.sql, c.params)).rows).toEqual([]);
    expect(() => compiled('SELECT id FROM opportunity ORDER BY id LIMIT 5 OFFSET 9223372036854775808')).toThrow(expect.objectContaining({ code: 'NUMBER_OUT_OF_RANGE', status: 400 }));
  });

  it.each([
    ['SELECT 1e400 AS x FROM opportunity LIMIT 1', '1e400'],
    ['SELECT id FROM opportunity WHERE amount > -1.5E+309 LIMIT 1', '1.5E+309'],
    ['SELECT id FROM opportunity WHERE amount > 1e-400 LIMIT 1', '1e-400'],
    [`SELECT ${'9'.repeat(400)} AS x FROM opportunity LIMIT 1`, '9'.repeat(400)],
  ])('%s is NUMBER_OUT_OF_RANGE at the literal, with a hint', (query, literal) => {
    let error: unknown;
    try {
      compiled(query);
    } catch (e) {
      error = e;
    }
    expect(isOqlError(error)).toBe(true);
    const e = error as { code: string; status: number; diagnostics: { code: string; span: { start: number; end: number }; hint?: string }[] };
    expect(e.status).toBe(400);
    const d = e.diagnostics.find((x) => x.code === 'NUMBER_OUT_OF_RANGE')!;
    expect(query.slice(d.span.start, d.span.end)).toBe(literal);
    expect(d.hint).toMatch(/write/);
  });

  it('the hint is right when followed: 1e308 and 1e-307 run', async () => {
    expect((await one('SELECT 1e308 AS a, 1e-307 AS b FROM opportunity LIMIT 1')).c0).toBe(`1${'0'.repeat(308)}`);
  });
});
