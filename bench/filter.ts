/**
 * Record filter and connector benchmark: the SQL the built package compiles from filter and
 * connector bodies vs SQL written by hand for the same rows, on the example CRM at scale
 * (bench/sql-data.ts) in a throwaway PostgreSQL 15 server with the filter's indexes
 * (catalogDdl's keysetIndexes and searchIndexes). Checks that both sides return the same rows,
 * then alternates them and reports medians and their ratio. Also times compileFilter itself.
 *
 * Run by bench/run.mjs (`node --import tsx bench/filter.ts <fragment.md>`).
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PG_BIN, pgServerAvailable, startPgServer } from '../test/support/pg-server.js';
import { BENCH_DIR, fixtureCatalog, fmt, loadDist, median, progress, table, type OqlModule } from './lib.js';
import { TENANTS, copyFile, ensureData, psqlPath } from './sql-data.js';

const TENANT = TENANTS[0]!;
const RUNS = Number(process.env.OQL_BENCH_FILTER_RUNS ?? 11);
const SYNC_ROUNDS = Number(process.env.OQL_BENCH_SYNC_ROUNDS ?? 5);
const SECRET = 'benchmark-token-secret-0123456789';
const FAR = Date.UTC(2100, 0, 1);
const DAY = 86_400_000;

const out: string[] = [];
const emit = (s = ''): void => void out.push(s);

// ---- The bodies and their hand-written twins.

const WORDS = ['zq', 'xj', 'vv', 'qx', 'jj', 'kz', 'wq', 'zx', 'qq', 'xz', 'jq', 'zv', 'vq', 'qj', 'xx', 'zj', 'kq', 'qk', 'wx', 'xw'];
const SOURCES = ['web', 'referral', 'event', 'partner', 'cold_call'];

/** 50 conditions on opportunity: ANDed checks on five types and an OR group of 24. */
function fiftyConditions(): { body: unknown; hand: string } {
  const and: unknown[] = [
    { field: 'stage', operator: 'nin', value: ['lost'] },
    { field: 'amount', operator: 'gte', value: 20_000 },
    { field: 'close_date', operator: 'between', value: [Date.UTC(2023, 0, 1), Date.UTC(2025, 11, 31)] },
    { field: 'owner', operator: 'exists' },
    { field: 'updated_at', operator: 'lte', value: Date.UTC(2025, 6, 1) },
    { field: 'amount', operator: 'neq', value: 0 },
    ...WORDS.map((w) => ({ field: 'name', operator: 'not_contains', value: w })),
  ];
  const or: unknown[] = [
    ...Array.from({ length: 19 }, (_, i) => ({ field: 'probability', operator: 'between', value: [i * 500, i * 500 + 100] })),
    ...SOURCES.map((s) => ({ field: 'sources', operator: 'eq', value: s })),
  ];
  and.push({ or });
  const hand = `SELECT o.id, o.name, o.amount FROM opportunity o
WHERE o.org_id = $1 AND o.is_deleted = false
  AND (o.stage IS NULL OR o.stage <> 'lost') AND o.amount >= 20000
  AND o.close_date BETWEEN ${Date.UTC(2023, 0, 1)} AND ${Date.UTC(2025, 11, 31)}
  AND o.owner IS NOT NULL AND o.updated_at <= ${Date.UTC(2025, 6, 1)} AND (o.amount IS NULL OR o.amount <> 0)
  AND (o.name IS NULL OR (${WORDS.map((w) => `o.name NOT ILIKE '%${w}%'`).join(' AND ')}))
  AND (${Array.from({ length: 19 }, (_, i) => `o.probability BETWEEN ${i * 500} AND ${i * 500 + 100}`).join(' OR ')}
       OR o.sources && ARRAY[${SOURCES.map((s) => `'${s}'`).join(', ')}])
ORDER BY o.id LIMIT 100`;
  return { body: { query: { fields: ['id', 'name', 'amount'], filters: { and }, pagination: { page: 1, page_size: 100 } } }, hand };
}

interface Case {
  readonly id: string;
  readonly title: string;
  readonly slug: string;
  readonly body: unknown;
  readonly hand: string;
  /** Run the emitted SQL with these index names dropped (inside a rolled-back transaction). */
  readonly withoutIndexes?: string[];
}

