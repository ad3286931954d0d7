import fc from 'fast-check';
import type { Catalog } from '../../src/catalog/types.js';
import type { FixtureName } from '../../fixtures/index.js';
import type { GenSchema } from '../support/querygen.js';

/** Inputs for fuzzing: vocabularies, a loose grammar of statements, token mutations. */

export interface Target {
  readonly name: FixtureName;
  readonly catalog: Catalog;
  readonly schema: GenSchema;
}

export const KEYWORDS = [
  'SELECT', 'FROM', 'WHERE', 'GROUP', 'BY', 'HAVING', 'ORDER', 'LIMIT', 'OFFSET', 'AND', 'OR', 'NOT', 'AS', 'CASE', 'WHEN', 'THEN', 'ELSE',
  'END', 'IN', 'IS', 'NULL', 'TRUE', 'FALSE', 'LIKE', 'ILIKE', 'BETWEEN', 'EXISTS', 'DISTINCT', 'ALL', 'ARRAY', 'JOIN', 'LEFT', 'ON', 'UNION',
  'WITH', 'ASC', 'DESC', 'NULLS', 'FIRST', 'LAST', 'AT', 'TIME', 'ZONE', 'FILTER', 'OVER', 'EXTRACT', 'CURRENT_DATE', 'INTO', 'INSERT',
  'UPDATE', 'DELETE', 'DROP', 'TABLE', 'FOR', 'RETURNING', 'COPY', 'LATERAL', 'VALUES', 'INTERSECT', 'EXCEPT', 'CAST',
];
export const PUNCT = ['(', ')', '[', ']', ',', '.', ';', '::', ':', '*', '+', '-', '/', '%', '=', '<>', '!=', '<', '<=', '>', '>=', '&&', '||', '@>', '<@', '~', '#', '$1', '$0', '?', '`', '\\', '{', '}'];
export const FUNCTIONS = [
  'count', 'sum', 'avg', 'min', 'max', 'lower', 'upper', 'concat', 'trim', 'abs', 'round', 'coalesce', 'date_trunc', 'to_timestamp', 'date_part', 'if', 'now',
  'pg_sleep', 'version', 'current_setting', 'set_config', 'array_length', 'cardinality', 'unnest', 'lo_import', 'dblink', 'pg_read_file', 'nextval', 'generate_series', 'extract', 'string_agg', 'greatest', 'query_to_xml',
];
export const WEIRD = [
  "'", '"', '--', '/*', '*/', "''", '\u0000', '\u202e', '\u200f', '\u05d0\u05d1', '\u0301', 'e\u0301', '\ud83d\ude00', '\ud83d', '\ude00', '\uffff', '\ufeff', '\r\n', '\t', '\u2028', '𝕊𝔼𝕃𝔼ℂ𝕋',
  'ＳＥＬＥＣＴ', 'ſelect', 'İ', "E'\\x'", "$$x$$", 'U&"\\0061"', '9'.repeat(400), '1e999', '.5', '0x1F', '1_000',
];
const ZONES = ["'Asia/Kolkata'", "'UTC'", "'America/New_York'", "'Mars/Olympus'"];

export function identArb(t: Target): fc.Arbitrary<string> {
  const names = new Set<string>();
  for (const o of t.catalog.objects.values()) {
    names.add(o.slug);
    for (const c of o.columns.keys()) names.add(c);
  }
  return fc.oneof(
    { arbitrary: fc.constantFrom(...names), weight: 8 },
    { arbitrary: fc.constantFrom('org_id', 'is_deleted', 'pg_class', 'pg_user', 'information_schema', 'x', 'a', 't0', 'c0', 'q', 'k1', 'total', 'select'), weight: 3 },
    { arbitrary: fc.stringMatching(/^[a-z_][a-z0-9_$]{0,12}$/), weight: 1 },
    { arbitrary: fc.string({ minLength: 1, maxLength: 8 }).map((s) => `"${s.replace(/"/g, '""')}"`), weight: 1 },
  );
}

export function literalArb(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.integer({ min: -1000, max: 2_000_000_000_000 }).map(String),
    fc.integer({ min: 0, max: 10_000_000 }).map((c) => (c / 100).toFixed(2)),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => String(Math.abs(d))),
    fc.string({ maxLength: 12, unit: 'grapheme' }).map((s) => `'${s.replace(/'/g, "''")}'`),
    fc.constantFrom('TRUE', 'FALSE', 'NULL', '0', '1', "'2024-01-01'", 'CURRENT_DATE', "ARRAY['a', 'b']", 'ARRAY[NULL]', "'%'", '$1', '1e3', '-0', '99999999999999999999999'),
  );
}

