import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { corpus } from '../../bench/corpus.js';
import { REVENUE_QUERIES, revenueText } from '../../bench/schemas/revenue-crm-queries.js';
import { SQL_QUERIES } from '../../bench/sql-queries.js';
import { generateRows } from '../../fixtures/index.js';
import { loadCatalog } from '../../src/catalog/load.js';
import type { Catalog } from '../../src/catalog/types.js';
import { compile } from '../../src/compile.js';
import type { DiagnosticCode } from '../../src/diagnostics/codes.js';
import { SAFE_FIX_CODES, fixQuery } from '../../src/lint/fix.js';
import { allPages } from '../../src/lint/docs.js';
import { LINT_CODES, lint, type LintOptions } from '../../src/lint/lint.js';
import { configureFastCheck, runs } from '../props/harness.js';
import { pgFixtures } from '../support/pg-fixture.js';

/**
 * `--fix` settles in one run and keeps what the query means, over every corpus of queries in
 * the repository (the benchmark corpora of three schemas, the SQL benchmark's reports, the
 * diagnostic pages' examples) and random mutations of them that plant the mistakes the safe
 * fixes repair: a dropped alias or LIMIT, an epoch bound written as a date string (on the column
 * or on `to_timestamp(column / 1000) AT TIME ZONE ...`), an option in the wrong case, a
 * relation's `.id`, a day start with one AT TIME ZONE. For each text:
 *
 * - after fixQuery, nothing --fix would apply remains, and fixing again changes nothing;
 * - the fixed text draws no diagnostic that neither it nor the query it was made from had
 *   (report rules that errors had hidden excepted);
 * - a text that ran before runs to the same rows after its fixes, on PostgreSQL 15, unless a fix
 *   corrects a wrong answer (an option no row has, a day start off by the zone's offset);
 * - a mutated text, once fixed and valid, runs to the rows of the query it was made from.
 */

const NOW = '2025-06-15T20:00:00Z';

const revenue = loadCatalog(JSON.parse(readFileSync(new URL('../../bench/schemas/revenue-crm.json', import.meta.url), 'utf8')));
const fx = pgFixtures(['crm', 'helpdesk'], {
  extra: { revenue: { catalog: revenue, rows: generateRows(revenue, { seed: 11, tenants: ['org_r1', 'org_r2'], counts: 80 }) } },
});
const TENANT: Record<string, string> = { crm: 'org_acme', helpdesk: 'org_north', revenue: 'org_r1' };

/** Safe fixes that change the rows on purpose: the query answered something its author did not mean. */
const CORRECTING = new Set<DiagnosticCode>(['UNKNOWN_OPTION', 'RELATIVE_DAY_ONE_ZONE']);

interface Entry {
  readonly db: string;
  readonly slug: string;
  readonly text: string;
  readonly options?: Partial<LintOptions>;
}

function entries(): Entry[] {
  const out: Entry[] = [];
  for (const q of corpus()) out.push({ db: q.fixture, slug: q.slug, text: q.text });
  REVENUE_QUERIES.forEach((q, i) => out.push({ db: 'revenue', slug: q.slug, text: revenueText(q, 10 + i * 37) }));
  for (const q of SQL_QUERIES) out.push({ db: 'crm', slug: q.slug, text: q.oql });
  for (const p of allPages()) {
    for (const text of [p.wrong, p.right]) {
      if (text) out.push({ db: 'crm', slug: p.slug ?? 'opportunity', text, ...(p.options ? { options: p.options } : {}) });
    }
  }
  return out;
}

const ENTRIES = entries();

// ---- what a catalog's names are, for the mutations

interface Names {
  readonly dates: ReadonlySet<string>;
  readonly options: ReadonlyMap<string, readonly string[]>;
  readonly toOne: ReadonlySet<string>;
  /** The to-one relation columns of each object. */
  readonly relationsOf: ReadonlyMap<string, readonly string[]>;
}

