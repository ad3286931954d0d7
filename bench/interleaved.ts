/**
 * The real workload: a stream of different report texts, as a service sees them, instead of
 * one text timed over and over. Every mode runs in this one process, in short passes
 * interleaved in a shuffled order round after round, so load from other jobs and the JIT's
 * state fall on all modes alike; each figure is the median over rounds of one pass's µs per
 * query.
 *
 * Modes, per corpus:
 * - unique texts, default options: a literal differs in every call, so the compiled-query cache
 *   (on by default) misses every time: what an agent-facing service pays;
 * - unique texts, `cache: false`: the same without the cache (a miss may cost at most 5% more);
 * - unique texts, libpg-query's parse (the PostgreSQL parser) on the same texts;
 * - fixed texts in rotation (`cache: false`, and libpg-query);
 * - one text repeated (`cache: false`), and repeated with the cache on (a hit).
 *
 * A process's figures also carry its JIT's luck (what got inlined, which call sites went
 * megamorphic): the summary repeats the whole measurement in OQL_BENCH_PROCESSES processes (3)
 * and gives the median and range of their ratios.
 *
 * OQL_BENCH_BASELINE=<path to another build's index.js> (OQL_BENCH_BASELINE_LABEL=<how to name
 * it in the results>) adds that build's figures, measured by this script in child processes
 * alternating with this build's (two builds in one heap would charge each other's garbage
 * collection), each with its own libpg-query figures, so the ratios compare.
 *
 * Run by bench/run.mjs (`node --import tsx bench/interleaved.ts <fragment.md>`).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadModule, parseSync } from 'libpg-query';
import { corpus } from './corpus.js';
import { BENCH_DIR, distPath, fixtureCatalog, fmt, loadDist, median, progress, readJson, rng, table, type OqlModule } from './lib.js';
import { REVENUE_QUERIES, revenueText } from './schemas/revenue-crm-queries.js';

const ROUNDS = Number(process.env.OQL_BENCH_ROUNDS ?? 31);
const WARMUP_ROUNDS = 4;
/** Rotations of the corpus per timed pass: long enough (~10 ms) that a pass's share of GC is its own. */
const ROTATIONS_PER_PASS = Number(process.env.OQL_BENCH_ROTATIONS ?? 4);
/** Calls per text in the repeated modes. */
const REPEAT = 8;
const CLOCK = process.env.OQL_BENCH_CLOCK === 'wall' ? 'wall' : 'cpu';
/** Processes per build whose ratios the summary gives (median and range). */
const PROCESSES = Math.max(1, Number(process.env.OQL_BENCH_PROCESSES ?? 3));

type Catalog = ReturnType<OqlModule['loadCatalog']>;

interface Workload {
  readonly name: string;
  readonly description: string;
  /** Per query: its slug, catalog, and its text with `n` written into its varying literal. */
  readonly queries: readonly { readonly slug: string; readonly fixture: 'crm' | 'helpdesk' | 'revenue'; readonly text: (n: number) => string }[];
}

/** One build under test: the package in dist/ (and optionally a baseline build). */
interface Build {
  readonly label: string;
  readonly lib: OqlModule;
  readonly catalogs: Record<'crm' | 'helpdesk' | 'revenue', Catalog>;
}

function workloads(): Workload[] {
  const fixtures = corpus();
  return [
    {
      name: 'revenue-crm',
      description: `${REVENUE_QUERIES.length} report queries (bench/schemas/revenue-crm-queries.ts) over bench/schemas/revenue-crm.json, a 7-object schema no test uses; a number in each text varies per call`,
      queries: REVENUE_QUERIES.map((q) => ({ slug: q.slug, fixture: 'revenue' as const, text: (n: number) => revenueText(q, n) })),
    },
    {
      name: 'fixture corpus',
      description: `the ${fixtures.length} queries of the per-query tables above (crm and helpdesk fixtures); the LIMIT varies per call`,
      queries: fixtures.map((q) => ({
        slug: q.slug,
        fixture: q.fixture,
        text: (n: number) => q.text.replace(/LIMIT \d+$/, `LIMIT ${n}`),
      })),
    },
  ];
}

const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const now = CLOCK === 'cpu' ? cpuUs : () => performance.now() * 1000;

