import { readFileSync } from 'node:fs';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { inject } from 'vitest';
import { loadIntoDatabase, type Row } from '../../fixtures/index.js';
import type { Catalog } from '../../src/catalog/types.js';

/**
 * One empty PGlite cluster per run, copied into every PGlite a test file starts.
 *
 * `PGlite.create()` on an empty directory runs initdb inside WebAssembly, most of the time a
 * PGlite takes to start: with both cores busy with other work, 15-22 s, where a start from a copy
 * of an initialized directory took 3-6 s. The global setup (global-setup.ts,
 * `setupPgliteTemplate`) runs it once and writes the cluster's directory as a tar file;
 * `emptyPglite` starts each database from a copy of that file instead. Each database is still
 * its own: nothing a test writes reaches the file or another database.
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** The tar file of an empty, freshly initialized PGlite data directory. */
    pgliteTemplate: string;
  }
}

let template: Blob | undefined;

/**
 * PGlites a file closed, emptied again, for the next file of the same worker (the `thread`
 * project's files share one: vitest.config.ts). Opening one costs about 0.45 s of CPU (the
 * template unpacked into Emscripten's in-memory file system, Postgres started); emptying one, a
 * few tens of milliseconds. A database comes back only when it is, catalog for catalog, what it
 * was when it was first opened (`fingerprint`); otherwise it is closed.
 */
const returned: PGlite[] = [];
/** At most this many kept: each holds its WebAssembly memory, hundreds of MB. */
const KEEP = 3;
/** The fingerprint of an empty database, read from the worker's first. */
let emptyPrint: Promise<string> | undefined;

/**
 * An empty PGlite as a copy of the run's empty cluster (options as `PGlite.create` takes them).
 * Without options it may be one another file closed and that was emptied again: nothing of that
 * file is left in it (no schema, table, function, role, extension, setting or session state), and
 * the handle that file held answers "PGlite is closed", like a closed PGlite, so nothing it left
 * running reaches the new file's database.
 */
export async function emptyPglite(options: Omit<PGliteOptions, 'loadDataDir' | 'dataDir'> = {}): Promise<PGlite> {
  if (Object.keys(options).length > 0) return open(options);
  const db = returned.pop() ?? (await open({}));
  emptyPrint ??= fingerprint(db);
  await emptyPrint;
  return lease(db);
}

/**
 * An empty PGlite (`emptyPglite`) with these fixtures' tables and rows, analyzed as a served
 * database is (autovacuum, or the service's own ANALYZE on the embedded one): without statistics
 * the planner guesses a row or two per table and joins a chain with nested loops over whole
 * tables, seconds for a few hundred rows.
 */
export async function pgliteWithFixtures(fixtures: readonly { readonly catalog: Catalog; readonly data: ReadonlyMap<string, readonly Row[]> }[]): Promise<PGlite> {
  const db = await emptyPglite();
  for (const f of fixtures) await loadIntoDatabase(db, f.catalog, f.data);
  await db.exec('ANALYZE');
  return db;
}

function open(options: Omit<PGliteOptions, 'loadDataDir' | 'dataDir'>): Promise<PGlite> {
  template ??= new Blob([readFileSync(inject('pgliteTemplate'))]);
  return PGlite.create({ ...options, loadDataDir: template });
}

/** Catalogs whose row counts a fingerprint reads. */
const COUNTED = ['pg_class', 'pg_proc', 'pg_type', 'pg_operator', 'pg_cast', 'pg_collation', 'pg_conversion', 'pg_ts_config',
  'pg_ts_dict', 'pg_language', 'pg_am', 'pg_opclass', 'pg_opfamily', 'pg_trigger', 'pg_event_trigger', 'pg_policy', 'pg_rewrite',
  'pg_constraint', 'pg_sequence', 'pg_publication', 'pg_foreign_data_wrapper', 'pg_foreign_server', 'pg_user_mapping',
  'pg_largeobject_metadata', 'pg_db_role_setting', 'pg_default_acl', 'pg_statistic_ext', 'pg_inherits', 'pg_attrdef', 'pg_enum',
  'pg_range', 'pg_transform', 'pg_aggregate', 'pg_description', 'pg_shdescription', 'pg_seclabel', 'pg_tablespace', 'pg_auth_members'];

