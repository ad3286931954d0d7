import { describe, expect, it } from 'vitest';
import { headerSlug, locateEntries } from '../../src/cli/report-files.js';
import { formatSql } from '../../src/cli/sql-format.js';
import { formatTable } from '../../src/cli/table.js';
import { sqlLiteral } from '../../src/cli/render.js';

describe('formatSql', () => {
  it('breaks before clauses outside parentheses and indents subqueries', () => {
    const sql = 'SELECT count(*) AS "count" FROM (SELECT "t0"."id" AS "c0" FROM "public"."lead" AS "t0" WHERE "t0"."org_id" = $1 AND EXISTS (SELECT "t1"."id" FROM "public"."user" AS "t1" WHERE "t1"."id" = "t0"."owner") ORDER BY "c0" LIMIT $2::int8) AS "q"';
    expect(formatSql(sql)).toBe([
      'SELECT count(*) AS "count"',
      'FROM (',
      '  SELECT "t0"."id" AS "c0"',
      '  FROM "public"."lead" AS "t0"',
      '  WHERE "t0"."org_id" = $1 AND EXISTS (',
      '    SELECT "t1"."id"',
      '    FROM "public"."user" AS "t1"',
      '    WHERE "t1"."id" = "t0"."owner"',
      '  )',
      '  ORDER BY "c0"',
      '  LIMIT $2::int8',
      ') AS "q"',
    ].join('\n'));
  });

  it('changes only whitespace, and never inside quotes or expression parentheses', () => {
    const sql = 'SELECT "from x" AS "where", count(DISTINCT "t0"."id") AS "c1", \'a FROM b\' AS "c2" FROM "public"."t" AS "t0" GROUP BY "t0"."x" HAVING count(*) > $1 OFFSET $2';
    const out = formatSql(sql);
    expect(out.replace(/\s+/g, ' ')).toBe(sql);
    expect(out.split('\n')).toEqual([
      'SELECT "from x" AS "where", count(DISTINCT "t0"."id") AS "c1", \'a FROM b\' AS "c2"',
      'FROM "public"."t" AS "t0"',
      'GROUP BY "t0"."x"',
      'HAVING count(*) > $1',
      'OFFSET $2',
    ]);
  });
});

describe('formatTable', () => {
  it('aligns columns, right-aligns numbers, spells NULL, escapes line breaks', () => {
    const out = formatTable(['name', 'n', 'tags'], [
      { name: 'Zürich', n: 5, tags: ['a', 'b'] },
      { name: 'two\nlines', n: null, tags: null },
      { name: 'x', n: 1234.5, tags: [] },
    ]);
    expect(out).toBe([
      'name       |      n | tags',
      '-----------+--------+----------',
      'Zürich     |      5 | ["a","b"]',
      'two\\nlines |   NULL | NULL',
      'x          | 1234.5 | []',
    ].join('\n'));
  });

  it('shows only the header for no rows', () => {
    expect(formatTable(['a', 'bb'], [])).toBe('a | bb\n--+---');
  });
});

describe('sqlLiteral', () => {
  it('renders parameters as SQL literals', () => {
    expect([sqlLiteral("O'Brien"), sqlLiteral(['web', 'x']), sqlLiteral(3), sqlLiteral(true), sqlLiteral(null)])
      .toEqual(["'O''Brien'", "ARRAY['web', 'x']", '3', 'true', 'NULL']);
  });
});

describe('headerSlug', () => {
  it('reads the slug from the comments before the query only', () => {
    expect(headerSlug('-- slug: opportunity\nSELECT 1')).toBe('opportunity');
    expect(headerSlug('\n-- Monthly pipeline\n--   Slug:lead\nSELECT 1')).toBe('lead');
    expect(headerSlug('/*\n * name: x\n * slug: account\n */\nSELECT 1')).toBe('account');
    expect(headerSlug('SELECT 1 -- slug: account')).toBeUndefined();
    expect(headerSlug('-- no slug here\nSELECT 1')).toBeUndefined();
  });
});

describe('locateEntries', () => {
  it('maps each decoded UTF-16 unit of "query" to its offset in the file', () => {
    const text = '[ {"name": "a\\"b", "query": "x\\ty\\u00e9\\uD83D\\uDE00z😀!", "n": [1, {"query": 2}]}, 5, {"query": "q"} ]';
    const entries = locateEntries(text)!;
    expect(entries).toHaveLength(3);
    const value = JSON.parse(text)[0].query as string;
    const located = entries[0]!.query!;
    expect(located.value).toBe(value);
    expect(located.offsets).toHaveLength(value.length + 1);
    const raw = text.indexOf('"x\\t') + 1;
    // x, \t (2 raw), y, \u00e9 (6 raw), two \u escapes of a surrogate pair, z, 😀 (2 units, 2 raw), !
    expect(located.offsets).toEqual([0, 1, 3, 4, 10, 16, 22, 23, 24, 25, 26].map((d) => raw + d));
    expect(text[located.offsets.at(-1)!]).toBe('"');
    expect(entries[1]).toEqual({ start: text.indexOf('5') });
    expect(entries[2]!.query!.value).toBe('q');
  });

  it('takes the last of duplicate keys, as JSON.parse does', () => {
    const text = '[{"query": "first", "query": "second"}]';
    expect(locateEntries(text)![0]!.query!.value).toBe('second');
  });

  it('gives null for text that is not an array', () => {
    expect(locateEntries('{"query": "x"}')).toBeNull();
  });
});