interface Mode {
  readonly name: string;
  /** Texts of one pass: fresh for the unique modes, the same every pass for the others. */
  readonly texts: (round: number) => readonly string[];
  /** Runs the pass; text i belongs to query i mod corpus size (i / REPEAT for the repeated modes). */
  readonly run: (texts: readonly string[]) => void;
}

let literal = 0;
/** 1..9973: valid wherever the corpus puts it (LIMIT, scores, amounts); repeats only after ~10^4 calls per query, far beyond the cache's 1,000 entries. */
const nextLiteral = (): number => 1 + (literal++ % 9973);

/**
 * A text as a service receives it: parsed out of a JSON body, so one flat string. A text built
 * by `replace` is a rope of three pieces instead, which the first reader of its characters
 * flattens: whichever mode read it first would pay for that (the cache's lookup, here), and the
 * lexer's character reads would see another kind of string than in production.
 */
const asReceived = (text: string): string => JSON.parse(JSON.stringify(text)) as string;

function modesFor(w: Workload, builds: readonly Build[]): Mode[] {
  const k = w.queries.length;
  const rotation = ROTATIONS_PER_PASS * k;
  const fixedTexts = Array.from({ length: rotation }, (_, i) => asReceived(w.queries[i % k]!.text(100 + (i % k))));
  const uniqueTexts = () => Array.from({ length: rotation }, (_, i) => asReceived(w.queries[i % k]!.text(nextLiteral())));
  // The repeated modes run each text REPEAT times in a row, over a quarter of the rotation.
  const repeatedTexts = Array.from({ length: rotation }, (_, i) => fixedTexts[Math.floor(i / REPEAT) % k]!);
  const modes: Mode[] = [];
  for (const b of builds) {
    const opts = w.queries.map((q) => ({ catalog: b.catalogs[q.fixture], slug: q.slug, orgId: 'org_bench' }));
    const noCache = opts.map((o) => ({ ...o, cache: false }));
    const tag = builds.length > 1 ? `${b.label}: ` : '';
    modes.push({ name: `${tag}unique, default options`, texts: uniqueTexts, run: (ts) => { for (let i = 0; i < ts.length; i++) b.lib.compile(ts[i]!, opts[i % k]!); } });
    modes.push({ name: `${tag}unique, cache: false`, texts: uniqueTexts, run: (ts) => { for (let i = 0; i < ts.length; i++) b.lib.compile(ts[i]!, noCache[i % k]!); } });
    modes.push({ name: `${tag}rotation, cache: false`, texts: () => fixedTexts, run: (ts) => { for (let i = 0; i < ts.length; i++) b.lib.compile(ts[i]!, noCache[i % k]!); } });
    modes.push({
      name: `${tag}repeated, cache: false`, texts: () => repeatedTexts,
      run: (ts) => { for (let i = 0; i < ts.length; i++) b.lib.compile(ts[i]!, noCache[Math.floor(i / REPEAT) % k]!); },
    });
    modes.push({
      name: `${tag}repeated, default options (hits)`, texts: () => repeatedTexts,
      run: (ts) => { for (let i = 0; i < ts.length; i++) b.lib.compile(ts[i]!, opts[Math.floor(i / REPEAT) % k]!); },
    });
  }
  modes.push({ name: 'libpg-query: unique', texts: uniqueTexts, run: (ts) => { for (let i = 0; i < ts.length; i++) parseSync(ts[i]!); } });
  modes.push({ name: 'libpg-query: rotation', texts: () => fixedTexts, run: (ts) => { for (let i = 0; i < ts.length; i++) parseSync(ts[i]!); } });
  return modes;
}

/** Median µs per query of each mode, over interleaved rounds. */
function measure(modes: readonly Mode[], seed: number): Map<string, number> {
  const random = rng(seed);
  const samples = new Map<string, number[]>(modes.map((m) => [m.name, []]));
  for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
    const order = modes.map((m) => [random(), m] as const).sort((a, b) => a[0] - b[0]).map(([, m]) => m);
    for (const m of order) {
      const texts = m.texts(round);
      const t0 = now();
      m.run(texts);
      const us = (now() - t0) / texts.length;
      if (round >= WARMUP_ROUNDS) samples.get(m.name)!.push(us);
    }
  }
  return new Map([...samples].map(([k, v]) => [k, median(v)]));
}

