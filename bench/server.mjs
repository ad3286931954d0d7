#!/usr/bin/env node
// The CRM data service over HTTP against the floor: `npm run bench:server` (builds the package
// when stale, then `node --import tsx bench/server.mjs`).
//
// For each database (embedded PGlite, then a throwaway PostgreSQL 15 server) it loads the example
// CRM at a few tens of thousands of rows, starts `oql serve` on it as a child process the way a
// user runs it (the built package: `node dist/cli.js serve`), and measures four workloads with
// autocannon on loopback: get one record, bulk_create of 100 records, a filter, and an analytics
// report. Beside each, the floor: the same rows read or written by a bare query in this process (a
// pg Pool of the same size as the server's, or a PGlite instance holding a copy of the same data),
// at the same concurrency and for the same time. Ratio = server / floor.
//
// In turns: the sides of a workload (the floor, `oql serve`, the HTTP floor; PostGraphile, oql
// and the floor for the peer) each warm up for OQL_BENCH_WARMUP_SECONDS (default 2), then run
// OQL_BENCH_ROUNDS (default 3) rounds, one side after the other, so that whatever else the machine
// does falls on all of them alike; ratios are the median of the rounds'. Bounded: a side's round
// stops after OQL_BENCH_SECONDS (default 4) or OQL_BENCH_MAX_REQUESTS (default 200,000, a guard:
// the time ends every run here), whichever comes first.
// On PostgreSQL it first runs the two reads of PEER_WORKLOADS (one record by id, a sorted page of
// 50) through PostGraphile v5 on the same tables and rows, through `oql serve` and as the floor,
// in turns with the same connections for the same time (bench/server/peer.mjs installs
// PostGraphile into a cache folder the first time; OQL_BENCH_PEER=0 leaves it out). And on
// PostgreSQL each workload is served by the HTTP floor too (bench/server/http-floor.mjs: node:http,
// the floor's statement, no framework), in turns with the floor and `oql serve`: what any HTTP
// server in Node adds on this machine; OQL_BENCH_HTTP_FLOOR=0 leaves it out.
//
// OQL_BENCH_SERVER_NODE_FLAGS passes Node flags to each `oql serve` and each HTTP floor (for a profile of both
// under the bench: `--cpu-prof --cpu-prof-dir=/tmp/prof`).
//
// OQL_BENCH_CONNECTIONS (default 8) is the concurrency of both sides. OQL_BENCH_ONLY=pglite or
// postgres runs one database; OQL_BENCH_WORKLOADS=filter,report (names as in the results) runs
// those workloads only, as for a profile of one of them. The figures replace the "HTTP service" section of
// bench/RESULTS.md and are printed to stdout; progress goes to stderr.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { loadFixtureCatalog, loadIntoDatabase } from '../fixtures/index.ts';
import { pgServerAvailable, startPgServer } from '../test/support/pg-server.ts';
import { BENCH_COUNTS as COUNTS, BENCH_ORG as ORG, PEER_WORKLOADS, WORKLOADS, benchRows, floorRunner } from './server/workloads.mjs';
import { listening, peerNode, startPostGraphile } from './server/peer.mjs';
import { DEFAULT_PREPARED_STATEMENTS } from '../src/run/drivers/pool.ts';
import { childrenCpuMs, parentOf, postgresCpuMs, processCpuMs } from './server/cpu.mjs';
import { writeSection } from './results-file.mjs';
import { fmt, inTurns as measureInTurns, p50Of, p99Of, perRound, ratio, roundOf, rpsOf, throughputRatio } from './turns.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(BENCH);
/** The built command line, as `npm start` runs it (`npm run bench:server` builds it when stale). */
const CLI = join(ROOT, 'dist/cli.js');
if (!existsSync(CLI)) {
  process.stderr.write('dist/cli.js is missing: run `npm run build` first (`npm run bench:server` does)\n');
  process.exit(1);
}
const SECONDS = Number(process.env.OQL_BENCH_SECONDS ?? 4);
const ROUNDS = Math.max(1, Number(process.env.OQL_BENCH_ROUNDS ?? 3));
const WARMUP_SECONDS = Number(process.env.OQL_BENCH_WARMUP_SECONDS ?? 2);
const MAX_REQUESTS = Number(process.env.OQL_BENCH_MAX_REQUESTS ?? 200_000);
const CONNECTIONS = Number(process.env.OQL_BENCH_CONNECTIONS ?? 8);
const POOL_SIZE = 10;
const ONLY = process.env.OQL_BENCH_ONLY;
const ONLY_WORKLOADS = process.env.OQL_BENCH_WORKLOADS?.split(',').map((w) => w.trim()).filter(Boolean);
const unknownWorkloads = ONLY_WORKLOADS?.filter((w) => !WORKLOADS.some((x) => x.name === w)) ?? [];
if (unknownWorkloads.length > 0) {
  process.stderr.write(`OQL_BENCH_WORKLOADS: no workload ${unknownWorkloads.map((w) => JSON.stringify(w)).join(', ')}; the workloads are ${WORKLOADS.map((w) => w.name).join(', ')}\n`);
  process.exit(1);
}
const START_LOAD = loadavg()[0];
// The one key's user may run twice the connections at once: a request's slot is given back just
// after its answer is sent, so a connection's next request can arrive before it is.
const BUDGET = Math.max(8, 2 * CONNECTIONS);
const KEY = 'bench-key-org-bench-superadmin-0001';

