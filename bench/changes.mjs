#!/usr/bin/env node
// The change log's costs, side by side in one run: `npm run bench:changes`
// (`node --import tsx bench/changes.mjs`).
//
// A throwaway PostgreSQL 15 with PgBouncer in transaction mode in front of it (docs/fleet.md),
// everything on 127.0.0.1. Measured:
//   1. the log's cost on writes: the record functions (src/records) called with and without the
//      service's ChangeLog as their `changes` sink, on the same database through the same PgBouncer,
//      interleaved (with, without, without, with, …) so drift hits both alike: bulk_create of 100
//      and a single update, one writer; bulk_create of 100 with four writers of one organization
//      (the organization's advisory lock queues their last statements);
//   2. a feed read of 1,000 changes: ChangeLog.read, and GET /api/v1/changes?limit=1000 over HTTP;
//   3. the time from a commit to a waiting reader's answer, the writer on the reader's instance and
//      on another one (the watcher polls the log's heads every 250 ms while someone waits);
//   4. the memory of 2,000 open long-polls on a running instance (RSS and heap after a full
//      collection, before and while they wait), then how long one commit takes to answer them all.
//
// Instances are bench/changes/server.mjs child processes. OQL_BENCH_ROUNDS scales the counts
// (default 1). The figures replace the "changes" section of bench/RESULTS.md and go to stdout.
import { fork } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { cpus, loadavg, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { bulkCreate, updateRecord } from '../src/records/write.ts';
import { createServer } from '../src/server/app.ts';
import { ChangeLog, cursorOf } from '../src/service/changes/log.ts';
import { startFleetDatabases } from '../test/support/fleet.ts';
import { pgServerAvailable } from '../test/support/pg-server.ts';
import { pgBouncerAvailable } from '../test/support/pgbouncer.ts';
import { writeSection } from './results-file.mjs';

const SCALE = Number(process.env.OQL_BENCH_ROUNDS ?? 1);
const BULK = Math.round(120 * SCALE);
const UPDATES = Math.round(400 * SCALE);
const CONCURRENT_BLOCKS = Math.round(3 * SCALE);
const FEED_READS = Math.round(40 * SCALE);
const HOT_UPDATES = 2000;
const WAKES = Math.round(200 * SCALE);
const LONG_POLLS = 2000;
const ORG = 'org_bench';
const KEY = 'bench-changes-key-org-bench-admin-01';
const OTHER_KEY = 'bench-changes-key-org-rival-admin-02';

const log = (m) => process.stderr.write(`[bench:changes] ${m}\n`);
const fmt = (n, digits = 2) => (n === undefined || Number.isNaN(n) ? '–' : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50: pct(s, 50), p99: pct(s, 99), max: s[s.length - 1] };
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.timeOrigin + performance.now();

if (!pgServerAvailable() || !pgBouncerAvailable()) {
  log('PostgreSQL 15 server binaries or pgbouncer missing (scripts/ensure-postgres.sh installs both)');
  process.exit(1);
}

// ---- HTTP

const agent = new Agent({ keepAlive: true, maxSockets: 64 });
function http(base, method, path, key, body, via = agent) {
  return new Promise((resolve, reject) => {
    const url = new URL(base + path);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers = { authorization: `Bearer ${key}` };
    if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
    const req = httpRequest({ agent: via, host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`));
        else resolve(JSON.parse(text).data);
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

// ---- Instances

function instance(database) {
  const child = fork(new URL('./changes/server.mjs', import.meta.url), [], {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    env: {
      ...process.env,
      OQL_BENCH_DATABASE: database,
      OQL_API_KEYS: `${KEY}=${ORG}:admin:u_bench,${OTHER_KEY}=org_rival:admin:u_rival`,
      // Room for 2,000 long-polls of one user from one address.
      OQL_MAX_WAITING_PER_USER: '5000', OQL_MAX_WAITING_PER_ORG: '5000', OQL_MAX_CONCURRENT_REQUESTS: '5000', OQL_MAX_CONNECTIONS_PER_ADDRESS: '10000',
      OQL_TOKEN_SECRET: 'bench-token-secret-0123456789abcdef',
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const replies = [];
  child.on('message', (m) => replies.shift()?.(m));
  const ask = (what) => new Promise((resolve) => { replies.push(resolve); child.send(what); });
  const url = new Promise((resolve, reject) => {
    replies.push((m) => resolve(m.url));
    child.once('exit', (code) => reject(new Error(`instance exited (${code})`)));
  });
  return {
    pid: child.pid, url, ask,
    async waiting() { return (await ask('waiting')).waiting; },
    async memory() { return (await ask('memory')).memory; },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.send('stop');
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}

async function until(what, check, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(5);
  }
}

// ---- Measurements

const results = { writes: [], feed: [], wake: [], memory: undefined, herd: undefined };

/** Runs each variant in turn (a b c, c b a, …) `n` times each; the latencies of each, in ms. */
async function sideBySide(n, variants) {
  const names = Object.keys(variants);
  const times = Object.fromEntries(names.map((k) => [k, []]));
  for (let i = 0; i < n; i++) {
    for (const name of i % 2 === 0 ? names : [...names].reverse()) {
      const t = performance.now();
      await variants[name](i);
      times[name].push(performance.now() - t);
    }
  }
  return Object.fromEntries(names.map((k) => [k, stats(times[k])]));
}

const contacts = (tag, n) => Array.from({ length: n }, (_, i) => ({ name: `Bench ${tag} ${i}`, city: i % 2 ? 'Pune' : 'Delhi' }));

async function writeCost(setup) {
  const { db, catalog } = setup;
  const changeLog = new ChangeLog(db, catalog);
  const sink = changeLog.sink({ user_id: 'u_bench', surface: 'rest' });
  const base = { catalog, orgId: ORG, userId: 'u_bench', timeoutMs: 60_000 };
  const logged = { ...base, changes: sink };
  // The log's first statement alone: what its round trip and the organization's lock cost, the rest being the INSERT.
  const lockOnly = {
    ...base,
    changes: {
      append: (tx, orgId) => tx.lastRows("SELECT pg_advisory_xact_lock(hashtextextended('oql changes|' || $1, 0))", [orgId]),
      // An update as the log runs it, with the lock in its statement and no row written.
      update: (tx, orgId, u) => tx.lastRows(
        `${u.sql}, pg_advisory_xact_lock(hashtextextended('oql changes|' || $${u.params.length + 1}::text, 0)) AS held`,
        [...u.params, orgId]),
    },
  };
  // Warm both paths, and make the records the updates work on.
  for (let i = 0; i < 5; i++) {
    await bulkCreate(db, 'account', contacts(`warm-${i}`, 100), logged);
    await bulkCreate(db, 'account', contacts(`warm-plain-${i}`, 100), base);
  }
  const { ids } = await bulkCreate(db, 'account', contacts('targets', 200), base);

  log(`bulk_create of 100, ${BULK} with the log, with its lock only and without, interleaved`);
  const bulk = await sideBySide(BULK, {
    with: (i) => bulkCreate(db, 'account', contacts(`w${i}`, 100), logged),
    lock: (i) => bulkCreate(db, 'account', contacts(`l${i}`, 100), lockOnly),
    without: (i) => bulkCreate(db, 'account', contacts(`p${i}`, 100), base),
  });
  results.writes.push({ name: 'bulk_create 100, 1 writer', ...bulk });

  log(`update of one record, ${UPDATES} each`);
  const upd = await sideBySide(UPDATES, {
    with: (i) => updateRecord(db, 'account', ids[i % ids.length], { city: `W${i}` }, logged),
    lock: (i) => updateRecord(db, 'account', ids[(i + 66) % ids.length], { city: `L${i}` }, lockOnly),
    without: (i) => updateRecord(db, 'account', ids[(i + 133) % ids.length], { city: `P${i}` }, base),
  });
  results.writes.push({ name: 'update 1 record, 1 writer', ...upd });

  log(`bulk_create of 100, 4 writers of one organization, ${CONCURRENT_BLOCKS} blocks each way`);
  const together = { with: [], without: [] };
  for (let block = 0; block < CONCURRENT_BLOCKS * 2; block++) {
    const mode = block % 2 === 0 ? 'with' : 'without';
    await Promise.all([0, 1, 2, 3].map(async (w) => {
      for (let i = 0; i < 10; i++) {
        const t = performance.now();
        await bulkCreate(db, 'account', contacts(`c${block}-${w}-${i}`, 100), mode === 'with' ? logged : base);
        together[mode].push(performance.now() - t);
      }
    }));
  }
  results.writes.push({ name: 'bulk_create 100, 4 writers of one org', with: stats(together.with), without: stats(together.without) });
  return changeLog;
}

async function feedRead(changeLog, catalog, url, setup) {
  const objects = [...catalog.objects.keys()];
  const { rows } = await setupPool.query('SELECT min(position)::text AS lo, max(position)::text AS hi FROM oql_service.changes WHERE org_id = $1', [ORG]);
  const lo = BigInt(rows[0].lo);
  const hi = BigInt(rows[0].hi);
  if (hi - lo < 1000n) throw new Error('fewer than 1,000 changes to read');
  const starts = Array.from({ length: FEED_READS }, (_, i) => lo + ((hi - lo - 1000n) * BigInt(i)) / BigInt(FEED_READS));
  const direct = [];
  const overHttp = [];
  for (const after of starts) {
    let t = performance.now();
    const page = await changeLog.read(ORG, after, objects, 1000);
    direct.push(performance.now() - t);
    if (page.changes.length !== 1000) throw new Error(`read ${page.changes.length} changes, not 1,000`);
    t = performance.now();
    const data = await http(url, 'GET', `/api/v1/changes?after=${cursorOf(after)}&limit=1000`, KEY);
    overHttp.push(performance.now() - t);
    if (data.changes.length !== 1000) throw new Error(`GET read ${data.changes.length} changes, not 1,000`);
  }
  const bytes = Buffer.byteLength(JSON.stringify(await http(url, 'GET', `/api/v1/changes?limit=1000`, KEY)));
  results.feed.push({ name: 'ChangeLog.read, 1,000 changes', ...stats(direct) });
  results.feed.push({ name: `GET /api/v1/changes?limit=1000 (${fmt(bytes / 1024, 0)} KiB)`, ...stats(overHttp) });

  // A record changed many times since the change read: its record is rebuilt from the first
  // checkpoint after it (about one change in 32 keeps its record), or, in a log that kept none,
  // from the table through every change since.
  for (const [name, keeps] of [['checkpoints (the service\'s log)', undefined], ['no checkpoint, from the table', () => false]]) {
    const log = keeps === undefined ? changeLog : new ChangeLog(setup.db, catalog, { checkpoint: keeps });
    const ctx = { catalog, orgId: ORG, userId: 'u_bench', timeoutMs: 60_000, changes: log.sink({ user_id: 'u_bench', surface: 'rest' }) };
    const before = await changeLog.head(ORG);
    const { ids: [id] } = await bulkCreate(setup.db, 'account', contacts('hot', 1), ctx);
    for (let i = 0; i < HOT_UPDATES; i++) await updateRecord(setup.db, 'account', id, { city: `Hot ${i}` }, ctx);
    const took = [];
    for (let i = 0; i < FEED_READS; i++) {
      const t = performance.now();
      const page = await changeLog.read(ORG, before, objects, 1);
      took.push(performance.now() - t);
      if (page.changes[0]?.record?.city !== 'Delhi') throw new Error('the hot record\'s create read back wrong');
    }
    results.feed.push({ name: `ChangeLog.read of a create whose record changed ${fmt(HOT_UPDATES, 0)} times since: ${name}`, ...stats(took) });
  }
}

/** Commit to answer: a reader long-polls on `reader`; once it waits, a write goes through `writer` at a random moment. */
async function wake(name, reader, writer) {
  const readerUrl = await reader.url;
  const writerUrl = await writer.url;
  let cursor = (await http(readerUrl, 'GET', '/api/v1/changes/head', KEY)).cursor;
  const took = [];
  for (let i = 0; i < WAKES; i++) {
    const polled = http(readerUrl, 'GET', `/api/v1/changes?after=${cursor}&wait=25`, KEY).then((data) => ({ data, at: now() }));
    await until('the reader waiting', async () => (await reader.waiting()) === 1);
    // Commits come at any moment of the head poll's period, not just after a reader starts waiting.
    await sleep(Math.random() * 300);
    await http(writerUrl, 'POST', '/api/v1/org/objects/account/record/bulk_create', KEY, [{ name: `Wake ${name} ${i}` }]);
    const { data, at } = await polled;
    if (data.changes.length !== 1) throw new Error(`the reader got ${data.changes.length} changes`);
    took.push(at - data.changes[0].committed_at);
    cursor = data.next_cursor;
  }
  results.wake.push({ name, ...stats(took) });
}

/** One round of 2,000 long-polls on `on`: its memory before and while they wait, and how long one commit takes to answer them all. */
async function herdRound(on, url) {
  const cursor = (await http(url, 'GET', '/api/v1/changes/head', KEY)).cursor;
  const before = await on.memory();
  let stop = false;
  let answered = 0;
  let lastAnswer = 0;
  const failures = [];
  const sockets = new Agent({ keepAlive: false, maxSockets: Infinity });
  const slots = Array.from({ length: LONG_POLLS }, async (_, i) => {
    await sleep(i * 2);
    // A poll whose wait ran out before all were open waits again, so all are open at once; so does
    // one whose connection failed (counted).
    while (!stop) {
      const data = await http(url, 'GET', `/api/v1/changes?after=${cursor}&wait=30`, KEY, undefined, sockets).catch((e) => {
        failures.push(e.code ?? e.message);
        return { changes: [] };
      });
      if (data.changes.length > 0) {
        answered++;
        lastAnswer = now();
        return;
      }
    }
  });
  await until(`${LONG_POLLS} readers waiting`, async () => (await on.waiting()) === LONG_POLLS, 120_000);
  const during = await on.memory();
  const t = now();
  await http(url, 'POST', '/api/v1/org/objects/account/record/bulk_create', KEY, [{ name: 'Herd' }]);
  stop = true;
  await Promise.all(slots);
  sockets.destroy();
  if (answered !== LONG_POLLS) throw new Error(`${answered} of ${LONG_POLLS} long-polls answered`);
  if (failures.length > 0) log(`${failures.length} long-polls failed and were sent again: ${[...new Set(failures)].join(', ')}`);
  return { rss: during.rss - before.rss, heap: during.heapUsed - before.heapUsed, baseRss: before.rss, baseHeap: before.heapUsed, herd: lastAnswer - t, failures: failures.length };
}

/** A warm-up round, so first-use costs (code, pools) are not counted as the polls', then the measured one. */
async function manyWaiting(on) {
  const url = await on.url;
  await herdRound(on, url);
  const { herd, failures, ...memory } = await herdRound(on, url);
  results.failures = failures;
  results.memory = memory;
  results.herd = herd;
}

// ---- Run

const started = new Date();
let fleet;
let setupPool;
let setup;
const instances = [];
try {
  log('starting PostgreSQL 15 and PgBouncer (transaction mode)');
  fleet = await startFleetDatabases({ poolSize: 40, settings: { log_statement: 'none', jit: 'off', max_connections: 120 } });
  setupPool = new pg.Pool({ connectionString: fleet.primary.url, max: 2 });
  // The service in this process creates the service schema and the catalog's tables, and is the database handle of the write measurements.
  setup = await createServer({ database: fleet.primaryUrl, env: {}, log: false });
  const changeLog = await writeCost(setup);

  log('starting two instances');
  instances.push(instance(fleet.primaryUrl), instance(fleet.primaryUrl));
  const [a, b] = instances;
  const urlA = await a.url;
  await b.url;

  log(`feed reads of 1,000 changes, ${FEED_READS} of each kind`);
  await feedRead(changeLog, setup.catalog, urlA, setup);

  log(`commit to answer, ${WAKES} rounds on one instance and ${WAKES} across two`);
  await wake('writer on the reader\'s instance', a, a);
  await wake('writer on another instance', a, b);

  log(`${LONG_POLLS} long-polls open on one instance`);
  await manyWaiting(a);
} catch (e) {
  log(`failed: ${e.stack ?? e}`);
  process.exitCode = 1;
} finally {
  await Promise.allSettled(instances.map((i) => i.stop()));
  await setup?.close().catch(() => {});
  await setupPool?.end().catch(() => {});
  agent.destroy();
  await fleet?.stop().catch(() => {});
}

// ---- Report

function section() {
  const lines = [];
  const push = (s = '') => lines.push(s);
  push('## The change log (`npm run bench:changes`)');
  push();
  push(`Ran ${started.toISOString()} on ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}. ` +
    `**The cores were shared with other work while this ran** (load average ${loadavg().map((l) => l.toFixed(1)).join(' / ')} at the end), and PostgreSQL, PgBouncer, the instances and the client share them too: ` +
    'absolute figures are noisy; the side-by-side ratios, measured interleaved, are the useful part.');
  push();
  push('PostgreSQL 15 behind PgBouncer 1.18 in transaction mode, on 127.0.0.1. Latencies in ms (performance.now()).');
  push();
  push('**The log on writes.** The record functions of `src/records` called directly, with the service\'s `ChangeLog` as their `changes` sink and without one, through the same PgBouncer, alternating call by call ' +
    '(one writer) or block by block (four writers of one organization, whose log rows queue on the organization\'s advisory lock from their first change row to their commit).');
  push();
  push('What the log adds to a write. A create: one statement in its transaction, sent with its COMMIT (`oql_service.log_changes`, a PL/pgSQL function whose plan each server connection keeps): the organization\'s advisory lock, and the rows. ' +
    'An update: no statement; its UPDATE, sent with the COMMIT with or without a log, also takes the lock and writes the row (a function call in its RETURNING list). ' +
    'A row keeps what a change did, not the record after it: a create statement\'s records of one object are one row (their ids an array, one position each), an update a row of the old values of the fields it wrote; readers rebuild the records from the table. ' +
    'About one update, delete or restore in 32 keeps its record too, a checkpoint that bounds a reader\'s rebuild (an update that does takes the statement of a create). A create\'s row takes one B-tree entry and a BRIN summary, an update\'s two and the summary; of one organization\'s writers, each holds the lock from its change rows to its commit.');
  push();
  push('"Lock only" takes the organization\'s lock where the log takes it (a create: a statement sent with the COMMIT; an update: an expression of the RETURNING list of its UPDATE) and writes no change row (one writer): the difference from "without" is the lock alone; the rest of "with log" is the writing of the change rows.');
  push();
  push('| write | calls each | with log p50 | lock only p50 | without p50 | p50 ratio | with log p99 | without p99 | p99 ratio |');
  push('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const w of results.writes) {
    push(`| ${w.name} | ${w.with.n} | ${fmt(w.with.p50)} | ${fmt(w.lock?.p50)} | ${fmt(w.without.p50)} | ${fmt(w.with.p50 / w.without.p50)}× | ${fmt(w.with.p99)} | ${fmt(w.without.p99)} | ${fmt(w.with.p99 / w.without.p99)}× |`);
  }
  push();
  const single = results.writes.filter((w) => !w.name.includes('4 writers'));
  if (single.length > 0) push(`Target: the log costs at most 1.15× at the median — ${single.map((w) => `${w.name}: ${fmt(w.with.p50 / w.without.p50)}× (${w.with.p50 / w.without.p50 <= 1.15 ? 'met' : 'not met'})`).join('; ')}.`);
  push();
  push('**Reading the feed**, 1,000 changes of `account` records a page, from cursors spread over the log, each record rebuilt from the table and its later changes in the page\'s snapshot:');
  push();
  push('| read | reads | p50 | p99 |');
  push('| --- | --- | --- | --- |');
  for (const f of results.feed) push(`| ${f.name} | ${f.n} | ${fmt(f.p50)} | ${fmt(f.p99)} |`);
  push();
  push('**Commit to a waiting reader\'s answer**: from the change\'s `committed_at` (stamped by PostgreSQL in the write\'s last statement, just before COMMIT) to the reader holding the answer; the reader long-polls one instance, ' +
    'the write (`bulk_create` of one record over HTTP) goes through the same instance or the other one at a random moment of the watcher\'s 250 ms head poll.');
  push();
  push('| writer | rounds | p50 | p99 | max |');
  push('| --- | --- | --- | --- | --- |');
  for (const w of results.wake) push(`| ${w.name} | ${w.n} | ${fmt(w.p50, 0)} | ${fmt(w.p99, 0)} | ${fmt(w.max, 0)} |`);
  push();
  if (results.memory) {
    const m = results.memory;
    push(`**${LONG_POLLS.toLocaleString('en-US')} open long-polls** on one instance (each its own connection, one user; after a warm-up round of the same size; memory after a full collection): ` +
      `RSS ${fmt(m.rss / 2 ** 20, 1)} MiB more (${fmt(m.rss / LONG_POLLS / 1024, 1)} KiB a poll, from ${fmt(m.baseRss / 2 ** 20, 0)} MiB), heap ${fmt(m.heap / 2 ** 20, 1)} MiB more (${fmt(m.heap / LONG_POLLS / 1024, 1)} KiB a poll, from ${fmt(m.baseHeap / 2 ** 20, 0)} MiB). ` +
      `One commit then answered all of them in ${fmt(results.herd, 0)} ms (readers woken for the same page share one read of it; before they did, each read its own, 3,493 ms)` +
      (results.failures > 0 ? `; ${results.failures} polls lost their connection while opening and were sent again.` : '.'));
  }
  return `${lines.join('\n')}\n`;
}

if (results.writes.length > 0) {
  const text = section();
  process.stdout.write(text);
  writeSection('changes-bench', text);
  log('wrote the changes section of bench/RESULTS.md');
}
