#!/usr/bin/env node
// The embedded database in its own process (src/run/drivers/pglite/supervisor.ts): what the process costs
// and how it recovers. `node --import tsx bench/pglite-supervisor.mjs`.
//
//   open       starting the process and opening PGlite: an empty directory (initdb) and an existing one;
//              PGlite opened on this thread beside it
//   restart    a statement killed at its budget, until the new process answers (median of 10), each
//              after 3.5 s, when the spare is ready
//   overhead   a small SELECT by primary key, 2,000 times one after the other, through the process and
//              on PGlite in this thread (same data, same decoders), in alternating blocks of 250
//   recovery   20 rounds of: 20 committed INSERTs, then a 5-million-row INSERT killed part-way at a
//              random point (300 to 1,500 ms); each round checks that every commit and none of the
//              cut-off rows are there; at the end amcheck verifies every index against the heap
//
// OQL_BENCH_ROUNDS (default 20) sets the recovery rounds, OQL_BENCH_QUERIES (default 2000) the
// overhead's queries. The figures replace the "Embedded database in its own process" section of
// bench/RESULTS.md and are printed to stdout; progress goes to stderr.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { amcheck } from '@electric-sql/pglite/contrib/amcheck';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { TEXT_PARSERS } from '../src/run/decode.ts';
import { EmbeddedDatabase } from '../src/run/drivers/pglite/supervisor.ts';
import { treeRss } from './lib.ts';
import { writeSection } from './results-file.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.OQL_BENCH_ROUNDS ?? 20);
const QUERIES = Number(process.env.OQL_BENCH_QUERIES ?? 2000);
const BLOCK = 250;
const log = (m) => process.stderr.write(`[bench:pglite-worker] ${m}\n`);
const fmt = (n, digits = 2) => (n === undefined || Number.isNaN(n) ? '–' : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));
const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const median = (values) => quantile(values, 0.5);
const fds = () => readdirSync('/proc/self/fd').length;
// This process and the database's processes (the running one and the spare).
const rssMb = () => treeRss() / 2 ** 20;
const work = mkdtempSync(join(tmpdir(), 'oql-bench-pglite-'));
const started = new Date();
const loadBefore = loadavg();

async function timed(fn) {
  const t = performance.now();
  const value = await fn();
  return [performance.now() - t, value];
}

// ---- open

// Initialised once (initdb is the slow part of the first open); the other parts start from copies.
const TEMPLATE = join(work, 'open');

/** A fresh copy of the initialised directory. */
function copyOfTemplate(name) {
  const dir = join(work, name);
  cpSync(TEMPLATE, dir, { recursive: true });
  return dir;
}

async function benchOpen() {
  const dir = TEMPLATE;
  const [fresh, db] = await timed(() => EmbeddedDatabase.open({ dataDir: dir }));
  await db.close();
  const existing = [];
  const inThread = [];
  for (let i = 0; i < 5; i++) {
    const [ms, again] = await timed(() => EmbeddedDatabase.open({ dataDir: dir }));
    existing.push(ms);
    await again.close();
    const [ms2, local] = await timed(() => PGlite.create({ dataDir: dir, extensions: { pg_trgm } }));
    inThread.push(ms2);
    await local.close();
  }
  log(`open: empty ${fmt(fresh, 0)} ms, existing ${fmt(median(existing), 0)} ms (in-thread ${fmt(median(inThread), 0)} ms)`);
  return { fresh, existing: median(existing), inThread: median(inThread) };
}

// ---- restart and overhead, on one database

const ROW_SQL = 'SELECT id, name, amount, created_at, tags FROM item WHERE id = $1';
const SETUP = `
  CREATE TABLE item (id int PRIMARY KEY, name text, amount numeric, created_at timestamptz, tags text[]);
  INSERT INTO item SELECT g, 'item ' || g, g * 1.5, timestamptz '2024-01-01' + g * interval '1 hour', ARRAY['a', 'b']
    FROM generate_series(1, 1000) g;`;

