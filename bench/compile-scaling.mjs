#!/usr/bin/env node
// Compile and lint against the size of their text, construct by construct, and what the largest
// text costs another organization: `npm run bench:compile-scaling`
// (`node --import tsx bench/compile-scaling.mjs`).
//
// Part 1: each construct is grown to the largest text the 100,000-character cap admits (n), and
// lint and compile (uncached) are timed at n/8, n/4, n/2 and n: CPU time of this process, the best
// of OQL_BENCH_ROUNDS (default 5) rounds, so that other work on the machine does not decide. The
// slope is the least-squares fit of log(ms) against log(n): 1 is linear, 2 quadratic.
//
// Part 2: the service on an embedded database in this process, listening on loopback. Organization
// B sends a steady loop of /health and a small report (one at a time) for OQL_BENCH_SECONDS
// (default 5) alone, then as long again while organization A sends the 80 KB report of 16,000
// unknown functions to lint, execute and count, one after another. B's latency is wall time
// (what it waited), A's per request too.
//
// The figures replace the "Compile and lint against input size" section of bench/RESULTS.md and
// are printed to stdout.
import { cpus, loadavg, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { PGlite } from '@electric-sql/pglite';
import { compile } from '../src/compile.ts';
import { lint } from '../src/lint/lint.ts';
import { DEFAULT_SYNTAX_LIMITS } from '../src/syntax/parse.ts';
import { createServer, databaseOf } from '../src/server/index.ts';
import { loadFixtureCatalog } from '../fixtures/index.ts';
import { writeSection } from './results-file.mjs';
import { COMPILE_CONSTRUCTS as CONSTRUCTS, list } from '../test/support/compile-constructs.ts';

const ROUNDS = Number(process.env.OQL_BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.OQL_BENCH_SECONDS ?? 5);
const catalog = loadFixtureCatalog('crm');

const STAGES = {
  lint: (text) => lint(text, { catalog, slug: 'account' }),
  compile: (text) => {
    try {
      compile(text, { catalog, slug: 'account', orgId: 'org_bench', cache: false });
    } catch (e) {
      if (e?.name !== 'OqlError') throw e;
    }
  },
};

function largest(make) {
  let lo = 1;
  let hi = 2;
  while (make(hi).length <= DEFAULT_SYNTAX_LIMITS.maxLength) [lo, hi] = [hi, hi * 2];
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (make(mid).length <= DEFAULT_SYNTAX_LIMITS.maxLength) lo = mid;
    else hi = mid;
  }
  return lo;
}

function cpuMs(run) {
  const before = process.cpuUsage();
  run();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** Least-squares slope of log(y) against log(x). */
function slope(xs, ys) {
  const lx = xs.map(Math.log);
  const ly = ys.map((y) => Math.log(Math.max(y, 0.01)));
  const mx = lx.reduce((a, b) => a + b) / lx.length;
  const my = ly.reduce((a, b) => a + b) / ly.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < lx.length; i++) {
    num += (lx[i] - mx) * (ly[i] - my);
    den += (lx[i] - mx) ** 2;
  }
  return num / den;
}

const fmt = (x, digits = 1) => x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function scaling() {
  const rows = [];
  for (const [name, make] of Object.entries(CONSTRUCTS)) {
    const n = largest(make);
    const sizes = [Math.floor(n / 8), Math.floor(n / 4), Math.floor(n / 2), n];
    const texts = sizes.map(make);
    const row = { name, n, chars: texts[3].length };
    for (const [stage, run] of Object.entries(STAGES)) {
      for (const t of texts) run(t);
      const best = texts.map(() => Infinity);
      for (let r = 0; r < ROUNDS; r++) texts.forEach((t, i) => (best[i] = Math.min(best[i], cpuMs(() => run(t)))));
      row[stage] = { ms: best[3], slope: slope(sizes, best) };
    }
    rows.push(row);
    process.stderr.write(`${name}: lint ${fmt(row.lint.ms)} ms, compile ${fmt(row.compile.ms)} ms\n`);
  }
  return rows;
}

const KEYS = { a: 'bench-key-org-a-member-000001', b: 'bench-key-org-b-admin-0000002' };
const PAYLOAD = `SELECT ${list(16_000, () => 'f(1)')} FROM account LIMIT 10`;

