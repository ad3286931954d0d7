/**
 * Compile-speed benchmark of the built package: our full compile() (cache off) against
 * parse-only runs of three SQL parsers on the same texts, linearity in query size, the cost of
 * a cache hit, cold start of a fresh process, and loading a very large catalog.
 *
 * Run by bench/run.mjs (`node --expose-gc --import tsx bench/compile.ts <fragment.md>`); writes a
 * Markdown fragment for bench/RESULTS.md and prints progress on stderr.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { Bench } from 'tinybench';
import { loadModule, parseSync } from 'libpg-query';
import { parse as pgsqlAstParse } from 'pgsql-ast-parser';
import NodeSqlParser from 'node-sql-parser';
import { corpus, scaledQuery, type CorpusQuery, type SizeClass } from './corpus.js';
import { BARE_NODE, BENCH_DIR, coldStartArgs, distPath, fixtureCatalog, fmt, loadDist, median, progress, table, timedNode, type OqlModule } from './lib.js';
import { SYNTHETIC_TYPE_CODES, compactCatalog, servicePayload } from './synthetic-catalog.js';

const TASK_TIME_MS = Number(process.env.OQL_BENCH_TASK_MS ?? 150);
const WARMUP_MS = 40;
const COLD_RUNS = Number(process.env.OQL_BENCH_COLD_RUNS ?? 20);
const SIZES: readonly SizeClass[] = ['short', 'typical', 'long'];

type ParserName = 'oql compile' | 'libpg-query' | 'pgsql-ast-parser' | 'node-sql-parser';
const PARSERS: readonly ParserName[] = ['oql compile', 'libpg-query', 'pgsql-ast-parser', 'node-sql-parser'];

interface Timing {
  readonly query: CorpusQuery;
  /** Median µs per parser; absent when the parser rejects the text. */
  readonly us: Partial<Record<ParserName, number>>;
}

const out: string[] = [];
const emit = (s = ''): void => void out.push(s);

async function main(): Promise<void> {
  const fragment = process.argv[2] ?? join(BENCH_DIR, '.data', 'results-compile.md');
  const lib = await loadDist();
  await loadModule();
  const catalogs = { crm: fixtureCatalog(lib, 'crm'), helpdesk: fixtureCatalog(lib, 'helpdesk') };
  const queries = corpus();
  const nsp = new NodeSqlParser.Parser();

  const run: Record<ParserName, (q: CorpusQuery) => unknown> = {
    'oql compile': (q) => lib.compile(q.text, { catalog: catalogs[q.fixture], slug: q.slug, orgId: 'org_bench', cache: false }),
    'libpg-query': (q) => parseSync(q.text),
    'pgsql-ast-parser': (q) => pgsqlAstParse(q.text),
    'node-sql-parser': (q) => nsp.astify(q.text, { database: 'PostgresQL' }),
  };

  // Every corpus query must compile; the other parsers may reject some texts (recorded).
  const rejected = new Map<ParserName, { id: string; error: string }[]>(PARSERS.map((p) => [p, []]));
  for (const q of queries) {
    for (const p of PARSERS) {
      try {
        run[p](q);
      } catch (e) {
        if (p === 'oql compile') throw new Error(`corpus query ${q.id} does not compile: ${(e as Error).message}\n${q.text}`);
        rejected.get(p)!.push({ id: q.id, error: firstLine((e as Error).message) });
      }
    }
  }
  progress(`compile: ${queries.length} corpus queries compile (${SIZES.map((s) => `${queries.filter((q) => q.size === s).length} ${s}`).join(', ')})`);

  emit('## Compile speed (built package, `dist/index.js`)');
  emit();
  emit(`Corpus: ${queries.length} report queries over the \`crm\` and \`helpdesk\` fixture catalogs (bench/corpus.ts): ` +
    `${SIZES.map((s) => `${queries.filter((q) => q.size === s).length} ${s}`).join(', ')}. Long = 40 select items and a 20-term WHERE (AND groups joined by OR). ` +
    `Each (query, parser) pair is one tinybench task (${WARMUP_MS} ms warm-up, ${TASK_TIME_MS} ms of iterations, each iteration repeating the call to last ~200 µs); a class's number is the median over its queries of the per-query median. ` +
    '`oql compile` is the full pipeline (lex, parse, validate, bind, plan, emit) with `cache: false`; the others only parse. ' +
    (CLOCK === 'cpu'
      ? `Clock: the process's CPU time (\`process.cpuUsage\`), not wall time, because the machine is shared (load average ${fmt(loadavg()[0]!, 1)} on ${cpus().length} cores at the start); \`OQL_BENCH_CLOCK=wall\` measures wall time.`
      : 'Clock: wall time (`performance.now`).'));
  emit();

  const timings = await timeCorpus(queries, run, rejected);
  reportCorpus(timings, rejected);
  await stages(lib, catalogs, queries);
  await linearity(lib, catalogs.crm);
  await cacheHit(lib, catalogs);
  coldStart();
  catalogScale(lib);

  writeFileSync(fragment, `${out.join('\n')}\n`);
  progress(`compile: wrote ${fragment}`);
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.slice(0, 90);
}