function cases(): Case[] {
  const fifty = fiftyConditions();
  return [
    { id: 'F1', title: '50-condition filter (opportunity, page 1 of 100)', slug: 'opportunity', ...fifty },
    {
      id: 'F2',
      title: 'deep page: sort by amount desc, page 500 of 100 (OFFSET 49,900)',
      slug: 'opportunity',
      body: { query: { fields: ['id', 'name', 'amount'], sort: [{ field: 'amount', direction: 'desc' }], pagination: { page: 500, page_size: 100 } } },
      hand: 'SELECT o.id, o.name, o.amount FROM opportunity o WHERE o.org_id = $1 AND o.is_deleted = false ORDER BY o.amount DESC NULLS LAST, o.id LIMIT 100 OFFSET 49900',
    },
    {
      id: 'F3',
      title: "global_search 'harbor' on contact (common word, page 1 of 100)",
      slug: 'contact',
      body: { query: { fields: ['id', 'name', 'email'], filters: { and: [{ field: '', operator: 'global_search', value: 'harbor' }] } } },
      hand: "SELECT c.id, c.name, c.email FROM contact c WHERE c.org_id = $1 AND c.is_deleted = false AND (c.name ILIKE '%harbor%' OR c.email ILIKE '%harbor%' OR c.phone ILIKE '%harbor%' OR c.search_field ILIKE '%harbor%') ORDER BY c.id LIMIT 100",
    },
    {
      id: 'F4',
      title: "global_search 'contact 4242' on contact (rare term)",
      slug: 'contact',
      body: { query: { fields: ['id', 'name', 'email'], filters: { and: [{ field: '', operator: 'global_search', value: 'contact 4242' }] } } },
      hand: "SELECT c.id, c.name, c.email FROM contact c WHERE c.org_id = $1 AND c.is_deleted = false AND (c.name ILIKE '%contact 4242%' OR c.email ILIKE '%contact 4242%' OR c.phone ILIKE '%contact 4242%' OR c.search_field ILIKE '%contact 4242%') ORDER BY c.id LIMIT 100",
    },
  ];
}

// ---- Running.

async function rows(client: pg.Client, sql: string, params: unknown[]): Promise<string[]> {
  const r = await client.query({ text: sql, values: params, rowMode: 'array' });
  return (r.rows as unknown[][]).map((x) => JSON.stringify(x));
}

async function time(client: pg.Client, sql: string, params: unknown[]): Promise<number> {
  const t = performance.now();
  await client.query({ text: sql, values: params, rowMode: 'array' });
  return performance.now() - t;
}

async function withoutIndexes<T>(client: pg.Client, names: readonly string[], fn: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    for (const n of names) await client.query(`DROP INDEX "${n}"`);
    return await fn();
  } finally {
    await client.query('ROLLBACK');
  }
}

interface Row {
  id: string;
  title: string;
  rows: number;
  emitted: number;
  hand: number;
}

async function measure(lib: OqlModule, catalog: ReturnType<typeof fixtureCatalog>, client: pg.Client, c: Case): Promise<Row & { sql: string; params: unknown[] }> {
  const compiled = lib.compileFilter(c.body, { catalog, slug: c.slug, orgId: TENANT });
  const a = await rows(client, compiled.sql, compiled.params);
  const b = await rows(client, c.hand, [TENANT]);
  if (a.length !== b.length || a.some((x, i) => x !== b[i])) throw new Error(`${c.id}: emitted (${a.length} rows) and hand-written (${b.length} rows) SQL disagree`);
  if (a.length === 0) progress(`filter: warning: ${c.id} returns no rows`);
  const e: number[] = [];
  const h: number[] = [];
  await time(client, compiled.sql, compiled.params);
  await time(client, c.hand, [TENANT]);
  for (let i = 0; i < RUNS; i++) {
    if (i % 2) {
      h.push(await time(client, c.hand, [TENANT]));
      e.push(await time(client, compiled.sql, compiled.params));
    } else {
      e.push(await time(client, compiled.sql, compiled.params));
      h.push(await time(client, c.hand, [TENANT]));
    }
  }
  progress(`filter: ${c.id} emitted ${fmt(median(e), 2)} ms, hand ${fmt(median(h), 2)} ms`);
  return { id: c.id, title: c.title, rows: a.length, emitted: median(e), hand: median(h), sql: compiled.sql, params: compiled.params };
}

