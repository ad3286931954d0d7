import { OqlError } from '../diagnostics/diagnostic.js';
import type { Database } from './database.js';
import { poolDatabase, type PgPoolLike } from './drivers/pool.js';
import { readSessionOptions } from './drivers/session.js';
import { READ_ROLE_SQL, readRoleOf, type ReadRole, type ReadRoleRow } from './drivers/read-role.js';

export interface DatabaseOptions {
  /** A PostgreSQL server (node-postgres Pool): postgres://user:password@host:5432/db. */
  readonly database?: string | undefined;
  /** Where embedded PGlite keeps its files. Default ./.oql-data. */
  readonly dataDir?: string | undefined;
  /** Embedded PGlite in memory: nothing is kept. */
  readonly memory?: boolean | undefined;
  /** Connections of the pg Pool. Default 10. */
  readonly poolSize?: number | undefined;
  /** The share of the pool one organization may hold at once. Default 0.5. */
  readonly tenantShare?: number | undefined;
  /**
   * Named statements each PostgreSQL connection keeps for reads, so that a read repeated with new
   * values skips its parse and, after a few runs, its plan (the service: OQL_PREPARED_STATEMENTS).
   * Default 100 (DEFAULT_PREPARED_STATEMENTS); 0 for none. Behind a pooler that cannot carry them
   * they turn off by themselves.
   */
  readonly preparedStatements?: number | undefined;
  /** Trigram indexes for contains, starts_with and global_search (needs pg_trgm). Default off. */
  readonly searchIndexes?: boolean | undefined;
  /**
   * Where the read-only paths that may lag the primary (reports, filters) go: a read role on the
   * primary, or a streaming replica (docs/fleet.md). Needs `database`. Default: the primary's pool.
   */
  readonly readDatabase?: string | undefined;
  /**
   * Embedded only: how long one organization's read may hold the one connection while another
   * organization's call waits (504 QUERY_TIMEOUT past it). Default 500 ms.
   */
  readonly embeddedSliceMs?: number | undefined;
}

export const DEFAULT_DATA_DIR = './.oql-data';
export const DEFAULT_POOL_SIZE = 10;
export const DEFAULT_TENANT_SHARE = 0.5;

/** Opens the service's database: a pg Pool for `database`, otherwise embedded PGlite. */
export async function openDatabase(options: DatabaseOptions = {}): Promise<Database> {
  if (options.readDatabase !== undefined && options.database === undefined) {
    throw OqlError.plain('INVALID_OPTIONS', '--read-database needs --database: reads may go elsewhere, writes go to the primary', 'add --database postgres://user:password@primary:5432/db');
  }
  if (options.database !== undefined) {
    if (options.dataDir !== undefined || options.memory) {
      throw OqlError.plain('INVALID_OPTIONS', '--database cannot be combined with --data-dir or --memory', 'pick one: a server URL, or an embedded database');
    }
    return openPool(options.database, options);
  }
  if (options.dataDir !== undefined && options.memory) {
    throw OqlError.plain('INVALID_OPTIONS', '--data-dir and --memory exclude each other', 'drop --memory to keep data in the directory');
  }
  return openPglite(options.memory ? undefined : options.dataDir ?? DEFAULT_DATA_DIR, options.embeddedSliceMs, options.preparedStatements);
}

/**
 * Embedded PGlite in a process of its own (drivers/pglite/supervisor.ts): a statement that outlives its
 * budget ends the process, which reopens on the same directory, so a runaway query cannot freeze
 * the service; `memory` uses a temporary directory for the same reason.
 */
async function openPglite(dataDir: string | undefined, sliceMs: number | undefined, preparedStatements: number | undefined): Promise<Database> {
  const { EmbeddedDatabase } = await import('./drivers/pglite/supervisor.js');
  const { EMBEDDED_SESSION_SQL, workerDatabase } = await import('./drivers/pglite/service-database.js');
  const db = await EmbeddedDatabase.open({ ...(dataDir === undefined ? { memory: true } : { dataDir }), sessionSql: EMBEDDED_SESSION_SQL, sliceMs, preparedStatements });
  return workerDatabase(db);
}

/** A checked postgres:// URL, or a clear error naming the flag. */
function postgresUrl(url: string, flag: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw OqlError.plain('INVALID_OPTIONS', `${flag} '${redact(url)}' is not a URL`, 'for example postgres://user:password@localhost:5432/crm');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw OqlError.plain('INVALID_OPTIONS', `${flag} must be a postgres:// URL, not ${parsed.protocol}//`, 'for example postgres://user:password@localhost:5432/crm');
  }
}

interface PoolLike extends PgPoolLike {
  on(event: 'error', listener: () => void): unknown;
}

/**
 * A pg Pool on `url`, checked with one statement. `startup` is the start-up packet's `options`
 * (`-c name=value …`), settings every session of the pool begins with.
 */
