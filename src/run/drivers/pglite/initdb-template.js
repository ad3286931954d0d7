// The first initdb of this PGlite, kept for every later empty database of this user.
//
// An empty database costs Postgres's initdb inside WebAssembly: about ten seconds of a 2-core
// machine (three of a quiet one). Every `oql serve --memory`, new `--data-dir`, `oql run` and
// `oql demo` starts one. The first initdb's result is kept beside the temporary directories, one
// per PGlite version and user, closed and never opened again, and later databases start as a copy
// of it:
//   - a directory, `oql-initdb-<version>-<uid>`, for the database process's data directories
//     (pglite-process.js);
//   - the same cluster as a tar file, `oql-initdb-<version>-<uid>.tar`, for a database held in
//     memory by the command's own thread (src/cli/database.ts), which PGlite loads from a tar.
// Each is made by the first start that lacks it, written apart and renamed into place, so that a
// start never reads half of one. Deleting either is safe. One that cannot be opened (a cleaner of
// the temporary directory took part of it) is removed, and that start runs initdb.
//
// Plain JavaScript, like pglite-process.js, which imports it: Node loads that file without a
// TypeScript loader. Keep it ASCII, like every built file.
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

/** The data directory's lock file (src/run/data-dir-lock.ts): never copied into a template. */
const LOCK_FILE = 'oql.lock';

function templatePath() {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.resolve('@electric-sql/pglite')), 'utf8'));
  let user = 'user';
  try {
    user = String(userInfo().uid);
  } catch {
    // No user entry (some containers): one template for the machine's temporary directory.
  }
  return join(tmpdir(), `oql-initdb-${pkg.version}-${user}`);
}

/** Whether a data directory holds nothing yet but its lock. */
export function isFresh(dataDir) {
  return existsSync(dataDir) && readdirSync(dataDir).every((name) => name.startsWith(LOCK_FILE));
}

const notTheLock = (source) => !source.endsWith(LOCK_FILE) && !source.includes(`${LOCK_FILE}.`);

/**
 * Opens a fresh data directory (isFresh) as a copy of the template directory; `create` opens
 * PGlite on `dataDir`. Without a template, the initdb `create` runs is kept as the template.
 */
export async function createFromTemplate(dataDir, create) {
  let template;
  try {
    template = templatePath();
  } catch {
    return create();
  }
  if (existsSync(join(template, 'PG_VERSION'))) {
    try {
      cpSync(template, dataDir, { recursive: true });
      return await create();
    } catch {
      rmSync(template, { recursive: true, force: true });
      for (const name of readdirSync(dataDir)) if (!name.startsWith(LOCK_FILE)) rmSync(join(dataDir, name), { recursive: true, force: true });
      return create();
    }
  }
  const first = await create();
  try {
    await first.close();
    const staging = mkdtempSync(`${template}.`);
    cpSync(dataDir, staging, { recursive: true, filter: notTheLock });
    try {
      renameSync(staging, template);
    } catch {
      // Another process kept its template first.
      rmSync(staging, { recursive: true, force: true });
    }
  } catch {
    // Without a template the next start pays for initdb again; this one goes on.
  }
  return create();
}

/**
 * A PGlite held in memory, started from the template tar file; `create(options)` opens PGlite
 * with the options given. Without a template, the initdb this start runs is written as the
 * template before anything else is done with the database.
 */
export async function createInMemory(create) {
  let file;
  try {
    file = `${templatePath()}.tar`;
  } catch {
    return create({});
  }
  if (existsSync(file)) {
    try {
      return await create({ loadDataDir: new Blob([readFileSync(file)]) });
    } catch {
      rmSync(file, { force: true });
    }
  }
  const db = await create({});
  try {
    const staging = `${file}.${process.pid}.${Date.now()}`;
    writeFileSync(staging, Buffer.from(await (await db.dumpDataDir('none')).arrayBuffer()), { mode: 0o600 });
    try {
      renameSync(staging, file);
    } catch {
      rmSync(staging, { force: true });
    }
  } catch {
    // Without a template the next start pays for initdb again; this one goes on.
  }
  return db;
}