const log = (m) => process.stderr.write(`[bench:server] ${m}\n`);
/**
 * The PostgreSQL server's postmaster, once known: the CPU of it and its backends is read per run
 * (bench/server/cpu.mjs). On PGlite the database is the server's child process, or the floor's own.
 */
let postmaster;

/**
 * CPU milliseconds so far of a side: `pid` a server (null: this process, the floor) and the
 * database it uses: PostgreSQL's processes, or an embedded server's database process (the
 * floor's PGlite is in this process, counted as its own).
 */
function cpuNow(pid) {
  const { user, system } = process.cpuUsage();
  const own = pid === null ? (user + system) / 1000 : processCpuMs(pid);
  const db = postmaster !== undefined ? postgresCpuMs(postmaster) : pid === null ? 0 : childrenCpuMs(pid);
  return { own, db };
}

/** CPU milliseconds per request between two snapshots. */
function cpuPer(before, after, requests) {
  return { own: (after.own - before.own) / requests, db: (after.db - before.db) / requests };
}

/** "0.31 + 0.12": CPU ms per request of the process, then of its database. */
const cpuText = (cpu) => `${fmt(cpu.own)} + ${fmt(cpu.db)}`;

// ---- Data

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

// ---- The server, as a child process

/** The bench's data as a file, for the HTTP floor's process: written the first time one starts. */
let dataFile;

/** OQL_BENCH_SERVER_NODE_FLAGS: Node flags for each `oql serve` and each HTTP floor (a profile of both, say). */
const serverNodeFlags = () => process.env.OQL_BENCH_SERVER_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];