async function connectPool(url: string, size: number, flag: string, startup?: string): Promise<PoolLike> {
  postgresUrl(url, flag);
  const pg = await import('pg');
  const Pool = pg.Pool ?? (pg as unknown as { default: typeof pg }).default.Pool;
  // Pipeline mode: a read writes its BEGIN and settings, its statement and its ROLLBACK at once,
  // one round trip (./drivers/pool.ts).
  const pool = new Pool({ connectionString: url, max: size, pipeline: true, ...(startup === undefined ? {} : { options: startup }) } as ConstructorParameters<typeof Pool>[0]) as unknown as PoolLike;
  // An idle client's network error is emitted on the pool; unhandled it would end the process.
  pool.on('error', () => {});
  try {
    await pool.query('SELECT 1');
  } catch (e) {
    await pool.end().catch(() => {});
    throw OqlError.plain('DATABASE_ERROR', `cannot connect to ${redact(url)}: ${(e as Error).message}`, 'check the URL and that the server is running');
  }
  return pool;
}

function checkShare(share: number): number {
  if (!(share > 0 && share <= 1)) throw OqlError.plain('INVALID_OPTIONS', `tenantShare must be above 0 and at most 1, not ${String(share)}`, 'for example 0.5: one organization holds at most half the pool');
  return share;
}

async function openPool(url: string, options: DatabaseOptions): Promise<Database> {
  const size = options.poolSize ?? DEFAULT_POOL_SIZE;
  const share = checkShare(options.tenantShare ?? DEFAULT_TENANT_SHARE);
  const pool = await connectPool(url, size, '--database');
  return poolDatabase(pool, redact(url), { ownsPool: true, poolSize: size, tenantShare: share, preparedStatements: options.preparedStatements });
}

export interface ReadDatabase {
  /** The read role's pool: reads only. */
  readonly db: Database;
  /** What its connections carry, as the first one showed it: whether reads are one statement, and how to make them so. */
  readonly role: ReadRole;
}

/**
 * Opens `readDatabase`: a pool whose reads are one statement when its role's defaults allow it
 * (./drivers/read-role.ts). `timeoutMs` is the service's query timeout, which the role's
 * statement_timeout must equal for that.
 */
export async function openReadDatabase(url: string, options: DatabaseOptions & { readonly timeoutMs: number }): Promise<ReadDatabase> {
  const size = options.poolSize ?? DEFAULT_POOL_SIZE;
  const share = checkShare(options.tenantShare ?? DEFAULT_TENANT_SHARE);
  const pool = await connectPool(url, size, '--read-database');
  let row: ReadRoleRow;
  try {
    row = ((await pool.query(READ_ROLE_SQL)) as { rows: ReadRoleRow[] }).rows[0]!;
  } catch (e) {
    await pool.end().catch(() => {});
    throw OqlError.plain('DATABASE_ERROR', `cannot read the settings of ${redact(url)}: ${(e as Error).message}`, 'check that the role may connect and run SELECT');
  }
  const role = readRoleOf(row, options.timeoutMs);
  const db = poolDatabase(pool, redact(url), { ownsPool: true, poolSize: size, tenantShare: share, readRole: true, preparedStatements: options.preparedStatements });
  return { db, role };
}

export type ReadSessions =
  | { readonly db: Database; readonly refused?: undefined }
  | { readonly db?: undefined; readonly refused: string };

/**
 * The default deployment's reads in one statement, with no role made by hand: a second pool on
 * `--database` whose sessions start read-only, with the service's statement timeout, in UTC with
 * ISO dates (`readSessionOptions`). A read on it is its statement alone, checked per connection as
 * a read role's are; a connection without the settings falls back to BEGIN/SET.
 *
 * A server that refuses the start-up option (PgBouncer without it among its tracked parameters), or
 * one that drops it (ignore_startup_parameters), gives no such pool: `refused` says why, and reads
 * go through `--database`'s own pool, with BEGIN and ROLLBACK around each.
 */
export async function openReadSessions(url: string, options: DatabaseOptions & { readonly timeoutMs: number }): Promise<ReadSessions> {
  const size = options.poolSize ?? DEFAULT_POOL_SIZE;
  const share = checkShare(options.tenantShare ?? DEFAULT_TENANT_SHARE);
  // The URL's own `options` would replace the pool's: they go first in the start-up packet, where
  // a later `-c` of the same name wins, so the URL's other settings are kept and these four hold.
  let target = url;
  let startup = readSessionOptions(options.timeoutMs);
  const theirs = URL.canParse(url) ? new URL(url).searchParams.get('options') : null;
  if (theirs !== null) {
    const without = new URL(url);
    without.searchParams.delete('options');
    target = without.toString();
    startup = `${theirs} ${startup}`;
  }
  let pool: PoolLike;
  try {
    pool = await connectPool(target, size, '--database', startup);
  } catch (e) {
    return { refused: e instanceof OqlError ? e.message : String(e) };
  }
  let row: ReadRoleRow | undefined;
  try {
    row = ((await pool.query(READ_ROLE_SQL)) as { rows: ReadRoleRow[] }).rows[0];
  } catch (e) {
    await pool.end().catch(() => {});
    return { refused: `cannot read the settings of ${redact(url)}: ${(e as Error).message}` };
  }
  const missing = row === undefined ? ['its settings'] : readRoleOf(row, options.timeoutMs).missing;
  if (missing.length > 0) {
    await pool.end().catch(() => {});
    return { refused: `sessions of ${redact(url)} did not start with ${missing.join(', ')}` };
  }
  return { db: poolDatabase(pool, `${redact(url)} (read-only sessions)`, { ownsPool: true, poolSize: size, tenantShare: share, readRole: true, preparedStatements: options.preparedStatements }) };
}

/** postgres://user:secret@host/db → postgres://user:***@host/db */
export function redact(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}
