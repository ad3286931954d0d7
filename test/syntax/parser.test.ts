import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type * as A from '../../src/syntax/ast.js';
import { parse } from '../../src/syntax/parse.js';
import { printExpr, printQuery } from '../../src/syntax/print.js';
import { allTokens, KEYWORDS, NonReserved } from '../../src/syntax/tokens.js';
import { expectSpan, spanOf, stripSpans } from './helpers.js';

// Span-free builders for the expected trees.
const I = (name: string, quoted = false) => ({ kind: 'Ident', name, quoted });
const P = (...names: string[]) => ({ kind: 'Path', parts: names.map((n) => I(n)) });
const N = (text: string) => ({ kind: 'Number', text, isInteger: /^\d+$/.test(text) });
const S = (value: string) => ({ kind: 'String', value });
const Bin = (op: string, left: unknown, right: unknown) => ({ kind: 'Binary', op, left, right });
const Log = (op: 'AND' | 'OR', ...operands: unknown[]) => ({ kind: 'Logical', op, operands });
const Un = (op: string, operand: unknown) => ({ kind: 'Unary', op, operand });
const Fn = (name: string, args: unknown[], distinct = false) => ({ kind: 'Call', name: I(name), args, distinct, filter: null, over: null });
const STAR = { kind: 'Star', qualifier: null };
const ATZ = (operand: unknown, zone: unknown) => ({ kind: 'AtTimeZone', operand, zone });

/** The first select item's expression, without spans. */
function shape(exprText: string): unknown {
  return stripSpans(parse(`SELECT ${exprText} FROM t LIMIT 1`).items[0]!.expr);
}

function whereOf(q: string): A.Expr {
  const w = parse(q).where;
  if (!w) throw new Error('no WHERE');
  return w;
}

describe('select list', () => {
  it('parses DISTINCT, explicit and implicit aliases', () => {
    const q = 'SELECT DISTINCT id, name AS n, amount total, stage "Stage" FROM opportunity LIMIT 10';
    const s = parse(q);
    expect(s.distinct).toBe(true);
    expect(s.items.map((i) => stripSpans(i.alias))).toEqual([null, I('n'), I('total'), I('Stage', true)]);
    expectSpan(s.items[0]!, q, 'id');
    expectSpan(s.items[1]!, q, 'name AS n');
    expectSpan(s.items[1]!.alias!, q, 'n', 1);
    expectSpan(s.items[2]!, q, 'amount total');
    expectSpan(s.items[3]!, q, 'stage "Stage"');
    expectSpan(s.items[3]!.alias!, q, '"Stage"');
  });

  it('treats ALL as the default and any keyword after AS as a name', () => {
    const q = 'SELECT ALL count(*) AS count, amount AS order, stage AS "from" FROM deal LIMIT 1';
    const s = parse(q);
    expect(s.distinct).toBe(false);
    expect(s.items.map((i) => stripSpans(i.alias))).toEqual([I('count'), I('order'), I('from', true)]);
    expectSpan(s.items[1]!.alias!, q, 'order');
  });

  it('parses * and alias.*', () => {
    const q = 'SELECT *, o.*, o.name FROM opportunity o LIMIT 1';
    const s = parse(q);
    expect(stripSpans(s.items[0]!.expr)).toEqual(STAR);
    expectSpan(s.items[0]!.expr, q, '*');
    expect(stripSpans(s.items[1]!.expr)).toEqual({ kind: 'Star', qualifier: I('o') });
    expectSpan(s.items[1]!.expr, q, 'o.*');
    expectSpan(s.items[1]!, q, 'o.*');
    expect(stripSpans(s.items[2]!.expr)).toEqual(P('o', 'name'));
  });
});

describe('FROM', () => {
  it('takes an object slug with an optional alias, AS or not', () => {
    const q1 = 'SELECT id FROM opportunity AS o LIMIT 1';
    const f1 = parse(q1).from;
    expect(stripSpans(f1)).toEqual({ kind: 'FromItem', object: I('opportunity'), alias: I('o') });
    expectSpan(f1, q1, 'opportunity AS o');
    const q2 = 'SELECT id FROM opportunity o LIMIT 1';
    expectSpan(parse(q2).from, q2, 'opportunity o');
    expectSpan(parse(q2).from.alias!, q2, 'o', 2);
  });

  it('reads slugs such as user as plain names', () => {
    const q = 'SELECT email FROM user LIMIT 5';
    const f = parse(q).from;
    expect(stripSpans(f)).toEqual({ kind: 'FromItem', object: I('user'), alias: null });
    expectSpan(f, q, 'user');
  });

  it('accepts a quoted slug and keeps its case', () => {
    expect(stripSpans(parse('SELECT id FROM "Deal Stage" LIMIT 1').from.object)).toEqual(I('Deal Stage', true));
  });
});

