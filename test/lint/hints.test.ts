import { describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import type { Diagnostic } from '../../src/diagnostics/diagnostic.js';
import { lint } from '../../src/lint/lint.js';
import { loadFixtureCatalog } from '../../fixtures/index.js';

/**
 * Every hint is valid when pasted: for a corpus of wrong queries (mutations of valid ones and
 * the mistakes new users make), the diagnostic's fix is applied and the query recompiled. It
 * must compile without that diagnostic, and the fixed text must be the one an independent
 * reading of the user's intent gives (same operator, same bounds, the zone the user meant).
 */

const catalog = loadFixtureCatalog('crm');
const DAY = 86_400_000;

interface WrongQuery {
  readonly name: string;
  readonly slug: string;
  readonly query: string;
  readonly code: Diagnostic['code'];
  /** The text after the fix, derived by hand or by an independent computation. */
  readonly fixed: string;
  readonly timeZone?: string;
}

function applyFixes(text: string, diagnostics: readonly Diagnostic[]): string {
  const fixes = diagnostics.map((d) => d.fix!).sort((a, b) => b.range[0] - a.range[0]);
  let out = text;
  let limit = Infinity;
  for (const f of fixes) {
    if (f.range[1] > limit) throw new Error('overlapping fixes');
    out = out.slice(0, f.range[0]) + f.text + out.slice(f.range[1]);
    limit = f.range[0];
  }
  return out;
}

/** Epoch ms of a wall-clock time in a zone, computed without the library (fixed-offset zones only). */
const OFFSETS: Record<string, number> = { UTC: 0, 'Asia/Kolkata': 330 * 60_000, 'Asia/Tokyo': 540 * 60_000 };
function wall(date: string, zone: string, time = '00:00:00'): number {
  return Date.parse(`${date}T${time}Z`) - OFFSETS[zone]!;
}

// ---------------------------------------------------------------- the corpus

/** Valid queries with a `{{CMP}}` slot for a date comparison on an epoch column. */
const DATE_BASES: readonly { slug: string; column: string; query: string }[] = [
  { slug: 'opportunity', column: 'created_at', query: 'SELECT id, name FROM opportunity WHERE {{CMP}} LIMIT 50' },
  { slug: 'opportunity', column: 'close_date', query: "SELECT stage, COUNT(*) AS n FROM opportunity WHERE stage <> 'lost' AND {{CMP}} GROUP BY stage LIMIT 10" },
  { slug: 'account', column: 'created_at', query: 'SELECT name, annual_revenue FROM account WHERE annual_revenue > 0 AND {{CMP}} ORDER BY name LIMIT 20' },
  { slug: 'contact', column: 'birthday', query: 'SELECT id, email FROM contact WHERE {{CMP}} LIMIT 100' },
  { slug: 'lead', column: 'created_at', query: "SELECT status, SUM(score) AS total FROM lead WHERE status IN ('new', 'working') AND {{CMP}} GROUP BY status LIMIT 10" },
  { slug: 'opportunity', column: 'account.created_at', query: 'SELECT id FROM opportunity WHERE {{CMP}} LIMIT 10' },
];
const DATES = ['2024-01-01', '2023-12-31', '2024-02-29', '2025-06-15'];
const OPS = ['<', '<=', '>', '>=', '=', '<>'] as const;

function dateCases(): WrongQuery[] {
  const out: WrongQuery[] = [];
  for (const b of DATE_BASES) {
    for (const date of DATES) {
      for (const op of OPS) {
        const ms = wall(date, 'UTC');
        const cmp = op === '=' ? `(${b.column} >= ${ms} AND ${b.column} < ${ms + DAY})` : op === '<>' ? `(${b.column} < ${ms} OR ${b.column} >= ${ms + DAY})` : `${b.column} ${op} ${ms}`;
        out.push({ name: `${b.column} ${op} '${date}'`, slug: b.slug, query: b.query.replace('{{CMP}}', `${b.column} ${op} '${date}'`), code: 'DATE_STRING_COMPARISON', fixed: b.query.replace('{{CMP}}', cmp) });
      }
      // The string on the left keeps its place and operator.
      out.push({ name: `'${date}' < ${b.column}`, slug: b.slug, query: b.query.replace('{{CMP}}', `'${date}' < ${b.column}`), code: 'DATE_STRING_COMPARISON', fixed: b.query.replace('{{CMP}}', `${wall(date, 'UTC')} < ${b.column}`) });
    }
    // BETWEEN keeps both bounds as written (inclusive midnight instants).
    out.push({
      name: `${b.column} BETWEEN`,
      slug: b.slug,
      query: b.query.replace('{{CMP}}', `${b.column} BETWEEN '2024-01-01' AND '2024-01-31'`),
      code: 'DATE_STRING_COMPARISON',
      fixed: b.query.replace('{{CMP}}', `${b.column} BETWEEN ${wall('2024-01-01', 'UTC')} AND ${wall('2024-01-31', 'UTC')}`),
    });
    // A date and time, read in the zone of the timeZone option, and in the zone the query names.
    out.push({
      name: `${b.column} with a time, timeZone option`,
      slug: b.slug,
      timeZone: 'Asia/Kolkata',
      query: b.query.replace('{{CMP}}', `${b.column} >= '2024-03-10 09:30'`),
      code: 'DATE_STRING_COMPARISON',
      fixed: b.query.replace('{{CMP}}', `${b.column} >= ${wall('2024-03-10', 'Asia/Kolkata', '09:30:00')}`),
    });
    out.push({
      name: `${b.column} with an explicit offset`,
      slug: b.slug,
      timeZone: 'Asia/Tokyo',
      query: b.query.replace('{{CMP}}', `${b.column} < '2024-03-10T09:30:00Z'`),
      code: 'DATE_STRING_COMPARISON',
      fixed: b.query.replace('{{CMP}}', `${b.column} < ${Date.parse('2024-03-10T09:30:00Z')}`),
    });
  }
  // The zone the query itself uses wins over the option.
  const q = "SELECT date_trunc('day', to_timestamp(created_at / 1000) AT TIME ZONE 'Asia/Tokyo') AS day, COUNT(*) AS n FROM opportunity WHERE created_at >= '2024-01-01' GROUP BY day LIMIT 10";
  out.push({ name: 'zone of the query', slug: 'opportunity', query: q, code: 'DATE_STRING_COMPARISON', fixed: q.replace("'2024-01-01'", String(wall('2024-01-01', 'Asia/Tokyo'))) });
  return out;
}

/** Valid aggregate queries: dropping an alias or the LIMIT makes them wrong. */
const AGG_BASES: readonly { slug: string; item: string; alias: string; query: string }[] = [
  { slug: 'opportunity', item: 'COUNT(*)', alias: 'count', query: 'SELECT stage, {{ITEM}} FROM opportunity GROUP BY stage' },
  { slug: 'opportunity', item: 'SUM(amount)', alias: 'sum_amount', query: "SELECT owner, {{ITEM}} FROM opportunity WHERE stage = 'won' GROUP BY owner" },
  { slug: 'opportunity', item: 'AVG(probability)', alias: 'avg_probability', query: 'SELECT stage, {{ITEM}} FROM opportunity GROUP BY stage ORDER BY stage' },
  { slug: 'opportunity', item: 'MAX(close_date)', alias: 'max_close_date', query: 'SELECT account, {{ITEM}} FROM opportunity GROUP BY account' },
  { slug: 'account', item: 'COUNT(id)', alias: 'count_id', query: 'SELECT industry, {{ITEM}} FROM account GROUP BY industry' },
  { slug: 'account', item: 'SUM(annual_revenue)', alias: 'sum_annual_revenue', query: 'SELECT city, {{ITEM}} FROM account GROUP BY city' },
  { slug: 'contact', item: 'COUNT(*)', alias: 'count', query: 'SELECT status, {{ITEM}} FROM contact GROUP BY status' },
  { slug: 'contact', item: 'MIN(birthday)', alias: 'min_birthday', query: "SELECT status, {{ITEM}} FROM contact WHERE status <> 'bounced' GROUP BY status" },
  { slug: 'lead', item: 'AVG(score)', alias: 'avg_score', query: 'SELECT status, {{ITEM}} FROM lead GROUP BY status' },
  { slug: 'lead', item: 'lower(name)', alias: 'lower_name', query: 'SELECT id, {{ITEM}} FROM lead' },
  { slug: 'opportunity', item: 'amount * probability / 100', alias: 'amount_probability', query: 'SELECT id, {{ITEM}} FROM opportunity' },
  { slug: 'opportunity', item: 'round(amount, 2)', alias: 'round_amount', query: 'SELECT id, {{ITEM}} FROM opportunity' },
  { slug: 'user', item: 'upper(email)', alias: 'upper_email', query: 'SELECT id, {{ITEM}} FROM user WHERE is_active = 1' },
  { slug: 'opportunity', item: "date_trunc('month', to_timestamp(created_at / 1000) AT TIME ZONE 'UTC')", alias: 'date_trunc_to_timestamp_created_at', query: 'SELECT {{ITEM}}, COUNT(*) AS n FROM opportunity GROUP BY 1' },
];

function aliasAndLimitCases(): WrongQuery[] {
  const out: WrongQuery[] = [];
  for (const b of AGG_BASES) {
    const valid = `${b.query.replace('{{ITEM}}', `${b.item} AS v`)} LIMIT 10`;
    out.push({ name: `alias of ${b.item}`, slug: b.slug, query: `${b.query.replace('{{ITEM}}', b.item)} LIMIT 10`, code: 'MISSING_ALIAS', fixed: `${b.query.replace('{{ITEM}}', `${b.item} AS ${b.alias}`)} LIMIT 10` });
    out.push({ name: `LIMIT of ${b.item}`, slug: b.slug, query: b.query.replace('{{ITEM}}', `${b.item} AS v`), code: 'MISSING_LIMIT', fixed: `${b.query.replace('{{ITEM}}', `${b.item} AS v`)} LIMIT 100` });
    // With a trailing line comment-free newline, the LIMIT goes after the query, not the newline.
    expect(lint(valid, { catalog, slug: b.slug }).filter((d) => d.severity === 'error')).toEqual([]);
  }
  return out;
}

/** Enum options in the wrong case, from valid comparisons. */
function optionCases(): WrongQuery[] {
  const out: WrongQuery[] = [];
  const bases = [
    { slug: 'opportunity', column: 'stage', options: ['won', 'lost', 'proposal', 'negotiation'] },
    { slug: 'account', column: 'industry', options: ['retail', 'software', 'finance', 'healthcare'] },
    { slug: 'contact', column: 'status', options: ['active', 'bounced', 'inactive'] },
    { slug: 'lead', column: 'status', options: ['new', 'working', 'converted'] },
  ];
  for (const b of bases) {
    for (const o of b.options) {
      const variants = [o.toUpperCase(), o[0]!.toUpperCase() + o.slice(1)];
      for (const v of variants) {
        out.push({ name: `${b.column} = '${v}'`, slug: b.slug, query: `SELECT id FROM ${b.slug} WHERE ${b.column} = '${v}' LIMIT 10`, code: 'UNKNOWN_OPTION', fixed: `SELECT id FROM ${b.slug} WHERE ${b.column} = '${o}' LIMIT 10` });
      }
      out.push({ name: `${b.column} IN '${o}'`, slug: b.slug, query: `SELECT id FROM ${b.slug} WHERE ${b.column} IN ('${o.toUpperCase()}') LIMIT 10`, code: 'UNKNOWN_OPTION', fixed: `SELECT id FROM ${b.slug} WHERE ${b.column} IN ('${o}') LIMIT 10` });
    }
  }
  return out;
}

/** Quoted names in the wrong case, and double-quoted strings. */
function quotingCases(): WrongQuery[] {
  const out: WrongQuery[] = [];
  for (const [slug, column] of [['opportunity', 'amount'], ['opportunity', 'stage'], ['account', 'industry'], ['contact', 'email'], ['lead', 'score'], ['account', 'city']] as const) {
    const cap = column[0]!.toUpperCase() + column.slice(1);
    out.push({ name: `"${cap}"`, slug, query: `SELECT "${cap}" FROM ${slug} LIMIT 5`, code: 'UNKNOWN_COLUMN', fixed: `SELECT ${column} FROM ${slug} LIMIT 5` });
  }
  for (const [slug, column, value] of [['opportunity', 'stage', 'won'], ['account', 'industry', 'retail'], ['contact', 'status', 'active'], ['lead', 'company', 'Acme'], ['account', 'city', 'Pune']] as const) {
    out.push({ name: `${column} = "${value}"`, slug, query: `SELECT id FROM ${slug} WHERE ${column} = "${value}" LIMIT 5`, code: 'UNKNOWN_COLUMN', fixed: `SELECT id FROM ${slug} WHERE ${column} = '${value}' LIMIT 5` });
  }
  return out;
}

/**
 * Misspelt names with exactly one close column: the fix writes that column, in the select list,
 * in WHERE, at the end of a dot path and in ORDER BY. The spellings meant are written by hand.
 */
function misspeltCases(): WrongQuery[] {
  const out: WrongQuery[] = [];
  for (const [slug, written, meant] of [['opportunity', 'amout', 'amount'], ['account', 'nme', 'name'], ['contact', 'emial', 'email'], ['lead', 'scroe', 'score'], ['account', 'industy', 'industry']] as const) {
    out.push({ name: `${written} in ${slug}'s select list`, slug, query: `SELECT id, ${written} FROM ${slug} LIMIT 5`, code: 'UNKNOWN_COLUMN', fixed: `SELECT id, ${meant} FROM ${slug} LIMIT 5` });
    out.push({ name: `${written} in ${slug}'s WHERE`, slug, query: `SELECT id FROM ${slug} WHERE ${written} IS NOT NULL LIMIT 5`, code: 'UNKNOWN_COLUMN', fixed: `SELECT id FROM ${slug} WHERE ${meant} IS NOT NULL LIMIT 5` });
  }
  out.push({ name: 'the end of a dot path', slug: 'opportunity', query: 'SELECT id, account.nme FROM opportunity LIMIT 5', code: 'UNKNOWN_COLUMN', fixed: 'SELECT id, account.name FROM opportunity LIMIT 5' });
  out.push({ name: 'an ORDER BY name', slug: 'account', query: 'SELECT id, name FROM account ORDER BY nme LIMIT 5', code: 'UNKNOWN_COLUMN', fixed: 'SELECT id, name FROM account ORDER BY name LIMIT 5' });
  return out;
}

/** The list, each with the text a user should end up with. */
const LISTED: readonly WrongQuery[] = [
  { name: 'EXTRACT of a date column', slug: 'opportunity', query: 'SELECT EXTRACT(year FROM close_date) AS y, COUNT(*) AS n FROM opportunity GROUP BY 1 LIMIT 10', code: 'UNSUPPORTED_EXTRACT', fixed: "SELECT date_part('year', to_timestamp(close_date / 1000) AT TIME ZONE 'UTC') AS y, COUNT(*) AS n FROM opportunity GROUP BY 1 LIMIT 10" },
  { name: 'EXTRACT in the option zone', slug: 'opportunity', timeZone: 'Asia/Kolkata', query: 'SELECT EXTRACT(MONTH FROM created_at) AS m FROM opportunity LIMIT 10', code: 'UNSUPPORTED_EXTRACT', fixed: "SELECT date_part('month', to_timestamp(created_at / 1000) AT TIME ZONE 'Asia/Kolkata') AS m FROM opportunity LIMIT 10" },
  { name: 'EXTRACT of NOW()', slug: 'opportunity', query: 'SELECT EXTRACT(year FROM NOW()) AS y FROM opportunity LIMIT 1', code: 'UNSUPPORTED_EXTRACT', fixed: "SELECT date_part('year', NOW()) AS y FROM opportunity LIMIT 1" },
  { name: 'date_part of an epoch column', slug: 'opportunity', query: "SELECT date_part('year', close_date) AS y FROM opportunity LIMIT 10", code: 'TYPE_MISMATCH', fixed: "SELECT date_part('year', to_timestamp(close_date / 1000) AT TIME ZONE 'UTC') AS y FROM opportunity LIMIT 10" },
  { name: 'date_trunc of an epoch column in the query zone', slug: 'opportunity', query: "SELECT date_trunc('day', created_at) AS d, date_part('hour', to_timestamp(created_at / 1000) AT TIME ZONE 'Europe/Paris') AS h FROM opportunity LIMIT 10", code: 'TYPE_MISMATCH', fixed: "SELECT date_trunc('day', to_timestamp(created_at / 1000) AT TIME ZONE 'Europe/Paris') AS d, date_part('hour', to_timestamp(created_at / 1000) AT TIME ZONE 'Europe/Paris') AS h FROM opportunity LIMIT 10" },
  { name: 'to_timestamp without /1000', slug: 'opportunity', query: 'SELECT id FROM opportunity WHERE to_timestamp(created_at) > now() LIMIT 10', code: 'TO_TIMESTAMP_COMPARISON', fixed: "SELECT id FROM opportunity WHERE created_at > date_part('epoch', now())*1000 LIMIT 10" },
  { name: 'to_timestamp with /1000, on the right', slug: 'opportunity', query: 'SELECT id FROM opportunity WHERE NOW() <= to_timestamp(close_date / 1000) LIMIT 10', code: 'TO_TIMESTAMP_COMPARISON', fixed: "SELECT id FROM opportunity WHERE date_part('epoch', NOW())*1000 <= close_date LIMIT 10" },
  { name: 'HAVING an alias', slug: 'opportunity', query: 'SELECT stage, COUNT(id) AS n FROM opportunity GROUP BY stage HAVING n > 5 LIMIT 10', code: 'UNKNOWN_COLUMN', fixed: 'SELECT stage, COUNT(id) AS n FROM opportunity GROUP BY stage HAVING COUNT(id) > 5 LIMIT 10' },
  { name: 'HAVING a computed alias', slug: 'opportunity', query: 'SELECT owner, SUM(amount) / 1000 AS k FROM opportunity GROUP BY owner HAVING k >= 2 LIMIT 10', code: 'UNKNOWN_COLUMN', fixed: 'SELECT owner, SUM(amount) / 1000 AS k FROM opportunity GROUP BY owner HAVING (SUM(amount) / 1000) >= 2 LIMIT 10' },
  { name: '= ANY', slug: 'opportunity', query: "SELECT id FROM opportunity WHERE 'web' = ANY(sources) LIMIT 10", code: 'UNKNOWN_FUNCTION', fixed: "SELECT id FROM opportunity WHERE sources && ARRAY['web'] LIMIT 10" },
  { name: 'ANY on the left', slug: 'lead', query: "SELECT id FROM lead WHERE ANY(sources) = 'event' LIMIT 10", code: 'UNKNOWN_FUNCTION', fixed: "SELECT id FROM lead WHERE sources && ARRAY['event'] LIMIT 10" },
  { name: 'now() minus a day', slug: 'opportunity', query: 'SELECT id FROM opportunity WHERE created_at > now() - 86400000 LIMIT 10', code: 'TYPE_MISMATCH', fixed: "SELECT id FROM opportunity WHERE created_at > date_part('epoch', now())*1000 - 86400000 LIMIT 10" },
  { name: 'CURRENT_DATE', slug: 'opportunity', query: 'SELECT id FROM opportunity WHERE close_date >= CURRENT_DATE LIMIT 10', code: 'UNSUPPORTED_DATE_KEYWORD', fixed: "SELECT id FROM opportunity WHERE close_date >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')*1000 LIMIT 10" },
  { name: 'CURRENT_DATE in the option zone', slug: 'opportunity', timeZone: 'Asia/Kolkata', query: 'SELECT id FROM opportunity WHERE close_date >= CURRENT_DATE LIMIT 10', code: 'UNSUPPORTED_DATE_KEYWORD', fixed: "SELECT id FROM opportunity WHERE close_date >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata')*1000 LIMIT 10" },
  { name: 'CURRENT_TIMESTAMP', slug: 'lead', query: 'SELECT id FROM lead WHERE created_at < CURRENT_TIMESTAMP LIMIT 10', code: 'UNSUPPORTED_DATE_KEYWORD', fixed: "SELECT id FROM lead WHERE created_at < date_part('epoch', NOW())*1000 LIMIT 10" },
  { name: 'IN (subquery) on a relation, outer alias added', slug: 'account', query: "SELECT id FROM account WHERE opportunities IN (SELECT id FROM opportunity WHERE stage = 'won') ORDER BY id LIMIT 10", code: 'VIRTUAL_IN_SUBQUERY', fixed: "SELECT id FROM account a WHERE EXISTS (SELECT 1 FROM opportunity x WHERE x.account = a.id AND x.id IN (SELECT id FROM opportunity WHERE stage = 'won')) ORDER BY id LIMIT 10" },
  { name: 'NOT IN (subquery) on a relation, the user\'s alias', slug: 'account', query: "SELECT id FROM account acc WHERE contacts NOT IN (SELECT id FROM contact WHERE status = 'bounced') ORDER BY id LIMIT 10", code: 'VIRTUAL_IN_SUBQUERY', fixed: "SELECT id FROM account acc WHERE NOT EXISTS (SELECT 1 FROM contact x WHERE x.account = acc.id AND x.id IN (SELECT id FROM contact WHERE status = 'bounced')) ORDER BY id LIMIT 10" },
  { name: 'enum option case', slug: 'account', query: "SELECT id FROM account WHERE industry = 'Retail' LIMIT 10", code: 'UNKNOWN_OPTION', fixed: "SELECT id FROM account WHERE industry = 'retail' LIMIT 10" },
];

const CORPUS: readonly WrongQuery[] = [...dateCases(), ...aliasAndLimitCases(), ...optionCases(), ...quotingCases(), ...misspeltCases(), ...LISTED];

describe('every fix is valid when pasted', () => {
  it('covers at least 200 wrong queries', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(200);
  });

  it.each(CORPUS.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const options = { catalog, slug: c.slug, ...(c.timeZone ? { timeZone: c.timeZone } : {}) };
    const found = lint(c.query, options).filter((d) => d.code === c.code);
    expect(found.length, `${c.code} in ${c.query}`).toBeGreaterThan(0);
    for (const d of found) {
      expect(d.fix, `${d.code} has a fix`).toBeDefined();
      // The hint shows the replacement, so a reader who pastes it gets the same text.
      // (An EXISTS fix that also adds the outer alias shows the alias in words.)
      const shown = d.fix!.text.trim().replace(/^AS /, '');
      expect(d.hint).toContain(shown.includes(' WHERE EXISTS') ? shown.slice(shown.indexOf('EXISTS')) : shown);
    }
    const fixed = applyFixes(c.query, found);
    expect(fixed).toBe(c.fixed);
    const after = lint(fixed, options);
    expect(after.filter((d) => d.code === c.code)).toEqual([]);
    expect(after.filter((d) => d.severity === 'error')).toEqual([]);
    expect(() => compile(fixed, { ...options, orgId: 'org_a', cache: false })).not.toThrow();
  });
});

