/**
 * Compile speed on texts nobody tuned for: report queries generated over random catalogs
 * (random-catalog.ts, random-reports.ts), never the fixtures, each text compiled once, the
 * catalogs in rotation, as a service serving many organizations sees them. In one process, in
 * shuffled rounds: oql `compile` with the default options (the cache on: every call a miss) and
 * with `cache: false`, against libpg-query's parse of the same texts. Each call is timed on the
 * process's CPU clock (the machine is shared); the clock's own cost, measured in the same rounds,
 * is taken off. Then the cold start of the ES module entry beyond a bare `node`.
 *
 * OQL_BENCH_BASELINE=<another build's index.js> (OQL_BENCH_BASELINE_LABEL=<its name>) measures
 * that build too, in child processes alternating with this build's, for before/after figures.
 *
 * Run by bench/run.mjs (`node --import tsx bench/unseen.ts <fragment.md>`).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadModule, parseSync } from 'libpg-query';
import type { SizeClass } from './corpus.js';
import { BARE_NODE, BENCH_DIR, coldStartArgs, distPath, fmt, groupedMedian, loadDist, median, percentile, progress, rng, table, timedNode, type ChildRun, type OqlModule } from './lib.js';
import { randomShapes } from './random-catalog.js';
import { ReportGenerator } from './random-reports.js';
import { SYNTHETIC_TYPE_CODES, compactPayload, servicePayloadOf } from './synthetic-catalog.js';

const CATALOGS = Number(process.env.OQL_BENCH_UNSEEN_CATALOGS ?? 24);
const TEXTS_PER_ROUND = Number(process.env.OQL_BENCH_UNSEEN_TEXTS ?? 2000);
const ROUNDS = Number(process.env.OQL_BENCH_ROUNDS ?? 15);
const WARMUP_ROUNDS = 3;
const PROCESSES = Math.max(1, Number(process.env.OQL_BENCH_PROCESSES ?? 3));
const COLD_RUNS = Number(process.env.OQL_BENCH_COLD_RUNS ?? 30);
const SIZES: readonly SizeClass[] = ['short', 'typical', 'long'];
const MODES = ['oql, default options', 'oql, cache: false', 'libpg-query parse', 'clock'] as const;
type ModeName = (typeof MODES)[number];

type Catalog = ReturnType<OqlModule['loadCatalog']>;

interface Round {
  readonly texts: string[];
  readonly sizes: SizeClass[];
  readonly options: { catalog: Catalog; slug: string; orgId: string }[];
  readonly noCache: { catalog: Catalog; slug: string; orgId: string; cache: false }[];
}

/** Per mode: every measured call's CPU µs (clock included), its size class, and each round's mean. */
interface Samples {
  readonly calls: Map<ModeName, number[]>;
  readonly sizes: SizeClass[];
  readonly roundMeans: Map<ModeName, number[]>;
}

/** Figures of one process, after the clock's cost is taken off. */
export interface Summary {
  readonly mean: Record<string, number>;
  readonly p50: Record<string, number>;
  readonly p99: Record<string, number>;
  /** Median per size class, per mode. */
  readonly bySize: Record<string, Record<string, number>>;
  /** Median over rounds of oql's round mean / libpg-query's, per oql mode. */
  readonly roundRatio: Record<string, number>;
  readonly texts: number;
}

const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/**
 * The catalogs in rotation, as a service loads them: half from the compact form, half from the
 * service's object list, half completed with the audit fields.
 */
function catalogs(lib: OqlModule): { catalog: Catalog; generator: ReportGenerator }[] {
  return Array.from({ length: CATALOGS }, (_, k) => {
    const random = rng(0xca7a + k);
    const shapes = randomShapes(random);
    const loaded = k % 2 === 0 ? lib.loadCatalog(compactPayload(shapes)) : lib.loadCatalog(servicePayloadOf(shapes), { typeCodes: SYNTHETIC_TYPE_CODES });
    return { catalog: k % 4 < 2 ? lib.withAuditFields(loaded) : loaded, generator: new ReportGenerator(shapes, random) };
  });
}

/** Fresh texts for one round, over catalogs drawn at random; each is a flat string, as parsed out of a request body. */
function round(pool: ReturnType<typeof catalogs>, random: () => number): Round {
  const r: Round = { texts: [], sizes: [], options: [], noCache: [] };
  for (let i = 0; i < TEXTS_PER_ROUND; i++) {
    const { catalog, generator } = pool[Math.floor(random() * pool.length)]!;
    const q = generator.next();
    r.texts.push(JSON.parse(JSON.stringify(q.text)) as string);
    r.sizes.push(q.size);
    r.options.push({ catalog, slug: q.slug, orgId: 'org_bench' });
    r.noCache.push({ catalog, slug: q.slug, orgId: 'org_bench', cache: false });
  }
  return r;
}

