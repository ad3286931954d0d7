/**
 * Compile speed per corpus of realistic reports (bench/corpus-families.ts): chains of to-one
 * hops in SELECT, WHERE and GROUP BY, virtual relations, EXISTS, CASE, the contract's date
 * boundaries, multi-select arrays and a mix, over the example CRM, the help desk, a real-estate
 * CRM and random catalogs in rotation. Each round writes fresh texts of every corpus (no text is
 * given twice), and times on the process's CPU clock, in a shuffled order: oql `compile` with
 * `cache: false` against libpg-query's parse of the same text; the clock's own cost, measured in
 * the same rounds, is taken off. Every text must compile before it is timed.
 *
 * OQL_BENCH_BASELINE=<another build's index.js> compiles every text (the check round's and every
 * timed one) with that build too and fails on any difference of SQL or parameters: the output
 * must stay byte-identical while the compiler is made faster. The baseline is timed in the same
 * rounds as one more mode, for before/after ratios.
 *
 * Then the stages, per corpus: lex, parse, validate, bind, fan-out, plan, emit of the source
 * (bundled by esbuild as the package is), each timed on the CPU clock, to say where the time goes.
 *
 * Run by bench/run.mjs (`node --import tsx bench/corpora.ts <fragment.md>`).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { loadModule, parseSync } from 'libpg-query';
import { BENCH_DIR, REPO_DIR, fmt, groupedMedian, loadDist, median, percentile, progress, table, type OqlModule } from './lib.js';
import { CORPORA, CorpusGenerator, corpusCatalogs, rngOf, type CorpusCatalog, type CorpusName } from './corpus-families.js';
import { buildSync } from 'esbuild';
import { loadCatalog } from '../src/catalog/load.js';
import { withAuditFields } from '../src/catalog/audit-fields.js';
import type { DiagnosticBag as Bag } from '../src/diagnostics/diagnostic.js';

const TEXTS = Number(process.env.OQL_BENCH_CORPORA_TEXTS ?? 300);
const ROUNDS = Number(process.env.OQL_BENCH_ROUNDS ?? 12);
const WARMUP_ROUNDS = 2;
const RANDOM_CATALOGS = 6;
const STAGE_TEXTS = Number(process.env.OQL_BENCH_STAGE_TEXTS ?? 1500);
const WARM_STAGE_PASSES = 3;

type Mode = 'oql' | 'baseline' | 'libpg-query parse' | 'clock';

const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

function timed(n: number, call: (i: number) => unknown): number[] {
  const out = new Array<number>(n);
  let prev = cpuUs();
  for (let i = 0; i < n; i++) {
    call(i);
    const t = cpuUs();
    out[i] = t - prev;
    prev = t;
  }
  return out;
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The mean of the calls below the 99th percentile: a collection that lands in one stage says nothing of it. */
const trimmedMean = (xs: readonly number[]): number => {
  const cut = percentile(xs, 99);
  return mean(xs.filter((x) => x < cut));
};

interface Build {
  readonly lib: OqlModule;
  readonly catalogs: CorpusCatalog[];
}

function buildOf(lib: OqlModule): Build {
  return { lib, catalogs: corpusCatalogs(lib, RANDOM_CATALOGS) };
}

/** Same SQL and parameters from both builds, or an error naming the text. */
function sameOutput(texts: readonly { text: string; slug: string; at: number }[], a: Build, b: Build): void {
  for (const t of texts) {
    const x = a.lib.compile(t.text, { catalog: a.catalogs[t.at]!.catalog, slug: t.slug, orgId: 'org_bench', cache: false });
    const y = b.lib.compile(t.text, { catalog: b.catalogs[t.at]!.catalog, slug: t.slug, orgId: 'org_bench', cache: false });
    if (x.sql !== y.sql || JSON.stringify(x.kind === 'query' ? x.params : null) !== JSON.stringify(y.kind === 'query' ? y.params : null)) {
      throw new Error(`the output differs from the baseline's on ${a.catalogs[t.at]!.name}:\n${t.text}\n--- this build\n${x.sql}\n--- baseline\n${y.sql}`);
    }
  }
}

interface CorpusSamples {
  readonly calls: Map<Mode, number[]>;
  readonly roundMeans: Map<Mode, number[]>;
  chars: number[];
}

