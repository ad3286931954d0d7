#!/usr/bin/env node
// The service as a fleet deploys it, against the floor: `npm run bench:fleet`
// (`npm run build && node --import tsx bench/fleet.mjs`).
//
// A throwaway PostgreSQL 15 with the example CRM (tens of thousands of rows), PgBouncer in
// transaction mode in front of it, and a read role whose defaults make a read one statement
// (docs/fleet.md). Then, for one instance and for two: `node dist/cli.js serve --database <PgBouncer>
// --read-database <PgBouncer, read role>` as child processes, and as many floor servers
// (bench/fleet/floor.mjs: a bare Fastify running the SAME SQL oql emits with one pg Pool query
// through the same PgBouncer, nothing else). Each workload is measured on the floor and on oql
// back to back, with the same closed-loop client in this process: C connections, each sending its
// next request when the previous answer has arrived, latencies timed with performance.now()
// (sub-millisecond, unlike autocannon's whole milliseconds). With two instances the connections
// alternate between them. One instance also runs without --read-database, to show what the
// BEGIN/SET/ROLLBACK round trips cost. Any answer that is not a 200 fails the run.
//
// In turns (bench/turns.mjs): floor and oql each warm up for OQL_BENCH_WARMUP_SECONDS (default 1),
// then run OQL_BENCH_ROUNDS (default 3) rounds of OQL_BENCH_SECONDS (default 3) or
// OQL_BENCH_MAX_REQUESTS (default 20,000) requests a side, one after the other, the first of a
// round alternating; a ratio is the median of the rounds'.
// Each workload runs on one connection, then on OQL_BENCH_CONNECTIONS (default 8) spread over four
// users of one organization, on one instance and on two.
// The figures replace the "fleet" section of bench/RESULTS.md and are printed to stdout.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { loadFixtureCatalog, loadIntoDatabase } from '../fixtures/index.ts';
import { compile } from '../src/compile.ts';
import { compileFilter } from '../src/filter/index.ts';
import { selectRecords } from '../src/records/shape.ts';
import { startFleetDatabases } from '../test/support/fleet.ts';
import { pgServerAvailable } from '../test/support/pg-server.ts';
import { pgBouncerAvailable } from '../test/support/pgbouncer.ts';
import { BENCH_COUNTS as COUNTS, BENCH_ORG as ORG, WORKLOADS, benchRows, newOpportunities } from './server/workloads.mjs';
import { writeSection } from './results-file.mjs';
import { fmt, inTurns, p50Of, p99Of, perRound, ratio, roundOf } from './turns.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(BENCH);
const SECONDS = Number(process.env.OQL_BENCH_SECONDS ?? 3);
const ROUNDS = Math.max(1, Number(process.env.OQL_BENCH_ROUNDS ?? 3));
const WARMUP_SECONDS = Number(process.env.OQL_BENCH_WARMUP_SECONDS ?? 1);
const MAX_REQUESTS = Number(process.env.OQL_BENCH_MAX_REQUESTS ?? 20_000);
const CONNECTIONS = Number(process.env.OQL_BENCH_CONNECTIONS ?? 8);
const POOL_SIZE = 10;
// Four users of one organization: a user may run two reports, filter or connector pages at once
// (the policy point's budget, shared by the instances), so eight connections take four users.
const KEYS = [1, 2, 3, 4].map((i) => `bench-key-org-bench-superadmin-000${i}`);

const log = (m) => process.stderr.write(`[bench:fleet] ${m}\n`);

if (!pgServerAvailable() || !pgBouncerAvailable()) {
  log('PostgreSQL 15 server binaries or pgbouncer missing (scripts/ensure-postgres.sh installs both)');
  process.exit(1);
}

// ---- Data and the statements oql emits for it