/** The same search with the trigram indexes dropped (in a transaction that is rolled back). */
async function searchWithoutIndex(lib: OqlModule, catalog: ReturnType<typeof fixtureCatalog>, client: pg.Client, c: Case): Promise<{ withIndex: number; without: number }> {
  const compiled = lib.compileFilter(c.body, { catalog, slug: c.slug, orgId: TENANT });
  const trgm = (await client.query<{ indexname: string }>("SELECT indexname FROM pg_indexes WHERE tablename = 'contact' AND indexdef LIKE '%gin_trgm_ops%'")).rows.map((r) => r.indexname);
  const w: number[] = [];
  const wo: number[] = [];
  for (let i = 0; i < Math.max(3, Math.floor(RUNS / 2)); i++) {
    w.push(await time(client, compiled.sql, compiled.params));
    wo.push(await withoutIndexes(client, trgm, () => time(client, compiled.sql, compiled.params)));
  }
  return { withIndex: median(w), without: median(wo) };
}

const SYNC_FIELDS = ['name', 'amount', 'stage', 'updated_at'];

async function librarySync(lib: OqlModule, catalog: ReturnType<typeof fixtureCatalog>, client: pg.Client): Promise<{ ms: number; rows: number; pages: number; ids: string[] }> {
  const body = { query: { fields: SYNC_FIELDS, filter: { and: [{ field: 'updated_at', operator: 'gte', value: 0 }] } } };
  const t = performance.now();
  let token: string | null = null;
  let n = 0;
  let pages = 0;
  const ids: string[] = [];
  do {
    const page: { records: Record<string, unknown>[]; next_token: string | null } = await lib.connectorRecords(client, { ...body, next_token: token }, { catalog, slug: 'opportunity', orgId: TENANT, tokenSecret: SECRET, now: FAR });
    n += page.records.length;
    pages++;
    if (ids.length < 10_000) ids.push(...page.records.slice(0, 3).map((r) => r['id'] as string));
    token = page.next_token;
  } while (token);
  return { ms: performance.now() - t, rows: n, pages, ids };
}

const HAND_FIRST = 'SELECT o.id, o.name, o.amount, o.stage, o.updated_at FROM opportunity o WHERE o.org_id = $1 AND o.is_deleted = false AND o.updated_at >= 0 ORDER BY o.updated_at, o.id LIMIT 3000';
const HAND_NEXT = 'SELECT o.id, o.name, o.amount, o.stage, o.updated_at FROM opportunity o WHERE o.org_id = $1 AND o.is_deleted = false AND o.updated_at >= 0 AND (o.updated_at, o.id) > ($2, $3) ORDER BY o.updated_at, o.id LIMIT 3000';

async function handSync(client: pg.Client): Promise<{ ms: number; rows: number; pages: number; ids: string[] }> {
  const t = performance.now();
  let n = 0;
  let pages = 0;
  const ids: string[] = [];
  let last: unknown[] | null = null;
  for (;;) {
    const r: pg.QueryResult<unknown[]> = last ? await client.query({ text: HAND_NEXT, values: [TENANT, last[4], last[0]], rowMode: 'array' }) : await client.query({ text: HAND_FIRST, values: [TENANT], rowMode: 'array' });
    n += r.rows.length;
    pages++;
    if (ids.length < 10_000) ids.push(...r.rows.slice(0, 3).map((x) => x[0] as string));
    if (r.rows.length < 3000) break;
    last = r.rows[r.rows.length - 1]!;
  }
  return { ms: performance.now() - t, rows: n, pages, ids };
}