async function benchRestartAndOverhead() {
  const db = await EmbeddedDatabase.open({ dataDir: copyOfTemplate('main'), timeoutMs: 60_000, restartWaitMs: 120_000 });
  const local = await PGlite.create({ extensions: { pg_trgm } });
  await db.exec(SETUP);
  await local.exec(SETUP);

  const restarts = [];
  const untilAnswer = [];
  for (let i = 0; i < 10; i++) {
    // The spare starts a few seconds after a process is taken into service: a restart after a quiet
    // moment finds it ready (the recovery rounds below kill without waiting, and measure the other case).
    await new Promise((r) => setTimeout(r, 3_500));
    const killedAt = performance.now() + 200;
    await db.query('SELECT pg_sleep(30)', [], { timeoutMs: 200 }).catch(() => {});
    await db.query('SELECT 1');
    untilAnswer.push(performance.now() - killedAt);
    restarts.push(db.stats().lastRestartMs);
  }
  log(`restart: median ${fmt(median(restarts), 0)} ms (until the next answer ${fmt(median(untilAnswer), 0)} ms)`);

  const worker = [];
  const inThread = [];
  const parsers = { ...TEXT_PARSERS };
  for (let i = 0; i < 200; i++) {
    await db.query(ROW_SQL, [1 + (i % 1000)]);
    await local.query(ROW_SQL, [1 + (i % 1000)], { parsers });
  }
  for (let done = 0; done < QUERIES; done += BLOCK) {
    for (let i = 0; i < BLOCK; i++) {
      const id = 1 + ((done + i) % 1000);
      worker.push((await timed(() => db.query(ROW_SQL, [id])))[0]);
    }
    for (let i = 0; i < BLOCK; i++) {
      const id = 1 + ((done + i) % 1000);
      inThread.push((await timed(() => local.query(ROW_SQL, [id], { parsers })))[0]);
    }
  }
  const overhead = {
    worker: { p50: median(worker), p99: quantile(worker, 0.99), mean: worker.reduce((a, b) => a + b, 0) / worker.length },
    inThread: { p50: median(inThread), p99: quantile(inThread, 0.99), mean: inThread.reduce((a, b) => a + b, 0) / inThread.length },
  };
  log(`overhead: worker p50 ${fmt(overhead.worker.p50, 3)} ms, in-thread p50 ${fmt(overhead.inThread.p50, 3)} ms`);
  await db.close();
  await local.close();
  return { restart: median(restarts), untilAnswer: median(untilAnswer), restartMax: Math.max(...restarts), overhead };
}

// ---- recovery

async function benchRecovery() {
  const dir = copyOfTemplate('recovery');
  const db = await EmbeddedDatabase.open({ dataDir: dir, timeoutMs: 60_000, restartWaitMs: 120_000 });
  await db.exec('CREATE TABLE churn (id bigint PRIMARY KEY, round int NOT NULL, pad text); CREATE INDEX churn_round ON churn (round)');
  const fdsBefore = fds();
  const rssBefore = rssMb();
  let committed = 0;
  let clean = 0;
  const problems = [];
  const restartMs = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (let k = 0; k < 20; k++) {
      committed++;
      await db.query('INSERT INTO churn VALUES ($1, $2, $3)', [committed, round, 'committed']);
    }
    const budget = 300 + Math.floor(Math.random() * 1200);
    const cut = await db.query("INSERT INTO churn SELECT 1000000000 + g, $1, repeat('x', 200) FROM generate_series(1, 5000000) g", [round], { timeoutMs: budget })
      .then(() => null, (e) => e);
    const { rows } = await db.query('SELECT count(*)::int AS n, count(*) FILTER (WHERE id >= 1000000000)::int AS cut FROM churn');
    restartMs.push(db.stats().lastRestartMs);
    if (cut?.code === 'QUERY_TIMEOUT' && rows[0].n === committed && rows[0].cut === 0) clean++;
    else problems.push(`round ${round}: ${cut?.code ?? 'not cut'}, ${rows[0].n} rows for ${committed} committed, ${rows[0].cut} cut-off rows`);
    log(`recovery round ${round}/${ROUNDS}: budget ${budget} ms, restart ${fmt(db.stats().lastRestartMs, 0)} ms, ${rows[0].n}/${committed} rows`);
  }
  const fdsAfter = fds();
  const rssAfter = rssMb();
  await db.close();
  const check = await PGlite.create({ dataDir: dir, extensions: { amcheck, pg_trgm } });
  let amcheckResult = 'passed';
  try {
    await check.exec('CREATE EXTENSION IF NOT EXISTS amcheck');
    await check.query("SELECT bt_index_parent_check('churn_pkey', true)");
    await check.query("SELECT bt_index_parent_check('churn_round', true)");
    const { rows } = await check.query('SELECT count(*)::int AS n FROM churn');
    if (rows[0].n !== committed) amcheckResult = `count ${rows[0].n} for ${committed} committed`;
  } catch (e) {
    amcheckResult = `failed: ${e.message}`;
  } finally {
    await check.close();
  }
  log(`recovery: ${clean}/${ROUNDS} clean, amcheck ${amcheckResult}`);
  return { clean, problems, committed, restart: median(restartMs), restartMax: Math.max(...restartMs), fdsBefore, fdsAfter, rssBefore, rssAfter, amcheck: amcheckResult };
}

