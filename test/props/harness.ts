import { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import { catalogDdl, columnSqlType } from '../../src/catalog/ddl.js';
import { loadCatalog } from '../../src/catalog/load.js';
import type { Catalog } from '../../src/catalog/types.js';
import crmTypeCodes from '../../fixtures/crm/type-codes.json' with { type: 'json' };
import {
  FIXTURE_DATA_OPTIONS, FIXTURE_NAMES, fixtureData, fixturePayload, loadFixtureCatalog, loadIntoDatabase, type FixtureName, type Row,
} from '../../fixtures/index.js';
import { buildSchema, type GenSchema } from '../support/querygen.js';
import { fromDb, refDb, type CellKind, type RefDb, type Value } from '../support/refeval.js';
import { emptyPglite } from '../support/pglite-template.js';

/**
 * Shared set-up of the property tests: one PGlite per test file holding both fixtures in
 * `public` and, in schema `solo`, only one tenant's rows of each fixture (tenant isolation).
 */

export const DEEP = process.env.OQL_DEEP === '1';

/** The seed of this run: OQL_SEED, else fixed in CI mode (reproducible) and random in deep mode. */
export function runSeed(): number {
  const env = process.env.OQL_SEED;
  if (env !== undefined && env !== '') return Number(env) | 0;
  return DEEP ? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0 : 20_240_601;
}

/** Runs per property: the CI number, or the deep one with OQL_DEEP=1. */
export function runs(ci: number, deep: number): number {
  const env = process.env.OQL_RUNS;
  if (env) return Number(env);
  return DEEP ? deep : ci;
}

/**
 * Timeout of one property test: ten minutes in CI mode, an hour in deep mode. Alone on 2 cores,
 * the properties of oracles.ts take 5 to 45 s for their full count; on a 2-core machine
 * shared with other work (load average 25-28) one took over four minutes. The timeout is a
 * ceiling, not a measure: every case runs.
 */
export const PROPERTY_TIMEOUT = DEEP ? 3_600_000 : 600_000;

/**
 * Checks a property on exactly `numRuns` cases (OQL_RUNS sets the count). What a run covers is
 * the count and the seed, never the time the machine gave it: a busy machine takes longer, it
 * does not test less.
 */
export async function assertSized<Ts>(property: fc.IRawProperty<Ts>, numRuns: number): Promise<void> {
  const details = await fc.check(property, { numRuns });
  if (details.failed) {
    // The report names the counterexample; the error the case threw says what went wrong in it.
    const cause = details.errorInstance;
    const why = cause instanceof Error ? (cause.stack ?? cause.message) : String(cause);
    throw new Error(`${fc.defaultReportMessage(details) ?? 'property failed'}\nThe case threw: ${why}`, { cause });
  }
  if (details.numRuns !== numRuns) throw new Error(`${details.numRuns} of ${numRuns} cases ran`);
}

export function configureFastCheck(file: string): number {
  const seed = runSeed();
  fc.configureGlobal({ seed });
  console.log(`[${file}] fast-check seed ${seed} (replay: OQL_SEED=${seed}${DEEP ? ' OQL_DEEP=1' : ''})`);
  return seed;
}

export const SOLO_SCHEMA = 'solo';

/** The tenant whose rows alone are loaded into `solo`: one that has neighbours in `public`. */
export const SOLO_TENANT: Readonly<Record<FixtureName, string>> = { crm: FIXTURE_DATA_OPTIONS.crm.tenants[1]!, helpdesk: FIXTURE_DATA_OPTIONS.helpdesk.tenants[1]! };

export interface FixtureEnv {
  readonly name: FixtureName;
  readonly catalog: Catalog;
  /** The same catalog mapped to schema `solo`. */
  readonly soloCatalog: Catalog;
  readonly rows: ReadonlyMap<string, readonly Row[]>;
  readonly tenants: readonly string[];
  readonly schema: GenSchema;
  readonly ref: RefDb;
}

export interface TestDb {
  readonly db: PGlite;
  readonly fixtures: Readonly<Record<FixtureName, FixtureEnv>>;
}

export function soloCatalogOf(name: FixtureName): Catalog {
  return name === 'crm'
    ? loadCatalog(fixturePayload('crm'), { typeCodes: crmTypeCodes, schema: SOLO_SCHEMA })
    : loadCatalog(fixturePayload('helpdesk'), { schema: SOLO_SCHEMA });
}

export function fixtureEnvs(): Record<FixtureName, FixtureEnv> {
  const out = {} as Record<FixtureName, FixtureEnv>;
  for (const name of FIXTURE_NAMES) {
    const catalog = loadFixtureCatalog(name);
    const rows = fixtureData(name);
    out[name] = {
      name,
      catalog,
      soloCatalog: soloCatalogOf(name),
      rows,
      tenants: FIXTURE_DATA_OPTIONS[name].tenants,
      schema: buildSchema(name, catalog, rows),
      ref: refDb(catalog, rows),
    };
  }
  return out;
}

export function onlyTenant(rows: ReadonlyMap<string, readonly Row[]>, tenant: string, tenantColumn = 'org_id'): Map<string, Row[]> {
  return new Map([...rows].map(([slug, list]) => [slug, list.filter((r) => r[tenantColumn] === tenant)]));
}

export async function openTestDb(options: { solo?: boolean } = {}): Promise<TestDb> {
  const db = await emptyPglite();
  const fixtures = fixtureEnvs();
  for (const f of Object.values(fixtures)) {
    await loadIntoDatabase(db, f.catalog, f.rows, { batchSize: 2000 });
    if (options.solo) await loadIntoDatabase(db, f.soloCatalog, onlyTenant(f.rows, SOLO_TENANT[f.name]), { batchSize: 2000 });
  }
  // Statistics, as autovacuum keeps them on PostgreSQL and the service on PGlite
  // (src/service/table-statistics.ts): without them one generated NOT EXISTS took 11 s a run.
  await db.query('ANALYZE');
  return { db, fixtures };
}

/** Runs compiled SQL and returns the output columns c0..c{n-1} of each row, decoded by kind. */
export async function runRows(db: PGlite, sql: string, params: unknown[], kinds: readonly CellKind[]): Promise<Value[][]> {
  const r = await db.query<Record<string, unknown>>(sql, params);
  return r.rows.map((row) => kinds.map((k, i) => fromDb(k, row[`c${i}`])));
}

/** Row counts (live and soft-deleted) of every table, to prove nothing was written. */
export async function tableCounts(db: PGlite, catalogs: readonly Catalog[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const c of catalogs) {
    for (const o of c.objects.values()) {
      const r = await db.query<{ n: number; d: number }>(
        `SELECT count(*)::int AS n, count(*) FILTER (WHERE "is_deleted")::int AS d FROM "${c.mapping.schema}"."${o.table}"`,
      );
      out[`${c.mapping.schema}.${o.table}`] = `${r.rows[0]!.n}/${r.rows[0]!.d}`;
    }
  }
  return out;
}

// ---------------------------------------------------------------- pg-mem

/** A SQL literal for a bind parameter, for engines without working parameters (pg-mem). */
export function sqlLiteral(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return `ARRAY[${v.map(sqlLiteral).join(', ')}]`;
  return `'${String(v).replace(/'/g, "''")}'`;
}

/** Replaces `$n` with literals (the compiler's SQL has no string literals of its own to trip over). */
export function inlineParams(sql: string, params: readonly unknown[]): string {
  return sql.replace(/\$(\d+)/g, (_, n: string) => {
    const i = Number(n) - 1;
    if (i >= params.length) throw new Error(`inlineParams: no parameter $${n}`);
    return sqlLiteral(params[i]);
  });
}

/** A pg-mem database holding both fixtures in `public` (loaded with literal INSERTs: its parameters are unreliable). */
export async function openPgMem(fixtures: Readonly<Record<FixtureName, FixtureEnv>>): Promise<import('pg-mem').IMemoryDb> {
  const { newDb } = await import('pg-mem');
  const mem = newDb();
  for (const f of Object.values(fixtures)) {
    for (const statement of catalogDdl(f.catalog, { indexes: false })) mem.public.none(statement);
    const { idColumn, tenantColumn, softDeleteColumn } = f.catalog.mapping;
    for (const obj of f.catalog.objects.values()) {
      const cols: { name: string; type: string }[] = [{ name: idColumn, type: 'text' }, { name: tenantColumn, type: 'text' }];
      if (softDeleteColumn) cols.push({ name: softDeleteColumn, type: 'boolean' });
      for (const c of obj.columns.values()) {
        const type = columnSqlType(c.type);
        if (c.type !== 'id' && c.column !== null && type !== null) cols.push({ name: c.column, type });
      }
      const rows = f.rows.get(obj.slug) ?? [];
      for (let i = 0; i < rows.length; i += 500) {
        const tuples = rows.slice(i, i + 500).map((r) => `(${cols.map((c) => memLiteral(r[c.name], c.type)).join(', ')})`);
        mem.public.none(`INSERT INTO "${f.catalog.mapping.schema}"."${obj.table}" (${cols.map((c) => `"${c.name}"`).join(', ')}) VALUES ${tuples.join(', ')}`);
      }
    }
  }
  return mem;
}

function memLiteral(v: unknown, type: string): string {
  if (v === null || v === undefined) return 'NULL';
  if (type === 'text[]') return (v as string[]).length === 0 ? `'{}'::text[]` : `${sqlLiteral(v)}::text[]`;
  if (type === 'jsonb') return `${sqlLiteral(JSON.stringify(v))}::jsonb`;
  return sqlLiteral(v);
}