describe('clauses', () => {
  const q = "SELECT stage, COUNT(id) AS n FROM opportunity WHERE amount > 100 GROUP BY stage, owner.name HAVING COUNT(id) >= 2 ORDER BY n DESC NULLS LAST, stage ASC, owner NULLS FIRST, id LIMIT 20 OFFSET 40;";

  it('parses WHERE, GROUP BY, HAVING, ORDER BY, LIMIT and OFFSET', () => {
    const s = parse(q);
    expect(stripSpans(s.where)).toEqual(Bin('>', P('amount'), N('100')));
    expectSpan(s.where!, q, 'amount > 100');
    expect(stripSpans(s.groupBy)).toEqual([P('stage'), P('owner', 'name')]);
    expectSpan(s.groupBy[1]!, q, 'owner.name');
    expect(stripSpans(s.having)).toEqual(Bin('>=', Fn('count', [P('id')]), N('2')));
    expectSpan(s.having!, q, 'COUNT(id) >= 2');
    expect(s.orderBy.map((o) => [o.direction, o.nulls])).toEqual([
      ['DESC', 'LAST'],
      ['ASC', null],
      [null, 'FIRST'],
      [null, null],
    ]);
    expectSpan(s.orderBy[0]!, q, 'n DESC NULLS LAST');
    expectSpan(s.orderBy[1]!, q, 'stage ASC');
    expectSpan(s.orderBy[2]!, q, 'owner NULLS FIRST');
    expect(stripSpans(s.limit)).toEqual(N('20'));
    expectSpan(s.limit!, q, '20');
    expect(stripSpans(s.offset)).toEqual(N('40'));
    expectSpan(s.offset!, q, '40');
  });

  it('spans the statement without its trailing semicolon', () => {
    expect(parse(q).span).toEqual({ start: 0, end: q.indexOf(';') });
  });

  it('accepts OFFSET before LIMIT, and either alone', () => {
    const a = parse('SELECT id FROM t OFFSET 5 LIMIT 10');
    expect([a.limit?.text, a.offset?.text]).toEqual(['10', '5']);
    expect(stripSpans(a)).toEqual(stripSpans(parse('SELECT id FROM t LIMIT 10 OFFSET 5')));
    const b = parse('SELECT id FROM t OFFSET 5');
    expect([b.limit, b.offset?.text]).toEqual([null, '5']);
    const c = parse('SELECT id FROM t');
    expect([c.limit, c.offset]).toEqual([null, null]);
  });
});

describe('literals', () => {
  it("reads strings with '' escapes, empty and multi-line strings", () => {
    const q = "SELECT 'it''s' AS a, '' AS b, 'two\nlines' AS c, '''' AS d FROM t LIMIT 1";
    const items = parse(q).items;
    expect(items.map((i) => stripSpans(i.expr))).toEqual([S("it's"), S(''), S('two\nlines'), S("'")]);
    expectSpan(items[0]!.expr, q, "'it''s'");
    expectSpan(items[2]!.expr, q, "'two\nlines'");
  });

  it('keeps numbers as written and tells integers apart', () => {
    const q = 'SELECT 42 AS a, 2.5 AS b, .5 AS c, 5. AS d, 1e3 AS e, 1.5E-3 AS f, 007 AS g FROM t LIMIT 1';
    const items = parse(q).items;
    expect(items.map((i) => [(i.expr as A.NumberLit).text, (i.expr as A.NumberLit).isInteger])).toEqual([
      ['42', true],
      ['2.5', false],
      ['.5', false],
      ['5.', false],
      ['1e3', false],
      ['1.5E-3', false],
      ['007', true],
    ]);
    expectSpan(items[5]!.expr, q, '1.5E-3');
  });

  it('reads TRUE, FALSE and NULL in any case', () => {
    const q = 'SELECT TRUE AS a, false AS b, Null AS c FROM t LIMIT 1';
    const items = parse(q).items;
    expect(items.map((i) => stripSpans(i.expr))).toEqual([
      { kind: 'Boolean', value: true },
      { kind: 'Boolean', value: false },
      { kind: 'Null' },
    ]);
    expectSpan(items[2]!.expr, q, 'Null');
  });
});

describe('names', () => {
  it('reads dot paths with a span per part', () => {
    const q = 'SELECT owner.manager.email FROM opportunity LIMIT 1';
    const e = parse(q).items[0]!.expr as A.Path;
    expect(stripSpans(e)).toEqual(P('owner', 'manager', 'email'));
    expectSpan(e, q, 'owner.manager.email');
    expectSpan(e.parts[1]!, q, 'manager');
    expectSpan(e.parts[2]!, q, 'email');
  });

  it('folds unquoted names to lower case and keeps quoted ones exact', () => {
    expect(shape('Owner.Name')).toEqual(P('owner', 'name'));
    expect(shape('"Owner"."Full Name"')).toEqual({ kind: 'Path', parts: [I('Owner', true), I('Full Name', true)] });
    expect(shape('"say ""hi"""')).toEqual({ kind: 'Path', parts: [I('say "hi"', true)] });
    expect(shape('order_total')).toEqual(P('order_total'));
    expect(shape('selection')).toEqual(P('selection'));
    expect(shape('a$1')).toEqual(P('a$1'));
  });

  it('accepts non-reserved keywords as names', () => {
    expect(shape('first')).toEqual(P('first'));
    expect(shape('zone.time')).toEqual(P('zone', 'time'));
    expect(shape('filter(x)')).toEqual(Fn('filter', [P('x')]));
  });
});

describe('calls', () => {
  it('parses COUNT(*), COUNT(DISTINCT x), no-argument and nested calls', () => {
    const q = 'SELECT COUNT(*) AS a, count(DISTINCT owner.id) AS b, NOW() AS c, ROUND(SUM(amount) / 100000, 2) AS d FROM t LIMIT 1';
    const items = parse(q).items;
    expect(stripSpans(items[0]!.expr)).toEqual(Fn('count', [STAR]));
    expectSpan(items[0]!.expr, q, 'COUNT(*)');
    expectSpan((items[0]!.expr as A.Call).args[0]!, q, '*');
    expectSpan((items[0]!.expr as A.Call).name, q, 'COUNT');
    expect(stripSpans(items[1]!.expr)).toEqual(Fn('count', [P('owner', 'id')], true));
    expectSpan(items[1]!.expr, q, 'count(DISTINCT owner.id)');
    expect(stripSpans(items[2]!.expr)).toEqual(Fn('now', []));
    expectSpan(items[2]!.expr, q, 'NOW()');
    expect(stripSpans(items[3]!.expr)).toEqual(Fn('round', [Bin('/', Fn('sum', [P('amount')]), N('100000')), N('2')]));
    expectSpan(items[3]!.expr, q, 'ROUND(SUM(amount) / 100000, 2)');
  });
});