const memo = new WeakMap<Catalog, Map<string, unknown>>();

/** Builds each arbitrary once per catalog and object: building them is far slower than drawing from them. */
function memoized<T>(t: Target, key: string, build: () => T): T {
  let m = memo.get(t.catalog);
  if (!m) memo.set(t.catalog, (m = new Map()));
  if (!m.has(key)) m.set(key, build());
  return m.get(key) as T;
}

/** Real column paths of `object` (up to two relation hops), as written in queries. */
function realPaths(t: Target, object: string): string[] {
  const out: string[] = [];
  const visit = (slug: string, prefix: string, depth: number): void => {
    const o = t.catalog.objects.get(slug);
    if (!o) return;
    for (const c of o.columns.values()) {
      if (c.type !== 'virtual') out.push(prefix + c.slug);
      if (c.relation && depth < 2) visit(c.relation.object, `${prefix}${c.slug}.`, depth + 1);
    }
  };
  visit(object, '', 0);
  return out;
}

/** Loosely grammatical statements: mostly well-formed SQL over real columns, often not valid in the dialect. */
export function grammarArb(t: Target): fc.Arbitrary<string> {
  const objects = [...t.catalog.objects.keys()];
  return fc.constantFrom(...objects).chain((object) => memoized(t, `statement:${object}`, () => statementArb(t, object)));
}

/** Loose expressions over `object`'s real column paths (and some made-up names). */
export function exprArb(t: Target, object: string): fc.Arbitrary<string> {
  return memoized(t, `expr:${object}`, () => buildExprArb(t, object));
}

function buildExprArb(t: Target, object: string): fc.Arbitrary<string> {
  const ident = identArb(t);
  const real = realPaths(t, object);
  const path = fc.oneof(
    { arbitrary: fc.constantFrom(...real), weight: 10 },
    { arbitrary: fc.array(ident, { minLength: 1, maxLength: 4 }).map((p) => p.join('.')), weight: 1 },
  );
  const { expr } = fc.letrec<{ expr: string }>((tie) => ({
    expr: fc.oneof(
      { maxDepth: 3, depthIdentifier: 'fuzz-expr' },
      { arbitrary: fc.oneof({ arbitrary: path, weight: 3 }, { arbitrary: literalArb(), weight: 2 }), weight: 8 },
      fc.tuple(tie('expr'), fc.constantFrom('=', '<>', '<', '>=', '+', '-', '*', '/', '%', '&&', '||', 'AND', 'OR', 'LIKE', 'ILIKE', 'NOT LIKE', '@>', '~'), tie('expr')).map(([a, op, b]) => `${a} ${op} ${b}`),
      fc.tuple(fc.constantFrom('NOT', '-', '+'), tie('expr')).map(([op, a]) => `${op} ${a}`),
      fc.tuple(tie('expr'), fc.constantFrom('IS NULL', 'IS NOT NULL', 'IS TRUE')).map(([a, op]) => `${a} ${op}`),
      tie('expr').map((a) => `(${a})`),
      fc.tuple(fc.constantFrom(...FUNCTIONS), fc.constantFrom('', '', '', 'DISTINCT ', '*'), fc.array(tie('expr'), { minLength: 1, maxLength: 3 })).map(([f, d, args]) => (d === '*' ? `${f}(*)` : `${f}(${d}${args.join(', ')})`)),
      fc.tuple(tie('expr'), tie('expr'), tie('expr')).map(([a, b, c]) => `CASE WHEN ${a} THEN ${b} ELSE ${c} END`),
      fc.tuple(tie('expr'), tie('expr'), tie('expr')).map(([a, b, c]) => `CASE ${a} WHEN ${b} THEN ${c} END`),
      fc.tuple(tie('expr'), fc.constantFrom('date', 'date', 'text', 'int', 'timestamp', 'regclass', 'numeric(10,2)', 'timestamp with time zone')).map(([a, ty]) => `${a}::${ty}`),
      fc.tuple(path, fc.constantFrom(...ZONES), fc.boolean()).map(([p, z, twice]) => `to_timestamp(${p} / 1000) AT TIME ZONE ${z}${twice ? ` AT TIME ZONE ${z}` : ''}`),
      fc.tuple(tie('expr'), fc.array(tie('expr'), { minLength: 1, maxLength: 3 }), fc.boolean()).map(([a, xs, not]) => `${a} ${not ? 'NOT ' : ''}IN (${xs.join(', ')})`),
      fc.tuple(tie('expr'), tie('expr'), tie('expr')).map(([a, b, c]) => `${a} BETWEEN ${b} AND ${c}`),
      fc.tuple(path, fc.array(literalArb(), { minLength: 1, maxLength: 3 })).map(([p, xs]) => `${p} && ARRAY[${xs.join(', ')}]`),
      fc.tuple(path, fc.constantFrom('=', '<>')).map(([p, op]) => `${p} ${op} ARRAY[NULL]`),
      fc.tuple(fc.constantFrom(...t.catalog.objects.keys()), fc.constantFrom('x', 'sub', ''), tie('expr')).map(([o, a, w]) => `EXISTS (SELECT 1 FROM ${o} ${a} WHERE ${w})`),
      fc.tuple(path, fc.constantFrom(...t.catalog.objects.keys()), tie('expr')).map(([p, o, w]) => `${p} IN (SELECT id FROM ${o} WHERE ${w})`),
      fc.tuple(fc.constantFrom(...t.catalog.objects.keys()), path).map(([o, p]) => `(SELECT count(*) FROM ${o} WHERE ${p} IS NOT NULL)`),
      fc.tuple(fc.constantFrom("'epoch'", "'day'", "'hour'", "'century'", "'nope'"), path).map(([f, p]) => `date_part(${f}, to_timestamp(${p} / 1000) AT TIME ZONE 'Asia/Kolkata')`),
      fc.tuple(fc.constantFrom("'day'", "'month'", "'week'", "'fortnight'"), path).map(([f, p]) => `date_trunc(${f}, to_timestamp(${p} / 1000) AT TIME ZONE 'Asia/Kolkata')`),
      fc.tuple(tie('expr'), tie('expr'), tie('expr')).map(([a, b, c]) => `if(${a}, ${b}, ${c})`),
      fc.tuple(path, fc.integer({ min: -2, max: 4 })).map(([p, n]) => `round(${p}, ${n})`),
    ),
  }));
  return expr;
}