/**
 * The clock: the process's CPU time (user + system, µs resolution) by default, because these
 * machines are shared and wall time under a load of other jobs measures the scheduler, not the
 * code; OQL_BENCH_CLOCK=wall switches to performance.now().
 */
export const CLOCK = process.env.OQL_BENCH_CLOCK === 'wall' ? 'wall' : 'cpu';
const cpuNowMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const timestampProvider = CLOCK === 'cpu'
  ? { name: 'process.cpuUsage', fn: cpuNowMs, fromMs: (ms: number) => ms, toMs: (v: number | bigint) => Number(v) }
  : undefined;

/** Calls per timed iteration, so one iteration lasts ~200 µs and the clock's 1 µs step does not matter. */
function repeatFor(fn: () => unknown): number {
  const t = performance.now();
  let n = 0;
  while (performance.now() - t < 5) {
    fn();
    n++;
  }
  const us = (5000 / n);
  return Math.max(1, Math.min(100, Math.round(200 / us)));
}

/** Median µs per call of each task. */
async function timeTasks(tasks: readonly [string, () => unknown][]): Promise<Map<string, number>> {
  const bench = new Bench({ time: TASK_TIME_MS, warmupTime: WARMUP_MS, throws: true, ...(timestampProvider ? { timestampProvider } : {}) });
  const repeats = new Map<string, number>();
  for (const [name, fn] of tasks) {
    const k = repeatFor(fn);
    repeats.set(name, k);
    bench.add(name, k === 1 ? fn : () => {
      for (let i = 0; i < k; i++) fn();
    });
  }
  await bench.run();
  const us = new Map<string, number>();
  for (const task of bench.tasks) {
    const r = task.result;
    if (r.state !== 'completed') throw new Error(`task ${task.name} ended ${r.state}`);
    us.set(task.name, (r.latency.p50 * 1000) / repeats.get(task.name)!);
  }
  return us;
}

async function timeCorpus(
  queries: readonly CorpusQuery[], run: Record<ParserName, (q: CorpusQuery) => unknown>, rejected: Map<ParserName, { id: string }[]>,
): Promise<Timing[]> {
  const timings: Timing[] = [];
  // Query by query, all parsers of one query together, so drift hits every parser alike.
  for (const [i, q] of queries.entries()) {
    const tasks: [string, () => unknown][] = [];
    for (const p of PARSERS) if (!rejected.get(p)!.some((r) => r.id === q.id)) tasks.push([p, () => run[p](q)]);
    const us = await timeTasks(tasks);
    timings.push({ query: q, us: Object.fromEntries(us) as Partial<Record<ParserName, number>> });
    if ((i + 1) % 6 === 0 || i === queries.length - 1) progress(`compile: timed ${i + 1}/${queries.length} queries`);
  }
  return timings;
}