const catalog = loadFixtureCatalog('crm');
log(`generating ${Object.values(COUNTS).reduce((a, b) => a + b, 0).toLocaleString('en-US')} rows for two organizations`);
const rows = benchRows(catalog);
const own = (slug) => rows.get(slug).filter((r) => r.org_id === ORG && r.is_deleted === false);
const data = {
  org: ORG,
  opportunityIds: own('opportunity').map((r) => r.id).slice(0, 2_000),
  ownerIds: own('user').map((r) => r.id),
  accountIds: own('account').map((r) => r.id),
};
const byName = Object.fromEntries(WORKLOADS.map((w) => [w.name, w]));
// The request bodies cycle through these variants; the floor runs the SQL of the same variant.
const FILTER_VARIANTS = 24;
const REPORT_VARIANTS = 4;
const statements = {
  org: ORG,
  getOne: selectRecords(catalog, catalog.objects.get('opportunity')),
  filters: Array.from({ length: FILTER_VARIANTS }, (_, n) => {
    const c = compileFilter(JSON.parse(byName.filter.request(data, n).body), { catalog, slug: 'opportunity', orgId: ORG });
    return { sql: c.sql, params: c.params };
  }),
  reports: Array.from({ length: REPORT_VARIANTS }, (_, n) => {
    const body = JSON.parse(byName.report.request(data, n).body);
    const c = compile(body.query, { catalog, slug: body.slug, orgId: ORG });
    return { sql: c.sql, params: c.params };
  }),
};

/** Each workload: the oql request and the floor request of the n-th call. */
const PLAN = [
  { name: 'get one', oql: (n) => byName['get one'].request(data, n), floor: (n) => ({ method: 'GET', path: `/get/${encodeURIComponent(data.opportunityIds[n % data.opportunityIds.length])}` }) },
  { name: 'filter page', oql: (n) => byName.filter.request(data, n % FILTER_VARIANTS), floor: (n) => ({ method: 'POST', path: '/filter', body: JSON.stringify({ n: n % FILTER_VARIANTS }) }) },
  { name: 'report', oql: (n) => byName.report.request(data, n % REPORT_VARIANTS), floor: (n) => ({ method: 'POST', path: '/report', body: JSON.stringify({ n: n % REPORT_VARIANTS }) }) },
  { name: 'bulk_create 100', oql: (n) => byName['bulk_create 100'].request(data, n), floor: (n) => ({ method: 'POST', path: '/bulk', body: JSON.stringify(newOpportunities(data, n)) }) },
];

// ---- Processes