async function main(): Promise<void> {
  const fragment = process.argv[2] ?? join(BENCH_DIR, '.data', 'results-corpora.md');
  await loadModule();
  const self = buildOf(await loadDist());
  const baselinePath = process.env.OQL_BENCH_BASELINE || undefined;
  const baseline = baselinePath ? buildOf((await import(pathToFileURL(baselinePath).href)) as OqlModule) : null;
  const modes: Mode[] = ['oql', ...(baseline ? ['baseline' as const] : []), 'libpg-query parse', 'clock'];
  const random = rngOf(0x5eed);
  const generators = new Map(CORPORA.map((c, k) => [c, new CorpusGenerator(c, self.catalogs, rngOf(0xc0de + k))]));
  const index = new Map(self.catalogs.map((c, i) => [c, i]));
  const fresh = (corpus: CorpusName) => Array.from({ length: TEXTS }, () => {
    const t = generators.get(corpus)!.next();
    return { text: JSON.parse(JSON.stringify(t.text)) as string, slug: t.slug, at: index.get(t.source)! };
  });
  const samples = new Map<CorpusName, CorpusSamples>(CORPORA.map((c) => [c, { calls: new Map(modes.map((m) => [m, []])), roundMeans: new Map(modes.map((m) => [m, []])), chars: [] }]));
  let compared = 0;

  // Every text must compile, on both builds to the same output, before anything is timed.
  for (const corpus of CORPORA) {
    const check = fresh(corpus);
    for (const t of check) {
      self.lib.compile(t.text, { catalog: self.catalogs[t.at]!.catalog, slug: t.slug, orgId: 'org_bench', cache: false });
      parseSync(t.text);
    }
    if (baseline) (sameOutput(check, self, baseline), (compared += check.length));
  }

  for (let k = 0; k < WARMUP_ROUNDS + ROUNDS; k++) {
    const order = CORPORA.map((c) => [random(), c] as const).sort((a, b) => a[0] - b[0]).map(([, c]) => c);
    for (const corpus of order) {
      const texts = fresh(corpus);
      const options = texts.map((t) => ({ catalog: self.catalogs[t.at]!.catalog, slug: t.slug, orgId: 'org_bench', cache: false as const }));
      const baseOptions = baseline ? texts.map((t) => ({ catalog: baseline.catalogs[t.at]!.catalog, slug: t.slug, orgId: 'org_bench', cache: false as const })) : [];
      const runs: Record<Mode, (i: number) => unknown> = {
        oql: (i) => self.lib.compile(texts[i]!.text, options[i]!),
        baseline: (i) => baseline!.lib.compile(texts[i]!.text, baseOptions[i]!),
        'libpg-query parse': (i) => parseSync(texts[i]!.text),
        clock: () => undefined,
      };
      const s = samples.get(corpus)!;
      for (const m of modes.map((m) => [random(), m] as const).sort((a, b) => a[0] - b[0]).map(([, m]) => m)) {
        const us = timed(texts.length, runs[m]);
        if (k < WARMUP_ROUNDS) continue;
        s.calls.get(m)!.push(...us);
        s.roundMeans.get(m)!.push(mean(us));
      }
      if (k >= WARMUP_ROUNDS) s.chars.push(...texts.map((t) => t.text.length));
      if (baseline) (sameOutput(texts, self, baseline), (compared += texts.length));
    }
    progress(`corpora: round ${k + 1}/${WARMUP_ROUNDS + ROUNDS}${k < WARMUP_ROUNDS ? ' (warm-up)' : ''}`);
  }
  const load = loadavg()[0]!;
  const stages = await stageBreakdown();
  writeFileSync(fragment, report(samples, modes, compared, baselinePath, load, stages));
  progress(`corpora: wrote ${fragment}`);
}

const STAGES = ['lex + parse', 'validate', 'bind', 'fan-out', 'plan', 'emit'] as const;

/** The stages of the pipeline, from the source as the package bundles it. */
interface StageModule {
  DiagnosticBag: new (source: string) => Bag;
  lex: typeof import('../src/syntax/lex.js').lex;
  parseInto: typeof import('../src/syntax/parse.js').parseInto;
  validate: typeof import('../src/validate/validate.js').validate;
  bind: typeof import('../src/bind/bind.js').bind;
  withFanout: typeof import('../src/plan/fanout.js').withFanout;
  plan: typeof import('../src/plan/plan.js').plan;
  emitRows: typeof import('../src/emit/emit.js').emitRows;
}

/**
 * The stages bundled by esbuild as the package is (no `keepNames`), not run through tsx: tsx
 * names every closure it creates with a call, which made the stages that create closures look
 * dearer than they are in the built package.
 */