/** Runs `call` on every text, reading the CPU clock between calls; returns each call's µs. */
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

function measure(lib: OqlModule): Samples {
  const pool = catalogs(lib);
  const random = rng(0x5eed);
  const samples: Samples = { calls: new Map(MODES.map((m) => [m, []])), sizes: [], roundMeans: new Map(MODES.map((m) => [m, []])) };
  // Every text must compile before anything is timed: an error would time the error path.
  const check = round(pool, random);
  check.texts.forEach((t, i) => {
    lib.compile(t, check.noCache[i]!);
    parseSync(t);
  });
  for (let k = 0; k < WARMUP_ROUNDS + ROUNDS; k++) {
    const r = round(pool, random);
    const runs: Record<ModeName, (i: number) => unknown> = {
      'oql, default options': (i) => lib.compile(r.texts[i]!, r.options[i]!),
      'oql, cache: false': (i) => lib.compile(r.texts[i]!, r.noCache[i]!),
      'libpg-query parse': (i) => parseSync(r.texts[i]!),
      clock: () => undefined,
    };
    const order = MODES.map((m) => [random(), m] as const).sort((a, b) => a[0] - b[0]).map(([, m]) => m);
    for (const m of order) {
      const us = timed(r.texts.length, runs[m]);
      if (k < WARMUP_ROUNDS) continue;
      samples.calls.get(m)!.push(...us);
      samples.roundMeans.get(m)!.push(us.reduce((a, b) => a + b, 0) / us.length);
    }
    if (k >= WARMUP_ROUNDS) samples.sizes.push(...r.sizes);
    progress(`unseen: round ${k + 1}/${WARMUP_ROUNDS + ROUNDS}${k < WARMUP_ROUNDS ? ' (warm-up)' : ''}`);
  }
  return samples;
}

function summarize(samples: Samples): Summary {
  const clock = groupedMedian(samples.calls.get('clock')!);
  const timedModes = MODES.filter((m) => m !== 'clock');
  const of = <T>(f: (xs: number[]) => T): Record<string, T> => Object.fromEntries(timedModes.map((m) => [m, f(samples.calls.get(m)!)]));
  const bySize = Object.fromEntries(SIZES.map((size) => [size, Object.fromEntries(timedModes.map((m) => {
    const xs = samples.calls.get(m)!.filter((_, i) => samples.sizes[i] === size);
    return [m, xs.length ? groupedMedian(xs) - clock : NaN];
  }))]));
  const pg = samples.roundMeans.get('libpg-query parse')!;
  const clockMeans = samples.roundMeans.get('clock')!;
  const roundRatio = Object.fromEntries(['oql, default options', 'oql, cache: false'].map((m) => [m,
    median(samples.roundMeans.get(m as ModeName)!.map((x, i) => (x - clockMeans[i]!) / (pg[i]! - clockMeans[i]!)))]));
  return {
    mean: of((xs) => xs.reduce((a, b) => a + b, 0) / xs.length - clock),
    p50: of((xs) => groupedMedian(xs) - clock),
    p99: of((xs) => percentile(xs, 99) - clock),
    bySize,
    roundRatio,
    texts: samples.sizes.length,
  };
}

/** One whole measurement of the build at `dist` in a child process (two builds in one heap would share its collections). */
function childSummary(dist: string, fragment: string): Summary {
  progress(`unseen: ${dist} in a child process`);
  const file = `${fragment}.child.json`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), file], {
    env: { ...process.env, OQL_BENCH_DIST: dist, OQL_BENCH_BASELINE: '', OQL_BENCH_SUMMARY_ONLY: '1' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`the child run of ${dist} failed (exit ${r.status ?? r.signal})`);
  const summary = JSON.parse(readFileSync(file, 'utf8')) as Summary;
  rmSync(file);
  return summary;
}

/**
 * The cold start of the ES module entry beyond a bare `node`, this build's and the baseline's in
 * the same rounds: the import alone (bench/cold-import.mjs), and the import, the example
 * catalog and one compile (bench/cold-start.mjs, as the compile part measures it); beside them an
 * empty ES module program, which is what Node's ES module loader costs any program.
 */