function reportCorpus(timings: readonly Timing[], rejected: Map<ParserName, { id: string; error: string }[]>): void {
  const rows: (string | number)[][] = [];
  for (const size of SIZES) {
    const ts = timings.filter((t) => t.query.size === size);
    const med = (p: ParserName, subset = ts) => median(subset.flatMap((t) => (t.us[p] === undefined ? [] : [t.us[p]!])));
    const n = (p: ParserName) => ts.filter((t) => t.us[p] !== undefined).length;
    const ratios = ts.map((t) => t.us['oql compile']! / t.us['libpg-query']!);
    const chars = median(ts.map((t) => t.query.text.length));
    rows.push([
      size, ts.length, fmt(chars, 0),
      ...PARSERS.map((p) => `${fmt(med(p))}${n(p) < ts.length ? ` (${n(p)}/${ts.length})` : ''}`),
      fmt(med('oql compile') / med('libpg-query'), 2), fmt(median(ratios), 2),
    ]);
  }
  emit('### Per class: median µs per query');
  emit();
  emit(table(['class', 'queries', 'median chars', ...PARSERS.map((p) => `${p} µs`), 'ours / libpg-query (ratio of medians)', 'median of per-query ratios'], rows));
  emit();
  emit('A count in parentheses means the parser rejected the other texts of the class; its median is over the texts it accepts.');
  emit();

  // The same comparison restricted to texts that every parser accepts.
  const common = timings.filter((t) => PARSERS.every((p) => t.us[p] !== undefined));
  const crows = SIZES.map((size) => {
    const ts = common.filter((t) => t.query.size === size);
    return [size, ts.length, ...PARSERS.map((p) => fmt(median(ts.map((t) => t.us[p]!)))), fmt(median(ts.map((t) => t.us['oql compile']! / t.us['libpg-query']!)), 2)];
  });
  emit('### Texts accepted by all four parsers');
  emit();
  emit(table(['class', 'queries', ...PARSERS.map((p) => `${p} µs`), 'ours / libpg-query'], crows));
  emit();

  emit('### Rejections (excluded from that parser\'s medians)');
  emit();
  const rrows = PARSERS.slice(1).flatMap((p) => rejected.get(p)!.map((r) => [p, r.id, r.error]));
  emit(rrows.length ? table(['parser', 'query', 'error'], rrows) : 'None.');
  emit();

  emit('<details><summary>Per-query medians (µs)</summary>');
  emit();
  emit(table(['query', 'chars', ...PARSERS, 'ours / libpg-query'], timings.map((t) => [
    t.query.id, t.query.text.length, ...PARSERS.map((p) => (t.us[p] === undefined ? 'rejected' : fmt(t.us[p]!))), fmt(t.us['oql compile']! / t.us['libpg-query']!, 2),
  ])));
  emit();
  emit('</details>');
  emit();
}

/** Where the time goes: parse only, parse..plan (check), and the whole compile. */
async function stages(lib: OqlModule, catalogs: Record<'crm' | 'helpdesk', ReturnType<typeof fixtureCatalog>>, queries: readonly CorpusQuery[]): Promise<void> {
  progress('compile: stage breakdown');
  const rows: (string | number)[][] = [];
  for (const size of SIZES) {
    const qs = queries.filter((q) => q.size === size);
    const tasks: [string, () => unknown][] = [];
    // One task per stage runs the whole class, so the numbers are per class, divided below.
    tasks.push(['parse', () => { for (const q of qs) lib.parse(q.text); }]);
    tasks.push(['check', () => { for (const q of qs) lib.check(q.text, { catalog: catalogs[q.fixture], slug: q.slug }); }]);
    tasks.push(['compile', () => { for (const q of qs) lib.compile(q.text, { catalog: catalogs[q.fixture], slug: q.slug, orgId: 'org_bench', cache: false }); }]);
    const us = await timeTasks(tasks);
    const per = (k: string) => us.get(k)! / qs.length;
    rows.push([size, fmt(per('parse')), fmt(per('check') - per('parse')), fmt(per('compile') - per('check')), fmt(per('compile')),
      `${fmt((100 * per('parse')) / per('compile'), 0)}%`]);
  }
  emit('### Stage breakdown (mean µs per query of the class)');
  emit();
  emit('`parse` = `parse()` (lexer + Chevrotain parser + tree checks); `validate+bind+plan` = `check()` − `parse()`; `emit+cache bookkeeping` = `compile()` − `check()`.');
  emit();
  emit(table(['class', 'parse', 'validate+bind+plan', 'emit + rest', 'compile', 'parse share'], rows));
  emit();
}