function compileTimes(lib: OqlModule, catalog: ReturnType<typeof fixtureCatalog>): [string, number][] {
  const bodies: [string, () => unknown][] = [
    ['simple filter (2 conditions, sort, page)', () => lib.compileFilter({ query: { fields: ['name', 'amount'], filters: { and: [{ field: 'stage', operator: 'eq', value: 'won' }, { field: 'amount', operator: 'gt', value: 1000 }] }, sort: [{ field: 'amount', direction: 'desc' }] } }, { catalog, slug: 'opportunity', orgId: TENANT })],
    ['50-condition filter (F1)', () => lib.compileFilter(fiftyConditions().body, { catalog, slug: 'opportunity', orgId: TENANT })],
    ['filter with to-one and one-to-many paths', () => lib.compileFilter({ query: { fields: ['name', 'owner.name'], filters: { or: [{ field: 'contacts.status', operator: 'eq', value: 'active' }, { field: 'owner.manager.email', operator: 'ends_with', value: '.com' }] } } }, { catalog, slug: 'account', orgId: TENANT })],
    ['connector page (no token)', () => lib.compileConnectorPage({ query: { fields: SYNC_FIELDS, filter: { and: [{ field: 'updated_at', operator: 'gte', value: 0 }] } } }, { catalog, slug: 'opportunity', orgId: TENANT, tokenSecret: SECRET, now: FAR })],
  ];
  // The same query as the simple filter in the query language, compiled without the cache, timed
  // in the same loop: a ratio that the machine's load does not change.
  bodies.push(['(the simple filter as a query-language text, `compile` with cache: false)', () => lib.compile("SELECT name, amount FROM opportunity WHERE stage = 'won' AND amount > 1000 ORDER BY amount DESC NULLS LAST, id LIMIT 100", { catalog, slug: 'opportunity', orgId: TENANT, cache: false })]);
  const result: [string, number][] = [];
  for (const [name, fn] of bodies) {
    for (let i = 0; i < 500; i++) fn(); // warm-up
    const samples: number[] = [];
    for (let s = 0; s < 15; s++) {
      const t = performance.now();
      for (let i = 0; i < 200; i++) fn();
      samples.push(((performance.now() - t) / 200) * 1000);
    }
    result.push([name, median(samples)]);
  }
  return result;
}