function namesOf(c: Catalog): Names {
  const dates = new Set<string>();
  const options = new Map<string, string[]>();
  const toOne = new Set<string>();
  const relationsOf = new Map<string, string[]>();
  for (const o of c.objects.values()) {
    relationsOf.set(o.slug, [...o.columns.values()].filter((x) => x.type === 'relation').map((x) => x.slug));
    for (const col of o.columns.values()) {
      if (col.type === 'date' || col.type === 'datetime') dates.add(col.slug);
      if (col.type === 'enum' && col.options) options.set(col.slug, [...(options.get(col.slug) ?? []), ...col.options]);
      if (col.type === 'relation') toOne.add(col.slug);
    }
  }
  return { dates, options, toOne, relationsOf };
}

const NAMES: Record<string, Names> = { crm: namesOf(fx.catalog('crm')), helpdesk: namesOf(fx.catalog('helpdesk')), revenue: namesOf(revenue) };

/** The zone a date string is read in (docs/diagnostics.md): the query's first AT TIME ZONE, else UTC. */
function zoneOf(text: string): string {
  return /AT\s+TIME\s+ZONE\s+'([^']+)'/i.exec(text)?.[1] ?? 'UTC';
}

/** `2024-03-10 09:30:00.250` for an instant, as the wall clock of `zone` shows it; null near an offset change. */
function wallText(ms: number, zone: string): string | null {
  const f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  const parts = (t: number): Record<string, string> => Object.fromEntries(f.formatToParts(t).map((p) => [p.type, p.value]));
  const offset = (t: number): number => {
    const p = parts(t);
    return Date.UTC(+p.year!, +p.month! - 1, +p.day!, +p.hour!, +p.minute!, +p.second!) - Math.floor(t / 1000) * 1000;
  };
  if (offset(ms - 7_200_000) !== offset(ms + 7_200_000)) return null;
  const p = parts(ms);
  const frac = ms % 1000 === 0 ? '' : `.${String(((ms % 1000) + 1000) % 1000).padStart(3, '0')}`;
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}${frac}`;
}

// ---- mutations: each plants one mistake a safe fix repairs, at the `at`-th place it fits

interface Mutated {
  readonly text: string;
  /** The query the mutation stands for, when it is not the text before it (a LIMIT made 100). */
  readonly origin?: string;
  readonly code: DiagnosticCode;
}

type Mutation = (text: string, names: Names, at: number, slug: string) => Mutated | null;

function nth(re: RegExp, text: string, at: number, ok: (m: RegExpExecArray) => boolean = () => true): RegExpExecArray | null {
  const all = [...text.matchAll(re)].filter(ok);
  return all.length === 0 ? null : (all[at % all.length] as RegExpExecArray);
}

function splice(text: string, m: RegExpExecArray, by: string): string {
  return text.slice(0, m.index) + by + text.slice(m.index + m[0].length);
}

const lastWord = (path: string): string => path.slice(path.lastIndexOf('.') + 1);
const count = (text: string, word: string): number => text.match(new RegExp(`\\b${word}\\b`, 'g'))?.length ?? 0;
/** A literal that stands alone: no arithmetic after it. */
const alone = (text: string, m: RegExpExecArray): boolean => !/^\s*[-+*/%]/.test(text.slice(m.index + m[0].length));

const MUTATIONS: Record<string, Mutation> = {
  dropAlias: (text, _n, at) => {
    const m = nth(/ AS ([a-z_][a-z0-9_]*)/g, text, at, (x) => count(text, x[1]!) === 1);
    return m && { text: splice(text, m, ''), code: 'MISSING_ALIAS' };
  },
  dropLimit: (text) => {
    const m = /\s+LIMIT\s+\d+\s*$/i.exec(text);
    return m && { text: text.slice(0, m.index), origin: `${text.slice(0, m.index)} LIMIT 100`, code: 'MISSING_LIMIT' };
  },
  dateString: (text, n, at) => {
    const m = nth(/\b([a-z_][a-z0-9_.]*) (<=|>=|<|>) (\d{12,13})\b/g, text, at, (x) => n.dates.has(lastWord(x[1]!)) && alone(text, x));
    const wall = m && wallText(Number(m[3]), zoneOf(text));
    return m && wall ? { text: splice(text, m, `${m[1]} ${m[2]} '${wall}'`), code: 'DATE_STRING_COMPARISON' } : null;
  },
  timestampString: (text, n, at) => {
    const m = nth(/\b([a-z_][a-z0-9_.]*) (<=|>=|<|>) (\d{12,13})\b/g, text, at, (x) => n.dates.has(lastWord(x[1]!)) && alone(text, x));
    const zone = zoneOf(text);
    const wall = m && wallText(Number(m[3]), zone);
    return m && wall ? { text: splice(text, m, `to_timestamp(${m[1]} / 1000) AT TIME ZONE '${zone}' ${m[2]} '${wall}'`), code: 'DATE_STRING_COMPARISON' } : null;
  },
  optionCase: (text, n, at) => {
    const m = nth(/\b([a-z_][a-z0-9_.]*) (=|<>) '([a-z][a-z0-9_]*)'/g, text, at, (x) => {
      const opts = n.options.get(lastWord(x[1]!)) ?? [];
      return opts.includes(x[3]!) && opts.filter((o) => o.toLowerCase() === x[3]).length === 1;
    });
    if (!m) return null;
    const shouted = m[3]!.charAt(0).toUpperCase() + m[3]!.slice(1);
    return { text: splice(text, m, `${m[1]} ${m[2]} '${shouted}'`), code: 'UNKNOWN_OPTION' };
  },
  /** A filter through a relation's id, which a record the relation names but cannot see (deleted, gone) fails. */
  relationIdFilter: (text, n, at, slug) => {
    const rels = n.relationsOf.get(slug) ?? [];
    if (rels.length === 0) return null;
    const cond = `${rels[at % rels.length]}.id <> 'no_such_record'`;
    const where = /\sWHERE\s/i.exec(text);
    if (where) return { text: `${text.slice(0, where.index + where[0].length)}${cond} AND ${text.slice(where.index + where[0].length)}`, code: 'RELATION_ID_COMPARISON' };
    const tail = /\s(GROUP BY|ORDER BY|LIMIT)\s/i.exec(text);
    return tail ? { text: `${text.slice(0, tail.index)} WHERE ${cond}${text.slice(tail.index)}`, code: 'RELATION_ID_COMPARISON' } : null;
  },
  oneZone: (text, _n, at) => {
    const m = nth(/(date_trunc\('\w+', NOW\(\) AT TIME ZONE ('[^']+')\)) AT TIME ZONE \2/g, text, at);
    return m && { text: splice(text, m, m[1]!), code: 'RELATIVE_DAY_ONE_ZONE' };
  },
};

// ---- running

type Cells = readonly unknown[];

async function rows(e: Entry, text: string): Promise<Cells[] | null> {
  let c;
  try {
    c = compile(text, { catalog: fx.catalog(e.db), slug: e.slug, orgId: TENANT[e.db]!, now: NOW, ...e.options });
  } catch {
    return null;
  }
  if (c.kind !== 'query') return null;
  const r = await fx.pool(e.db).query({ text: c.sql, values: c.params, rowMode: 'array' });
  return r.rows as Cells[];
}

function limitOf(text: string): number {
  const all = [...text.matchAll(/LIMIT\s+(\d+)/gi)];
  return all.length ? Number(all[all.length - 1]![1]) : Infinity;
}

/** Same rows (as a multiset; in order when the text orders them): only the count when a LIMIT may have cut them. */
function sameRows(a: readonly Cells[], b: readonly Cells[], limit: number): boolean {
  if (a.length !== b.length) return false;
  if (a.length >= limit) return true;
  const key = (rs: readonly Cells[]): string[] => rs.map((r) => JSON.stringify(r)).sort();
  return JSON.stringify(key(a)) === JSON.stringify(key(b));
}

const optionsOf = (e: Entry): LintOptions => ({ catalog: fx.catalog(e.db), slug: e.slug, ...e.options });
const codes = (ds: readonly { code: DiagnosticCode }[]): Set<DiagnosticCode> => new Set(ds.map((d) => d.code));

/** Every law of the file for one text made from `origin` (the text itself when nothing was planted). */
async function laws(e: Entry, text: string, origin: string, planted: readonly DiagnosticCode[]): Promise<string[]> {
  const problems: string[] = [];
  const options = optionsOf(e);
  const before = lint(text, options);
  const result = fixQuery(text, options);
  const say = (what: string): void => void problems.push(`${what}\n  origin: ${origin}\n  input:  ${text}\n  fixed:  ${result.output}`);

  const fixable = result.remaining.filter((d) => d.fix && SAFE_FIX_CODES.has(d.code));
  if (fixable.length) say(`still fixable after --fix: ${fixable.map((d) => `${d.code} (${d.message})`).join('; ')}`);
  if (fixQuery(result.output, options).output !== result.output) say('fixing the output again changes it');

  const known = new Set([...codes(before), ...codes(lint(origin, options))]);
  const hidden = before.some((d) => d.severity === 'error');
  const drawn = result.remaining.filter((d) => !known.has(d.code) && !(hidden && LINT_CODES.includes(d.code)));
  if (drawn.length) say(`the fix draws new diagnostics: ${drawn.map((d) => `${d.code} ${d.message}`).join('; ')}`);

  const ranBefore = !before.some((d) => d.severity === 'error');
  const compiles = !result.remaining.some((d) => d.severity === 'error');
  if (ranBefore && !result.fixed.some((d) => CORRECTING.has(d.code)) && result.output !== text) {
    const [a, b] = [await rows(e, text), await rows(e, result.output)];
    if (a === null || b === null || !sameRows(a, b, limitOf(text))) say(`the fix changed the rows of a query that ran: ${a?.length} rows before, ${b?.length} after`);
  }
  // What was planted is undone when its code's fix is safe; the result then answers as the origin does.
  if (compiles && planted.length && planted.every((c) => SAFE_FIX_CODES.has(c))) {
    const [a, b] = [await rows(e, origin), await rows(e, result.output)];
    if (a === null || b === null || !sameRows(a, b, Math.min(limitOf(origin), limitOf(result.output)))) say(`the fixed text does not answer as its origin: ${a?.length} rows, fixed ${b?.length}`);
  }
  return problems;
}

describe('--fix settles and keeps the meaning', () => {
  const seed = configureFastCheck('fix-settles');

  it(`every corpus query as it is (${ENTRIES.length} texts over three schemas)`, async () => {
    expect(ENTRIES.length).toBeGreaterThan(150);
    const problems: string[] = [];
    for (const e of ENTRIES) problems.push(...(await laws(e, e.text, e.text, [])));
    expect(problems).toEqual([]);
  }, 300_000);

  it('random mutations of the corpus that plant the mistakes the safe fixes repair', async () => {
    const planted = new Map<string, number>();
    // Origins that run and need no fix of their own: what a mutation plants is then all --fix repairs.
    const clean = ENTRIES.filter((e) => !lint(e.text, optionsOf(e)).some((d) => d.severity === 'error' || (d.fix && SAFE_FIX_CODES.has(d.code))));
    // The first mutation is drawn evenly and the origin among those it fits, so rare shapes get planted too.
    const arb = fc.constantFrom(...Object.keys(MUTATIONS)).chain((first) =>
      fc.record({
        entry: fc.constantFrom(...clean.filter((e) => MUTATIONS[first]!(e.text, NAMES[e.db]!, 0, e.slug) !== null)),
        steps: fc.tuple(fc.nat(50), fc.array(fc.tuple(fc.constantFrom(...Object.keys(MUTATIONS)), fc.nat(50)), { maxLength: 2 })).map(([at, rest]) => [[first, at] as [string, number], ...rest]),
      }),
    );
    await fc.assert(
      fc.asyncProperty(arb, async ({ entry, steps }) => {
        let text = entry.text;
        let origin = entry.text;
        const codesPlanted: DiagnosticCode[] = [];
        for (const [name, at] of steps) {
          const m = MUTATIONS[name]!(text, NAMES[entry.db]!, at, entry.slug);
          if (!m) continue;
          if (m.origin !== undefined) origin = origin.replace(/\s+LIMIT\s+\d+\s*$/i, ' LIMIT 100');
          text = m.text;
          codesPlanted.push(m.code);
          planted.set(name, (planted.get(name) ?? 0) + 1);
        }
        if (text === entry.text) return;
        const problems = await laws(entry, text, origin, codesPlanted);
        if (problems.length) throw new Error(problems.join('\n'));
      }),
      { numRuns: runs(200, 5000), seed },
    );
    // Every kind of mistake was planted, several times.
    for (const name of Object.keys(MUTATIONS)) expect(planted.get(name) ?? 0, name).toBeGreaterThan(5);
  }, 600_000);
});