function coldStart(builds: readonly { label: string; dist: string }[]): (string | number)[][] {
  progress(`unseen: cold start (${COLD_RUNS} runs each)`);
  const importOnly = (dist: string) => [join(BENCH_DIR, 'cold-import.mjs'), dist];
  const empty = [join(BENCH_DIR, 'cold-start-empty.mjs')];
  const bare: ChildRun[] = [];
  const esm: ChildRun[] = [];
  const full = builds.map(() => [] as ChildRun[]);
  const imports = builds.map(() => [] as ChildRun[]);
  // One unmeasured run of each fills the OS file cache.
  timedNode(BARE_NODE);
  timedNode(empty);
  builds.forEach((b) => (timedNode(coldStartArgs(b.dist)), timedNode(importOnly(b.dist))));
  for (let i = 0; i < COLD_RUNS; i++) {
    bare.push(timedNode(BARE_NODE));
    esm.push(timedNode(empty));
    builds.forEach((b, k) => {
      imports[k]!.push(timedNode(importOnly(b.dist)));
      full[k]!.push(timedNode(coldStartArgs(b.dist)));
    });
  }
  const m = (xs: readonly ChildRun[], f: (x: ChildRun) => number) => median(xs.map(f));
  const wall = (xs: readonly ChildRun[]) => m(xs, (x) => x.ms) - m(bare, (x) => x.ms);
  // The fastest runs are the least disturbed by other work on a shared machine.
  const fastest = (xs: readonly ChildRun[]) => fmt(Math.min(...xs.map((x) => x.ms)) - Math.min(...bare.map((x) => x.ms)));
  const cpu = (xs: readonly ChildRun[]) => m(xs, (x) => x.out.cpuMs!) - m(bare, (x) => x.out.cpuMs!);
  const target = (ms: number) => `**${fmt(ms)}** (target ≤ 40: ${ms <= 40 ? 'met' : 'missed'})`;
  const rows: (string | number)[][] = [];
  builds.forEach((b, k) => {
    rows.push([b.label, '`import` of the entry alone', target(wall(imports[k]!)), fastest(imports[k]!), fmt(cpu(imports[k]!)), fmt(m(imports[k]!, (x) => x.out.import!)), '', '']);
    rows.push([b.label, 'import, example catalog, first compile', target(wall(full[k]!)), fastest(full[k]!), fmt(cpu(full[k]!)), fmt(m(full[k]!, (x) => x.out.import!)),
      fmt(m(full[k]!, (x) => x.out.catalog!)), fmt(m(full[k]!, (x) => x.out.compile!))]);
  });
  rows.push(['', 'an empty ES module program (Node\'s ES module loader; in every row above)', fmt(wall(esm)), fastest(esm), fmt(cpu(esm)), '', '', '']);
  rows.push(['', 'bare `node -e` itself (the baseline of the differences)', `${fmt(m(bare, (x) => x.ms))} wall`, `${fmt(Math.min(...bare.map((x) => x.ms)))} wall`, `${fmt(m(bare, (x) => x.out.cpuMs!))} CPU`, '', '', '']);
  return rows;
}

async function main(): Promise<void> {
  const fragment = process.argv[2] ?? join(BENCH_DIR, '.data', 'results-unseen.md');
  await loadModule();
  const lib = await loadDist();
  const first = summarize(measure(lib));
  if (process.env.OQL_BENCH_SUMMARY_ONLY === '1') {
    writeFileSync(fragment, JSON.stringify(first));
    return;
  }
  const baseline = process.env.OQL_BENCH_BASELINE || undefined;
  const baselineLabel = process.env.OQL_BENCH_BASELINE_LABEL ?? `\`${baseline}\``;
  const runs = new Map<string, Summary[]>([['this build', [first]]]);
  for (let i = 0; i < PROCESSES; i++) {
    if (i > 0) runs.get('this build')!.push(childSummary(distPath(), fragment));
    if (baseline) runs.set('baseline', [...(runs.get('baseline') ?? []), childSummary(baseline, fragment)]);
  }
  writeFileSync(fragment, report(runs, baselineLabel, coldStart([{ label: 'this build', dist: distPath() }, ...(baseline ? [{ label: 'baseline', dist: baseline }] : [])])));
  progress(`unseen: wrote ${fragment}`);
}

