import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import { parse } from '../../src/syntax/parse.js';
import { printQuery } from '../../src/syntax/print.js';
import { parseError } from './helpers.js';

/**
 * Hostile input: the parser must answer every text with a tree or an OqlError whose spans lie
 * inside the text. A RangeError, a TypeError from a classifier, or a hang is a bug.
 */
function parseOrOqlError(text: string): void {
  let tree;
  try {
    tree = parse(text);
  } catch (e) {
    if (!(e instanceof OqlError)) throw new Error(`non-OqlError for ${JSON.stringify(text.slice(0, 200))}: ${String(e)}`);
    expect(e.diagnostics.length).toBeGreaterThan(0);
    for (const d of e.diagnostics) {
      const { start, end } = d.span;
      if (!(Number.isInteger(start) && Number.isInteger(end) && start >= 0 && start <= end && end <= text.length)) {
        throw new Error(`span [${start}, ${end}) outside [0, ${text.length}] for ${JSON.stringify(text.slice(0, 200))}`);
      }
    }
    return;
  }
  // Whatever parses must also print and parse back.
  parse(printQuery(tree));
}

describe('limits', () => {
  it('rejects 10,000 nested parentheses at the first one too deep, without a RangeError', () => {
    const text = `SELECT ${'('.repeat(10_000)}1${')'.repeat(10_000)} AS x FROM t LIMIT 1`;
    const e = parseError(text);
    expect(e.code).toBe('NESTING_TOO_DEEP');
    const at = 'SELECT '.length + 64; // the 65th parenthesis
    expect([e.span!.start, e.span!.end]).toEqual([at, at + 1]);
  });

  it('rejects 10,000 NOTs', () => {
    const where = 'SELECT id FROM t WHERE '.length;
    const text = `SELECT id FROM t WHERE ${'NOT '.repeat(10_000)}x LIMIT 1`;
    const e = parseError(text);
    expect(e.code).toBe('NESTING_TOO_DEEP');
    expect(e.span!.start).toBeGreaterThanOrEqual(where);
    expect(e.span!.end).toBeLessThanOrEqual(text.indexOf(' LIMIT'));
  });

  it('rejects 10,000 unary minus signs', () => {
    expect(parseError(`SELECT ${'- '.repeat(10_000)}1 AS x FROM t LIMIT 1`).code).toBe('NESTING_TOO_DEEP');
  });

  it('survives prefix operators left open inside brackets', () => {
    // Each level is shallow on its own; a parser recursing per prefix operator would overflow.
    const stairs = (step: (d: number) => string) => Array.from({ length: 64 }, (_, d) => step(d)).join('');
    const cases = [
      `SELECT id FROM t WHERE ${stairs((d) => `(${'NOT '.repeat(63 - d)}`)}x${')'.repeat(64)} LIMIT 1`,
      `SELECT ${stairs((d) => `(${'- '.repeat(63 - d)}`)}x${')'.repeat(64)} AS x FROM t LIMIT 1`,
      `SELECT id FROM t WHERE ${stairs((d) => `(${'NOT '.repeat(63 - d)}x BETWEEN a AND `)}x${')'.repeat(64)} LIMIT 1`,
      `SELECT id FROM t WHERE ${stairs((d) => `(${'NOT '.repeat(63 - d)}x NOT BETWEEN a AND `)}x${')'.repeat(64)} LIMIT 1`,
      `SELECT ${stairs((d) => `CASE WHEN ${'NOT '.repeat(63 - d)}`)}x${' THEN 1 END'.repeat(64)} AS x FROM t LIMIT 1`,
      `SELECT id FROM t WHERE ${stairs(() => `${'NOT '.repeat(30)}a = - - - - (`)}x${')'.repeat(64)} LIMIT 1`,
      `SELECT ${stairs(() => `f(${'- '.repeat(30)}x, `)}x${')'.repeat(64)} AS x FROM t LIMIT 1`,
    ];
    for (const text of cases) {
      try {
        parse(text);
      } catch (e) {
        expect(e).toBeInstanceOf(OqlError);
        expect((e as OqlError).code).toBe('NESTING_TOO_DEEP');
      }
    }
  });

  it('still accepts long flat chains of prefix operators', () => {
    expect(() => parse(`SELECT id FROM t WHERE ${Array(500).fill('NOT (a = 1)').join(' AND ')} LIMIT 1`)).not.toThrow();
    expect(() => parse(`SELECT id FROM t WHERE ${Array(300).fill('NOT a BETWEEN -1 AND -2').join(' OR ')} LIMIT 1`)).not.toThrow();
    expect(() => parse(`SELECT id FROM t WHERE ${Array(300).fill('a IS NOT NULL').join(' AND ')} LIMIT 1`)).not.toThrow();
    expect(() => parse(`SELECT ${Array(300).fill('-1').join(' * ')} AS x FROM t LIMIT 1`)).not.toThrow();
    expect(() => parse(`SELECT id FROM t WHERE ${'('.repeat(64)}x${')'.repeat(64)} LIMIT 1`)).not.toThrow();
  });

  it('rejects a 1 MB query before lexing it', () => {
    const text = `SELECT ${'a, '.repeat(350_000)}b FROM t LIMIT 1`;
    expect(text.length).toBeGreaterThan(1_000_000);
    const e = parseError(text);
    expect(e.code).toBe('QUERY_TOO_LONG');
    expect([e.span!.start, e.span!.end]).toEqual([100_000, text.length]);
  });

  it('rejects a 3,000-term 1+1+... chain as too deep a tree', () => {
    const chain = Array(3000).fill('1').join('+');
    const text = `SELECT ${chain} AS x FROM t LIMIT 1`;
    const e = parseError(text);
    expect(e.code).toBe('NESTING_TOO_DEEP');
    // The span is the deepest node: an operand at the bottom of the left-leaning chain.
    expect(e.span!.start).toBeGreaterThanOrEqual('SELECT '.length);
    expect(e.span!.end).toBeLessThanOrEqual('SELECT 1+1'.length);
  });
});

const VALID = [
  'SELECT id, name FROM account LIMIT 100',
  "SELECT stage, COUNT(id) AS n, ROUND(SUM(amount) / 100000, 2) AS lakh FROM opportunity WHERE stage <> 'lost' GROUP BY stage HAVING COUNT(id) > 1 ORDER BY n DESC NULLS LAST LIMIT 10 OFFSET 5",
  "SELECT COUNT(DISTINCT id) AS n FROM account WHERE contacts.email ILIKE '%@acme.com' AND owner.manager.name IS NOT NULL LIMIT 100",
  "SELECT id FROM account a WHERE EXISTS (SELECT 1 FROM contact c WHERE c.account = a.id AND c.tags && ARRAY['vip']) LIMIT 100",
  "SELECT id FROM deal WHERE created_at >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata')*1000 LIMIT 100",
  "SELECT COUNT(CASE WHEN stage = 'won' THEN 1 END) AS won, COUNT(CASE stage WHEN 'lost' THEN 1 ELSE NULL END) AS lost FROM deal LIMIT 1",
  "SELECT to_timestamp(close_date / 1000)::date AS d FROM deal WHERE amount BETWEEN 10 AND 1e6 AND NOT (labels && ARRAY['x', 'y']) LIMIT 100",
  "SELECT \"Full Name\", 'it''s' AS s, -1.5E-3 AS n FROM \"My Object\" o WHERE o.x NOT IN (1, 2, 3) OFFSET 2 LIMIT 5;",
  '-- report\nSELECT /* all */ * FROM user u WHERE u.id IN (SELECT owner FROM deal WHERE amount > 100 LIMIT 10) LIMIT 100',
  "SELECT id FROM t WHERE (a OR b) AND NOT c = d AND e IS NULL AND f LIKE 'x%' AND g NOT ILIKE '%y' AND h = ARRAY[NULL] LIMIT 1",
];

describe('hostile input yields only OqlError', () => {
  it('the valid queries parse', () => {
    for (const q of VALID) expect(() => parse(q)).not.toThrow();
  });

  it('every prefix of 10 valid queries', () => {
    let count = 0;
    for (const q of VALID) {
      for (let n = 0; n <= q.length; n++) {
        parseOrOqlError(q.slice(0, n));
        count++;
      }
    }
    expect(count).toBeGreaterThan(1000);
  });

  it('2,000 random byte strings', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        parseOrOqlError(String.fromCharCode(...bytes));
      }),
      { numRuns: 2000, seed: 20_260_101 },
    );
  });

  it('2,000 random byte strings decoded as UTF-8', () => {
    const decoder = new TextDecoder();
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        parseOrOqlError(decoder.decode(bytes));
      }),
      { numRuns: 2000, seed: 20_260_102 },
    );
  });

  // Random bytes rarely get past the lexer; token soup reaches the parser and the classifier.
  const WORDS = [
    'SELECT', 'DISTINCT', 'FROM', 'WHERE', 'GROUP', 'BY', 'HAVING', 'ORDER', 'LIMIT', 'OFFSET', 'AND', 'OR', 'NOT', 'AS',
    'CASE', 'WHEN', 'THEN', 'ELSE', 'END', 'IN', 'IS', 'NULL', 'TRUE', 'LIKE', 'ILIKE', 'BETWEEN', 'EXISTS', 'ARRAY',
    'JOIN', 'LEFT', 'ON', 'UNION', 'ALL', 'WITH', 'FILTER', 'OVER', 'AT', 'TIME', 'ZONE', 'EXTRACT', 'CURRENT_DATE',
    'NULLS', 'FIRST', 'DESC', 'INSERT', 'DROP', 'x', 'a.b', 'count', 'user', '"Q"', "'s'", "'it''s'", '1', '2.5', '1e3',
    '$1', '(', ')', '[', ']', ',', '.', ';', '::', ':', '*', '+', '-', '/', '%', '=', '<>', '!=', '<', '<=', '>=', '&&',
    '||', '~', '@>', '^', '--c\n', '/*c*/', "'open", '"open', '/*open', '\u0000', '😀', '\n',
  ];

  it('3,000 random token sequences', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...WORDS), { maxLength: 40 }), fc.constantFrom(' ', ''), (words, sep) => {
        parseOrOqlError(words.join(sep));
      }),
      { numRuns: 3000, seed: 20_260_103 },
    );
  });

  it('3,000 mutations of valid queries', () => {
    fc.assert(
      fc.property(fc.constantFrom(...VALID), fc.nat(), fc.nat(), fc.constantFrom(...WORDS), (q, i, j, w) => {
        const a = i % (q.length + 1);
        const b = Math.min(q.length, a + (j % 12));
        parseOrOqlError(q.slice(0, a) + w + q.slice(b));
        parseOrOqlError(q.slice(0, a) + q.slice(b));
      }),
      { numRuns: 3000, seed: 20_260_104 },
    );
  });

  const TAIL = [';', ',', '(', ')', '[', ']', 'FILTER', 'OVER', 'AND', 'UNION', 'JOIN', 'x', '-', 'NOT', '::', "'s'", 'LIMIT', '1'];

  it('3,000 valid queries followed by random tokens', () => {
    fc.assert(
      fc.property(fc.constantFrom(...VALID), fc.array(fc.constantFrom(...TAIL), { minLength: 1, maxLength: 4 }), fc.constantFrom(' ', ''), (q, words, sep) => {
        parseOrOqlError(q + sep + words.join(sep));
      }),
      { numRuns: 3000, seed: 20_260_105 },
    );
  });

  it('leaves the shared parser usable', () => {
    expect(parse(VALID[1]!).items).toHaveLength(3);
  });
});