// ---- report

function section(open, main, recovery) {
  const load = loadavg();
  const lines = [
    '## Embedded database in its own process (`node --import tsx bench/pglite-supervisor.mjs`)',
    '',
    `Ran ${started.toISOString()} on ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, PGlite ${pgliteVersion()}. ` +
      `Load average ${load.map((x) => x.toFixed(1)).join(' / ')} at the end (${loadBefore.map((x) => x.toFixed(1)).join(' / ')} at the start)` +
      (loadBefore[0] > cpus().length ? ': **the machine was shared with other work**, so absolute times are inflated and noisy.' : '.'),
    '',
    '| measure | figure |',
    '| --- | --- |',
    `| open, empty directory (process start + initdb + open) | ${fmt(open.fresh, 0)} ms |`,
    `| open, existing directory (median of 5) | ${fmt(open.existing, 0)} ms |`,
    `| PGlite on this thread, existing directory (median of 5) | ${fmt(open.inThread, 0)} ms |`,
    `| restart after a kill, the spare ready (kill to new process ready, median of 10) | ${fmt(main.restart, 0)} ms (max ${fmt(main.restartMax, 0)}) |`,
    `| deadline to the next answer (median of 10) | ${fmt(main.untilAnswer, 0)} ms |`,
    `| small SELECT through the process, p50 / p99 / mean (${QUERIES}) | ${fmt(main.overhead.worker.p50, 3)} / ${fmt(main.overhead.worker.p99, 3)} / ${fmt(main.overhead.worker.mean, 3)} ms |`,
    `| same SELECT on PGlite in this thread, p50 / p99 / mean (${QUERIES}) | ${fmt(main.overhead.inThread.p50, 3)} / ${fmt(main.overhead.inThread.p99, 3)} / ${fmt(main.overhead.inThread.mean, 3)} ms |`,
    `| overhead of the hop to the process (difference of the medians) | ${fmt(main.overhead.worker.p50 - main.overhead.inThread.p50, 3)} ms |`,
    `| recovery after a kill during a large INSERT: clean rounds | ${recovery.clean} of ${ROUNDS} |`,
    `| restart after a kill during writes, seconds apart, often before a spare (median / max) | ${fmt(recovery.restart, 0)} / ${fmt(recovery.restartMax, 0)} ms |`,
    `| amcheck of every index after ${ROUNDS} kills (heapallindexed) | ${recovery.amcheck} |`,
    `| file descriptors of this process, before / after ${ROUNDS} kills | ${recovery.fdsBefore} / ${recovery.fdsAfter} |`,
    `| RSS of this process and the database's, before / after ${ROUNDS} kills | ${fmt(recovery.rssBefore, 0)} / ${fmt(recovery.rssAfter, 0)} MB |`,
    '',
    'The small SELECT reads one row of five columns (int, text, numeric, timestamptz, text[]) by primary key; both sides decode with TEXT_PARSERS. ' +
      'On a shared machine the p99s say more about the other work than about either side. ' +
      'A clean round: the killed INSERT answered QUERY_TIMEOUT, every committed row was there after the restart, and none of the killed statement\'s rows.',
  ];
  if (recovery.problems.length) lines.push('', 'Rounds that were not clean:', '', ...recovery.problems.map((p) => `- ${p}`));
  return `${lines.join('\n')}\n`;
}

function pgliteVersion() {
  try {
    return JSON.parse(readFileSync(join(BENCH, '../node_modules/@electric-sql/pglite/package.json'), 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

try {
  const open = await benchOpen();
  const main = await benchRestartAndOverhead();
  const recovery = await benchRecovery();
  const text = section(open, main, recovery);
  process.stdout.write(text);
  writeSection('pglite-worker-bench', text);
  log('wrote the embedded database section of bench/RESULTS.md');
} catch (e) {
  log(`failed: ${e.stack ?? e}`);
  process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
