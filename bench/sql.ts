/**
 * SQL benchmark: the SQL the built package emits vs SQL an expert writes by hand, on the
 * example CRM at scale in a throwaway PostgreSQL 15 server. Checks that both return the same
 * rows, then times them (median of alternating runs on a warm cache); captures EXPLAIN (ANALYZE,
 * BUFFERS) of both for any ratio over target. Also times the count endpoint against fetching.
 *
 * Run by bench/run.mjs (`node --import tsx bench/sql.ts <fragment.md>`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { PG_BIN, pgServerAvailable, startPgServer, type PgServer } from '../test/support/pg-server.js';
import { BENCH_DIR, fixtureCatalog, fmt, loadDist, median, progress, table, type OqlModule } from './lib.js';
import { DATASET, TENANTS, copyFile, ensureData, psqlPath } from './sql-data.js';
import { COUNT_VS_FETCH, NOW, SQL_QUERIES, type SqlQuery } from './sql-queries.js';

/** The tenant the queries run as: the largest (tenants get shares n, n-1, ..., 1). */
const TENANT = TENANTS[0]!;
const MIN_RUNS = 7;
const MAX_RUNS = Number(process.env.OQL_BENCH_MAX_RUNS ?? 31);
/** Keep running (up to MAX_RUNS) until each side has this much measured time. */
const TARGET_MS = Number(process.env.OQL_BENCH_TARGET_MS ?? 1500);
const RATIO_TARGET_MEDIAN = 1.1;
const RATIO_LIMIT = 1.5;
/** EXPLAIN evidence is captured above this ratio (the limit, and a margin below it). */
const EXPLAIN_ABOVE = 1.25;

/**
 * Parallel query off: the machine has few cores shared with other jobs, and with one process per
 * query the backend's CPU time (from /proc/<pid>/schedstat) measures all of its work.
 */
const PARALLEL_WORKERS = 0;

const SERVER_SETTINGS = {
  shared_buffers: '2GB',
  effective_cache_size: '8GB',
  work_mem: '16MB',
  maintenance_work_mem: '1GB',
  max_wal_size: '8GB',
  checkpoint_timeout: '30min',
  random_page_cost: 1.1,
  jit: 'off',
} as const;

interface Measured {
  readonly q: SqlQuery;
  readonly emitted: { sql: string; params: unknown[] };
  readonly handParams: unknown[];
  readonly rows: number;
  readonly same: boolean;
  readonly diff?: string;
  emittedMs: number[];
  handMs: number[];
  /** CPU time of the server backend per run (ms), when /proc/<pid>/schedstat is readable. */
  emittedCpu: number[];
  handCpu: number[];
  explain?: { emitted: string; hand: string };
}

const out: string[] = [];
const emit = (s = ''): void => void out.push(s);

async function main(): Promise<void> {
  const fragment = process.argv[2] ?? join(BENCH_DIR, '.data', 'results-sql.md');
  if (!pgServerAvailable()) {
    throw new Error(`the SQL benchmark needs the PostgreSQL 15 server binaries in ${PG_BIN} (initdb, pg_ctl, postgres): apt-get install -y postgresql-15, or set OQL_PG_BIN`);
  }
  const psql = psqlPath(PG_BIN);
  const lib = await loadDist();
  const catalog = fixtureCatalog(lib, 'crm');

  const tGen = performance.now();
  const { dir, manifest, cached } = await ensureData(catalog);
  const genMs = cached ? manifest.generatedMs : performance.now() - tGen;

  progress('sql: starting PostgreSQL 15');
  const server = await startPgServer({ settings: SERVER_SETTINGS });
  const client = new pg.Client({ connectionString: server.url, types: { getTypeParser: () => (v: string) => v } });
  try {
    await client.connect();
    const load = await loadDatabase(lib, client, server, psql, dir, manifest.columns);
    const version = ((await client.query('SHOW server_version')).rows[0] as { server_version: string }).server_version;
    // One backend process does all the work (no parallel workers), so its CPU time is the query's.
    await client.query(`SET max_parallel_workers_per_gather = ${PARALLEL_WORKERS}`);
    const pid = Number(((await client.query('SELECT pg_backend_pid() AS pid')).rows[0] as { pid: string }).pid);
    backendSchedstat = `/proc/${pid}/schedstat`;
    if (Number.isNaN(backendCpuMs())) {
      progress(`sql: cannot read ${backendSchedstat}: backend CPU times will be n/a`);
      backendSchedstat = null;
    }

    const measured: Measured[] = [];
    for (const q of SQL_QUERIES) measured.push(await prepare(lib, catalog, client, q));
    await timeAll(client, measured);
    for (const m of measured) {
      const r = ratio(m);
      if (m.same && (r > EXPLAIN_ABOVE || cpuRatio(m) > EXPLAIN_ABOVE)) m.explain = { emitted: await explain(client, m.emitted.sql, m.emitted.params), hand: await explain(client, m.q.hand, m.handParams) };
    }
    const countVsFetch = await timeCountVsFetch(lib, catalog, client);

    report({ version, manifest, cached, genMs, load, measured, countVsFetch });
    writeFileSync(fragment, `${out.join('\n')}\n`);
    progress(`sql: wrote ${fragment}`);
    const bad = measured.filter((m) => !m.same);
    if (bad.length) throw new Error(`emitted and hand-written SQL disagree for ${bad.map((m) => m.q.id).join(', ')} (see ${fragment})`);
  } finally {
    await client.end().catch(() => undefined);
    await server.stop();
  }
}