/** What a file may change in a database, as one text: equal texts, equally empty databases. */
const FINGERPRINT = `SELECT concat_ws(' | ',
    (SELECT string_agg(nspname || ' ' || coalesce(nspacl::text, ''), ',' ORDER BY nspname) FROM pg_namespace
      WHERE nspname NOT LIKE 'pg\\_temp\\_%' AND nspname NOT LIKE 'pg\\_toast\\_temp\\_%'),
    (SELECT string_agg(rolname || ' ' || rolsuper || rolcanlogin, ',' ORDER BY rolname) FROM pg_roles),
    (SELECT string_agg(extname || ' ' || extversion, ',' ORDER BY extname) FROM pg_extension),
    (SELECT string_agg(datname || ' ' || coalesce(datacl::text, ''), ',' ORDER BY datname) FROM pg_database),
    (SELECT string_agg(name || '=' || setting, ',' ORDER BY name) FROM pg_settings
      WHERE source NOT IN ('default', 'override') AND name NOT LIKE 'transaction\\_%'),
    (SELECT md5(string_agg(coalesce(proacl::text, ''), ',' ORDER BY oid)) FROM pg_proc),
    (SELECT md5(string_agg(coalesce(relacl::text, ''), ',' ORDER BY oid)) FROM pg_class),
    ${COUNTED.map((c) => `(SELECT count(*) FROM ${c})`).join(', ')}) AS print`;

async function fingerprint(db: PGlite): Promise<string> {
  return (await db.query<{ print: string }>(FINGERPRINT)).rows[0]!.print;
}

/**
 * Empties a database a file closed: its session reset, every schema but the system's dropped and
 * the public one made again as initdb makes it.
 */
const EMPTY_AGAIN = `DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT nspname FROM pg_namespace WHERE nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
      AND nspname NOT LIKE 'pg\\_temp\\_%' AND nspname NOT LIKE 'pg\\_toast\\_temp\\_%' LOOP
    EXECUTE format('DROP SCHEMA %I CASCADE', r.nspname);
  END LOOP;
  FOR r IN SELECT extname FROM pg_extension WHERE extname <> 'plpgsql' LOOP
    EXECUTE format('DROP EXTENSION %I CASCADE', r.extname);
  END LOOP;
END $$;
CREATE SCHEMA public AUTHORIZATION pg_database_owner;
GRANT USAGE ON SCHEMA public TO PUBLIC;
COMMENT ON SCHEMA public IS 'standard public schema';
CHECKPOINT`;

/** Takes back a database a file closed: kept for the next when it is empty again, else closed. */
async function takeBack(db: PGlite): Promise<void> {
  try {
    if (db.isInTransaction()) await db.exec('ROLLBACK');
    // Alone: DISCARD ALL cannot run in the implicit transaction of several statements.
    await db.exec('DISCARD ALL');
    await db.exec(EMPTY_AGAIN);
    if (returned.length < KEEP && (await fingerprint(db)) === (await emptyPrint)) {
      returned.push(db);
      return;
    }
  } catch {
    // Not emptied: closed below, like any other.
  }
  await db.close();
}

/**
 * The handle a file gets: the database itself until the file closes it; from then on, closed.
 * Its methods are the database's own, bound to it (PGlite keeps its state in private fields,
 * which a method called on a proxy could not read).
 */
function lease(db: PGlite): PGlite {
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) throw new Error('PGlite is closed');
    closed = true;
    await takeBack(db);
  };
  const refuse = async (): Promise<never> => {
    throw new Error('PGlite is closed');
  };
  return new Proxy(db, {
    get(target, key) {
      if (key === 'close' || key === Symbol.asyncDispose) return close;
      if (key === 'closed') return closed;
      if (key === 'ready') return !closed && target.ready;
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return closed ? refuse : value.bind(target);
    },
  });
}