/**
 * A valid query with one loose expression spliced in: as an extra select item or as an extra
 * WHERE conjunct. The rest stays valid, so many of these get through to bind, plan and emit.
 */
export function spliceArb(t: Target, valid: fc.Arbitrary<{ text: string; object: string }>): fc.Arbitrary<{ text: string; object: string }> {
  return valid.chain(({ text, object }) =>
    fc.tuple(exprArb(t, object), fc.constantFrom('item', 'where', 'order')).map(([e, where]) => {
      if (where === 'item') return { text: text.replace(/^select\s+(distinct\s+)?/i, (m) => `${m}${e} AS fz_0, `), object };
      if (where === 'order') return { text: /\sorder by\s/i.test(text) ? text.replace(/\sorder by\s/i, (m) => `${m}${e}, `) : text.replace(/\slimit\s/i, (m) => ` ORDER BY ${e}${m}`), object };
      return { text: /\swhere\s/i.test(text) ? text.replace(/\swhere\s/i, (m) => `${m}(${e}) AND `) : text.replace(/(\sfrom\s+\w+(\s+(as\s+)?\w+)?)(?=\s+(group|order|limit|having)\b)/i, `$1 WHERE ${e}`), object };
    }),
  );
}

function statementArb(t: Target, object: string): fc.Arbitrary<string> {
  const ident = identArb(t);
  const real = realPaths(t, object);
  const path = fc.oneof(
    { arbitrary: fc.constantFrom(...real), weight: 10 },
    { arbitrary: fc.array(ident, { minLength: 1, maxLength: 4 }).map((p) => p.join('.')), weight: 1 },
  );
  const expr = exprArb(t, object);
  const item = fc.oneof(
    { arbitrary: path, weight: 6 },
    { arbitrary: fc.tuple(expr, fc.option(ident, { nil: undefined, freq: 6 })).map(([e, a]) => (a ? `${e} AS ${a}` : e)), weight: 6 },
    { arbitrary: fc.constantFrom('*', `${object}.*`, 'x.*'), weight: 1 },
  );
  const condition = fc.oneof(
    expr,
    fc.tuple(path, fc.constantFrom('=', '<>', '<', '>=', 'IS NOT NULL', 'IS NULL', 'ILIKE'), literalArb()).map(([p, op, l]) => (op.startsWith('IS') ? `${p} ${op}` : `${p} ${op} ${l}`)),
    fc.tuple(path, fc.constantFrom('AND', 'OR'), expr).map(([p, op, e]) => `${p} IS NOT NULL ${op} ${e}`),
  );
  return fc
    .record({
      prefix: fc.oneof({ arbitrary: fc.constant(''), weight: 12 }, { arbitrary: fc.constantFrom('WITH x AS (SELECT 1) ', 'EXPLAIN ', '/* c */ ', '\ufeff', '(', 'select '), weight: 1 }),
      distinct: fc.constantFrom('', '', '', 'DISTINCT ', 'ALL '),
      items: fc.array(item, { minLength: 1, maxLength: 4 }),
      from: fc.oneof({ arbitrary: fc.constant(object), weight: 12 }, { arbitrary: ident, weight: 1 }),
      alias: fc.option(fc.constantFrom('a', 'o', 't0', 'x', 'select', 'name'), { nil: undefined, freq: 3 }),
      join: fc.oneof({ arbitrary: fc.constant(''), weight: 12 }, { arbitrary: fc.constantFrom(' LEFT JOIN user u ON u.id = owner', ', contact', ' JOIN contact c ON TRUE'), weight: 1 }),
      where: fc.option(condition, { nil: undefined, freq: 4 }),
      group: fc.option(fc.array(fc.oneof(path, fc.constantFrom('1', '2')), { minLength: 1, maxLength: 2 }), { nil: undefined, freq: 3 }),
      having: fc.option(condition, { nil: undefined, freq: 4 }),
      order: fc.option(fc.array(fc.tuple(fc.oneof(expr, fc.constantFrom('1', '2')), fc.constantFrom('', ' DESC', ' ASC NULLS FIRST')).map(([e, d]) => e + d), { minLength: 1, maxLength: 2 }), { nil: undefined, freq: 3 }),
      limit: fc.oneof(
        { arbitrary: fc.constantFrom('LIMIT 100', 'LIMIT 5 OFFSET 2', 'OFFSET 3 LIMIT 4'), weight: 6 },
        { arbitrary: fc.constantFrom('LIMIT 0', 'LIMIT 10000', 'LIMIT 10001', 'LIMIT 1.5', 'LIMIT -1', 'LIMIT ALL', ''), weight: 1 },
        { arbitrary: literalArb().map((l) => `LIMIT ${l}`), weight: 1 },
      ),
      suffix: fc.oneof({ arbitrary: fc.constant(''), weight: 8 }, { arbitrary: fc.constantFrom(';', '; DROP TABLE account', ' UNION SELECT id FROM user LIMIT 1', ' FOR UPDATE', ' -- done', ' /* open', ' INTO t'), weight: 1 }),
    })
    .map((r) =>
      [
        `${r.prefix}SELECT ${r.distinct}${r.items.join(', ')} FROM ${r.from}${r.alias ? ` ${r.alias}` : ''}${r.join}`,
        r.where && `WHERE ${r.where}`,
        r.group && `GROUP BY ${r.group.join(', ')}`,
        r.having && `HAVING ${r.having}`,
        r.order && `ORDER BY ${r.order.join(', ')}`,
        r.limit,
      ]
        .filter(Boolean)
        .join(' ') + r.suffix,
    );
}