function quantile(sorted, q) {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function neighbour() {
  const pglite = await PGlite.create();
  const server = await createServer({ db: databaseOf(pglite), env: {}, apiKeys: `${KEYS.a}=org_a:member:u_a,${KEYS.b}=org_b:superadmin:u_b` });
  // CPU of one payload request through the whole service (parse the body, lint or compile, render
  // the envelope), without the network: what each of A's requests takes from the event loop.
  const cpu = {};
  for (const [kind, path] of [['lint', '/api/v1/reports/lint'], ['execute', '/api/v1/reports/execute'], ['count', '/api/v1/reports/count']]) {
    cpu[kind] = Infinity;
    for (let r = 0; r < ROUNDS + 1; r++) {
      const before = process.cpuUsage();
      await server.app.inject({ method: 'POST', url: path, headers: { authorization: `Bearer ${KEYS.a}`, 'content-type': 'application/json' }, payload: JSON.stringify({ query: PAYLOAD, slug: 'account' }) });
      const used = process.cpuUsage(before);
      if (r > 0) cpu[kind] = Math.min(cpu[kind], (used.user + used.system) / 1000);
    }
  }
  await server.app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${server.app.server.address().port}`;
  const call = async (key, method, path, body) => {
    const t = performance.now();
    const res = await fetch(url + path, {
      method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}),
    });
    await res.arrayBuffer();
    return { status: res.status, ms: performance.now() - t };
  };
  const bLoop = async (until) => {
    const ms = [];
    let errors = 0;
    while (performance.now() < until) {
      for (const r of [await call(KEYS.b, 'GET', '/health'), await call(KEYS.b, 'POST', '/api/v1/reports/execute', { query: 'SELECT id, name FROM account ORDER BY id LIMIT 5', slug: 'account' })]) {
        ms.push(r.ms);
        if (r.status !== 200) errors++;
      }
    }
    return { ms: ms.sort((x, y) => x - y), errors };
  };
  try {
    await bLoop(performance.now() + 1000);
    const idle = await bLoop(performance.now() + SECONDS * 1000);
    const until = performance.now() + SECONDS * 1000;
    const a = { lint: [], execute: [], count: [] };
    const statuses = new Map();
    const attack = (async () => {
      while (performance.now() < until) {
        for (const [kind, path] of [['lint', '/api/v1/reports/lint'], ['execute', '/api/v1/reports/execute'], ['count', '/api/v1/reports/count']]) {
          const r = await call(KEYS.a, 'POST', path, { query: PAYLOAD, slug: 'account' });
          a[kind].push(r.ms);
          statuses.set(`${kind} ${r.status}`, (statuses.get(`${kind} ${r.status}`) ?? 0) + 1);
        }
      }
    })();
    const busy = await bLoop(until);
    await attack;
    return { idle, busy, a, statuses, cpu };
  } finally {
    await server.close();
    await pglite.close();
  }
}

/** Measured on the code before compile and lint were made linear (commit 90a0eb4), by test/lint/scaling.test.ts and by hand. */
const BEFORE = 'Before (commit 90a0eb4, the same machine under similar load): the 80 KB payload of 16,662 unknown functions took 12,077 ms of CPU to lint and 11,174 ms to compile (4,165 items: 526 and 517 ms); 16,000 items 9.3 s of wall time to lint, 4,000 items 0.5 s, a slope of 2.1. The issue measured 19 to 34 s over HTTP, with another organization waiting 20 to 30 s.';

const rows = scaling();
const other = await neighbour();
const median = (xs) => quantile([...xs].sort((x, y) => x - y), 0.5);
const lines = [];
lines.push('## Compile and lint against input size (`npm run bench:compile-scaling`)', '');
lines.push(`Ran ${new Date().toISOString()} on ${cpus().length} cores (${cpus()[0]?.model.trim()}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, load average ${loadavg().map((x) => x.toFixed(1)).join(' / ')} at the end. Script: bench/compile-scaling.mjs.`, '');
lines.push(`Each construct grown to the largest text the 100,000-character cap admits (n repetitions); lint and compile (uncached) of n/8, n/4, n/2 and n, CPU time of the process, best of ${ROUNDS} rounds. The slope is log(ms) against log(n), least squares: 1 is linear, 2 quadratic.`, '');
lines.push('| construct | n | characters | lint ms | lint slope | compile ms | compile slope |', '| --- | --- | --- | --- | --- | --- | --- |');
for (const r of rows) lines.push(`| ${r.name} | ${r.n.toLocaleString('en-US')} | ${r.chars.toLocaleString('en-US')} | ${fmt(r.lint.ms)} | ${fmt(r.lint.slope, 2)} | ${fmt(r.compile.ms)} | ${fmt(r.compile.slope, 2)} |`);
lines.push('');
lines.push(`The service on an embedded database, in this process: organization B loops over \`/health\` and a 5-row report, one request at a time, for ${SECONDS} s alone, then ${SECONDS} s while organization A sends the 80 KB report of 16,000 unknown functions to lint, execute and count, one after another (wall-clock ms).`, '');
lines.push('| | B requests | B p50 | B p99 | B max | B errors |', '| --- | --- | --- | --- | --- | --- |');
for (const [label, s] of [['B alone', other.idle], ['B beside A', other.busy]]) {
  lines.push(`| ${label} | ${s.ms.length} | ${fmt(quantile(s.ms, 0.5))} | ${fmt(quantile(s.ms, 0.99))} | ${fmt(s.ms[s.ms.length - 1])} | ${s.errors} |`);
}
lines.push('');
lines.push(`CPU of one payload request through the service (\`inject\`, best of ${ROUNDS}): ${Object.entries(other.cpu).map(([k, ms]) => `${k} ${fmt(ms)} ms`).join(', ')}. Wall times above are several times the CPU when the machine is loaded: the load average says how many processes shared its cores.`, '');
lines.push(BEFORE, '');
lines.push(`A's requests: ${Object.entries(other.a).map(([k, xs]) => `${k} ${xs.length} (median ${fmt(median(xs))} ms, max ${fmt(Math.max(...xs))} ms)`).join('; ')}; statuses ${[...other.statuses].map(([k, v]) => `${k}: ${v}`).join(', ')}.`, '');
const text = `${lines.join('\n')}\n`;
process.stdout.write(text);
writeSection('compile-scaling', text);