/** The figures this benchmark was written to replace, kept beside the new ones. */
const HISTORY = `Earlier figures, for comparison (recorded before this benchmark existed, not re-measured):

| workload | oql compile | libpg-query parse | ratio |
| --- | --- | --- | --- |
| typical report, one text timed over and over (\`cache: false\`), 2026-11-21 | 21.9 µs | 23.3 µs | 0.94 |
| 45 report queries of another CRM schema, the same text repeated, \`cache: false\` | 13.8 µs | | |
| the same 45 in rotation, \`cache: false\` | 40–44 µs | ~17.6 µs | 2.3–2.5 |
| the same 45 in rotation, unique texts, default options (every call a miss) | 67.5 µs | ~17.6 µs | 3.8 |
`;

async function loadBuild(label: string, path: string | undefined): Promise<Build> {
  const lib = path ? ((await import(pathToFileURL(path).href)) as OqlModule) : await loadDist();
  return {
    label,
    lib,
    catalogs: {
      crm: fixtureCatalog(lib, 'crm'),
      helpdesk: fixtureCatalog(lib, 'helpdesk'),
      revenue: lib.loadCatalog(readJson(join(BENCH_DIR, 'schemas/revenue-crm.json'))),
    },
  };
}

interface SummaryRow {
  readonly corpus: string;
  readonly unique: number;
  readonly pg: number;
  readonly ratio: number;
  readonly missOverNoCache: number;
  readonly repeated: number;
  readonly hit: number;
}

/** The summary rows of one whole measurement of the build at `dist`, in a child process. */
function childSummary(dist: string, fragment: string): SummaryRow[] {
  progress(`interleaved: ${dist} in a child process`);
  const summaryFile = `${fragment}.child.json`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), summaryFile], {
    env: { ...process.env, OQL_BENCH_DIST: dist, OQL_BENCH_BASELINE: '', OQL_BENCH_SUMMARY_ONLY: '1' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`the child run of ${dist} failed (exit ${r.status ?? r.signal})`);
  const rows = JSON.parse(readFileSync(summaryFile, 'utf8')) as SummaryRow[];
  rmSync(summaryFile);
  return rows;
}