interface LoadTimes {
  ddlMs: number;
  copyMs: number;
  indexMs: number;
  analyzeMs: number;
  prewarm: string;
  indexes: string[];
}

async function loadDatabase(lib: OqlModule, client: pg.Client, server: PgServer, psql: string, dir: string, columns: Record<string, string[]>): Promise<LoadTimes> {
  const catalog = fixtureCatalog(lib, 'crm');
  const ddl = lib.catalogDdl(catalog);
  const creates = ddl.filter((s) => !s.startsWith('CREATE INDEX'));
  const indexes = ddl.filter((s) => s.startsWith('CREATE INDEX'));
  let t = performance.now();
  for (const s of creates) await client.query(s);
  const ddlMs = performance.now() - t;
  // Indexes after the data, as any bulk load does; the statements are catalogDdl's own.
  t = performance.now();
  for (const obj of catalog.objects.values()) {
    const t1 = performance.now();
    await copyFile(psql, server.url, `"${catalog.mapping.schema}"."${obj.table}"`, columns[obj.slug]!, join(dir, `${obj.slug}.tsv`));
    progress(`sql: COPY ${obj.slug} in ${fmt((performance.now() - t1) / 1000)} s`);
  }
  const copyMs = performance.now() - t;
  t = performance.now();
  for (const s of indexes) await client.query(s);
  const indexMs = performance.now() - t;
  progress(`sql: ${indexes.length} indexes in ${fmt(indexMs / 1000)} s; VACUUM ANALYZE`);
  t = performance.now();
  await client.query('VACUUM ANALYZE');
  const analyzeMs = performance.now() - t;
  let prewarm: string;
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_prewarm');
    await client.query(`SELECT pg_prewarm(c.oid) FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'i')`);
    prewarm = 'pg_prewarm of every table and index';
  } catch {
    for (const obj of catalog.objects.values()) await client.query(`SELECT count(*) FROM "${obj.table}"`);
    prewarm = 'a full scan of every table (pg_prewarm unavailable)';
  }
  return { ddlMs, copyMs, indexMs, analyzeMs, prewarm, indexes };
}

async function run(client: pg.Client, sql: string, params: unknown[]): Promise<unknown[][]> {
  const r = await client.query({ text: sql, values: params, rowMode: 'array' });
  return r.rows as unknown[][];
}

function multiset(rows: unknown[][]): string[] {
  return rows.map((r) => JSON.stringify(r)).sort();
}