describe('CASE', () => {
  it('parses a searched CASE', () => {
    const q = "SELECT COUNT(CASE WHEN stage = 'won' THEN 1 END) AS won FROM t LIMIT 1";
    const call = parse(q).items[0]!.expr as A.Call;
    const c = call.args[0] as A.CaseExpr;
    expect(stripSpans(c)).toEqual({
      kind: 'Case',
      operand: null,
      whens: [{ kind: 'When', when: Bin('=', P('stage'), S('won')), then: N('1') }],
      else: null,
    });
    expectSpan(c, q, "CASE WHEN stage = 'won' THEN 1 END");
    expectSpan(c.whens[0]!, q, "WHEN stage = 'won' THEN 1");
  });

  it('parses a simple CASE with ELSE', () => {
    const q = "SELECT CASE stage WHEN 'won' THEN 1 WHEN 'lost' THEN -1 ELSE 0 END AS score FROM t LIMIT 1";
    const c = parse(q).items[0]!.expr as A.CaseExpr;
    expect(stripSpans(c)).toEqual({
      kind: 'Case',
      operand: P('stage'),
      whens: [
        { kind: 'When', when: S('won'), then: N('1') },
        { kind: 'When', when: S('lost'), then: Un('-', N('1')) },
      ],
      else: N('0'),
    });
    expectSpan(c, q, "CASE stage WHEN 'won' THEN 1 WHEN 'lost' THEN -1 ELSE 0 END");
    expectSpan(c.whens[1]!.then, q, '-1');
  });
});

describe('predicates', () => {
  it('parses IN and NOT IN lists', () => {
    const q = "SELECT id FROM t WHERE stage IN ('won', 'lost') AND kind NOT IN (1) LIMIT 1";
    const w = whereOf(q) as A.Logical;
    expect(stripSpans(w)).toEqual(
      Log(
        'AND',
        { kind: 'InList', operand: P('stage'), items: [S('won'), S('lost')], negated: false },
        { kind: 'InList', operand: P('kind'), items: [N('1')], negated: true },
      ),
    );
    expectSpan(w.operands[0]!, q, "stage IN ('won', 'lost')");
    expectSpan(w.operands[1]!, q, 'kind NOT IN (1)');
    expectSpan(w, q, "stage IN ('won', 'lost') AND kind NOT IN (1)");
  });

  it('parses IN (subquery) and NOT IN (subquery)', () => {
    const q = "SELECT id FROM account WHERE owner NOT IN (SELECT id FROM user WHERE active = 1 LIMIT 100) LIMIT 1";
    const w = whereOf(q) as A.InSubquery;
    expect(w.kind).toBe('InSubquery');
    expect(w.negated).toBe(true);
    expect(stripSpans(w.operand)).toEqual(P('owner'));
    expect(stripSpans(w.query.from.object)).toEqual(I('user'));
    expectSpan(w, q, 'owner NOT IN (SELECT id FROM user WHERE active = 1 LIMIT 100)');
    expectSpan(w.query, q, 'SELECT id FROM user WHERE active = 1 LIMIT 100');
    expect(whereOf('SELECT id FROM a WHERE x IN (SELECT y FROM b) LIMIT 1')).toMatchObject({ kind: 'InSubquery', negated: false });
  });

  it('parses EXISTS and NOT EXISTS as NOT around EXISTS', () => {
    const q = 'SELECT id FROM account a WHERE EXISTS (SELECT 1 FROM contact c WHERE c.account = a.id) AND NOT EXISTS (SELECT 1 FROM deal d WHERE d.account = a.id) LIMIT 1';
    const w = whereOf(q) as A.Logical;
    const [ex, notEx] = w.operands as [A.Exists, A.Unary];
    expect(ex.kind).toBe('Exists');
    expectSpan(ex, q, 'EXISTS (SELECT 1 FROM contact c WHERE c.account = a.id)');
    expectSpan(ex.query, q, 'SELECT 1 FROM contact c WHERE c.account = a.id');
    expect(stripSpans(ex.query.where)).toEqual(Bin('=', P('c', 'account'), P('a', 'id')));
    expect(notEx).toMatchObject({ kind: 'Unary', op: 'NOT', operand: { kind: 'Exists' } });
    expectSpan(notEx, q, 'NOT EXISTS (SELECT 1 FROM deal d WHERE d.account = a.id)');
  });

  it('parses a scalar subquery with the parentheses in its span', () => {
    const q = 'SELECT name, (SELECT COUNT(id) FROM contact c WHERE c.account = account.id LIMIT 1) AS contacts FROM account LIMIT 1';
    const e = parse(q).items[1]!.expr as A.Subquery;
    expect(e.kind).toBe('Subquery');
    expectSpan(e, q, '(SELECT COUNT(id) FROM contact c WHERE c.account = account.id LIMIT 1)');
    expectSpan(e.query, q, 'SELECT COUNT(id) FROM contact c WHERE c.account = account.id LIMIT 1');
  });

  it('parses BETWEEN and NOT BETWEEN, the inner AND binding to BETWEEN', () => {
    const q = 'SELECT id FROM t WHERE amount BETWEEN 1 AND 10 + 5 AND age NOT BETWEEN 2 AND 3 LIMIT 1';
    const w = whereOf(q) as A.Logical;
    expect(stripSpans(w)).toEqual(
      Log(
        'AND',
        { kind: 'Between', operand: P('amount'), low: N('1'), high: Bin('+', N('10'), N('5')), negated: false },
        { kind: 'Between', operand: P('age'), low: N('2'), high: N('3'), negated: true },
      ),
    );
    expectSpan(w.operands[0]!, q, 'amount BETWEEN 1 AND 10 + 5');
    expectSpan(w.operands[1]!, q, 'age NOT BETWEEN 2 AND 3');
  });

  it('parses LIKE, ILIKE, NOT LIKE and NOT ILIKE', () => {
    const q = "SELECT id FROM t WHERE a LIKE 'x%' OR b ILIKE '%y' OR c NOT LIKE 'z' OR d NOT ILIKE '%w%' LIMIT 1";
    const w = whereOf(q) as A.Logical;
    expect(w.operands.map((o) => [(o as A.Like).caseInsensitive, (o as A.Like).negated])).toEqual([
      [false, false],
      [true, false],
      [false, true],
      [true, true],
    ]);
    expect(stripSpans(w.operands[1])).toEqual({ kind: 'Like', operand: P('b'), pattern: S('%y'), caseInsensitive: true, negated: false });
    expectSpan(w.operands[3]!, q, "d NOT ILIKE '%w%'");
  });

  it('parses IS NULL and IS NOT NULL', () => {
    const q = 'SELECT id FROM t WHERE a IS NULL AND b.c IS NOT NULL LIMIT 1';
    const w = whereOf(q) as A.Logical;
    expect(stripSpans(w)).toEqual(
      Log('AND', { kind: 'IsNull', operand: P('a'), negated: false }, { kind: 'IsNull', operand: P('b', 'c'), negated: true }),
    );
    expectSpan(w.operands[0]!, q, 'a IS NULL');
    expectSpan(w.operands[1]!, q, 'b.c IS NOT NULL');
  });
});

