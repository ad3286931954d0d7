import type { Catalog } from '../catalog/types.js';
import { OqlError } from '../diagnostics/diagnostic.js';
import { FIXTURE_DATA_OPTIONS, generateRows, loadIntoDatabase, type Queryable, type Row } from '../demo/index.js';
import { DEMO_ORGANIZATIONS, demoData } from '../demo/demo.js';
import { createInMemory } from '../run/drivers/pglite/initdb-template.js';
import type { CliIo } from './io.js';

export interface OpenDatabase {
  readonly db: Queryable;
  /** What it is, for messages: "embedded PostgreSQL (PGlite)" or the URL without its password. */
  readonly label: string;
  close(): Promise<void>;
}

export interface EmbeddedOptions {
  readonly catalog: Catalog;
  /**
   * The example CRM gets the demo data (src/demo/demo.ts: believable names, companies and deals,
   * the same rows `oql demo` and `oql serve --demo` show); another catalog gets rows generated
   * for it. The test data, built to break things, is for the tests alone.
   */
  readonly isFixture: boolean;
  readonly io: CliIo;
}

/** Rows per object when the embedded database holds a catalog other than the example CRM. */
const GENERATED_ROWS = 200;

/**
 * An in-process PostgreSQL (PGlite, WASM) holding the catalog's tables and generated rows.
 * Progress goes to stderr, and only on a terminal.
 */
export async function openEmbedded(o: EmbeddedOptions): Promise<OpenDatabase & { rows: ReadonlyMap<string, readonly Row[]> }> {
  const progress = progressReporter(o.io);
  progress('starting embedded PostgreSQL (PGlite)');
  const { PGlite } = await importOptional<typeof import('@electric-sql/pglite')>('@electric-sql/pglite', 'the embedded database');
  // A copy of the first initdb this machine ran (src/run/drivers/pglite/initdb-template.js).
  const db = await createInMemory((options) => PGlite.create(options));
  const rows = o.isFixture
    ? await demoData(o.catalog, { organizations: DEMO_ORGANIZATIONS })
    : generateRows(o.catalog, { ...FIXTURE_DATA_OPTIONS.crm, counts: GENERATED_ROWS });
  try {
    await loadIntoDatabase(db, o.catalog, rows, {
      onProgress: (p) => progress(`loading ${p.object} ${p.inserted}/${p.total}`),
    });
  } catch (e) {
    await db.close();
    throw e;
  } finally {
    progress(null);
  }
  return { db, rows, label: 'embedded PostgreSQL (PGlite)', close: () => db.close() };
}

/** A PostgreSQL server through node-postgres. */
export async function openPostgres(url: string): Promise<OpenDatabase> {
  checkDatabaseUrl(url);
  const pg = await importOptional<typeof import('pg')>('pg', '--database');
  const Client = pg.Client ?? (pg as unknown as { default: typeof pg }).default.Client;
  const client = new Client({ connectionString: url });
  try {
    await client.connect();
  } catch (e) {
    throw OqlError.plain('DATABASE_ERROR', `cannot connect to ${redact(url)}: ${(e as Error).message}`, 'check the URL, for example postgres://user:password@localhost:5432/crm');
  }
  return { db: client, label: redact(url), close: () => client.end() };
}

async function importOptional<T>(name: string, purpose: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (e) {
    if ((e as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') {
      throw OqlError.plain('INVALID_OPTIONS', `${purpose} needs the package '${name}', which failed to load: ${(e as Error).message}`);
    }
    throw OqlError.plain('INVALID_OPTIONS', `${purpose} needs the package '${name}', which is not installed`, `npm install ${name}`);
  }
}

/**
 * node-postgres reads a string that is not a URL as a database name on a host taken from
 * elsewhere, so `--database notaurl` used to fail with `getaddrinfo ENOTFOUND base`. Only a
 * postgres:// or postgresql:// URL with a host is accepted.
 */
export function checkDatabaseUrl(url: string): void {
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  // A Unix socket is given as ?host=/path, with the URL's own host empty.
  if (!parsed || (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') || (parsed.hostname === '' && !parsed.searchParams.has('host'))) {
    const shown = redact(url).slice(0, 80);
    throw OqlError.plain('INVALID_OPTIONS', `--database ${JSON.stringify(shown)} is not a valid PostgreSQL URL`, 'write postgres://user:password@host:5432/database');
  }
}

/** postgres://user:secret@host/db → postgres://user:***@host/db */
export function redact(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}

/** A one-line status on a terminal's stderr, rewritten in place; null clears it. Silent elsewhere. */
function progressReporter(io: CliIo): (text: string | null) => void {
  if (!io.stderrIsTTY) return () => {};
  let shown = 0;
  return (text) => {
    const line = text ?? '';
    io.stderr(`\r${line.padEnd(shown)}${text === null ? '\r' : ''}`);
    shown = text === null ? 0 : line.length;
  };
}