async function prepare(lib: OqlModule, catalog: ReturnType<typeof fixtureCatalog>, client: pg.Client, q: SqlQuery): Promise<Measured> {
  const options = { catalog, slug: q.slug, orgId: TENANT, now: NOW };
  const c = q.count ? lib.compileCount(q.oql, options) : lib.compile(q.oql, options);
  if (c.kind !== 'query') throw new Error(`${q.id}: compiled to a restricted result`);
  const emitted = { sql: c.sql, params: c.params };
  const handParams = q.usesNow ? [TENANT, NOW] : [TENANT];
  const a = multiset(await run(client, emitted.sql, emitted.params).catch((e: Error) => { throw new Error(`${q.id}: emitted SQL failed: ${e.message}`); }));
  const b = multiset(await run(client, q.hand, handParams).catch((e: Error) => { throw new Error(`${q.id}: hand-written SQL failed: ${e.message}`); }));
  const same = a.length === b.length && a.every((x, i) => x === b[i]);
  let diff: string | undefined;
  if (!same) {
    const onlyA = a.filter((x) => !b.includes(x)).slice(0, 3);
    const onlyB = b.filter((x) => !a.includes(x)).slice(0, 3);
    diff = `emitted ${a.length} rows, hand-written ${b.length}; only emitted: ${onlyA.join(' ')}; only hand-written: ${onlyB.join(' ')}`;
    progress(`sql: ${q.id} MISMATCH: ${diff}`);
  }
  if (a.length === 0) progress(`sql: warning: ${q.id} returns no rows`);
  return { q, emitted, handParams, rows: a.length, same, diff, emittedMs: [], handMs: [], emittedCpu: [], handCpu: [] };
}

