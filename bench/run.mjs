#!/usr/bin/env node
// Runs the benchmarks and writes bench/RESULTS.md. `npm run bench` builds first, then runs this.
//
//   node bench/run.mjs               every part
//   node bench/run.mjs compile       compile speed per query, cache, cold start, catalog load
//   node bench/run.mjs interleaved   the real workload: a stream of different texts, vs libpg-query
//   node bench/run.mjs unseen        texts nobody tuned for: reports over random catalogs in rotation, vs libpg-query; cold start
//   node bench/run.mjs corpora       realistic report families (hops, virtual relations, EXISTS, CASE, dates...) per corpus vs libpg-query; stages
//   node bench/run.mjs sql           emitted vs hand-written SQL on PostgreSQL 15
//   node bench/run.mjs filter        record filter and connector vs hand-written SQL on PostgreSQL 15
//   node bench/run.mjs fanout        fanout: 'exact' vs the fan-out vs hand-written pre-aggregation on PostgreSQL 15
//   node bench/run.mjs bodies        compile time of filter and connector bodies against their size, up to the caps
//
// OQL_BENCH_BASELINE=<another build's index.js> makes the interleaved, unseen, corpora and cold-start parts measure that
// build too, in the same rounds, for before/after ratios (corpora also fails on any output that differs from it).
//
// Each part runs in its own process (bench/<part>.ts through tsx) against a snapshot of the
// built package, writes a Markdown fragment under bench/.data, and this script assembles
// RESULTS.md from the fragments. A part not run this time keeps its previous fragment, marked
// with the date it ran. Progress goes to stderr.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(BENCH);
const DATA = join(BENCH, '.data');
const PARTS = ['compile', 'interleaved', 'unseen', 'corpora', 'sql', 'filter', 'fanout', 'bodies'];

const asked = process.argv.slice(2);
const unknown = asked.filter((a) => !PARTS.includes(a));
if (unknown.length) {
  console.error(`unknown part ${unknown.join(', ')}; usage: node bench/run.mjs [compile] [interleaved] [unseen] [corpora] [sql] [filter] [fanout] [bodies]`);
  process.exit(2);
}
const parts = asked.length ? PARTS.filter((p) => asked.includes(p)) : PARTS;
const log = (m) => process.stderr.write(`[bench] ${m}\n`);

const dist = join(ROOT, 'dist', 'index.js');
if (!existsSync(dist)) {
  console.error('dist/index.js is missing: run `npm run build` first (`npm run bench` does)');
  process.exit(1);
}
// Other people may rebuild (and clean) dist/ while this runs: benchmark a private copy of it.
// The bundle is self-contained (chevrotain is inlined into grammar.cjs beside it), so the copy
// imports nothing from dist/.
mkdirSync(DATA, { recursive: true });
const snapshot = join(DATA, 'dist');
rmSync(snapshot, { recursive: true, force: true });
cpSync(join(ROOT, 'dist'), snapshot, { recursive: true });
const builtAt = statSync(dist).mtime;

const env = { ...process.env, OQL_BENCH_DIST: join(snapshot, 'index.js') };
const tsx = ['--import', 'tsx'];
let failed = false;
for (const part of parts) {
  const fragment = join(DATA, `results-${part}.md`);
  const started = new Date();
  log(`${part}: starting`);
  const flags = part === 'compile' ? ['--expose-gc', ...tsx] : tsx;
  const r = spawnSync(process.execPath, [...flags, join(BENCH, `${part}.ts`), `${fragment}.new`], { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] });
  const seconds = ((Date.now() - started.getTime()) / 1000).toFixed(0);
  if (r.status !== 0) {
    failed = true;
    log(`${part}: FAILED after ${seconds} s (exit ${r.status ?? r.signal})`);
    writeFileSync(fragment, `## ${part}: FAILED\n\nThe ${part} benchmark failed on ${started.toISOString()} (exit ${r.status ?? r.signal}); see its output.\n`);
    if (existsSync(`${fragment}.new`)) {
      writeFileSync(fragment, `${readFileSync(fragment, 'utf8')}\nPartial results:\n\n${readFileSync(`${fragment}.new`, 'utf8')}`);
    }
  } else {
    writeFileSync(fragment, `<!-- ran ${started.toISOString()} in ${seconds} s -->\n${readFileSync(`${fragment}.new`, 'utf8')}`);
    log(`${part}: done in ${seconds} s`);
  }
  rmSync(`${fragment}.new`, { force: true });
}