function child(args, env, what) {
  const proc = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let seen = '';
  proc.stderr.on('data', (c) => { seen += c; });
  const url = new Promise((resolve, reject) => {
    proc.stdout.on('data', (c) => {
      seen += c;
      const m = /listening on (http:\/\/[^\s]+)/.exec(seen);
      if (m) resolve(m[1]);
    });
    proc.once('exit', (code) => reject(new Error(`${what} exited (${code}): ${seen.slice(-2000)}`)));
  });
  return {
    url,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

const CLI = join(ROOT, 'dist', 'cli.js');
if (!existsSync(CLI)) {
  log('dist/cli.js is missing: run `npm run build` first (`npm run bench:fleet` does)');
  process.exit(1);
}

/** `oql serve` as users run it: the built package. */
function startOql(flags) {
  return child([CLI, 'serve', '--port', '0', ...flags], {
    OQL_API_KEYS: KEYS.map((k, i) => `${k}=${ORG}:superadmin:u_bench_${i + 1}`).join(','), OQL_LOG_LEVEL: 'warn', OQL_TOKEN_SECRET: 'bench-token-secret-0123456789abcdef', OQL_PREPARED_STATEMENTS: '0',
  }, 'oql serve');
}

// ---- The closed-loop client

/**
 * C connections for `seconds` (or `budget` requests), each sending its next request when the
 * previous answered; the n-th request is `make(next.n++)`, counted on across runs. An answer other
 * than 200 is not throughput: the run fails, saying the first.
 */
async function load(targets, make, connections, seconds, next, budget) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const latencies = [];
  let errors = 0;
  let firstError;
  let left = budget ?? Infinity;
  const deadline = performance.now() + seconds * 1000;
  const one = (target, key, r) => new Promise((resolve) => {
    const url = new URL(target + r.path);
    const headers = { authorization: `Bearer ${key}` };
    if (r.body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(r.body);
    }
    const req = httpRequest({ agent, host: url.hostname, port: url.port, path: url.pathname, method: r.method, headers }, (res) => {
      let text = '';
      res.on('data', (c) => { if (res.statusCode !== 200 && text.length < 300) text += c; });
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.on('error', (e) => resolve({ status: 0, text: String(e.message) }));
    req.end(r.body);
  });
  const worker = async (w) => {
    const target = targets[w % targets.length];
    const key = KEYS[w % KEYS.length];
    while (performance.now() < deadline && left-- > 0) {
      const r = make(next.n++);
      const started = performance.now();
      const { status, text } = await one(target, key, r);
      const took = performance.now() - started;
      if (status === 200) latencies.push(took);
      else if (errors++ === 0) firstError = `${r.method} ${r.path}: ${status} ${text.slice(0, 300)}`;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, (_, w) => worker(w)));
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  if (errors > 0) throw new Error(`${errors} requests were not answered 200; the first: ${firstError}`);
  return roundOf(latencies, elapsed);
}

/** Servers at `targets` as one side of a comparison in turns (bench/turns.mjs). */
function side(targets, make, connections) {
  const next = { n: 0 };
  return {
    async warm() {
      await load(targets, make, connections, WARMUP_SECONDS, next);
      return null;
    },
    round: () => load(targets, make, connections, SECONDS, next, MAX_REQUESTS),
  };
}

// ---- Run

const started = new Date();
const dir = mkdtempSync(join(tmpdir(), 'oql-bench-fleet-'));
const statementsFile = join(dir, 'statements.json');
writeFileSync(statementsFile, JSON.stringify(statements));
const results = [];
let fleet;
const procs = [];
try {
  log('starting PostgreSQL 15 and PgBouncer (transaction mode); loading the data');
  fleet = await startFleetDatabases({ poolSize: 40, settings: { log_statement: 'none', shared_buffers: '256MB', jit: 'off', max_connections: 120 } });
  const admin = new pg.Pool({ connectionString: fleet.primary.url, max: 4 });
  await loadIntoDatabase(admin, catalog, rows);
  await admin.query('ANALYZE');
  await admin.end();

  const floorEnv = { DATABASE_URL: fleet.primaryUrl, POOL_SIZE: String(POOL_SIZE) };
  const floors = [child(['bench/fleet/floor.mjs', statementsFile], floorEnv, 'floor'), child(['bench/fleet/floor.mjs', statementsFile], floorEnv, 'floor')];
  procs.push(...floors);
  const withReader = ['--database', fleet.primaryUrl, '--read-database', fleet.readerUrl];
  const oqls = [startOql(withReader), startOql(withReader)];
  procs.push(...oqls);
  const plain = startOql(['--database', fleet.primaryUrl]);
  procs.push(plain);
  const floorUrls = await Promise.all(floors.map((f) => f.url));
  const oqlUrls = await Promise.all(oqls.map((o) => o.url));
  const plainUrl = await plain.url;
  log(`floors ${floorUrls.join(' ')}; oql ${oqlUrls.join(' ')}; oql without a read role ${plainUrl}`);

  // One connection: each request's own latency, with nothing queued before it (the service's cost
  // per request). Then CONNECTIONS at once, on one instance and on two (the service under load).
  const SHAPES = [
    { connections: 1, instances: 1 },
    { connections: CONNECTIONS, instances: 1 },
    { connections: CONNECTIONS, instances: 2 },
  ];
  const turns = { rounds: ROUNDS, log };
  for (const w of PLAN) {
    for (const { connections: c, instances } of SHAPES) {
      const label = `${w.name}, ${c} connection${c > 1 ? 's' : ''}, ${instances} instance${instances > 1 ? 's' : ''}`;
      const { floor, oql } = await inTurns(label, { floor: side(floorUrls.slice(0, instances), w.floor, c), oql: side(oqlUrls.slice(0, instances), w.oql, c) }, turns);
      log(`  p50 ${fmt(oql.p50)} ms vs floor ${fmt(floor.p50)} ms: ${fmt(ratio(oql, floor, p50Of))}x`);
      results.push({ workload: w.name, instances, variant: 'read role', connections: c, floor, oql });
    }
    if (w.name === 'filter page' || w.name === 'report') {
      const label = `${w.name}, 1 connection, 1 instance without --read-database`;
      const { floor, oql } = await inTurns(label, { floor: side(floorUrls.slice(0, 1), w.floor, 1), oql: side([plainUrl], w.oql, 1) }, turns);
      results.push({ workload: w.name, instances: 1, variant: 'no read role (BEGIN/SET/ROLLBACK)', connections: 1, floor, oql });
    }
  }
} catch (e) {
  log(`failed: ${e.stack ?? e}`);
  process.exitCode = 1;
} finally {
  await Promise.allSettled(procs.map((p) => p.stop()));
  await fleet?.stop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}

// ---- Report

function section() {
  const lines = [];
  const push = (s = '') => lines.push(s);
  push('## The fleet: through PgBouncer, one and two instances (`npm run bench:fleet`)');
  push();
  push(`Ran ${started.toISOString()} on ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}. ` +
    `**The cores were shared with other work while this ran** (load average ${loadavg().map((l) => l.toFixed(1)).join(' / ')} at the end), and the servers, PgBouncer, PostgreSQL and the client share them too: ` +
    'the absolute figures are low and noisy; the ratios are the useful part.');
  push();
  push('PostgreSQL 15 holds the example CRM (' + Object.entries(COUNTS).map(([k, v]) => `${v.toLocaleString('en-US')} ${k}`).join(', ') + ' rows over two organizations); ' +
    'PgBouncer 1.18 in transaction mode stands in front of it. The built package runs as child processes, `node dist/cli.js serve --database <PgBouncer> --read-database <PgBouncer, as a read role>`; ' +
    'the read role carries `default_transaction_read_only`, `statement_timeout`, `TimeZone` and `DateStyle`, so a report or a filter page is one statement.');
  push();
  push('**The floor** (bench/fleet/floor.mjs) is a minimal Fastify process with one route per workload: it runs the SQL that oql emits for the same request ' +
    '(compiled beforehand by the library: the same text and parameters) with one `pool.query` on a pg Pool of the same size through the same PgBouncer, and sends the rows as JSON. ' +
    'Its bulk_create writes the same 100 records with one hand-made multi-row INSERT in a transaction. No authentication, validation, compilation, decoding or envelope: ' +
    'everything between it and oql is what the service adds. With two instances there are two floor processes as well.');
  push();
  push(`The client is a closed loop in the bench process: one keep-alive connection (each request's own latency, nothing queued before it), then ${CONNECTIONS}, each sending its next request when the previous answered, as ${KEYS.length} users of one organization ` +
    '(a user may run two reports or filter pages at once, on whichever instances: the leases in PostgreSQL that every oql request takes and gives back are part of what is measured); ' +
    `latencies in ms from performance.now(). With two instances the connections alternate between them. Any answer other than a 200 fails the run. ` +
    `In turns: floor and oql of a row each warm up for ${WARMUP_SECONDS} s, then run ${ROUNDS} round${ROUNDS === 1 ? '' : 's'} of ${SECONDS} s (or ${MAX_REQUESTS.toLocaleString('en-US')} requests) a side, one after the other, the first of a round alternating; ` +
    'throughput is over all rounds, a p50 or p99 the median of the rounds\', a ratio the median of the rounds\' ratios (each round\'s pair measured back to back), and the last column gives the p50 ratio of every round.');
  push();
  push('| workload | instances | reads | conns | oql req/s | oql p50 | oql p99 | floor req/s | floor p50 | floor p99 | p50 ratio | p99 ratio | p50 ratio by round |');
  push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of results) {
    push(`| ${r.workload} | ${r.instances} | ${r.variant} | ${r.connections} | ${fmt(r.oql.rps, 0)} | ${fmt(r.oql.p50)} | ${fmt(r.oql.p99)} | ${fmt(r.floor.rps, 0)} | ${fmt(r.floor.p50)} | ${fmt(r.floor.p99)} | ${fmt(ratio(r.oql, r.floor, p50Of))} | ${fmt(ratio(r.oql, r.floor, p99Of))} | ${perRound(r.oql, r.floor, p50Of)} |`);
  }
  push();
  const goal = results.filter((r) => r.variant === 'read role' && (r.workload === 'get one' || r.workload === 'filter page'));
  if (goal.length > 0) {
    const name = (r) => `${r.workload}, ${r.connections} conn${r.connections > 1 ? 's' : ''}, ${r.instances} inst`;
    push(`Target: oql p50 ≤ 1.3× the floor for get one and a filter page — ${goal.map((r) => { const x = ratio(r.oql, r.floor, p50Of); return `${name(r)}: ${fmt(x)}× (${x <= 1.3 ? 'met' : 'not met'})`; }).join('; ')}.`);
  }
  return `${lines.join('\n')}\n`;
}

if (results.length > 0) {
  const text = section();
  process.stdout.write(text);
  writeSection('fleet-bench', text);
  log('wrote the fleet section of bench/RESULTS.md');
}