async function main(): Promise<void> {
  const fragment = process.argv[2] ?? join(BENCH_DIR, '.data', 'results-interleaved.md');
  await loadModule();
  const builds = [await loadBuild('this build', undefined)];
  const baselinePath = process.env.OQL_BENCH_BASELINE;

  const out: string[] = [];
  const emit = (s = ''): void => void out.push(s);
  emit('## Interleaved compile speed: the real workload (built package)');
  emit();
  emit('A service compiles a stream of different texts, mostly never seen before. Here every mode runs in one process in passes of ' +
    `${ROTATIONS_PER_PASS} rotations over the corpus, interleaved in a shuffled order for ${ROUNDS} rounds (after ${WARMUP_ROUNDS} warm-up rounds); ` +
    'a figure is the median over rounds of a pass\'s µs per query. "Unique" writes a different number into every text, so with the default options ' +
    '(cache on) every call is a cache miss; "rotation" cycles through the fixed texts; "repeated" compiles each text ' +
    `${REPEAT} times in a row. libpg-query (the PostgreSQL parser, parse only) runs on the same texts in the same rounds. ` +
    (CLOCK === 'cpu' ? `Clock: process CPU time (load average ${fmt(loadavg()[0]!, 1)} on ${cpus().length} cores at the start).` : 'Clock: wall time.'));
  emit();

  const summary: SummaryRow[] = [];
  for (const [wi, w] of workloads().entries()) {
    for (const b of builds) {
      for (const q of w.queries) b.lib.compile(q.text(nextLiteral()), { catalog: b.catalogs[q.fixture], slug: q.slug, orgId: 'org_bench' });
    }
    progress(`interleaved: ${w.name} (${w.queries.length} queries, ${ROUNDS} rounds)`);
    const us = measure(modesFor(w, builds), 0x5eed + wi);
    const pgUnique = us.get('libpg-query: unique')!;
    const pgRotation = us.get('libpg-query: rotation')!;
    emit(`### ${w.name}`);
    emit();
    emit(`Corpus: ${w.description}.`);
    emit();
    const rows: (string | number)[][] = [];
    for (const b of builds) {
      const tag = builds.length > 1 ? `${b.label}: ` : '';
      const get = (m: string) => us.get(`${tag}${m}`)!;
      rows.push([`${tag}oql, unique texts, default options (every call a miss)`, fmt(get('unique, default options')), fmt(get('unique, default options') / pgUnique, 2)]);
      rows.push([`${tag}oql, unique texts, \`cache: false\``, fmt(get('unique, cache: false')), fmt(get('unique, cache: false') / pgUnique, 2)]);
      rows.push([`${tag}oql, fixed texts in rotation, \`cache: false\``, fmt(get('rotation, cache: false')), fmt(get('rotation, cache: false') / pgRotation, 2)]);
      rows.push([`${tag}oql, each text repeated, \`cache: false\``, fmt(get('repeated, cache: false')), '']);
      rows.push([`${tag}oql, each text repeated, default options (cache hits)`, fmt(get('repeated, default options (hits)'), 2), '']);
      rows.push([`${tag}**miss with the cache on / \`cache: false\`**`, fmt(get('unique, default options') / get('unique, cache: false'), 3), '']);
      summary.push({
        corpus: w.name, unique: get('unique, default options'), pg: pgUnique, ratio: get('unique, default options') / pgUnique,
        missOverNoCache: get('unique, default options') / get('unique, cache: false'), repeated: get('repeated, cache: false'), hit: get('repeated, default options (hits)'),
      });
    }
    rows.push(['libpg-query parse, unique texts', fmt(pgUnique), '1.00']);
    rows.push(['libpg-query parse, fixed texts in rotation', fmt(pgRotation), '']);
    emit(table(['mode', 'median µs per query', 'vs libpg-query (same texts)'], rows));
    emit();
  }
  if (process.env.OQL_BENCH_SUMMARY_ONLY === '1') {
    writeFileSync(fragment, JSON.stringify(summary));
    return;
  }
  // This process was this build's first; the others run in child processes, alternating with the baseline's.
  const runs = new Map<string, SummaryRow[][]>([['this build', [summary]]]);
  const baselineLabel = process.env.OQL_BENCH_BASELINE_LABEL ?? `\`${baselinePath}\``;
  for (let i = 0; i < PROCESSES; i++) {
    if (i > 0) runs.get('this build')!.push(childSummary(distPath(), fragment));
    if (baselinePath) runs.set('baseline', [...(runs.get('baseline') ?? []), childSummary(baselinePath, fragment)]);
  }
  const rows: (string | number)[][] = [];
  for (const [corpusIndex, w] of workloads().entries()) {
    for (const [label, perProcess] of runs) {
      const of = perProcess.map((r) => r[corpusIndex]!);
      const med = (f: (r: SummaryRow) => number) => median(of.map(f));
      const ratios = of.map((r) => r.ratio);
      rows.push([w.name, label, fmt(med((r) => r.unique)), fmt(med((r) => r.pg)), `**${fmt(median(ratios), 2)}**`,
        `${fmt(Math.min(...ratios), 2)}–${fmt(Math.max(...ratios), 2)}`, fmt(med((r) => r.missOverNoCache), 3), fmt(med((r) => r.repeated)), fmt(med((r) => r.hit), 2)]);
    }
  }
  emit('### Summary');
  emit();
  emit(`Each build measured in ${PROCESSES} processes${baselinePath ? ', alternating with the baseline\'s' : ''} (the tables above are the first of this build's); the medians over processes, and the range of the ratio.`);
  emit();
  emit(table(['corpus', 'build', 'oql unique, default µs', 'libpg-query unique µs', 'ratio (median)', 'ratio range', 'miss / cache: false', 'repeated, cache: false µs', 'cache hit µs'], rows));
  emit();
  if (baselinePath) emit(`Baseline: ${baselineLabel}; compare the ratios, which carry each process's own libpg-query figures.\n`);
  emit(HISTORY);
  writeFileSync(fragment, `${out.join('\n')}\n`);
  progress(`interleaved: wrote ${fragment}`);
}

await main();