async function linearity(lib: OqlModule, catalog: ReturnType<typeof fixtureCatalog>): Promise<void> {
  progress('compile: linearity');
  const factors = [1, 4, 16];
  const texts = factors.map((f) => scaledQuery(f));
  for (const t of texts) lib.compile(t, { catalog, slug: 'opportunity', orgId: 'org_bench', cache: false });
  const tasks: [string, () => unknown][] = [];
  texts.forEach((t, i) => {
    tasks.push([`oql ${factors[i]}`, () => lib.compile(t, { catalog, slug: 'opportunity', orgId: 'org_bench', cache: false })]);
    tasks.push([`libpg ${factors[i]}`, () => parseSync(t)]);
  });
  const us = await timeTasks(tasks);
  const base = us.get('oql 1')!;
  const pgBase = us.get('libpg 1')!;
  emit('### Linearity');
  emit();
  emit('The portable long CRM query at 1×, 4× and 16× size (8·k select items and a 5·k-term WHERE).');
  emit();
  emit(table(['size', 'select items', 'WHERE terms', 'chars', 'oql compile µs', 'vs 1×', 'µs per item+term', 'libpg-query µs', 'vs 1×'], factors.map((f, i) => [
    `${f}×`, 8 * f, 5 * f, texts[i]!.length, fmt(us.get(`oql ${f}`)!), fmt(us.get(`oql ${f}`)! / base, 2),
    fmt(us.get(`oql ${f}`)! / (13 * f), 2), fmt(us.get(`libpg ${f}`)!), fmt(us.get(`libpg ${f}`)! / pgBase, 2),
  ])));
  emit();
  emit(`Perfectly linear would be 4.00 and 16.00 in the "vs 1×" column.`);
  emit();
}

async function cacheHit(lib: OqlModule, catalogs: Record<'crm' | 'helpdesk', ReturnType<typeof fixtureCatalog>>): Promise<void> {
  progress('compile: cache');
  const picks = ['short-0', 'typical-0', 'long-crm-portable-3'];
  const qs = corpus().filter((q) => picks.includes(q.id));
  lib.clearCompileCache();
  const tasks: [string, () => unknown][] = [];
  for (const q of qs) {
    const o = { catalog: catalogs[q.fixture], slug: q.slug, orgId: 'org_bench' };
    lib.compile(q.text, o); // fills the cache
    tasks.push([`hit ${q.id}`, () => lib.compile(q.text, o)]);
    tasks.push([`miss ${q.id}`, () => lib.compile(q.text, { ...o, cache: false })]);
  }
  const us = await timeTasks(tasks);
  emit('### Compiled-query cache');
  emit();
  emit('The same text compiled again with the cache on (the default) vs a full compile (`cache: false`).');
  emit();
  emit(table(['query', 'chars', 'hit µs', 'miss µs', 'miss / hit'], qs.map((q) => [
    q.id, q.text.length, fmt(us.get(`hit ${q.id}`)!, 2), fmt(us.get(`miss ${q.id}`)!), fmt(us.get(`miss ${q.id}`)! / us.get(`hit ${q.id}`)!, 0),
  ])));
  emit();
}