const TOKEN = /'(?:[^']|'')*'?|"(?:[^"]|"")*"?|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|[A-Za-z_][\w$]*|::|<>|!=|<=|>=|&&|\|\||--[^\n]*|\/\*|\*\/|\s+|[\s\S]/gu;

export function tokens(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

/** One edit of a token list: insert, delete, swap, duplicate or replace a token. */
export function mutationArb(t: Target): fc.Arbitrary<(toks: string[]) => string[]> {
  const vocabulary = fc.oneof(
    fc.constantFrom(...KEYWORDS),
    fc.constantFrom(...PUNCT),
    fc.constantFrom(...FUNCTIONS),
    fc.constantFrom(...WEIRD),
    identArb(t),
    literalArb(),
    fc.string({ maxLength: 3, unit: 'binary' }),
  );
  return fc.oneof(
    fc.tuple(fc.nat(), vocabulary, fc.boolean()).map(([i, tok, spaced]) => (toks: string[]) => {
      const out = toks.slice();
      out.splice(i % (out.length + 1), 0, spaced ? ` ${tok} ` : tok);
      return out;
    }),
    fc.nat().map((i) => (toks: string[]) => toks.filter((_, k) => k !== i % Math.max(1, toks.length))),
    fc.tuple(fc.nat(), fc.nat()).map(([i, j]) => (toks: string[]) => {
      const out = toks.slice();
      if (out.length < 2) return out;
      const a = i % out.length;
      const b = j % out.length;
      [out[a], out[b]] = [out[b]!, out[a]!];
      return out;
    }),
    fc.tuple(fc.nat(), fc.integer({ min: 1, max: 50 })).map(([i, n]) => (toks: string[]) => {
      const out = toks.slice();
      const k = i % Math.max(1, out.length);
      out.splice(k, 0, ...Array<string>(n).fill(out[k] ?? ''));
      return out;
    }),
    fc.tuple(fc.nat(), vocabulary).map(([i, tok]) => (toks: string[]) => toks.map((x, k) => (k === i % Math.max(1, toks.length) ? tok : x))),
  );
}