/** CPU time the backend process has used, in ms (schedstat counts nanoseconds on the CPU). */
let backendSchedstat: string | null = null;
function backendCpuMs(): number {
  if (backendSchedstat === null) return NaN;
  try {
    return Number(readFileSync(backendSchedstat, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return NaN;
  }
}

async function timed(client: pg.Client, sql: string, params: unknown[], cpu?: number[]): Promise<number> {
  const c0 = backendCpuMs();
  const t = performance.now();
  await client.query({ text: sql, values: params, rowMode: 'array' });
  const ms = performance.now() - t;
  cpu?.push(backendCpuMs() - c0);
  return ms;
}

async function timeAll(client: pg.Client, measured: Measured[]): Promise<void> {
  for (const m of measured) {
    if (!m.same) continue;
    // One more unmeasured run of each (the check above was the first), then alternate.
    await timed(client, m.emitted.sql, m.emitted.params);
    await timed(client, m.q.hand, m.handParams);
    for (let i = 0; i < MAX_RUNS; i++) {
      const enough = i >= MIN_RUNS && m.emittedMs.reduce((a, b) => a + b, 0) >= TARGET_MS && m.handMs.reduce((a, b) => a + b, 0) >= TARGET_MS;
      if (enough) break;
      if (i % 2 === 0) {
        m.emittedMs.push(await timed(client, m.emitted.sql, m.emitted.params, m.emittedCpu));
        m.handMs.push(await timed(client, m.q.hand, m.handParams, m.handCpu));
      } else {
        m.handMs.push(await timed(client, m.q.hand, m.handParams, m.handCpu));
        m.emittedMs.push(await timed(client, m.emitted.sql, m.emitted.params, m.emittedCpu));
      }
    }
    progress(`sql: ${m.q.id} emitted ${fmt(median(m.emittedMs), 2)} ms, hand-written ${fmt(median(m.handMs), 2)} ms, ratio ${fmt(ratio(m), 2)}; ` +
      `backend CPU ${fmt(median(m.emittedCpu), 2)} vs ${fmt(median(m.handCpu), 2)} ms, ratio ${fmt(cpuRatio(m), 2)} (${m.emittedMs.length} runs)`);
  }
}

function cpuRatio(m: Measured): number {
  return median(m.emittedCpu) / median(m.handCpu);
}

function ratio(m: Measured): number {
  return median(m.emittedMs) / median(m.handMs);
}

async function explain(client: pg.Client, sql: string, params: unknown[]): Promise<string> {
  const r = await client.query({ text: `EXPLAIN (ANALYZE, BUFFERS) ${sql}`, values: params, rowMode: 'array' });
  return (r.rows as string[][]).map((row) => row[0]).join('\n');
}

interface CountVsFetch {
  id: string;
  oql: string;
  fetchMs: number;
  countMs: number;
  fetchCpu: number;
  countCpu: number;
  rows: number;
  count: number;
  countSql: string;
}

async function timeCountVsFetch(lib: OqlModule, catalog: ReturnType<typeof fixtureCatalog>, client: pg.Client): Promise<CountVsFetch[]> {
  const outRows: CountVsFetch[] = [];
  for (const id of COUNT_VS_FETCH) {
    const q = SQL_QUERIES.find((x) => x.id === id)!;
    const options = { catalog, slug: q.slug, orgId: TENANT, now: NOW };
    const fetch = lib.compile(q.oql, options);
    const count = lib.compileCount(q.oql, options);
    if (fetch.kind !== 'query' || count.kind !== 'query') throw new Error(`${id}: restricted`);
    const rows = (await run(client, fetch.sql, fetch.params)).length;
    const n = Number((await run(client, count.sql, count.params))[0]![0]);
    if (n !== rows) throw new Error(`${id}: count ${n} but the query returns ${rows} rows`);
    const f: number[] = [];
    const c: number[] = [];
    const fc: number[] = [];
    const cc: number[] = [];
    for (let i = 0; i < Math.max(MIN_RUNS, 15); i++) {
      if (i % 2) {
        c.push(await timed(client, count.sql, count.params, cc));
        f.push(await timed(client, fetch.sql, fetch.params, fc));
      } else {
        f.push(await timed(client, fetch.sql, fetch.params, fc));
        c.push(await timed(client, count.sql, count.params, cc));
      }
    }
    outRows.push({ id, oql: q.oql, fetchMs: median(f), countMs: median(c), fetchCpu: median(fc), countCpu: median(cc), rows, count: n, countSql: count.sql });
    progress(`sql: ${id} fetch ${fmt(median(f), 2)} ms, count ${fmt(median(c), 2)} ms`);
  }
  return outRows;
}

function report(r: {
  version: string; manifest: Awaited<ReturnType<typeof ensureData>>['manifest']; cached: boolean; genMs: number;
  load: LoadTimes; measured: Measured[]; countVsFetch: CountVsFetch[];
}): void {
  const { manifest, load, measured } = r;
  const objects = Object.keys(manifest.rows).filter((o) => manifest.rows[o]! > 0);
  emit('## Emitted SQL vs hand-written SQL (PostgreSQL)');
  emit();
  emit(`Dataset: the example CRM (\`fixtures/crm\`) from \`generateRowsIter\` (seed ${DATASET.seed}), ${TENANTS.length} tenants with shares 20:19:…:1, ` +
    `10% of rows soft-deleted, 12% NULLs, 9% broken to-one references (missing, soft-deleted, other tenant's), tenants' rows interleaved in the heap. ` +
    `Generated in ${fmt(r.genMs / 1000)} s${r.cached ? ' (earlier; reused from bench/.data)' : ''}; loaded into PostgreSQL ${r.version} with \`COPY ... FROM STDIN\` through psql ` +
    `(${fmt(load.copyMs / 1000)} s), DDL from \`catalogDdl\` (tables ${fmt(load.ddlMs / 1000, 2)} s; its ${load.indexes.length} indexes built after the load, ${fmt(load.indexMs / 1000)} s), ` +
    `then \`VACUUM ANALYZE\` (${fmt(load.analyzeMs / 1000)} s) and ${load.prewarm}.`);
  emit();
  emit(table(['object', 'rows (all tenants)', `rows of ${TENANT} (queried)`], objects.map((o) => [o, manifest.rows[o]!.toLocaleString('en-US'), (manifest.perTenant[TENANT]?.[o] ?? 0).toLocaleString('en-US')])));
  emit();
  emit(`Server settings (throwaway cluster, test/support/pg-server.ts): ${Object.entries(SERVER_SETTINGS).map(([k, v]) => `\`${k}=${v}\``).join(', ')}, fsync off; ` +
    `session \`max_parallel_workers_per_gather=${PARALLEL_WORKERS}\` (one process per query, so the backend's CPU time is the whole query's). ` +
    `Queries run as tenant \`${TENANT}\` (the largest) over one connection with node-postgres, parameters bound (extended protocol, so custom plans); ` +
    `each side ran once for the row check and once more unmeasured, then ≥ ${MIN_RUNS} alternating runs (until ≥ ${fmt(TARGET_MS / 1000)} s per side or ${MAX_RUNS} runs). ` +
    '**wall** = time per query at the client; **CPU** = CPU time of the server backend per query (`/proc/<pid>/schedstat`), which waiting for a CPU on a shared machine does not inflate. Medians.');
  emit();
  const ok = measured.filter((m) => m.same);
  const ratios = ok.map(ratio);
  const cpuRatios = ok.map(cpuRatio).filter((x) => Number.isFinite(x));
  const worst = (m: Measured) => Math.max(ratio(m), Number.isFinite(cpuRatio(m)) ? cpuRatio(m) : 0);
  const over = ok.filter((m) => worst(m) > RATIO_LIMIT);
  const mark = (x: number) => (x > RATIO_LIMIT ? `**${fmt(x, 2)}**` : fmt(x, 2));
  emit('### Ratios');
  emit();
  emit(table(['query', 'exercises', 'rows', 'same rows', 'emitted wall ms', 'hand wall ms', 'wall ratio', 'emitted CPU ms', 'hand CPU ms', 'CPU ratio', 'runs'], measured.map((m) => [
    m.q.id, m.q.features, m.rows, m.same ? 'yes' : `**NO**: ${m.diff}`,
    ...(m.same
      ? [fmt(median(m.emittedMs), 2), fmt(median(m.handMs), 2), mark(ratio(m)), fmt(median(m.emittedCpu), 2), fmt(median(m.handCpu), 2), mark(cpuRatio(m))]
      : ['-', '-', '-', '-', '-', '-']),
    m.emittedMs.length,
  ])));
  emit();
  const med = median(ratios);
  const medCpu = median(cpuRatios);
  const verdict = (x: number) => (x <= RATIO_TARGET_MEDIAN ? 'met' : 'MISSED');
  emit(`**Median ratio: wall ${fmt(med, 2)}, CPU ${fmt(medCpu, 2)}** (target ≤ ${RATIO_TARGET_MEDIAN}: wall ${verdict(med)}, CPU ${verdict(medCpu)}); ` +
    `max wall ${fmt(Math.max(...ratios), 2)} (${ok[ratios.indexOf(Math.max(...ratios))]!.q.id}). ` +
    `Above ${RATIO_LIMIT} on either measure: ${over.length ? over.map((m) => `${m.q.id} (wall ${fmt(ratio(m), 2)}, CPU ${fmt(cpuRatio(m), 2)})`).join(', ') : 'none'}. ` +
    'Ratios of queries under ~1 ms are dominated by the protocol round trip and noise.');
  emit();

  emit('### Count with LIMIT vs fetching the rows');
  emit();
  emit('The same query through `compileCount` (the count endpoint: `SELECT count(*) FROM (<query>) q`) and through `compile` (fetching the rows), medians of 15 alternating runs.');
  emit();
  emit(table(['query', 'OQL', 'rows fetched', 'count', 'fetch wall ms', 'count wall ms', 'count / fetch (wall)', 'fetch CPU ms', 'count CPU ms', 'count / fetch (CPU)'], r.countVsFetch.map((c) => [
    c.id, `\`${c.oql}\``, c.rows, c.count, fmt(c.fetchMs, 2), fmt(c.countMs, 2), fmt(c.countMs / c.fetchMs, 2), fmt(c.fetchCpu, 2), fmt(c.countCpu, 2), fmt(c.countCpu / c.fetchCpu, 2),
  ])));
  emit();

  const explained = measured.filter((m) => m.explain);
  if (explained.length) {
    emit(`### EXPLAIN (ANALYZE, BUFFERS) of every query with a ratio above ${EXPLAIN_ABOVE} (wall or CPU)`);
    emit();
    for (const m of explained) {
      emit(`#### ${m.q.id}: ${m.q.features} (ratio: wall ${fmt(ratio(m), 2)}, CPU ${fmt(cpuRatio(m), 2)})`);
      emit();
      emit('Emitted:');
      emit();
      emit('```');
      emit(m.explain!.emitted);
      emit('```');
      emit();
      emit('Hand-written:');
      emit();
      emit('```');
      emit(m.explain!.hand);
      emit('```');
      emit();
    }
  }

  emit('<details><summary>The queries: OQL, emitted SQL (with parameters) and hand-written SQL</summary>');
  emit();
  for (const m of measured) {
    emit(`**${m.q.id}** ${m.q.features}${m.q.count ? ' (compiled with compileCount)' : ''}`);
    emit();
    emit('```sql');
    emit(`-- OQL (slug ${m.q.slug})`);
    emit(m.q.oql);
    emit('-- emitted');
    emit(m.emitted.sql);
    emit(`-- params: ${JSON.stringify(m.emitted.params)}`);
    emit('-- hand-written');
    emit(m.q.hand);
    emit(`-- params: ${JSON.stringify(m.handParams)}`);
    emit('```');
    emit();
  }
  emit('</details>');
  emit();
}

await main();