const cpuModel = (() => {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    return m ? m[1].trim() : cpus()[0]?.model ?? 'unknown';
  } catch {
    return cpus()[0]?.model ?? 'unknown';
  }
})();
const pgVersion = (() => {
  const bin = process.env.OQL_PG_BIN ?? '/usr/lib/postgresql/15/bin';
  const r = spawnSync(join(bin, 'postgres'), ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : 'not installed';
})();
const now = new Date();
// Sections of the RESULTS.md being replaced, by part: a part whose fragment is missing (a fresh
// clone has no bench/.data) keeps its figures from there instead of losing them. Each section
// starts with a `<!-- part: name -->` marker; files written before the markers existed hold the
// compile section, then the sql one, each opening with `<!-- ran`.
const previous = (() => {
  const file = join(BENCH, 'RESULTS.md');
  if (!existsSync(file)) return new Map();
  const text = readFileSync(file, 'utf8');
  const marked = [...text.matchAll(/^<!-- part: (\w+) -->\n/gm)];
  if (marked.length) {
    return new Map(marked.map((m, i) => [m[1], text.slice(m.index + m[0].length, marked[i + 1]?.index ?? text.length).replace(/^> From an earlier run[^\n]*\n\n/, '')]));
  }
  const ran = [...text.matchAll(/^(?:> From an earlier run[^\n]*\n\n)?<!-- ran /gm)];
  const legacy = ['compile', 'sql'];
  return new Map(ran.slice(0, legacy.length).map((m, i) => [legacy[i], text.slice(m.index, ran[i + 1]?.index ?? text.length).replace(/^> From an earlier run[^\n]*\n\n/, '')]));
})();
const sections = PARTS.map((part) => {
  const fragment = join(DATA, `results-${part}.md`);
  if (!existsSync(fragment) && previous.has(part)) {
    writeFileSync(fragment, previous.get(part).replace(/\n+$/, '\n'));
  }
  if (!existsSync(fragment)) return `## ${part}\n\nNot run yet: \`node bench/run.mjs ${part}\`.\n`;
  const text = readFileSync(fragment, 'utf8');
  if (parts.includes(part)) return text;
  const ran = /<!-- ran (\S+)/.exec(text)?.[1] ?? 'an earlier run';
  return `> From an earlier run (${ran}); this run did not include \`${part}\`.\n\n${text}`;
});

const head = `# Benchmark results

Written by \`npm run bench\` (\`node bench/run.mjs [compile|interleaved|unseen|corpora|sql|filter|fanout|bodies]\`); overwritten on every run. Sources: bench/.

| | |
| --- | --- |
| Date | ${now.toISOString()} |
| CPU | ${cpuModel} |
| Cores | ${cpus().length} |
| Memory | ${(totalmem() / 2 ** 30).toFixed(0)} GiB |
| Node | ${process.version} |
| PostgreSQL | ${pgVersion} |
| Package | \`dist/index.js\` built ${builtAt.toISOString()} |
| Parts this run | ${parts.join(', ')} |
`;
// Sections written by other scripts between their own markers (`npm run bench:server`,
// bench/pglite-supervisor.mjs): keep them.
const OWN_BLOCK = /<!-- ([\w-]+)-bench: begin -->\n[\s\S]*?<!-- \1-bench: end -->\n/g;
const ownBlocks = (() => {
  const file = join(BENCH, 'RESULTS.md');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  return [...text.matchAll(OWN_BLOCK)].map((m) => m[0]);
})();
const body = sections.map((text, i) => `<!-- part: ${PARTS[i]} -->\n${text.replace(OWN_BLOCK, '')}`).join('\n');
writeFileSync(join(BENCH, 'RESULTS.md'), `${head}\n${body}${ownBlocks.map((block) => `\n${block}`).join('')}`);
log(`wrote ${join(BENCH, 'RESULTS.md')}`);
process.exit(failed ? 1 : 0);
