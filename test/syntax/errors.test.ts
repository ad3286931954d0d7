import { describe, expect, it } from 'vitest';
import type { DiagnosticCode } from '../../src/diagnostics/codes.js';
import { loadFixtureCatalog } from '../../fixtures/index.js';
import { marked, parseError } from './helpers.js';

/** Hints name things of the catalog in hand: the example CRM, queried FROM account. */
const HINTS = { catalog: loadFixtureCatalog('crm'), slug: 'account' };

/**
 * Each case is a query with the expected error span between « and », the expected code, and a
 * piece of the expected hint (or the whole hint when it is worth pinning).
 */
interface Case {
  query: string;
  code: DiagnosticCode;
  hint?: string | RegExp;
  message?: string | RegExp;
}

function check({ query, code, hint, message }: Case): void {
  const { text, span } = marked(query);
  const e = parseError(text, HINTS);
  expect(e.code).toBe(code);
  expect({ start: e.span!.start, end: e.span!.end }).toEqual(span);
  if (hint !== undefined) expect(e.hint).toMatch(hint);
  if (message !== undefined) expect(e.message).toMatch(message);
  expect(e.diagnostics).toHaveLength(1);
}

const cases: Record<string, Case[]> = {
  JOIN: [
    { query: 'SELECT a.id FROM account a «JOIN contact» c ON c.account = a.id LIMIT 1', code: 'UNSUPPORTED_JOIN', hint: /dot notation/, message: 'JOIN contact is not supported: the dialect has no JOIN' },
    { query: 'SELECT id FROM account a «LEFT JOIN contact» c ON c.account = a.id LIMIT 1', code: 'UNSUPPORTED_JOIN', hint: /EXISTS \(SELECT 1 FROM contact/ },
    { query: 'SELECT id FROM account «LEFT OUTER JOIN contact» ON TRUE LIMIT 1', code: 'UNSUPPORTED_JOIN' },
    { query: 'SELECT id FROM account «CROSS JOIN contact» LIMIT 1', code: 'UNSUPPORTED_JOIN' },
    { query: 'SELECT id FROM account«, contact» LIMIT 1', code: 'UNSUPPORTED_JOIN', message: /FROM takes exactly one object/ },
    { query: 'SELECT id FROM account a«, contact» c WHERE c.account = a.id LIMIT 1', code: 'UNSUPPORTED_JOIN' },
  ],
  'set operations': [
    { query: 'SELECT id FROM a LIMIT 1 «UNION ALL» SELECT id FROM b LIMIT 1', code: 'UNSUPPORTED_SET_OPERATION', message: 'UNION ALL is not supported', hint: /inclusion-exclusion/ },
    { query: 'SELECT id FROM a «union» SELECT id FROM b', code: 'UNSUPPORTED_SET_OPERATION', message: 'UNION is not supported' },
    { query: 'SELECT id FROM a «INTERSECT» SELECT id FROM b', code: 'UNSUPPORTED_SET_OPERATION' },
    { query: 'SELECT id FROM a WHERE x = 1 «EXCEPT DISTINCT» SELECT id FROM b', code: 'UNSUPPORTED_SET_OPERATION' },
  ],
  WITH: [
    { query: '«WITH won» AS (SELECT id FROM deal) SELECT id FROM won LIMIT 1', code: 'UNSUPPORTED_WITH', hint: /EXISTS \(SELECT \.\.\.\) or IN \(SELECT \.\.\.\)/ },
  ],
  'other statements': [
    { query: '«INSERT» INTO account (name) VALUES (\'x\')', code: 'NOT_SELECT', message: 'only SELECT queries are accepted, not INSERT' },
    { query: "«update» account SET name = 'x'", code: 'NOT_SELECT', message: /not UPDATE/ },
    { query: '«DELETE» FROM account', code: 'NOT_SELECT', hint: /read-only/ },
    { query: '«DROP» TABLE account', code: 'NOT_SELECT' },
  ],
  'multiple statements': [
    { query: 'SELECT id FROM a LIMIT 1; «SELECT id FROM b LIMIT 1»', code: 'MULTIPLE_STATEMENTS', hint: 'send each query on its own' },
    { query: 'SELECT id FROM a LIMIT 1; «DROP TABLE a»', code: 'MULTIPLE_STATEMENTS' },
    { query: 'SELECT id FROM a LIMIT 1;«;»', code: 'MULTIPLE_STATEMENTS' },
  ],
  FILTER: [
    {
      query: "SELECT COUNT(*) «FILTER (WHERE stage = 'won')» AS won FROM deal LIMIT 1",
      code: 'UNSUPPORTED_FILTER',
      hint: "write COUNT(CASE WHEN stage = 'won' THEN 1 END)",
    },
    {
      query: 'SELECT SUM(amount) «FILTER (WHERE amount > 100)» AS big FROM deal LIMIT 1',
      code: 'UNSUPPORTED_FILTER',
      hint: 'write SUM(CASE WHEN amount > 100 THEN amount END)',
    },
    {
      query: "SELECT COUNT(DISTINCT owner) «FILTER (WHERE stage IN ('won', 'lost'))» AS n FROM deal LIMIT 1",
      code: 'UNSUPPORTED_FILTER',
      hint: "write COUNT(DISTINCT CASE WHEN stage IN ('won', 'lost') THEN owner END)",
    },
  ],
  OVER: [
    { query: 'SELECT row_number() «OVER (ORDER BY amount)» AS rn FROM deal LIMIT 1', code: 'UNSUPPORTED_WINDOW', hint: /GROUP BY/ },
    { query: 'SELECT SUM(amount) «OVER (PARTITION BY (owner) ORDER BY id)» AS running FROM deal LIMIT 1', code: 'UNSUPPORTED_WINDOW' },
    { query: 'SELECT SUM(amount) «OVER w» AS running FROM deal LIMIT 1', code: 'UNSUPPORTED_WINDOW' },
  ],
  subscripts: [
    { query: 'SELECT tags«[1]» AS first_tag FROM deal LIMIT 1', code: 'UNSUPPORTED_SUBSCRIPT', hint: /ARRAY\[NULL\]/ },
    { query: 'SELECT id FROM deal WHERE tags«[1:2]» = ARRAY[\'a\'] LIMIT 1', code: 'UNSUPPORTED_SUBSCRIPT' },
  ],
  operators: [
    { query: 'SELECT first_name «||» last_name AS n FROM contact LIMIT 1', code: 'UNSUPPORTED_OPERATOR', hint: 'join strings with concat(a, b)' },
    { query: "SELECT id FROM account WHERE name «~» 'acme' LIMIT 1", code: 'UNSUPPORTED_OPERATOR', hint: /ILIKE/ },
    { query: "SELECT id FROM account WHERE name «!~» 'acme' LIMIT 1", code: 'UNSUPPORTED_OPERATOR', hint: /ILIKE/ },
    { query: "SELECT id FROM deal WHERE tags «@>» ARRAY['a'] LIMIT 1", code: 'UNSUPPORTED_OPERATOR', hint: /&&/ },
    { query: 'SELECT amount «^» 2 AS sq FROM deal LIMIT 1', code: 'UNSUPPORTED_OPERATOR', hint: 'multiply instead: x * x' },
  ],
  parameters: [
    { query: 'SELECT id FROM deal WHERE id = «$1» LIMIT 1', code: 'SYNTAX_ERROR', message: /bind parameters such as '\$1'/, hint: /write the value itself/ },
  ],
  'unterminated literals': [
    { query: "SELECT id FROM account WHERE name = «'acme LIMIT 1»", code: 'UNTERMINATED_STRING', hint: /close it with '/ },
    { query: "SELECT id FROM account WHERE name = «'it''s»", code: 'UNTERMINATED_STRING' },
    { query: 'SELECT «"Full Name FROM contact LIMIT 1»', code: 'UNTERMINATED_IDENTIFIER', hint: /close it with "/ },
    { query: 'SELECT id FROM account «/*» LIMIT 1', code: 'UNTERMINATED_COMMENT', hint: 'close the comment with */' },
  ],
  'invalid characters': [
    { query: 'SELECT «\u0000» FROM account', code: 'INVALID_CHARACTER', message: 'unexpected character U+0000' },
    { query: 'SELECT id FROM account WHERE x = «\u0001»', code: 'INVALID_CHARACTER', message: 'unexpected character U+0001' },
    { query: 'SELECT «😀» AS smile FROM account', code: 'INVALID_CHARACTER', message: "unexpected character '😀'" },
    { query: 'SELECT a «\\» b FROM account', code: 'INVALID_CHARACTER' },
  ],
  'empty query': [
    { query: '«»', code: 'EMPTY_QUERY', hint: /SELECT id, name FROM account LIMIT 100/ },
  ],
  'misspelled keywords': [
    { query: '«SELEC» id FROM account LIMIT 1', code: 'SYNTAX_ERROR', hint: 'did you mean SELECT?' },
    { query: 'SELECT id «FORM» account LIMIT 1', code: 'SYNTAX_ERROR', hint: 'did you mean FROM?' },
    { query: 'SELECT id FROM account «WHER» x = 1 LIMIT 1', code: 'SYNTAX_ERROR', hint: 'did you mean WHERE?' },
    { query: 'SELECT id FROM account «LIMT» 10', code: 'SYNTAX_ERROR', hint: 'did you mean LIMIT?' },
    { query: 'SELECT id FROM account «ORDR» BY id LIMIT 1', code: 'SYNTAX_ERROR', hint: 'did you mean ORDER?' },
    { query: 'SELECT stage, COUNT(id) AS n FROM deal «GRUOP» BY stage LIMIT 1', code: 'SYNTAX_ERROR', hint: 'did you mean GROUP?' },
  ],
  'stray punctuation': [
    { query: 'SELECT id, name«,» FROM account LIMIT 1', code: 'SYNTAX_ERROR', hint: "remove the ',' before FROM" },
    { query: 'SELECT id FROM account ORDER BY id«,» LIMIT 1', code: 'SYNTAX_ERROR', hint: "remove the ',' before LIMIT" },
  ],
  'unexpected end': [
    { query: 'SELECT x FROM t WHERE«»', code: 'UNEXPECTED_END', message: "the query ends after 'WHERE'; expected an expression" },
    { query: 'SELECT x FROM t WHERE x IN (1, 2«»', code: 'UNEXPECTED_END', hint: "continue the query with ')'" },
    { query: 'SELECT x FROM t WHERE a = 1 AND«»  -- more later', code: 'UNEXPECTED_END' },
  ],
};

describe.each(Object.entries(cases))('%s', (_name, list) => {
  it.each(list.map((c) => [c.query, c] as const))('%s', (_q, c) => check(c));
});

describe('empty input', () => {
  it('spans the whole text when there are only blanks and comments', () => {
    const text = '   -- nothing here\n/* still nothing */\n';
    const e = parseError(text);
    expect(e.code).toBe('EMPTY_QUERY');
    expect([e.span!.start, e.span!.end]).toEqual([0, text.length]);
  });
});

describe('positions in a multi-line query', () => {
  it('gives the line and column of both ends', () => {
    const { text, span } = marked(['SELECT a.id,', '       a.name', 'FROM account a', '  «LEFT JOIN contact» c ON c.account = a.id', 'LIMIT 10'].join('\n'));
    const e = parseError(text);
    expect(e.code).toBe('UNSUPPORTED_JOIN');
    expect(e.span).toEqual({ ...span, line: 4, column: 3, endLine: 4, endColumn: 20 });
  });

  it('counts CRLF line breaks once', () => {
    const { text, span } = marked('SELECT id\r\nFROM account\r\nWHERE name = «$2»\r\nLIMIT 1');
    const e = parseError(text);
    expect(e.span).toEqual({ ...span, line: 3, column: 14, endLine: 3, endColumn: 16 });
  });

  it('ends an unterminated string at the end of the text, lines later', () => {
    const { text, span } = marked("SELECT id\nFROM account\nWHERE name = «'acme\nLIMIT 1»");
    const e = parseError(text);
    expect(e.code).toBe('UNTERMINATED_STRING');
    expect(e.span).toEqual({ ...span, line: 3, column: 14, endLine: 4, endColumn: 8 });
  });
});
