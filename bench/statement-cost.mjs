#!/usr/bin/env node
// What a read costs PostgreSQL itself, by how it is sent: `npm run bench:statement-cost`.
//
// The CPU of the backend serving each side (/proc, user and system), divided by the reads it
// served: the bare statement (unnamed, then named), and oql's own read path (`Database.read` through
// `readBounded`, as the service reads a filter page: in a read-only transaction with its settings,
// the statement wrapped to bound its bytes) with named statements off and on, and named on a
// read-only session (the default with --database alone: the statement without BEGIN and ROLLBACK). Each side has a
// connection of its own, and the sides take turns in blocks, so that whatever else the machine
// does falls on all of them alike. Also the plan alone (EXPLAIN) of the page as written and as
// wrapped, and bench:server's report: bare, oql's statement bare, and as the service reads it;
// and a report over this month (a date boundary from NOW()): the floor with the boundary as a
// parameter, oql's statement, and the same computing its boundary for every row. Data: the example CRM, 20,000 opportunities over two organizations, as bench:server.
//
// Then a bulk_create of 100 as bench:server's floor writes it and as oql writes it, without and with
// its change log, once the reads are done.
//
// OQL_BENCH_BLOCKS (default 20) rounds of every side; each round reads 40 pages or reports, or 600 records, or writes 10 bulk_creates.
// Writes the "What a read costs PostgreSQL" section of bench/RESULTS.md.
import { cpus, loadavg } from 'node:os';
import pg from 'pg';
import { loadFixtureCatalog, loadIntoDatabase } from '../fixtures/index.ts';
import { compile } from '../src/compile.ts';
import { compileFilter } from '../src/filter/index.ts';
import { openDatabase, openReadSessions } from '../src/run/open.ts';
import { bulkCreate } from '../src/records/index.ts';
import { ChangeLog } from '../src/service/changes/log.ts';
import { migrate } from '../src/service/migrations.ts';
import { listeningSql } from '../src/service/webhooks/store.ts';
import { boundedStatement } from '../src/run/bounds.ts';
import { blankAbove, readBounded } from '../src/run/read.ts';
import { DEFAULT_MAX_RESPONSE_BYTES } from '../src/service/config.ts';
import { pgServerAvailable, startPgServer } from '../test/support/pg-server.ts';
import { writeSection } from './results-file.mjs';
import { processCpuMs } from './server/cpu.mjs';
import { BENCH_ORG as ORG, WORKLOADS, benchRows, floorRunner } from './server/workloads.mjs';

const BLOCKS = Number(process.env.OQL_BENCH_BLOCKS ?? 20);
/** bench:server's own workloads: the same filter page and get-one, bare and as HTTP bodies. */
const FILTER = WORKLOADS.find((w) => w.name === 'filter');
const GET_ONE = WORKLOADS.find((w) => w.name === 'get one');
const REPORT = WORKLOADS.find((w) => w.name === 'report');
const BULK = WORKLOADS.find((w) => w.name === 'bulk_create 100');
const log = (m) => process.stderr.write(`[bench:statement-cost] ${m}\n`);

if (!pgServerAvailable()) {
  log('PostgreSQL 15 binaries not found');
  process.exit(1);
}