function coldStart(): void {
  progress(`compile: cold start (${COLD_RUNS} runs each)`);
  const args = coldStartArgs(distPath());
  const script = args[0]!;
  // The baseline prints its own CPU time too, so both sides are measured the same way.
  const baseline = [...BARE_NODE];
  const wall = timedNode;
  // An ES module program from a file that does nothing of oql (cold-start.mjs is one): what Node
  // costs any such program, so the difference to it is what the library adds.
  const esmBaseline = [join(BENCH_DIR, 'cold-start-empty.mjs')];
  const cjsArgs = [join(BENCH_DIR, 'cold-start.cjs'), join(dirname(distPath()), 'index.cjs'), ...args.slice(2)];
  // OQL_BENCH_BASELINE (another build's index.js, as for the interleaved part): its cold start
  // in the same rounds, for before/after figures that share this run's machine state.
  const before = process.env.OQL_BENCH_BASELINE ? [script, process.env.OQL_BENCH_BASELINE, ...args.slice(2)] : null;
  // One unmeasured run of each fills the OS file cache.
  wall(baseline);
  wall(args);
  wall(esmBaseline);
  wall(cjsArgs);
  if (before) wall(before);
  const empty: { ms: number; out: Record<string, number> }[] = [];
  const full: { ms: number; out: Record<string, number> }[] = [];
  const emptyEsm: { ms: number; out: Record<string, number> }[] = [];
  const cjs: { ms: number; out: Record<string, number> }[] = [];
  const previous: { ms: number; out: Record<string, number> }[] = [];
  for (let i = 0; i < COLD_RUNS; i++) {
    empty.push(wall(baseline));
    full.push(wall(args));
    emptyEsm.push(wall(esmBaseline));
    cjs.push(wall(cjsArgs));
    if (before) previous.push(wall(before));
  }
  const m = (xs: typeof full, f: (x: (typeof full)[number]) => number) => median(xs.map(f));
  const firstError = Array.from({ length: Math.min(COLD_RUNS, 10) }, () => wall([...args, '--first-error']));
  const net = m(full, (x) => x.ms) - m(empty, (x) => x.ms);
  const netCpu = m(full, (x) => x.out.cpuMs!) - m(empty, (x) => x.out.cpuMs!);
  const load = loadavg()[0]!;
  emit('### Cold start');
  emit();
  emit('A fresh `node` process imports `dist/index.js`, reads and loads the example catalog (`fixtures/crm/objects-list.json`, the service payload, 5 objects) and compiles one query (bench/cold-start.mjs). ' +
    `Wall time from spawn to exit, median of ${COLD_RUNS} runs, minus the median of a bare \`node -e\` (interleaved runs); also the CPU time each child reports for itself, minus the same of the bare one. ` +
    `Load average when measured: ${fmt(load, 1)} on ${cpus().length} cores${load > cpus().length ? ' (busy: wall times are inflated by waiting for a CPU; the CPU-time row is the steadier one)' : ''}.`);
  emit();
  emit(table(['measure', 'ms'], [
    ['bare `node -e` (baseline), wall', fmt(m(empty, (x) => x.ms))],
    ['import + load catalog + compile one query, wall', fmt(m(full, (x) => x.ms))],
    ['**cold start, wall (difference)**', `**${fmt(net)}** (target ≤ 40: ${net <= 40 ? 'met' : 'MISSED'})`],
    ['cold start, wall, fastest runs (min − min; the least disturbed by other jobs)', fmt(Math.min(...full.map((x) => x.ms)) - Math.min(...empty.map((x) => x.ms)))],
    ['**cold start, CPU time (difference)** (all threads, so V8\'s background compiler and GC count too)', `**${fmt(netCpu)}**`],
    ['inside the child: `import()` of dist/index.js', fmt(m(full, (x) => x.out.import!))],
    ['inside the child: read + JSON.parse + loadCatalog', fmt(m(full, (x) => x.out.catalog!))],
    ['inside the child: first parse() of a valid query (the hand-written parser; Chevrotain is not loaded)', fmt(m(full, (x) => x.out.parser!))],
    ['inside the child: first compile()', fmt(m(full, (x) => x.out.compile!))],
    ['inside the child: a second compile() of another query', fmt(m(full, (x) => x.out.second!), 2)],
    ['an empty ES module program (bench/cold-start-empty.mjs), wall beyond bare node: Node\'s ES module loader and clocks, which any such program pays (the rows above include it)', fmt(m(emptyEsm, (x) => x.ms) - m(empty, (x) => x.ms))],
    ['**what the library adds to an ES module program**: cold start beyond the empty ES module program, wall / CPU', `**${fmt(m(full, (x) => x.ms) - m(emptyEsm, (x) => x.ms))}** / ${fmt(m(full, (x) => x.out.cpuMs!) - m(emptyEsm, (x) => x.out.cpuMs!))}`],
    ['**the same cold start through CommonJS** (`require` of dist/index.cjs, bench/cold-start.cjs), wall (difference)', `**${fmt(m(cjs, (x) => x.ms) - m(empty, (x) => x.ms))}**`],
    ['the same through CommonJS, CPU time (difference)', fmt(m(cjs, (x) => x.out.cpuMs!) - m(empty, (x) => x.out.cpuMs!))],
    ['inside the CommonJS child: `require` / catalog / first compile()', `${fmt(m(cjs, (x) => x.out.import!))} / ${fmt(m(cjs, (x) => x.out.catalog!))} / ${fmt(m(cjs, (x) => x.out.compile!))}`],
    ...(before ? [[
      `the baseline build (${process.env.OQL_BENCH_BASELINE_LABEL ?? `\`${before[1]}\``}), measured in the same rounds: cold start wall / CPU (difference); import / catalog / first compile() inside the child`,
      `${fmt(m(previous, (x) => x.ms) - m(empty, (x) => x.ms))} / ${fmt(m(previous, (x) => x.out.cpuMs!) - m(empty, (x) => x.out.cpuMs!))}; ${fmt(m(previous, (x) => x.out.import!))} / ${fmt(m(previous, (x) => x.out.catalog!))} / ${fmt(m(previous, (x) => x.out.compile!))}`,
    ]] : []),
    ['in other runs, after the above: the first invalid text (reads dist/grammar.cjs and builds the Chevrotain parser for its diagnostic; once per process)', fmt(m(firstError, (x) => x.out.firstError!))],
  ]));
  emit();
  buildCosts();
}

/**
 * What the Chevrotain side costs a fresh process, on the built package: reading dist/grammar.cjs
 * (which a process that compiles only valid queries never does), building the parser (at the
 * first text the compiler's parser gives up on) and building the lexer (only the tests do).
 */
function buildCosts(): void {
  const script = [
    'const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };',
    `const a = cpu(); const g = require(${JSON.stringify(join(dirname(distPath()), 'grammar.cjs'))}); const b = cpu();`,
    'g.getParser(); const c = cpu(); g.getLexer(); const d = cpu();',
    'process.stdout.write(JSON.stringify({ load: b - a, parser: c - b, lexer: d - c }));',
  ].join('\n');
  const runs: { load: number; parser: number; lexer: number }[] = [];
  for (let i = 0; i < Math.min(COLD_RUNS, 10); i++) {
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`build-cost child failed: ${r.stderr}`);
    runs.push(JSON.parse(r.stdout) as { load: number; parser: number; lexer: number });
  }
  emit('The Chevrotain grammar in a fresh process (dist/grammar.cjs, CPU time, median of ' + `${runs.length} runs):`);
  emit();
  emit(table(['part', 'CPU ms'], [
    ['`require` of dist/grammar.cjs (Chevrotain and the grammar; read only for an invalid text)', fmt(median(runs.map((r) => r.load)))],
    ['Chevrotain parser: grammar recording and lookahead computation (performSelfAnalysis), paid at the first invalid text', fmt(median(runs.map((r) => r.parser)))],
    ['Chevrotain lexer from the token definitions (never built by the compiler: lex() reads the text directly; the tests\' oracle)', fmt(median(runs.map((r) => r.lexer)))],
  ]));
  emit();
}

function catalogScale(lib: OqlModule): void {
  const OBJECTS = 500;
  const COLUMNS = 200;
  progress(`compile: catalog of ${OBJECTS} objects x ${COLUMNS} columns`);
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc (bench/run.mjs does)');
  const rows: (string | number)[][] = [];
  for (const [form, make, options] of [['compact form', compactCatalog, {}], ['service payload ({success, data})', servicePayload, { typeCodes: SYNTHETIC_TYPE_CODES }]] as const) {
    const payload = make(OBJECTS, COLUMNS);
    const json = JSON.stringify(payload);
    const times: number[] = [];
    const cpuTimes: number[] = [];
    let growth = 0;
    const runs = 5;
    for (let i = 0; i < runs; i++) {
      gc();
      gc();
      const before = process.memoryUsage().heapUsed;
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      let catalog: unknown = lib.loadCatalog(payload, options);
      const c1 = process.cpuUsage(c0);
      times.push(performance.now() - t0);
      cpuTimes.push((c1.user + c1.system) / 1000);
      gc();
      gc();
      growth = process.memoryUsage().heapUsed - before;
      if (!catalog) throw new Error('no catalog');
      catalog = null;
    }
    const columns = OBJECTS * COLUMNS;
    rows.push([form, `${fmt(json.length / 1e6, 1)} MB`, fmt(median(times), 0), fmt(Math.min(...times), 0), fmt(median(cpuTimes), 0), `${fmt(growth / 1e6, 1)} MB`, `${fmt(growth / columns, 0)} B`]);
  }
  emit(`### Catalog of ${OBJECTS} objects × ${COLUMNS} columns`);
  emit();
  emit('A synthetic catalog (bench/synthetic-catalog.ts: every logical type, to-one relations to other objects, virtual relations back) ' +
    'loaded with `loadCatalog` from an already-parsed payload, 5 runs; heap growth = `heapUsed` after − before, with the catalog still referenced, after forced GCs.');
  emit();
  emit(table(['input', 'JSON size', 'loadCatalog median ms (wall)', 'min ms (wall)', 'median ms (CPU, all threads)', 'heap growth', 'per column'], rows));
  emit();
}

await main();