async function main(): Promise<void> {
  const fragment = process.argv[2] ?? join(BENCH_DIR, '.data', 'results-filter.md');
  const lib = await loadDist();
  const catalog = fixtureCatalog(lib, 'crm');
  progress('filter: compile times');
  const compileRows = compileTimes(lib, catalog);
  if (!pgServerAvailable()) throw new Error(`the filter benchmark needs the PostgreSQL 15 server binaries in ${PG_BIN}`);
  const { dir, manifest } = await ensureData(catalog);
  const psql = psqlPath(PG_BIN);
  const server = await startPgServer({ settings: { shared_buffers: '2GB', work_mem: '16MB', maintenance_work_mem: '1GB', max_wal_size: '8GB', random_page_cost: 1.1, jit: 'off', max_parallel_workers_per_gather: 0 } });
  const client = new pg.Client({ connectionString: server.url });
  try {
    await client.connect();
    const ddl = lib.catalogDdl(catalog, { keysetIndexes: true, searchIndexes: true });
    // The benchmark reads opportunity and contact; trigram indexes on the other tables would
    // only lengthen the load.
    const wanted = (s: string) => !s.startsWith('CREATE INDEX') || !/gin_trgm_ops/.test(s) || /"public"\."contact"/.test(s);
    const creates = ddl.filter((s) => !s.startsWith('CREATE INDEX'));
    const indexes = ddl.filter((s) => s.startsWith('CREATE INDEX') && wanted(s));
    for (const s of creates) await client.query(s);
    for (const obj of catalog.objects.values()) {
      await copyFile(psql, server.url, `"${catalog.mapping.schema}"."${obj.table}"`, manifest.columns[obj.slug]!, join(dir, `${obj.slug}.tsv`));
      progress(`filter: COPY ${obj.slug}`);
    }
    const ti = performance.now();
    for (const s of indexes) await client.query(s);
    progress(`filter: ${indexes.length} indexes in ${fmt((performance.now() - ti) / 1000)} s`);
    await client.query('VACUUM ANALYZE');
    try {
      await client.query('CREATE EXTENSION IF NOT EXISTS pg_prewarm');
      await client.query(`SELECT pg_prewarm(c.oid) FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'i')`);
    } catch {
      /* a cold cache only slows both sides alike */
    }

    const measured = [];
    for (const c of cases()) measured.push(await measure(lib, catalog, client, c));
    const search = await searchWithoutIndex(lib, catalog, client, cases()[3]!);

    progress('filter: connector syncs');
    const lib0 = await librarySync(lib, catalog, client);
    const hand0 = await handSync(client);
    if (lib0.rows !== hand0.rows || lib0.ids.join() !== hand0.ids.join()) throw new Error(`connector sync: library ${lib0.rows} rows, hand-written ${hand0.rows}`);
    const libMs: number[] = [];
    const handMs: number[] = [];
    for (let i = 0; i < SYNC_ROUNDS; i++) {
      if (i % 2) {
        handMs.push((await handSync(client)).ms);
        libMs.push((await librarySync(lib, catalog, client)).ms);
      } else {
        libMs.push((await librarySync(lib, catalog, client)).ms);
        handMs.push((await handSync(client)).ms);
      }
    }

    const total = Object.values(manifest.rows).reduce((a, b) => a + b, 0);
    emit('## Record filter and connector');
    emit();
    emit(`The filter and connector bodies compiled by the built package vs hand-written SQL for the same rows, on PostgreSQL ${((await client.query('SHOW server_version')).rows[0] as { server_version: string }).server_version} with the example CRM (${total.toLocaleString('en-US')} rows over ${TENANTS.length} tenants: ${Object.entries(manifest.rows).map(([k, v]) => `${k} ${v.toLocaleString('en-US')}`).join(', ')}), as tenant ${TENANT} (opportunity: ${manifest.perTenant[TENANT]?.['opportunity']?.toLocaleString('en-US')} rows). Indexes: \`catalogDdl(catalog, { keysetIndexes: true, searchIndexes: true })\` (trigram indexes on contact only). Both sides return the same rows (checked before timing); each figure is the median of ${RUNS} runs, the two sides alternating in one process, on a shared 2-core machine with other work running, so the ratios, measured side by side, mean more than the absolute times.`);
    emit();
    emit(table(['', 'case', 'rows', 'emitted (ms)', 'hand-written (ms)', 'ratio'], measured.map((m) => [m.id, m.title, m.rows, fmt(m.emitted, 2), fmt(m.hand, 2), fmt(m.emitted / m.hand, 2)])));
    emit();
    emit(`Trigram indexes for global_search (F4, rare term): ${fmt(search.withIndex, 2)} ms with them, ${fmt(search.without, 2)} ms with them dropped (median of alternating runs; the drop is rolled back), ${fmt(search.without / search.withIndex, 1)}× faster with the indexes.`);
    emit();
    const lm = median(libMs);
    const hm = median(handMs);
    emit(`Full connector sync of one tenant's opportunities (\`updated_at gte 0\`, ${SYNC_FIELDS.length} fields, pages of 3000, ${lib0.pages} pages, ${lib0.rows.toLocaleString('en-US')} rows; median of ${SYNC_ROUNDS} syncs each, alternating):`);
    emit();
    emit(table(['', 'ms per sync', 'rows/s'], [
      ['connectorRecords (read-only transaction per page, decoding, ISO datetimes, signed token)', fmt(lm, 0), fmt(lib0.rows / (lm / 1000), 0)],
      ['hand-written keyset loop (raw rows)', fmt(hm, 0), fmt(hand0.rows / (hm / 1000), 0)],
      ['ratio', fmt(lm / hm, 2), ''],
    ]));
    emit();
    emit(`Compile time in process (no database; median of 15 batches of 200 after warm-up). The machine was heavily loaded by other work (load average ${loadavg().map((l) => l.toFixed(0)).join(', ')} on ${cpus().length} cores at the end of this run), so the absolute figures vary several-fold between runs; the last row, timed in the same loop, is the one to compare with: compileFilter of the simple filter took ${fmt(compileRows[0]![1] / compileRows[compileRows.length - 1]![1], 2)}× the time of compiling the same query from query-language text.`);
    emit();
    emit(table(['body', 'µs per compile'], compileRows.map(([n, us]) => [n, fmt(us, 1)])));
    emit();
    emit('<details><summary>The SQL of each case</summary>');
    emit();
    for (const [i, m] of measured.entries()) {
      emit(`**${m.id}** ${m.title}`);
      emit();
      emit('```sql');
      emit(`-- emitted\n${m.sql}\n-- params: ${JSON.stringify(m.params)}\n-- hand-written\n${cases()[i]!.hand}`);
      emit('```');
      emit();
    }
    emit('</details>');
    writeFileSync(fragment, `${out.join('\n')}\n`);
    progress(`filter: wrote ${fragment}`);
  } finally {
    await client.end().catch(() => undefined);
    await server.stop();
  }
}

await main();