const catalog = loadFixtureCatalog('crm');
const rows = benchRows(catalog);
const own = (slug) => rows.get(slug).filter((r) => r.org_id === ORG && r.is_deleted === false);
const data = { org: ORG, opportunityIds: own('opportunity').map((r) => r.id).slice(0, 1_000), ownerIds: own('user').map((r) => r.id), accountIds: own('account').map((r) => r.id) };
const started = new Date();
const startLoad = loadavg()[0];
const server = await startPgServer({ settings: { shared_buffers: '256MB', jit: 'off' } });
try {
  const loader = new pg.Pool({ connectionString: server.url, max: 2 });
  await loadIntoDatabase(loader, catalog, rows);
  await loader.query('ANALYZE');
  await loader.end();

  /** A side's connection and the backend that serves it. */
  const bare = new pg.Client({ connectionString: server.url });
  await bare.connect();
  const backendOf = async (read) => Number((await read('SELECT pg_backend_pid() AS pid')).pid);
  const bareBackend = await backendOf(async (sql) => (await bare.query(sql)).rows[0]);
  const oqlOf = async (preparedStatements) => {
    const db = await openDatabase({ database: server.url, poolSize: 1, preparedStatements });
    return { db, backend: await backendOf(async (sql) => (await db.read(sql, [], { timeoutMs: 5_000 })).rows[0]) };
  };
  const unnamed = await oqlOf(0);
  const named = await oqlOf(100);
  // The default with --database alone: reads on sessions that start read-only with the timeout, each its statement alone.
  const sessions = await openReadSessions(server.url, { poolSize: 1, preparedStatements: 100, timeoutMs: 5_000 });
  if (!sessions.db) throw new Error(`no read-only sessions: ${sessions.refused}`);
  const session = { db: sessions.db, backend: await backendOf(async (sql) => (await sessions.db.read(sql, [], { timeoutMs: 5_000 })).rows[0]) };

  const floorPage = (i) => FILTER.floor(data, i);
  // The filter request's own body, compiled as the service compiles it.
  const page = (i) => {
    const c = compileFilter(JSON.parse(FILTER.request(data, i).body), { catalog, slug: 'opportunity', orgId: ORG });
    return { sql: c.sql, params: c.params, columnCount: c.columns.length };
  };
  // The service's limits on a REST filter page (Policy.readLimits): its response ceiling by default,
  // no row cap, no plan check (it is remembered as cheap after the first).
  const limits = { timeoutMs: 5_000, tenant: ORG, maxBytes: DEFAULT_MAX_RESPONSE_BYTES };
  const getOne = (i) => GET_ONE.floor(data, i);
  // The report request's own query, compiled as the service compiles it.
  const report = (i) => {
    const { query, slug } = JSON.parse(REPORT.request(data, i).body);
    const c = compile(query, { catalog, slug, orgId: ORG });
    return { sql: c.sql, params: c.params, columnCount: c.columns.length };
  };
  const floorReport = (i) => REPORT.floor(data, i);
  // This month's report, as users write it: the month's start from NOW() in a zone. The floor
  // takes that start as a parameter, worked out once; oql's statement computes it once in a
  // scalar subquery; as oql wrote it before, the filter computed it again for every row.
  const zoneStart = "date_part('epoch', date_trunc('month', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata') * 1000";
  const month = compile(`SELECT stage, COUNT(id) AS deals, SUM(amount) AS total FROM opportunity WHERE created_at >= ${zoneStart} GROUP BY stage LIMIT 100`, { catalog, slug: 'opportunity', orgId: ORG });
  if (!month.sql.includes('>= (SELECT date_part(')) throw new Error(`this month's report is not written with its boundary computed once: ${month.sql}`);
  const monthPerRow = month.sql.replace('>= (SELECT date_part(', '>= (date_part(');
  const monthStart = Number((await bare.query(`SELECT ${zoneStart} AS ms`)).rows[0].ms);
  const floorMonth = 'SELECT stage, count(id) AS deals, sum(amount) AS total FROM public.opportunity WHERE org_id = $1 AND NOT is_deleted AND created_at >= $2 GROUP BY stage LIMIT 100';

  const sides = [
    { name: 'filter page: the bare statement, unnamed', backend: bareBackend, each: 40, run: (i) => bare.query(floorPage(i).sql, floorPage(i).params) },
    { name: 'filter page: the bare statement, named', backend: bareBackend, each: 40, run: (i) => bare.query({ name: 'floor_page', text: floorPage(i).sql, values: floorPage(i).params }) },
    { name: 'filter page: oql, unnamed (OQL_PREPARED_STATEMENTS=0)', backend: unnamed.backend, each: 40, run: (i) => readBounded(unnamed.db, page(i), limits) },
    { name: 'filter page: oql, named (OQL_PREPARED_STATEMENTS=100)', backend: named.backend, each: 40, run: (i) => readBounded(named.db, page(i), limits) },
    { name: 'filter page: oql, named, on a read-only session (the default)', backend: session.backend, each: 40, run: (i) => readBounded(session.db, page(i), limits) },
    { name: 'filter page: its plan alone, as written (EXPLAIN)', backend: bareBackend, each: 40, run: (i) => bare.query(`EXPLAIN ${page(i).sql}`, page(i).params) },
    { name: 'filter page: its plan alone, wrapped to bound its bytes (EXPLAIN)', backend: bareBackend, each: 40, run: (i) => { const p = page(i); const b = boundedStatement(p.sql, p.params, p.columnCount, { maxBytes: limits.maxBytes, blankAbove: blankAbove(limits.maxBytes) }); return bare.query(`EXPLAIN ${b.sql}`, b.params); } },
    { name: 'report: the bare statement, unnamed', backend: bareBackend, each: 40, run: (i) => bare.query(floorReport(i).sql, floorReport(i).params) },
    { name: 'report: the bare statement, named', backend: bareBackend, each: 40, run: (i) => bare.query({ name: 'floor_report', text: floorReport(i).sql, values: floorReport(i).params }) },
    { name: 'report: oql\'s statement, bare and named (not wrapped to bound its bytes)', backend: bareBackend, each: 40, run: (i) => bare.query({ name: 'oql_report', text: report(i).sql, values: report(i).params }) },
    { name: 'report: oql, named, on a read-only session (the default)', backend: session.backend, each: 40, run: (i) => readBounded(session.db, report(i), limits) },
    { name: 'this month\'s report: the bare statement, the month\'s start a parameter, named', backend: bareBackend, each: 40, run: () => bare.query({ name: 'floor_month', text: floorMonth, values: [ORG, monthStart] }) },
    { name: 'this month\'s report: oql\'s statement, its boundary computed once, bare and named', backend: bareBackend, each: 40, run: () => bare.query({ name: 'oql_month', text: month.sql, values: month.params }) },
    { name: 'this month\'s report: the same, its boundary computed for every row, bare and named', backend: bareBackend, each: 40, run: () => bare.query({ name: 'oql_month_per_row', text: monthPerRow, values: month.params }) },
    { name: 'get one: the bare statement, unnamed', backend: bareBackend, each: 600, run: (i) => bare.query(getOne(i).sql, getOne(i).params) },
    { name: 'get one: oql, unnamed (OQL_PREPARED_STATEMENTS=0)', backend: unnamed.backend, each: 600, run: (i) => unnamed.db.read(getOne(i).sql, getOne(i).params, { timeoutMs: 5_000, tenant: ORG }) },
    { name: 'get one: oql, named (OQL_PREPARED_STATEMENTS=100)', backend: named.backend, each: 600, run: (i) => named.db.read(getOne(i).sql, getOne(i).params, { timeoutMs: 5_000, tenant: ORG }) },
    { name: 'get one: oql, named, on a read-only session (the default)', backend: session.backend, each: 600, run: (i) => session.db.read(getOne(i).sql, getOne(i).params, { timeoutMs: 5_000, tenant: ORG }) },
  ];
  /** Each side's backend CPU and wall time over BLOCKS rounds, the sides taking turns, after a warm-up. */
  const measure = async (list, what) => {
    for (const side of list) for (let i = 0; i < 20; i++) await side.run(i);
    const out = new Map(list.map((s) => [s.name, { cpu: 0, reads: 0, ms: 0 }]));
    for (let b = 0; b < BLOCKS; b++) {
      for (const side of list) {
        const before = processCpuMs(side.backend);
        const t0 = performance.now();
        for (let i = 0; i < side.each; i++) await side.run(b * side.each + i);
        const t = out.get(side.name);
        t.ms += performance.now() - t0;
        t.cpu += processCpuMs(side.backend) - before;
        t.reads += side.each;
      }
      log(`${what}: round ${b + 1} of ${BLOCKS}`);
    }
    return out;
  };
  const totals = await measure(sides, 'reads');
  await bare.end();
  await unnamed.db.close();
  await named.db.close();
  await session.db.close();

  // A bulk_create of 100, once the reads are done (its rows would change what they read): the
  // floor's INSERT in a transaction (bench:server's), and oql's bulkCreate as the service writes it
  // (clock, relation checks, INSERT), without and with its change log's statement.
  const floorPool = new pg.Pool({ connectionString: server.url, max: 1 });
  const floorBackend = Number((await floorPool.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
  const floorWrite = floorRunner({ kind: 'postgres', db: floorPool }, BULK, data);
  const writer = async () => {
    const db = await openDatabase({ database: server.url, poolSize: 1 });
    return { db, backend: await backendOf(async (sql) => (await db.read(sql, [], { timeoutMs: 5_000 })).rows[0]) };
  };
  const plain = await writer();
  const logged = await writer();
  await migrate(logged.db);
  const changeLog = new ChangeLog(logged.db, catalog, { listening: listeningSql });
  const ctx = { catalog, orgId: ORG, userId: 'u_bench', timeoutMs: 30_000 };
  const records = (i) => JSON.parse(BULK.request(data, i).body);
  const writeSides = [
    { name: 'the floor: one INSERT of a parameter per value, in a transaction (bench:server\'s)', backend: floorBackend, each: 10, run: (i) => floorWrite(i) },
    { name: 'oql\'s bulkCreate without the change log: clock, relation checks, INSERT', backend: plain.backend, each: 10, run: (i) => bulkCreate(plain.db, 'opportunity', records(i), ctx) },
    { name: 'oql\'s bulkCreate with the change log, as the service writes', backend: logged.backend, each: 10, run: (i) => bulkCreate(logged.db, 'opportunity', records(i), { ...ctx, changes: changeLog.sink({ user_id: 'u_bench', surface: 'rest' }) }) },
  ];
  const writeTotals = await measure(writeSides, 'bulk_create');
  await floorPool.end();
  await plain.db.close();
  await logged.db.close();

  const fmt = (n) => n.toLocaleString('en-US', { minimumFractionDigits: 3, maximumFractionDigits: 3 });
  const lines = [];
  const push = (s = '') => lines.push(s);
  push('## What a read costs PostgreSQL (`npm run bench:statement-cost`)');
  push();
  push(`Ran ${started.toISOString()} on ${cpus().length} cores, Node ${process.version}, PostgreSQL 15; load average ${startLoad.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end. ` +
    'The CPU (user and system, from /proc, in ticks of 10 ms) of the backend serving each side, divided by the reads it served; the sides take turns in blocks on connections of their own. ' +
    'oql\'s filter page is read as the service reads it (`readBounded`: a read-only transaction with its settings, or on a read-only session the statement alone; the statement wrapped to bound its bytes). ' +
    `Data: the example CRM, 20,000 opportunities over two organizations; ${BLOCKS} rounds of 40 pages or reports, or 600 records, a side.`);
  /** A table of the sides' PostgreSQL CPU and wall time, per read or write. */
  const table = (heading, per, list, measured) => {
    push();
    push(`| ${heading} | PostgreSQL CPU per ${per}, ms | wall per ${per}, ms |`);
    push('| --- | --- | --- |');
    for (const side of list) {
      const t = measured.get(side.name);
      push(`| ${side.name} | ${fmt(t.cpu / t.reads)} | ${fmt(t.ms / t.reads)} |`);
    }
  };
  table('read', 'read', sides, totals);
  push();
  push(`A bulk_create of 100 opportunities (bench:server's body; owner and account checked), measured the same way once the reads were done, ${BLOCKS} rounds of 10 a side:`);
  table('bulk_create of 100', 'write', writeSides, writeTotals);
  const text = `${lines.join('\n')}\n`;
  process.stdout.write(text);
  writeSection('statement-cost', text);
} finally {
  await server.stop();
}