function report(runs: Map<string, Summary[]>, baselineLabel: string, cold: (string | number)[][]): string {
  const out: string[] = [];
  const emit = (s = ''): void => void out.push(s);
  const sample = new ReportGenerator(randomShapes(rng(0xca7a)), rng(1));
  const chars = Object.fromEntries(SIZES.map((s) => [s, median(Array.from({ length: 300 }, () => sample.next(s).text.length))]));
  emit('## Compile speed on unseen texts (built package)');
  emit();
  emit(`Texts nobody tuned for: report queries generated over ${CATALOGS} random catalogs (bench/random-catalog.ts, bench/random-reports.ts; 4 to 11 objects each, ` +
    'half loaded from the compact form and half from the service payload, half completed with the audit fields), never the fixtures: columns, dot paths, ' +
    'arithmetic, text and date functions, CASE and if, aggregates with GROUP BY, HAVING and ORDER BY, WHERE trees of AND, OR and NOT, IN lists and subqueries, ' +
    `EXISTS, one-to-many filters; 35% short (median ${chars.short} characters), 50% typical (${chars.typical}), 15% long (${chars.long}). ` +
    `Each round ${TEXTS_PER_ROUND.toLocaleString('en-US')} fresh texts over catalogs drawn at random, so no text is compiled twice by a mode and every call with the cache on is a miss; ` +
    `the modes run on the same texts in a shuffled order, ${ROUNDS} rounds after ${WARMUP_ROUNDS} warm-up rounds, in one process (so ${(ROUNDS * TEXTS_PER_ROUND).toLocaleString('en-US')} timed calls per mode). ` +
    'Every call is timed on the process\'s CPU clock (`process.cpuUsage`, 1 µs steps; the machine is shared), and the clock\'s own cost per call, measured in the same rounds, is taken off. ' +
    `Load average ${fmt(loadavg()[0]!, 1)} on ${cpus().length} cores at the start.`);
  emit();
  const ratio = (a: number, b: number) => fmt(a / b, 2);
  const rows: (string | number)[][] = [];
  for (const [label, per] of runs) {
    const med = (f: (s: Summary) => number) => median(per.map(f));
    for (const mode of ['oql, default options', 'oql, cache: false']) {
      const ratios = per.map((s) => s.roundRatio[mode]!);
      rows.push([label, `oql compile, ${mode.slice(5)}`, fmt(med((s) => s.mean[mode]!)), fmt(med((s) => s.p50[mode]!)), fmt(med((s) => s.p99[mode]!), 0),
        `**${fmt(median(ratios), 2)}** (${fmt(Math.min(...ratios), 2)}–${fmt(Math.max(...ratios), 2)})`,
        ratio(med((s) => s.p50[mode]!), med((s) => s.p50['libpg-query parse']!)), ratio(med((s) => s.p99[mode]!), med((s) => s.p99['libpg-query parse']!))]);
    }
    rows.push([label, 'libpg-query parse', fmt(med((s) => s.mean['libpg-query parse']!)), fmt(med((s) => s.p50['libpg-query parse']!)), fmt(med((s) => s.p99['libpg-query parse']!), 0), '1.00', '1.00', '1.00']);
  }
  emit(`Medians over ${runs.get('this build')!.length} processes${runs.has('baseline') ? ', alternating with the baseline\'s' : ''}; the ratio of means is the median over rounds of oql\'s round mean over libpg-query\'s (range over processes). Target ≤ 1.0×, moonshot 0.5×.`);
  emit();
  emit(table(['build', 'mode', 'mean µs per query', 'median µs', 'p99 µs', '**ratio of means** vs libpg-query', 'ratio of medians', 'ratio of p99'], rows));
  emit();
  const srows: (string | number)[][] = [];
  for (const [label, per] of runs) {
    for (const size of SIZES) {
      const med = (mode: string) => median(per.map((s) => s.bySize[size]![mode]!));
      srows.push([label, size, fmt(med('oql, default options')), fmt(med('oql, cache: false')), fmt(med('libpg-query parse')), ratio(med('oql, default options'), med('libpg-query parse'))]);
    }
  }
  emit('Per size class (median µs per query):');
  emit();
  emit(table(['build', 'class', 'oql, default options', 'oql, cache: false', 'libpg-query parse', 'ratio (default options)'], srows));
  emit();
  emit('### Cold start of the ES module entry');
  emit();
  emit(`A fresh \`node\` imports dist/index.js (bench/cold-import.mjs), or imports it, loads the example catalog (the service payload, 5 objects, 106 KB) and compiles one query (bench/cold-start.mjs); wall time from spawn to exit minus a bare \`node -e\`'s, medians of ${COLD_RUNS} interleaved runs; ` +
    'also the CPU time each child reports for itself minus the bare one\'s, and the phases timed inside the child. ' +
    `Load average ${fmt(loadavg()[0]!, 1)} on ${cpus().length} cores when measured: a busy machine inflates every figure, the bare \`node -e\` row shows by how much.`);
  emit();
  emit(table(['build', 'what the child does', 'beyond bare node, wall ms', 'fastest runs (min − min), wall ms', 'beyond bare node, CPU ms', 'import ms (inside)', 'catalog ms (inside)', 'first compile ms (inside)'], cold));
  emit();
  if (runs.has('baseline')) emit(`Baseline: ${baselineLabel}.\n`);
  return `${out.join('\n')}\n`;
}

await main();