describe('operators and precedence', () => {
  it('binds * tighter than +', () => {
    const q = 'SELECT a + b * c FROM t LIMIT 1';
    const e = parse(q).items[0]!.expr as A.Binary;
    expect(stripSpans(e)).toEqual(Bin('+', P('a'), Bin('*', P('b'), P('c'))));
    expectSpan(e, q, 'a + b * c');
    expectSpan(e.right, q, 'b * c');
    expect(e.opSpan).toEqual(spanOf(q, '+'));
  });

  it('associates arithmetic to the left', () => {
    expect(shape('a - b - c')).toEqual(Bin('-', Bin('-', P('a'), P('b')), P('c')));
    expect(shape('a / b % c * d')).toEqual(Bin('*', Bin('%', Bin('/', P('a'), P('b')), P('c')), P('d')));
    expect(shape('a * b + c')).toEqual(Bin('+', Bin('*', P('a'), P('b')), P('c')));
  });

  it('binds unary minus tighter than *, and :: tighter than unary minus', () => {
    expect(shape('-a * b')).toEqual(Bin('*', Un('-', P('a')), P('b')));
    expect(shape('- +a')).toEqual(Un('-', Un('+', P('a'))));
    expect(shape('-x::date')).toEqual(Un('-', { kind: 'Cast', operand: P('x'), type: 'date' }));
  });

  it('groups with parentheses, the group spanning them', () => {
    const q = 'SELECT (a + b) * c FROM t LIMIT 1';
    const e = parse(q).items[0]!.expr as A.Binary;
    expect(stripSpans(e)).toEqual(Bin('*', Bin('+', P('a'), P('b')), P('c')));
    expectSpan(e, q, '(a + b) * c');
    expectSpan(e.left, q, '(a + b)');
    expect(shape('((a))')).toEqual(P('a'));
  });

  it.each([
    ['=', '='],
    ['<>', '<>'],
    ['!=', '!='],
    ['<', '<'],
    ['<=', '<='],
    ['>', '>'],
    ['>=', '>='],
  ])('parses the comparison %s', (written, op) => {
    const q = `SELECT id FROM t WHERE amount ${written} 5 LIMIT 1`;
    const w = whereOf(q) as A.Binary;
    expect(stripSpans(w)).toEqual(Bin(op, P('amount'), N('5')));
    expect(w.opSpan).toEqual(spanOf(q, written));
    expectSpan(w, q, `amount ${written} 5`);
  });

  it('binds arithmetic tighter than comparison', () => {
    expect(stripSpans(whereOf('SELECT id FROM t WHERE a + 1 > b * 2 LIMIT 1'))).toEqual(
      Bin('>', Bin('+', P('a'), N('1')), Bin('*', P('b'), N('2'))),
    );
  });

  it('binds AND tighter than OR', () => {
    expect(stripSpans(whereOf('SELECT id FROM t WHERE a OR b AND c LIMIT 1'))).toEqual(Log('OR', P('a'), Log('AND', P('b'), P('c'))));
    expect(stripSpans(whereOf('SELECT id FROM t WHERE a AND b OR c LIMIT 1'))).toEqual(Log('OR', Log('AND', P('a'), P('b')), P('c')));
    expect(stripSpans(whereOf('SELECT id FROM t WHERE (a OR b) AND c LIMIT 1'))).toEqual(Log('AND', Log('OR', P('a'), P('b')), P('c')));
  });

  it('keeps AND and OR chains flat', () => {
    const q = 'SELECT id FROM t WHERE a AND b AND c AND d LIMIT 1';
    const w = whereOf(q) as A.Logical;
    expect(stripSpans(w)).toEqual(Log('AND', P('a'), P('b'), P('c'), P('d')));
    expectSpan(w, q, 'a AND b AND c AND d');
  });

  it('binds NOT looser than comparison', () => {
    const q = 'SELECT id FROM t WHERE NOT a = b LIMIT 1';
    const w = whereOf(q);
    expect(stripSpans(w)).toEqual(Un('NOT', Bin('=', P('a'), P('b'))));
    expectSpan(w, q, 'NOT a = b');
    expect(stripSpans(whereOf('SELECT id FROM t WHERE NOT NOT a AND b LIMIT 1'))).toEqual(Log('AND', Un('NOT', Un('NOT', P('a'))), P('b')));
    expect(stripSpans(whereOf('SELECT id FROM t WHERE NOT a IS NULL LIMIT 1'))).toEqual(Un('NOT', { kind: 'IsNull', operand: P('a'), negated: false }));
  });

  it('parses && between a multiselect and an ARRAY, and NOT around it', () => {
    const q = "SELECT id FROM t WHERE tags && ARRAY['A', 'B'] AND NOT (labels && ARRAY['x']) AND tags = ARRAY[NULL] LIMIT 1";
    const w = whereOf(q) as A.Logical;
    const arr = (...items: unknown[]) => ({ kind: 'Array', items });
    expect(stripSpans(w)).toEqual(
      Log(
        'AND',
        Bin('&&', P('tags'), arr(S('A'), S('B'))),
        Un('NOT', Bin('&&', P('labels'), arr(S('x')))),
        Bin('=', P('tags'), arr({ kind: 'Null' })),
      ),
    );
    expectSpan(w.operands[0]!, q, "tags && ARRAY['A', 'B']");
    expectSpan((w.operands[0] as A.Binary).right, q, "ARRAY['A', 'B']");
    expectSpan(w.operands[1]!, q, "NOT (labels && ARRAY['x'])");
    expectSpan((w.operands[1] as A.Unary).operand, q, "(labels && ARRAY['x'])");
    expect(shape('ARRAY[]')).toEqual({ kind: 'Array', items: [] });
    expect(shape('a && b + c')).toEqual(Bin('&&', P('a'), Bin('+', P('b'), P('c'))));
  });

  it('parses ::date and other casts for the validator to reject', () => {
    const q = 'SELECT to_timestamp(close_date / 1000)::date AS d FROM t LIMIT 1';
    const c = parse(q).items[0]!.expr as A.Cast;
    expect(stripSpans(c)).toEqual({ kind: 'Cast', operand: Fn('to_timestamp', [Bin('/', P('close_date'), N('1000'))]), type: 'date' });
    expectSpan(c, q, 'to_timestamp(close_date / 1000)::date');
    expect(c.typeSpan).toEqual(spanOf(q, 'date', 1));
    const types = (t: string) => (parse(`SELECT x::${t} FROM t LIMIT 1`).items[0]!.expr as A.Cast).type;
    expect(types('DOUBLE PRECISION')).toBe('double precision');
    expect(types('numeric(10, 2)')).toBe('numeric(10,2)');
    expect(types('timestamp with time zone')).toBe('timestamp with time zone');
    expect(types('text[]')).toBe('text[]');
    expect(types('time')).toBe('time');
    expect(shape('x::text::date')).toEqual({ kind: 'Cast', operand: { kind: 'Cast', operand: P('x'), type: 'text' }, type: 'date' });
  });

  it('parses AT TIME ZONE, chained to the left', () => {
    const q = "SELECT x AT TIME ZONE 'UTC' AT TIME ZONE 'Asia/Kolkata' FROM t LIMIT 1";
    const e = parse(q).items[0]!.expr as A.AtTimeZone;
    expect(stripSpans(e)).toEqual(ATZ(ATZ(P('x'), S('UTC')), S('Asia/Kolkata')));
    expectSpan(e, q, "x AT TIME ZONE 'UTC' AT TIME ZONE 'Asia/Kolkata'");
    expectSpan(e.operand, q, "x AT TIME ZONE 'UTC'");
    expect(shape("a * b AT TIME ZONE 'UTC'")).toEqual(Bin('*', P('a'), ATZ(P('b'), S('UTC'))));
    expect(shape("-a AT TIME ZONE 'UTC'")).toEqual(ATZ(Un('-', P('a')), S('UTC')));
  });

  it('parses the relative day start of the spec', () => {
    const text = "date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata')*1000";
    const q = `SELECT id FROM t WHERE created_at >= ${text} LIMIT 1`;
    const w = whereOf(q) as A.Binary;
    const zone = S('Asia/Kolkata');
    expect(stripSpans(w.right)).toEqual(
      Bin('*', Fn('date_part', [S('epoch'), ATZ(Fn('date_trunc', [S('day'), ATZ(Fn('now', []), zone)]), zone)]), N('1000')),
    );
    expectSpan(w.right, q, text);
    const datePart = (w.right as A.Binary).left as A.Call;
    const outer = datePart.args[1] as A.AtTimeZone;
    expectSpan(outer, q, "date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata'");
    expectSpan(((outer.operand as A.Call).args[1] as A.AtTimeZone), q, "NOW() AT TIME ZONE 'Asia/Kolkata'");
  });

  it('reads the forbidden date keywords and EXTRACT as nodes for the validator', () => {
    expect(shape('CURRENT_DATE')).toEqual({ kind: 'DateKeyword', name: 'CURRENT_DATE' });
    expect(shape('EXTRACT(YEAR FROM created_at)')).toEqual({ kind: 'Extract', field: 'year', source: P('created_at') });
  });
});