/** The HTTP floor (bench/server/http-floor.mjs) for one workload on PostgreSQL, as a child process on this Node. */
async function startHttpFloor(databaseUrl, workload) {
  if (dataFile === undefined) {
    dataFile = join(mkdtempSync(join(tmpdir(), 'oql-bench-data-')), 'data.json');
    writeFileSync(dataFile, JSON.stringify(data));
    const written = dataFile;
    process.on('exit', () => rmSync(dirname(written), { recursive: true, force: true }));
  }
  // workloads.mjs imports the fixtures' TypeScript: tsx loads it (module loading only).
  const child = spawn(process.execPath, [...serverNodeFlags(), '--import', 'tsx', join(BENCH, 'server', 'http-floor.mjs')], {
    cwd: ROOT,
    env: { ...process.env, OQL_HTTP_FLOOR_DATABASE: databaseUrl, OQL_HTTP_FLOOR_POOL: String(POOL_SIZE), OQL_HTTP_FLOOR_DATA: dataFile, OQL_HTTP_FLOOR_WORKLOAD: workload.name },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return listening(child, 'the HTTP floor');
}

/** `oql serve` on the given database flags; resolves with its URL and a stop function. */
async function startServer(flags, node = process.execPath) {
  const child = spawn(node, [...serverNodeFlags(), CLI, 'serve', '--port', '0', ...flags], {
    cwd: ROOT,
    // warn: the request log lines (one per request) are not part of what is measured.
    // One key drives every connection: its user's budgets are raised (stated in the results), so
    // the bench measures answers and not the per-user limit's 429s.
    env: {
      ...process.env, OQL_API_KEYS: `${KEY}=${ORG}:superadmin:u_bench`, OQL_LOG_LEVEL: 'warn', OQL_TOKEN_SECRET: 'bench-token-secret-0123456789abcdef',
      OQL_MAX_CONCURRENT_REQUESTS: String(BUDGET), OQL_MAX_CONCURRENT_REPORTS: String(BUDGET),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return listening(child, 'oql serve');
}

// ---- Measuring

/** How oql is asked: the workload's own request, with the bench key. */
const OQL = { headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, request: (w, n) => w.request(data, n), refused: () => false };

/** How PostGraphile is asked: the workload's GraphQL request; an answer with `errors` is refused though its status is 200. */
const GRAPHQL = {
  headers: { 'content-type': 'application/json' },
  request: (w, n) => ({ method: 'POST', path: '/graphql', body: JSON.stringify(w.graphql(data, n)) }),
  refused: (body) => String(body).includes('"errors"'),
};

/** How the HTTP floor is asked: oql's own request for the workload (it reads the body and runs the floor's statement). */
const PLAIN = { headers: { 'content-type': 'application/json' }, request: (w, n) => w.request(data, n), refused: () => false };

/**
 * A server as one side of a measurement: `warm()` checks its first answer (null, or why the
 * workload is skipped: not routed, or an error) and runs the warm-up; `round()` is one measured
 * run. Any answer that is not a 2xx (or a GraphQL answer with errors) fails the bench.
 */
function serverSide({ url, pid }, workload, how = OQL) {
  let n = 1;
  /** The first answer that was not a 2xx, to say why the run failed. */
  let firstRefusal;
  let refusedBodies = 0;
  const run = (duration, amount) => new Promise((resolve, reject) => {
    const instance = autocannon({
      url,
      connections: workload.connections ?? CONNECTIONS,
      pipelining: 1,
      duration,
      ...(amount ? { maxOverallRequests: amount } : {}),
      headers: how.headers,
      requests: [{
        setupRequest: (req) => {
          const r = how.request(workload, n++);
          return { ...req, method: r.method, path: r.path, ...(r.body === undefined ? {} : { body: r.body }) };
        },
        onResponse: (status, body) => {
          const refused = status >= 300 || how.refused(body);
          if (refused && status < 300) refusedBodies++;
          if (refused && firstRefusal === undefined) firstRefusal = `${status} ${String(body).slice(0, 300)}`;
        },
      }],
    }, (err, result) => (err ? reject(err) : resolve(result)));
    autocannon.track(instance, { renderProgressBar: false, renderResultsTable: false, renderLatencyTable: false, outputStream: { write() {} } });
  });
  /** An answer that is not a 2xx (or a GraphQL answer with errors) is not throughput: the run fails instead of counting it. */
  const check = (r) => {
    if (refusedBodies > 0) throw new Error(`${workload.name}: ${refusedBodies} answers held errors; the first: ${firstRefusal}`);
    const failed = r.errors + r.timeouts + r.non2xx;
    if (failed > 0) {
      const statuses = Object.keys(r.statusCodeStats).filter((code) => !code.startsWith('2')).join(', ');
      throw new Error(`${workload.name}: ${failed} requests were not answered 2xx (${r.non2xx} non-2xx${statuses ? `: ${statuses}` : ''}, ${r.errors} errors, ${r.timeouts} timeouts)${firstRefusal === undefined ? '' : `; the first: ${firstRefusal}`}`);
    }
  };
  return {
    async warm() {
      const probe = how.request(workload, 0);
      const first = await fetch(url + probe.path, { method: probe.method, headers: how.headers, body: probe.body });
      const text = await first.text();
      if (how.refused(text)) throw new Error(`${workload.name}: the first answer holds errors: ${text.slice(0, 500)}`);
      if (first.status !== 200) {
        const code = /"error_code":"([A-Z_]+)"/.exec(text)?.[1] ?? String(first.status);
        return code === 'ROUTE_NOT_FOUND' ? 'not routed yet' : `answers ${first.status} ${code}`;
      }
      check(await run(WARMUP_SECONDS));
      return null;
    },
    async round() {
      const before = cpuNow(pid);
      const clientBefore = process.cpuUsage();
      // autocannon's own duration is in whole seconds, and it looks at its request budget once a
      // second: a run the budget ends early idles to the next second, and reads 20,000 / 6 or / 7
      // whatever was served. The budget is a guard only, and the run is timed here.
      const started = performance.now();
      const r = await run(SECONDS, MAX_REQUESTS);
      const seconds = (performance.now() - started) / 1000;
      const cpu = cpuPer(before, cpuNow(pid), r.requests.total);
      // This process's CPU meanwhile: autocannon's, which the floor's runs do not have beside them.
      const clientUsage = process.cpuUsage(clientBefore);
      cpu.client = (clientUsage.user + clientUsage.system) / 1000 / r.requests.total;
      check(r);
      return { requests: r.requests.total, ok: r['2xx'], seconds, rps: r['2xx'] / seconds, p50: r.latency.p50, p99: r.latency.p99, cpu };
    },
  };
}

/** The floor as one side, at the same concurrency, for the same time (or request budget). */
function floorSide(db, workload) {
  const exec = floorRunner(db, workload, data);
  let i = 0;
  const loop = async (deadline, budget, latencies) => {
    const worker = async () => {
      while (performance.now() < deadline && (budget === undefined || budget.left-- > 0)) {
        const started = performance.now();
        await exec(i++);
        latencies?.push(performance.now() - started);
      }
    };
    await Promise.all(Array.from({ length: workload.connections ?? CONNECTIONS }, worker));
  };
  return {
    async warm() {
      await loop(performance.now() + WARMUP_SECONDS * 1000);
      return null;
    },
    async round() {
      const latencies = [];
      const before = cpuNow(null);
      const started = performance.now();
      await loop(started + SECONDS * 1000, { left: MAX_REQUESTS }, latencies);
      const seconds = (performance.now() - started) / 1000;
      return roundOf(latencies, seconds, cpuPer(before, cpuNow(null), latencies.length));
    },
  };
}

/** The sides of one comparison in turns (bench/turns.mjs), with this bench's rounds and log. */
const inTurns = (database, workload, sides) => measureInTurns(`${database}: ${workload.name}`, sides, { rounds: ROUNDS, log });

// ---- The two databases

async function benchPglite() {
  const dir = mkdtempSync(join(tmpdir(), 'oql-bench-server-'));
  const serverDir = join(dir, 'server');
  const floorDir = join(dir, 'floor');
  try {
    log('PGlite: loading the data');
    const load = await PGlite.create(serverDir);
    await loadIntoDatabase(load, catalog, rows);
    await load.query('ANALYZE');
    await load.close();
    cpSync(serverDir, floorDir, { recursive: true });
    const floor = await PGlite.create(floorDir);
    const server = await startServer(['--data-dir', serverDir]);
    try {
      return await benchAll('PGlite', server, { kind: 'pglite', db: floor });
    } finally {
      await server.stop();
      await floor.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchPostgres() {
  if (!pgServerAvailable()) {
    log('PostgreSQL 15 binaries not found: skipping');
    return [];
  }
  log('PostgreSQL 15: starting a throwaway server and loading the data');
  const pgServer = await startPgServer({ settings: { max_connections: 60, shared_buffers: '256MB', jit: 'off' } });
  const pool = new pg.Pool({ connectionString: pgServer.url, max: POOL_SIZE });
  pool.on('error', () => {});
  try {
    await loadIntoDatabase(pool, catalog, rows);
    await pool.query('ANALYZE');
    postmaster = parentOf((await pool.query('SELECT pg_backend_pid() AS pid')).rows[0].pid) ?? undefined;
    // The peer first, on the rows as loaded: the bulk_create workload below adds hundreds of thousands.
    if (process.env.OQL_BENCH_PEER !== '0') peer = await benchPeer(pgServer.url, { kind: 'postgres', db: pool });
    const server = await startServer(['--database', pgServer.url]);
    try {
      const httpFloor = process.env.OQL_BENCH_HTTP_FLOOR === '0' ? undefined : (workload) => startHttpFloor(pgServer.url, workload);
      const measured = await benchAll('PostgreSQL 15', server, { kind: 'postgres', db: pool }, httpFloor);
      // The read path measured, as `oql serve` said it at start: "(one round trip per read)".
      // And where reads go, when it says: "reads     read-only sessions of the same database (one statement per read)".
      const trips = /^database {2}.*\((.+ per read)\)$/m.exec(server.output())?.[1];
      const reads = /^reads {5}(.+)$/m.exec(server.output())?.[1];
      readPath = trips === undefined ? 'not stated by oql serve' : reads === undefined ? trips : `${trips}; ${reads}`;
      return measured;
    } finally {
      await server.stop();
    }
  } finally {
    postmaster = undefined;
    await pool.end();
    await pgServer.stop();
  }
}

/** The peer's results, when it ran: the reads of PEER_WORKLOADS by oql, by PostGraphile and by the floor. */
let peer;
/** Round trips per read on PostgreSQL, as `oql serve` printed them at start. */
let readPath;

/**
 * oql and PostGraphile on the same tables and rows, in turns with the floor, each alone on the
 * machine while it is measured, with the same connections for the same time.
 */
async function benchPeer(databaseUrl, floorDb) {
  log('PostgreSQL 15: the reads beside PostGraphile');
  const postgraphile = await startPostGraphile(databaseUrl, POOL_SIZE, log);
  try {
    // oql on the same Node line as the peer, so the two servers differ only in what they are.
    const server = await startServer(['--database', databaseUrl], peerNode());
    try {
      const out = { version: postgraphile.version, nodeVersion: postgraphile.nodeVersion, rows: [] };
      for (const workload of PEER_WORKLOADS) {
        const measured = await inTurns('peer', workload, { PostGraphile: serverSide(postgraphile, workload, GRAPHQL), oql: serverSide(server, workload), floor: floorSide(floorDb, workload) });
        for (const [name, m] of Object.entries(measured)) if (m.skipped) throw new Error(`peer: ${workload.name}: ${name} ${m.skipped}`);
        out.rows.push({ workload, theirs: measured.PostGraphile, ours: measured.oql, floor: measured.floor });
        log(`peer: ${workload.name}: oql ${fmt(measured.oql.rps, 0)} req/s, PostGraphile ${fmt(measured.PostGraphile.rps, 0)} req/s, floor ${fmt(measured.floor.rps, 0)} req/s`);
      }
      return out;
    } finally {
      await server.stop();
    }
  } finally {
    await postgraphile.stop();
  }
}

/**
 * Fails the run when the floor's INSERT leaves a column empty that the service's fills, or the
 * other way round: the floor must write the rows the service writes, index entries and all, or
 * it measures less work than it is compared with. On PostgreSQL, where both write one database
 * (on PGlite the floor has a copy of its own, and the same statement).
 */
async function sameColumnsWritten(floorDb) {
  const newest = async (which) => (await floorDb.db.query(`SELECT * FROM public.opportunity WHERE name LIKE 'Bench deal %' AND id ${which} 'floor\\_%' ORDER BY created_at DESC NULLS LAST, id DESC LIMIT 1`)).rows[0];
  const filled = (row) => Object.keys(row ?? {}).filter((k) => row[k] !== null).sort().join(', ');
  const [floorRow, serviceRow] = [await newest('LIKE'), await newest('NOT LIKE')];
  if (filled(floorRow) !== filled(serviceRow)) throw new Error(`the floor's rows fill ${filled(floorRow)}; the service's fill ${filled(serviceRow)}`);
}

async function benchAll(database, server, floorDb, startHttpFloor) {
  const out = [];
  for (const workload of WORKLOADS.filter((w) => ONLY_WORKLOADS === undefined || ONLY_WORKLOADS.includes(w.name))) {
    const sides = { floor: floorSide(floorDb, workload), server: serverSide(server, workload) };
    const plain = startHttpFloor ? await startHttpFloor(workload) : undefined;
    try {
      if (plain) sides['HTTP floor'] = serverSide(plain, workload, PLAIN);
      const measured = await inTurns(database, workload, sides);
      if (measured.server.skipped) log(`${database}: ${workload.name}: server ${measured.server.skipped}`);
      else if (floorDb.kind === 'postgres' && workload.floor(data, 0).insert) await sameColumnsWritten(floorDb);
      const httpFloor = plain && !measured.server.skipped ? measured['HTTP floor'] : undefined;
      out.push({ database, workload: workload.name, floorLabel: workload.floorLabel, server: measured.server, floor: measured.floor, httpFloor });
      if (!measured.server.skipped) log(`${database}: ${workload.name}: ${fmt(measured.server.rps, 0)} req/s p50 ${fmt(measured.server.p50)} ms (floor ${fmt(measured.floor.p50)} ms), CPU per request ${cpuText(measured.server.cpu)} (floor ${cpuText(measured.floor.cpu)})`);
    } finally {
      await plain?.stop();
    }
  }
  return out;
}

// ---- Report

function section(results, started) {
  const lines = [];
  const push = (s = '') => lines.push(s);
  push('## HTTP service (`npm run bench:server`)');
  push();
  // The one-minute load before the bench began: above one core's worth, something else was running.
  const shared = START_LOAD > 1;
  push(`Ran ${started.toISOString()} on ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}; ` +
    `load average ${START_LOAD.toFixed(1)} at the start, ${loadavg().map((l) => l.toFixed(1)).join(' / ')} at the end. ` +
    (shared
      ? '**The machine\'s cores were shared with other work while this ran**: the absolute figures are low and noisy; the ratios are the useful part, and they too carry the noise.'
      : 'Nothing else ran on the machine: the bench, its servers and PostgreSQL share its cores between them.'));
  push();
  push(`\`oql serve\` runs as a child process from the built package (\`node dist/cli.js serve\`; request logs at warn, so not written), its one key's user allowed ${BUDGET} requests and ${BUDGET} reports at once (OQL_MAX_CONCURRENT_REQUESTS, OQL_MAX_CONCURRENT_REPORTS; twice the connections, as a slot is given back just after its answer is sent) so that all connections are served; any answer other than a 2xx fails the run. Autocannon drives it over loopback with ${CONNECTIONS} connections, ` +
    `pipelining 1. The floor is the same rows read or written by a bare query from this process at the same concurrency for the same time: a pg Pool of ${POOL_SIZE} connections (the server's pool size) on PostgreSQL, ` +
    'a PGlite instance on a copy of the same data directory on PGlite. Data: the example CRM, ' +
    `${Object.entries(COUNTS).map(([k, v]) => `${v.toLocaleString('en-US')} ${k}`).join(', ')} rows over two organizations. Latencies in ms; ratio = server / floor.`);
  push();
  push(`In turns: the sides of a workload (the floor, \`oql serve\` and, on PostgreSQL, the HTTP floor) each warm up for ${WARMUP_SECONDS} s, then run ${ROUNDS} round${ROUNDS === 1 ? '' : 's'} of ${SECONDS} s (or ${MAX_REQUESTS.toLocaleString('en-US')} requests) a side, one side after the other, the first of a round moving one place each round: a slower minute of the machine, or the rows a write adds, weigh on every side alike. ` +
    'Throughput and CPU are over all rounds; a p50 or p99 is the median of the rounds\'; a ratio is the median of the ratios of the rounds, each of a pair measured back to back, and the last column gives the mean latency ratio of every round.');
  push();
  if (readPath) push(`Reads on PostgreSQL: ${readPath} (the default deployment, \`oql serve --database <url>\` alone: no read role, no PgBouncer); named statements: ${process.env.OQL_PREPARED_STATEMENTS ? `OQL_PREPARED_STATEMENTS=${process.env.OQL_PREPARED_STATEMENTS}` : `the default, ${DEFAULT_PREPARED_STATEMENTS} a connection`}.`);
  if (readPath) push();
  push(`Concurrency: ${CONNECTIONS}, except for the report (${WORKLOADS.filter((w) => w.connections).map((w) => w.connections).join(', ')}), as a user runs two analytics queries at once by default: both sides run two.`);
  push();
  push('CPU per request: milliseconds of CPU (user and system, from /proc) of the process that answered, then of its database (PostgreSQL\'s postmaster and backends; on PGlite the server\'s database process, while the floor\'s PGlite runs in the bench\'s own process and is counted there), over the measured run divided by its requests. The server\'s side leaves out autocannon, which sends the requests and reads the answers from the bench\'s process.');
  push();
  push('Mean latency ratio: the floor\'s throughput over the server\'s. Both sides keep the same number of requests in flight all the time, so each side\'s mean latency is that number over its throughput (Little\'s law), and the ratio of the means is exact at any speed. autocannon reports the server\'s percentiles in whole milliseconds (a p50 of 1 means under 1.5 ms), so where its p50 is under 5 ms the goals below are judged on the mean latency ratio instead of the p50 ratio.');
  push();
  push('| database | workload | server req/s | server p50 | server p99 | floor req/s | floor p50 | floor p99 | p50 ratio | p99 ratio | mean latency ratio | CPU per request, server + database | CPU per request, floor + database | floor query | mean latency ratio by round |');
  push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of results) {
    const f = r.floor;
    if (r.server.skipped) {
      push(`| ${r.database} | ${r.workload} | ${r.server.skipped} | | | ${fmt(f.rps, 0)} | ${fmt(f.p50)} | ${fmt(f.p99)} | | | | | ${cpuText(f.cpu)} | ${r.floorLabel} | |`);
      continue;
    }
    const s = r.server;
    push(`| ${r.database} | ${r.workload} | ${fmt(s.rps, 0)} | ${fmt(s.p50)} | ${fmt(s.p99)} | ${fmt(f.rps, 0)} | ${fmt(f.p50)} | ${fmt(f.p99)} | ${fmt(ratio(s, f, p50Of))} | ${fmt(ratio(s, f, p99Of))} | ${fmt(throughputRatio(f, s))} | ${cpuText(s.cpu)} | ${cpuText(f.cpu)} | ${r.floorLabel} | ${perRound(f, s, rpsOf)} |`);
  }
  push();
  const plain = results.filter((r) => r.httpFloor);
  if (plain.length > 0) {
    push('The HTTP floor (bench/server/http-floor.mjs): the least an HTTP server in Node adds to the floor\'s query. A child process on the same Node as `oql serve`, with node:http and a pg Pool of the same size and no framework, reads each request\'s body, runs the floor\'s own statement for it and answers its rows as JSON; no key, no validation, no limit. Measured in turns with the floor and `oql serve`, as it is, with the same connections for the same time. Ratios are of mean latency (throughputs inverted). The last column is the CPU per request of autocannon, in the bench\'s process, while each was measured: the floor has no HTTP client beside it, and on two cores what autocannon takes the servers and PostgreSQL do not have.');
    push();
    push('| database | workload | floor req/s | HTTP floor req/s | oql req/s | HTTP floor / floor | oql / HTTP floor | oql / floor | CPU per request, HTTP floor + database | oql + database | autocannon, beside the HTTP floor / oql |');
    push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const r of plain) {
      push(`| ${r.database} | ${r.workload} | ${fmt(r.floor.rps, 0)} | ${fmt(r.httpFloor.rps, 0)} | ${fmt(r.server.rps, 0)} | ${fmt(throughputRatio(r.floor, r.httpFloor))} | ${fmt(throughputRatio(r.httpFloor, r.server))} | ${fmt(throughputRatio(r.floor, r.server))} | ${cpuText(r.httpFloor.cpu)} | ${cpuText(r.server.cpu)} | ${fmt(r.httpFloor.cpu.client)} / ${fmt(r.server.cpu.client)} |`);
    }
    push();
  }
  const GOALS = { 'get one': 1.25, filter: 1.25, report: 1.3, 'bulk_create 100': 1.6 };
  const goal = results.filter((r) => r.database === 'PostgreSQL 15' && GOALS[r.workload] !== undefined);
  if (goal.length > 0) {
    const verdicts = goal.map((r) => {
      if (r.server.skipped) return `${r.workload}: not measured (${r.server.skipped})`;
      // Under 5 ms, autocannon's whole milliseconds make the p50 ratio a rounding: the means are exact.
      const byMean = r.server.p50 < 5;
      const measured = byMean ? throughputRatio(r.floor, r.server) : ratio(r.server, r.floor, p50Of);
      return `${r.workload} ${fmt(measured)}× ${byMean ? '(mean latency) ' : ''}of ${GOALS[r.workload]}× (${measured <= GOALS[r.workload] ? 'met' : 'not met'})`;
    });
    push(`Goals at the median on PostgreSQL, ${CONNECTIONS} connection${CONNECTIONS === 1 ? '' : 's'}: get one and filter ≤ 1.25× the floor, report ≤ 1.3×, bulk_create of 100 ≤ 1.6× — ${verdicts.join('; ')}.`);
    push();
  }
  if (peer) {
    push();
    push(`### Beside PostGraphile ${peer.version}`);
    push();
    push(`PostGraphile ${peer.version} (the amber preset, with every column allowed as a condition and sort key; installed by the bench into a cache folder, not a dependency; Node ${peer.nodeVersion}, as PostGraphile 5 needs Node 22 or later) serves the same PostgreSQL tables and rows over GraphQL, with a pool of ${POOL_SIZE} connections like oql's. ` +
      `Both servers run on Node ${peer.nodeVersion} and are measured in turns with the floor, as above (${ROUNDS} rounds of ${SECONDS} s a side, the ratio the median of the rounds', each round's in brackets), each alone on the machine while it is measured, with ${CONNECTIONS} connections. ` +
      'PostGraphile reads the tenant as a condition argument, with no row-level security, and checks no key: what oql does per request on top (the key, the policy point, the budget and ceilings, the compiled tenant predicate) is not asked of it. ' +
      'A GraphQL answer that holds `errors` fails the run as a non-2xx does.');
    push();
    push('| read | oql req/s | PostGraphile req/s | floor req/s | oql / PostGraphile | oql / floor | oql p50 / p99 | PostGraphile p50 / p99 | floor p50 / p99 | CPU per read, oql + PostgreSQL | PostGraphile + PostgreSQL | floor + PostgreSQL | floor query |');
    push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const r of peer.rows) {
      push(`| ${r.workload.name} | ${fmt(r.ours.rps, 0)} | ${fmt(r.theirs.rps, 0)} | ${fmt(r.floor.rps, 0)} | ${fmt(throughputRatio(r.ours, r.theirs))} (${perRound(r.ours, r.theirs, rpsOf)}) | ${fmt(throughputRatio(r.ours, r.floor))} | ${fmt(r.ours.p50)} / ${fmt(r.ours.p99)} | ${fmt(r.theirs.p50)} / ${fmt(r.theirs.p99)} | ${fmt(r.floor.p50)} / ${fmt(r.floor.p99)} | ${cpuText(r.ours.cpu)} | ${cpuText(r.theirs.cpu)} | ${cpuText(r.floor.cpu)} | ${r.workload.floorLabel} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}

const started = new Date();
const results = [];
try {
  if (ONLY !== 'postgres') results.push(...await benchPglite());
  if (ONLY !== 'pglite') results.push(...await benchPostgres());
} catch (e) {
  log(`failed: ${e.stack ?? e}`);
  process.exitCode = 1;
}
if (results.length > 0) {
  const text = section(results, started);
  process.stdout.write(text);
  writeSection('server-bench', text);
  log('wrote the HTTP service section of bench/RESULTS.md');
}