async function stageModule(): Promise<StageModule> {
  const outfile = join(BENCH_DIR, '.data', 'stages.mjs');
  const from = (m: string, names: string) => `export { ${names} } from './src/${m}.ts';`;
  buildSync({
    stdin: {
      contents: [from('diagnostics/diagnostic', 'DiagnosticBag'), from('syntax/lex', 'lex'), from('syntax/parse', 'parseInto'), from('validate/validate', 'validate'),
        from('bind/bind', 'bind'), from('plan/fanout', 'withFanout'), from('plan/plan', 'plan'), from('emit/emit', 'emitRows')].join('\n'),
      resolveDir: REPO_DIR,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    define: { OQL_GRAMMAR_FILE: '"../../dist/grammar.cjs"', 'process.env.OQL_VALIDATE_GRAMMAR': '"0"' },
    outfile,
    logLevel: 'warning',
  });
  return (await import(pathToFileURL(outfile).href)) as StageModule;
}

/** Per corpus, the mean µs of each stage of the pipeline, and of their sum. */
async function stageBreakdown(): Promise<Map<CorpusName, Record<string, number>>> {
  progress('corpora: stages');
  const { DiagnosticBag, lex, parseInto, validate, bind, withFanout, plan, emitRows } = await stageModule();
  const catalogs = corpusCatalogs({ loadCatalog, withAuditFields }, RANDOM_CATALOGS);
  const out = new Map<CorpusName, Record<string, number>>();
  const CLOCK = groupedMedian(timed(20_000, () => undefined));
  const corpora = CORPORA.map((corpus, k) => {
    const g = new CorpusGenerator(corpus, catalogs, rngOf(0xface + k));
    return { corpus, texts: Array.from({ length: STAGE_TEXTS }, () => g.next()) };
  });
  // Warm every stage on every corpus first: the source runs through tsx, cold until then.
  for (let pass = 0; pass < WARM_STAGE_PASSES + 1; pass++) {
    for (const { corpus, texts } of corpora) {
      const per: Record<string, number[]> = Object.fromEntries([...STAGES, 'lex', 'total'].map((s) => [s, []]));
      for (const t of texts) {
        const options = { catalog: t.source.catalog, slug: t.slug };
        const t0 = cpuUs();
        lex(t.text);
        const t1 = cpuUs();
        const bag = new DiagnosticBag(t.text);
        const ast = parseInto(t.text, bag, options)!;
        const t2 = cpuUs();
        validate(ast, bag, options);
        const t3 = cpuUs();
        const bound = bind(ast, bag, options)!;
        const t4 = cpuUs();
        const shaped = withFanout(bound, bag, options);
        const t5 = cpuUs();
        const p = plan(shaped, options.catalog, { semiJoins: true });
        const t6 = cpuUs();
        emitRows(p, { orgId: '' });
        const t7 = cpuUs();
        if (pass < WARM_STAGE_PASSES) continue;
        // parseInto lexes itself: the lexer alone is shown beside it, not added to the sum.
        per.lex!.push(t1 - t0 - CLOCK);
        [t2 - t1 - CLOCK, t3 - t2 - CLOCK, t4 - t3 - CLOCK, t5 - t4 - CLOCK, t6 - t5 - CLOCK, t7 - t6 - CLOCK].forEach((us, i) => per[STAGES[i]!]!.push(us));
        per.total!.push(t7 - t1 - 6 * CLOCK);
      }
      if (pass === WARM_STAGE_PASSES) out.set(corpus, Object.fromEntries(Object.entries(per).map(([s, xs]) => [s, trimmedMean(xs)])));
    }
  }
  return new Map(CORPORA.map((c) => [c, out.get(c)!]));
}

function report(samples: Map<CorpusName, CorpusSamples>, modes: Mode[], compared: number, baselinePath: string | undefined, load: number, stages: Map<CorpusName, Record<string, number>>): string {
  const out: string[] = [];
  const emit = (s = ''): void => void out.push(s);
  emit('## Compile speed per corpus of realistic reports (built package)');
  emit();
  emit('Families of report queries as users write them (bench/corpus-families.ts), each stressing one thing the compiler resolves: ' +
    '**select-chains** (one to three to-one hops in the select list, `owner.manager.manager.email`), **where-chains** (hops in WHERE), ' +
    '**group-chains** (hops as GROUP BY keys, with aggregates), **virtual** (one-to-many relations in dot notation, alone and two in one WHERE), ' +
    '**exists** (correlated EXISTS / NOT EXISTS, hops inside), **case** (CASE and if() over hops), **dates** (date boundaries: relative day, week and month starts ' +
    'with AT TIME ZONE twice, date columns without zones, shown with ::date), **multiselect** (has any, has none, is empty, through hops), **mixed** (several at once). ' +
    `Over ${4 + RANDOM_CATALOGS} catalogs in rotation: the example CRM (fixtures/crm, service payload), the help desk, a real-estate CRM (regions, offices, agents, clients, properties, listings, offers, showings, inspections; compact form with audit fields, and service payload) ` +
    `and ${RANDOM_CATALOGS} random catalogs (bench/random-catalog.ts). Each round writes ${TEXTS} fresh texts per corpus (no text is given twice), ` +
    `${ROUNDS} rounds after ${WARMUP_ROUNDS} warm-up rounds, corpora and modes in a shuffled order, in one process; every call timed on the process's CPU clock ` +
    '(`process.cpuUsage`, 1 µs steps), the clock\'s own cost per call taken off. oql is `compile` with `cache: false` (a full compile: parse, checks, bind, plan, emit); ' +
    'libpg-query is `parseSync` of the same text. Every text compiled without an error before timing. ' +
    `Load average ${fmt(load, 1)} on ${cpus().length} cores at the end of the timed rounds (the machine is shared with other work: absolute µs are inflated, the ratios are measured side by side).`);
  emit();
  const figures = [...samples].map(([corpus, s]) => {
    const clock = groupedMedian(s.calls.get('clock')!);
    const pg = s.roundMeans.get('libpg-query parse')!;
    const clockMeans = s.roundMeans.get('clock')!;
    const of = (m: Mode) => {
      const xs = s.calls.get(m)!;
      return {
        mean: mean(xs) - clock,
        p50: groupedMedian(xs) - clock,
        p99: percentile(xs, 99) - clock,
        ratio: median(s.roundMeans.get(m)!.map((x, i) => (x - clockMeans[i]!) / (pg[i]! - clockMeans[i]!))),
      };
    };
    return { corpus, chars: median(s.chars), oql: of('oql'), base: modes.includes('baseline') ? of('baseline') : null, pg: of('libpg-query parse') };
  });
  const worst = figures.reduce((a, b) => (b.oql.ratio > a.oql.ratio ? b : a));
  const rows = figures.map((f) => [
    f.corpus === worst.corpus ? `**${f.corpus}** (worst)` : f.corpus, fmt(f.chars, 0),
    fmt(f.oql.mean), fmt(f.oql.p50), fmt(f.oql.p99, 0), fmt(f.pg.mean), fmt(f.pg.p50), fmt(f.pg.p99, 0),
    `**${fmt(f.oql.ratio, 2)}**${f.oql.ratio <= 1 ? '' : ' (over 1.0)'}`, fmt(f.oql.p50 / f.pg.p50, 2), fmt(f.oql.p99 / f.pg.p99, 2),
    ...(f.base ? [fmt(f.base.mean), fmt(f.base.ratio, 2), fmt(f.oql.mean / f.base.mean, 2)] : []),
  ]);
  emit(`Target: every corpus ≤ 1.0× libpg-query (moonshot 0.5×). **Worst corpus: ${worst.corpus}, ${fmt(worst.oql.ratio, 2)}×** ` +
    `(${figures.every((f) => f.oql.ratio <= 1) ? 'every corpus within the target' : `${figures.filter((f) => f.oql.ratio > 1).length} corpora over it`}; ` +
    `${figures.filter((f) => f.oql.ratio <= 0.5).length} of ${figures.length} at or under the moonshot).`);
  emit();
  emit(table(['corpus', 'median chars', 'oql mean µs', 'oql median µs', 'oql p99 µs', 'libpg-query mean µs', 'libpg-query median µs', 'libpg-query p99 µs',
    '**ratio of means**', 'ratio of medians', 'ratio of p99', ...(modes.includes('baseline') ? ['baseline mean µs', 'baseline ratio of means', 'this build / baseline'] : [])], rows));
  emit();
  emit('The ratio of means is the median over rounds of oql\'s round mean over libpg-query\'s on the same texts.');
  emit();
  if (baselinePath) {
    emit(`Output check: all ${compared.toLocaleString('en-US')} texts compiled (the check round and every timed text) gave byte-identical SQL and parameters with the baseline \`${baselinePath}\`, which ran in the same rounds (one process, so the two builds share a heap).`);
    emit();
  }
  emit('### Where the time goes, per stage');
  emit();
  emit(`The stages of the source bundled by esbuild as the package is (not through tsx, whose naming call around every closure inflated the stages that make closures), on ${STAGE_TEXTS.toLocaleString('en-US')} texts per corpus, after three unmeasured passes over every corpus, each stage timed on the CPU clock (its cost taken off); mean µs per text. ` +
    'lex + parse is `parseInto` (the lexer and the hand-written parser; the lexer alone, timed apart, in the last column); fan-out is the aggregate-shape pass; emit is the SQL writer.');
  emit();
  emit(table(['corpus', ...STAGES, 'sum', 'largest', 'the lexer alone (in lex + parse)'], [...stages].map(([corpus, st]) => {
    const top = STAGES.reduce((a, b) => (st[b]! > st[a]! ? b : a));
    return [corpus, ...STAGES.map((s) => fmt(st[s]!)), fmt(st.total!), `${top} (${fmt((100 * st[top]!) / st.total!, 0)}%)`, fmt(st.lex!)];
  })));
  emit();
  return `${out.join('\n')}\n`;
}

await main();