describe('hints that are advice, not a fix', () => {
  const hint = (query: string, slug: string, code: string): string => {
    const d = lint(query, { catalog, slug }).find((x) => x.code === code);
    expect(d, `${code} in ${query}`).toBeDefined();
    return d!.hint ?? '';
  };

  it('a misspelt name close to two columns names both and fixes neither: which one was meant is the user\'s to say', () => {
    const [d, ...rest] = lint('SELECT id, created_a FROM account LIMIT 5', { catalog, slug: 'account' });
    expect(rest).toEqual([]);
    expect(d!.code).toBe('UNKNOWN_COLUMN');
    expect(d!.hint).toBe("did you mean 'created_at' or 'created_by'?");
    expect(d!.fix).toBeUndefined();
  });

  it('the EXISTS form needs no AMBIGUOUS_NAME when pasted (alias added to the outer FROM)', () => {
    const h = hint("SELECT id FROM account WHERE opportunities IN (SELECT id FROM opportunity WHERE stage = 'won') LIMIT 5", 'account', 'VIRTUAL_IN_SUBQUERY');
    const form = /^use (EXISTS \(.*\)), after giving the outer object an alias: FROM account (\w+)/.exec(h);
    expect(form, h).not.toBeNull();
    const pasted = `SELECT id FROM account ${form![2]} WHERE ${form![1]} ORDER BY id LIMIT 5`;
    expect(lint(pasted, { catalog, slug: 'account' })).toEqual([]);
  });

  it('the EXISTS form uses the FROM alias the user wrote', () => {
    const h = hint('SELECT id FROM account acc WHERE contacts IN (SELECT id FROM contact) LIMIT 5', 'account', 'VIRTUAL_IN_SUBQUERY');
    const form = /^use (EXISTS \(.*\))$/.exec(h);
    expect(form, h).not.toBeNull();
    expect(form![1]).toContain('= acc.id');
    expect(lint(`SELECT id FROM account acc WHERE ${form![1]} ORDER BY id LIMIT 5`, { catalog, slug: 'account' })).toEqual([]);
  });

  it('a virtual relation used as a value gets a pasteable EXISTS test', () => {
    const h = hint('SELECT id FROM account a WHERE contacts > 0 LIMIT 5', 'account', 'VIRTUAL_NEEDS_FIELD');
    const form = /(EXISTS \(SELECT 1 FROM contact \w+ WHERE \w+\.account = a\.id\))/.exec(h);
    expect(form, h).not.toBeNull();
    expect(lint(`SELECT id FROM account a WHERE ${form![1]} ORDER BY id LIMIT 5`, { catalog, slug: 'account' })).toEqual([]);
  });

  it('NOW() - INTERVAL becomes epoch milliseconds, the operator kept', () => {
    for (const [interval, ms] of [["'30 days'", 30 * 86_400_000], ["'2 hours'", 2 * 3_600_000], ["'1 week'", 604_800_000]] as const) {
      const wrong = `SELECT id FROM opportunity WHERE created_at > NOW() - INTERVAL ${interval} ORDER BY id LIMIT 5`;
      const h = hint(wrong, 'opportunity', 'SYNTAX_ERROR');
      const form = /^write (.*)$/.exec(h);
      expect(form, h).not.toBeNull();
      const pasted = wrong.replace(`NOW() - INTERVAL ${interval}`, form![1]!);
      expect(lint(pasted, { catalog, slug: 'opportunity' })).toEqual([]);
      // The pasted form means NOW() minus the interval: check its number independently.
      expect(form![1]!.replace(/^date_part\('epoch', NOW\(\)\)\*1000 - /, '').split('*').map(Number).reduce((a, b) => a * b)).toBe(ms);
    }
  });

  it('the JOIN hint gives an EXISTS form that pastes without AMBIGUOUS_NAME', () => {
    const h = hint('SELECT a.name FROM account a JOIN contact c ON c.account = a.id LIMIT 10', 'account', 'UNSUPPORTED_JOIN');
    const form = /(FROM account \w+ WHERE EXISTS \(.*\))$/.exec(h);
    expect(form, h).not.toBeNull();
    expect(lint(`SELECT name ${form![1]} ORDER BY id LIMIT 10`, { catalog, slug: 'account' })).toEqual([]);
  });

  it('a plural request slug is not offered as FROM', () => {
    const h = hint('SELECT id FROM opportunity LIMIT 5', 'opportunities', 'INVALID_SLUG');
    expect(h).toContain("send slug 'opportunity'");
    expect(h).not.toMatch(/FROM opportunities/);
  });

  it('ORDER BY an unknown name lists the output aliases', () => {
    const h = hint('SELECT stage, COUNT(*) AS n, SUM(amount) AS pipeline FROM opportunity GROUP BY stage ORDER BY total LIMIT 5', 'opportunity', 'UNKNOWN_COLUMN');
    expect(h).toMatch(/output aliases stage, n, pipeline/);
  });

  it('::numeric gets one error, not a second one about ::date', () => {
    const ds = lint('SELECT amount::numeric AS a FROM opportunity LIMIT 5', { catalog, slug: 'opportunity' });
    expect(ds.map((d) => d.code)).toEqual(['UNSUPPORTED_CAST']);
  });

  it('no hint names a zone the user did not use', () => {
    const queries = [
      ["SELECT date_part('hour', created_at) AS h FROM opportunity LIMIT 5", 'opportunity'],
      ['SELECT id FROM opportunity WHERE created_at > CURRENT_DATE LIMIT 5', 'opportunity'],
      ['SELECT created_at AT TIME ZONE 5 AS t FROM opportunity LIMIT 5', 'opportunity'],
      ['SELECT id FROM opportunity WHERE to_timestamp(created_at / 1000)::date = NOW()::date LIMIT 5', 'opportunity'],
      ["SELECT to_char(created_at, 'YYYY-MM') AS m FROM opportunity LIMIT 5", 'opportunity'],
      ['SELECT id FROM opportunity WHERE created_at > current_date() LIMIT 5', 'opportunity'],
    ] as const;
    for (const [q, slug] of queries) {
      for (const d of lint(q, { catalog, slug })) expect(d.hint ?? '', q).not.toMatch(/Kolkata|<zone>|<timestamp>|\{zone\}/);
    }
    // With a timeZone option, the option's zone is the one named.
    const d = lint("SELECT to_char(created_at, 'YYYY-MM') AS m FROM opportunity LIMIT 5", { catalog, slug: 'opportunity', timeZone: 'America/New_York' })[0]!;
    expect(d.hint).toContain("AT TIME ZONE 'America/New_York'");
  });
});