describe('lexical details', () => {
  it('reads keywords in any case', () => {
    const lower = 'select distinct x as y from t where x is not null and x between 1 and 2 order by x desc nulls first limit 5 offset 1';
    const upper = 'SELECT DISTINCT x AS y FROM t WHERE x IS NOT NULL AND x BETWEEN 1 AND 2 ORDER BY x DESC NULLS FIRST LIMIT 5 OFFSET 1';
    const mixed = 'Select Distinct x As y From t Where x Is Not Null And x Between 1 And 2 Order By x Desc Nulls First Limit 5 Offset 1';
    expect(stripSpans(parse(lower))).toEqual(stripSpans(parse(upper)));
    expect(stripSpans(parse(mixed))).toEqual(stripSpans(parse(upper)));
  });

  it('skips line and block comments, spans still pointing into the text', () => {
    const q = '-- leading comment\nSELECT /* the amount */ amount AS a -- trailing\nFROM /* multi\nline */ deal\nLIMIT 1 -- end';
    const s = parse(q);
    expect(stripSpans(s)).toEqual(stripSpans(parse('SELECT amount AS a FROM deal LIMIT 1')));
    expectSpan(s.items[0]!.expr, q, 'amount', 1);
    expectSpan(s.from, q, 'deal');
    expect(s.span).toEqual({ start: q.indexOf('SELECT'), end: q.indexOf('1 -- end') + 1 });
  });

  it('needs no spaces around operators', () => {
    expect(stripSpans(parse("SELECT a+b*c AS x FROM t WHERE a>=1AND b<>'x'LIMIT 1"))).toEqual(
      stripSpans(parse("SELECT a + b * c AS x FROM t WHERE a >= 1 AND b <> 'x' LIMIT 1")),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Printing

describe('printQuery', () => {
  it.each([
    ['select a+b*c as x from t limit 1', 'SELECT a + b * c AS x FROM t LIMIT 1'],
    ['SELECT (a+b)*c AS x FROM t LIMIT 1', 'SELECT (a + b) * c AS x FROM t LIMIT 1'],
    ['SELECT (a-b)-c AS x, a-(b-c) AS y FROM t LIMIT 1', 'SELECT a - b - c AS x, a - (b - c) AS y FROM t LIMIT 1'],
    ['SELECT - (-1) AS x, -(+1) AS y, 1 - -1 AS z FROM t LIMIT 1', 'SELECT -(-1) AS x, -+1 AS y, 1 - -1 AS z FROM t LIMIT 1'],
    ['SELECT id FROM a WHERE NOT EXISTS (SELECT 1 FROM c LIMIT 1) LIMIT 1', 'SELECT id FROM a WHERE NOT EXISTS (SELECT 1 FROM c LIMIT 1) LIMIT 1'],
    ['SELECT id FROM t WHERE (a OR b) AND NOT (c OR d) LIMIT 1', 'SELECT id FROM t WHERE (a OR b) AND NOT (c OR d) LIMIT 1'],
    ['SELECT id FROM t WHERE (a = b) = c LIMIT 1', 'SELECT id FROM t WHERE (a = b) = c LIMIT 1'],
    ['SELECT "Name", "select", "a""b", x AS "Total" FROM "My Object" o LIMIT 1', 'SELECT "Name", "select", "a""b", x AS "Total" FROM "My Object" o LIMIT 1'],
    ["SELECT 'it''s' AS s FROM t LIMIT 1", "SELECT 'it''s' AS s FROM t LIMIT 1"],
    ['SELECT first, zone AS at FROM t AS left LIMIT 1', 'SELECT first, zone AS at FROM t AS left LIMIT 1'],
    ['SELECT x AS order FROM t offset 2 limit 3', 'SELECT x AS order FROM t LIMIT 3 OFFSET 2'],
    ["select count(distinct id) as n from t where tags && array['a'] order by n desc nulls last limit 1",
      "SELECT count(DISTINCT id) AS n FROM t WHERE tags && ARRAY['a'] ORDER BY n DESC NULLS LAST LIMIT 1"],
    ['SELECT (-x)::date AS d, -x::date AS e FROM t LIMIT 1', 'SELECT (-x)::date AS d, -x::date AS e FROM t LIMIT 1'],
    ["SELECT (a AT TIME ZONE 'x') AT TIME ZONE 'y' AS d, a AT TIME ZONE (b AT TIME ZONE 'z') AS e FROM t LIMIT 1",
      "SELECT a AT TIME ZONE 'x' AT TIME ZONE 'y' AS d, a AT TIME ZONE (b AT TIME ZONE 'z') AS e FROM t LIMIT 1"],
  ])('prints %s canonically', (input, expected) => {
    expect(printQuery(parse(input))).toBe(expected);
  });

  it('prints an expression with printExpr', () => {
    // && binds tighter than NOT, so the spec's `NOT (tags && ARRAY['A'])` needs no parentheses.
    expect(printExpr(parse("SELECT NOT (tags && ARRAY['A']) FROM t").items[0]!.expr)).toBe("NOT tags && ARRAY['A']");
    expect(printExpr(parse('SELECT (NOT a) && b FROM t').items[0]!.expr)).toBe('(NOT a) && b');
    expect(printExpr(parse('SELECT -(-1) FROM t').items[0]!.expr)).toBe('-(-1)');
  });
});

const ROUND_TRIP = [
  'SELECT id FROM account LIMIT 100',
  'SELECT DISTINCT id, name AS n, amount total FROM opportunity o WHERE o.amount > 100 LIMIT 10',
  'SELECT *, o.* FROM opportunity o LIMIT 1',
  'SELECT ALL email FROM user LIMIT 5',
  "SELECT stage, COUNT(id) AS n FROM opportunity WHERE amount > 100 GROUP BY stage HAVING COUNT(id) >= 2 ORDER BY n DESC NULLS LAST, stage ASC LIMIT 20 OFFSET 40",
  'SELECT id FROM t OFFSET 5 LIMIT 10',
  'SELECT id FROM t OFFSET 5',
  "SELECT 'it''s' AS a, '' AS b, 'two\nlines' AS c FROM t LIMIT 1",
  'SELECT 42 AS a, 2.5 AS b, .5 AS c, 5. AS d, 1e3 AS e, 1.5E-3 AS f FROM t LIMIT 1',
  'SELECT TRUE AS a, FALSE AS b, NULL AS c FROM t LIMIT 1',
  'SELECT owner.manager.email, "Owner"."Full Name", "a""b" FROM opportunity LIMIT 1',
  'SELECT COUNT(*) AS a, COUNT(DISTINCT owner.id) AS b, NOW() AS c FROM t LIMIT 1',
  "SELECT COUNT(CASE WHEN stage = 'won' THEN 1 END) AS won FROM opportunity LIMIT 1",
  "SELECT CASE stage WHEN 'won' THEN 1 WHEN 'lost' THEN -1 ELSE 0 END AS score FROM t LIMIT 1",
  "SELECT id FROM t WHERE stage IN ('won', 'lost') AND kind NOT IN (1, 2) LIMIT 1",
  'SELECT id FROM account WHERE owner NOT IN (SELECT id FROM user WHERE active = 1 LIMIT 100) LIMIT 1',
  'SELECT id FROM account a WHERE EXISTS (SELECT 1 FROM contact c WHERE c.account = a.id) AND NOT EXISTS (SELECT 1 FROM deal d WHERE d.account = a.id) LIMIT 1',
  'SELECT (SELECT COUNT(id) FROM contact c WHERE c.account = account.id) AS contacts FROM account LIMIT 1',
  'SELECT id FROM t WHERE amount BETWEEN 1 AND 10 + 5 AND age NOT BETWEEN 2 AND 3 LIMIT 1',
  "SELECT id FROM t WHERE a LIKE 'x%' OR b ILIKE '%y' OR c NOT LIKE 'z' OR d NOT ILIKE '%w%' LIMIT 1",
  'SELECT id FROM t WHERE a IS NULL AND b IS NOT NULL AND (c IS NULL) IS NOT NULL LIMIT 1',
  'SELECT a + b * c AS x, (a + b) * c AS y, a - (b - c) AS z, a / b % c AS w FROM t LIMIT 1',
  'SELECT id FROM t WHERE a = 1 AND b <> 2 AND c != 3 AND d < 4 AND e <= 5 AND f > 6 AND g >= 7 LIMIT 1',
  'SELECT id FROM t WHERE a OR b AND c OR NOT d = e AND (f OR g) LIMIT 1',
  "SELECT id FROM t WHERE tags && ARRAY['A', 'B'] AND NOT (labels && ARRAY['x']) AND tags = ARRAY[NULL] LIMIT 1",
  'SELECT to_timestamp(close_date / 1000)::date AS d, x::double precision AS e, y::numeric(10,2) AS f FROM t LIMIT 1',
  "SELECT id FROM t WHERE created_at >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata')*1000 LIMIT 100",
  "SELECT date_trunc('day', to_timestamp(created_at / 1000) AT TIME ZONE 'Asia/Kolkata') AS day, COUNT(id) AS n FROM deal GROUP BY 1 ORDER BY 1 LIMIT 100",
  'select distinct x as y from t where x is not null order by x desc nulls first limit 5',
  '-- leading\nSELECT /* c */ amount AS a FROM deal LIMIT 1;',
  'SELECT - - 1 AS a, -(-1) AS b, - -x AS c, +-1 AS d FROM t LIMIT 1',
  'SELECT first, last, zone, "time" AS at FROM t AS left WHERE nulls IS NULL ORDER BY asc DESC LIMIT 1',
  'SELECT x AS order, y AS "from", z AS count FROM t LIMIT 1',
  'SELECT ROUND(SUM(amount) / 10000000, 2) AS crore FROM opportunity LIMIT 100',
  'SELECT COUNT(DISTINCT id) AS n FROM account WHERE contacts.email ILIKE \'%@acme.com\' AND deals.stage = \'won\' LIMIT 100',
  'SELECT CURRENT_DATE AS d, EXTRACT(year FROM x) AS y, EXTRACT(\'hour\' FROM x) AS z FROM t LIMIT 1',
  'SELECT id FROM t WHERE (a BETWEEN 1 AND 2) = TRUE AND x IN ((SELECT 1 FROM u)) LIMIT 1',
  'SELECT coalesce(a, b, 0) AS c, if(a > 1, 1, 0) AS d FROM t LIMIT 1',
];

describe('round trip', () => {
  it('has a large enough corpus', () => {
    expect(ROUND_TRIP.length).toBeGreaterThanOrEqual(30);
  });

  it.each(ROUND_TRIP)('parse(print(parse(q))) = parse(q): %s', (q) => {
    const tree = parse(q);
    const printed = printQuery(tree);
    expect(stripSpans(parse(printed))).toEqual(stripSpans(tree));
    // Canonical text is a fixed point.
    expect(printQuery(parse(printed))).toBe(printed);
  });
});

// ---------------------------------------------------------------------------------------------
// Random expression trees: printed inside a query, parsed back, equal apart from spans.

const NO_SPAN = { start: 0, end: 0 };
const NON_RESERVED = new Set(allTokens.filter((t) => (t.CATEGORIES ?? []).includes(NonReserved)).map((t) => t.name));
const RESERVED = new Set(KEYWORDS.filter((k) => !NON_RESERVED.has(k)));

const identArb: fc.Arbitrary<A.Ident> = fc
  .tuple(
    fc.oneof(
      fc.stringMatching(/^[a-z_][a-z0-9_$]{0,5}$/),
      fc.constantFrom('first', 'zone', 'time', 'at', 'nulls', 'asc', 'filter', 'over', 'select', 'order', 'user', 'extract'),
      fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 6 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }),
    ),
    fc.boolean(),
  )
  .map(([name, wantQuoted]) => {
    const quoted = wantQuoted || !/^[a-z_][a-z0-9_$]*$/.test(name) || RESERVED.has(name.toUpperCase()) || name === 'extract';
    return { kind: 'Ident', name, quoted, span: NO_SPAN } as const;
  });

const numberArb: fc.Arbitrary<A.NumberLit> = fc
  .oneof(
    fc.nat().map(String),
    fc.tuple(fc.nat(999), fc.nat(999)).map(([a, b]) => `${a}.${b}`),
    fc.nat(99).map((a) => `.${a}`),
    fc.tuple(fc.nat(99), fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.nat(20)).map(([a, e, s, x]) => `${a}${e}${s}${x}`),
  )
  .map((text) => ({ kind: 'Number', text, isInteger: /^\d+$/.test(text), span: NO_SPAN }) as const);

const leafArb: fc.Arbitrary<A.Expr> = fc.oneof(
  numberArb,
  fc
    .oneof(fc.string({ unit: 'binary-ascii', maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 4 }), fc.constantFrom("it's", "''", '-- x', '/* x', '\n'))
    .map((value) => ({ kind: 'String', value, span: NO_SPAN }) as const),
  fc.boolean().map((value) => ({ kind: 'Boolean', value, span: NO_SPAN }) as const),
  fc.constant({ kind: 'Null', span: NO_SPAN } as const),
  fc.array(identArb, { minLength: 1, maxLength: 3 }).map((parts) => ({ kind: 'Path', parts, span: NO_SPAN }) as const),
  fc.constantFrom('CURRENT_DATE', 'CURRENT_TIMESTAMP', 'LOCALTIME').map((name) => ({ kind: 'DateKeyword', name, span: NO_SPAN }) as const),
);

const BINARY_OPS: A.BinaryOp[] = ['+', '-', '*', '/', '%', '=', '<>', '!=', '<', '<=', '>', '>=', '&&'];
const CAST_TYPES = ['date', 'text', 'time', 'double precision', 'numeric(10,2)', 'timestamp with time zone', 'int[]'];

const { expr: exprArb } = fc.letrec<{ expr: A.Expr; select: A.Select }>((tie) => {
  const e = tie('expr');
  const list = (min: number) => fc.array(e, { minLength: min, maxLength: 3 });
  return {
    expr: fc.oneof(
      { depthSize: 'small', maxDepth: 5, withCrossShrink: true },
      leafArb,
      fc.tuple(fc.constantFrom('AND' as const, 'OR' as const), list(2)).map(([op, operands]) => ({ kind: 'Logical', op, operands, span: NO_SPAN }) as const),
      fc.tuple(fc.constantFrom('NOT' as const, '-' as const, '+' as const), e).map(([op, operand]) => ({ kind: 'Unary', op, operand, span: NO_SPAN }) as const),
      fc.tuple(fc.constantFrom(...BINARY_OPS), e, e).map(([op, left, right]) => ({ kind: 'Binary', op, left, right, opSpan: NO_SPAN, span: NO_SPAN }) as const),
      fc.tuple(e, fc.boolean()).map(([operand, negated]) => ({ kind: 'IsNull', operand, negated, span: NO_SPAN }) as const),
      fc.tuple(e, e, e, fc.boolean()).map(([operand, low, high, negated]) => ({ kind: 'Between', operand, low, high, negated, span: NO_SPAN }) as const),
      fc.tuple(e, e, fc.boolean(), fc.boolean()).map(([operand, pattern, caseInsensitive, negated]) => ({ kind: 'Like', operand, pattern, caseInsensitive, negated, span: NO_SPAN }) as const),
      fc.tuple(e, list(1), fc.boolean()).map(([operand, items, negated]) => ({ kind: 'InList', operand, items, negated, span: NO_SPAN }) as const),
      fc.tuple(e, tie('select'), fc.boolean()).map(([operand, query, negated]) => ({ kind: 'InSubquery', operand, query, negated, span: NO_SPAN }) as const),
      tie('select').map((query) => ({ kind: 'Exists', query, span: NO_SPAN }) as const),
      tie('select').map((query) => ({ kind: 'Subquery', query, span: NO_SPAN }) as const),
      fc
        .tuple(fc.option(e), fc.array(fc.tuple(e, e), { minLength: 1, maxLength: 2 }), fc.option(e))
        .map(([operand, whens, otherwise]) => ({
          kind: 'Case',
          operand,
          whens: whens.map(([when, then]) => ({ kind: 'When', when, then, span: NO_SPAN }) as const),
          else: otherwise,
          span: NO_SPAN,
        }) as const),
      list(0).map((items) => ({ kind: 'Array', items, span: NO_SPAN }) as const),
      fc.tuple(e, fc.constantFrom(...CAST_TYPES)).map(([operand, type]) => ({ kind: 'Cast', operand, type, typeSpan: NO_SPAN, span: NO_SPAN }) as const),
      fc.tuple(e, e).map(([operand, zone]) => ({ kind: 'AtTimeZone', operand, zone, span: NO_SPAN }) as const),
      fc.tuple(fc.constantFrom('year', 'epoch', 'day', 'hour minute'), e).map(([field, source]) => ({ kind: 'Extract', field, source, span: NO_SPAN }) as const),
      fc
        .tuple(identArb, fc.oneof(list(0).map((args) => ({ args, distinct: false })), list(1).map((args) => ({ args, distinct: true })), fc.constant({ args: [{ kind: 'Star', qualifier: null, span: NO_SPAN } as A.Expr], distinct: false })))
        .map(([name, { args, distinct }]) => ({ kind: 'Call', name, args, distinct, filter: null, over: null, span: NO_SPAN }) as const),
    ),
    select: fc
      .tuple(fc.boolean(), identArb, fc.option(identArb), fc.option(e, { depthSize: 'small' }), fc.option(numberArb))
      .map(([distinct, object, alias, where, limit]): A.Select => ({
        kind: 'Select',
        distinct,
        items: [{ kind: 'SelectItem', expr: { kind: 'Number', text: '1', isInteger: true, span: NO_SPAN }, alias: null, span: NO_SPAN }],
        from: { kind: 'FromItem', object, alias, span: NO_SPAN },
        where,
        groupBy: [],
        having: null,
        orderBy: [],
        limit,
        offset: null,
        span: NO_SPAN,
      })),
  };
});

describe('round trip of random expressions', () => {
  it('parse(print(e)) = e apart from spans', () => {
    fc.assert(
      fc.property(exprArb, (e) => {
        const text = `SELECT ${printExpr(e)} AS x FROM t LIMIT 1`;
        const back = parse(text).items[0]!.expr;
        expect(stripSpans(back)).toEqual(stripSpans(e));
      }),
      { numRuns: Number(process.env.OQL_PROPERTY_RUNS ?? 2000) },
    );
  });
});
