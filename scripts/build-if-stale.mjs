// `npm start` and `npm run demo` run this before the server: it builds only when dist/ is older
// than what it is built from, and never under a running server. Plain JavaScript, so that it
// costs no TypeScript loader when there is nothing to build.
//
//   node scripts/build-if-stale.mjs <build command...>     (from the package's root)
//
// A server started from dist/ loads modules from it as it goes (lazily imported chunks): a build
// under it swaps those files. If dist/ is stale while a live process holds the default data
// directory (./.oql-data/oql.lock), it refuses and says so, and builds nothing.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** What dist/ is built from, relative to the root: every file under these is looked at. */
export const SOURCES = ['src', 'grammar', 'tsup.config.ts', 'package.json', 'scripts/build-console.ts'];
/** What the build writes last (tsup's CLI, then the console): the older of them dates dist/. */
export const OUTPUTS = ['dist/cli.js', 'dist/console/index.html'];

function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** Why dist/ must be built, or null when it is newer than every source. */
export function staleness(root) {
  const built = OUTPUTS.map((o) => (existsSync(join(root, o)) ? statSync(join(root, o)).mtimeMs : 0));
  if (built.some((m) => m === 0)) return `${OUTPUTS[built.indexOf(0)]} is missing`;
  const oldest = Math.min(...built);
  for (const source of SOURCES) {
    if (newestMtime(join(root, source)) > oldest) return `${source} changed since the last build`;
  }
  return null;
}

/** The live process holding the data directory, as its lock says, or null. */
export function holderOf(dataDir) {
  let lock;
  try {
    lock = JSON.parse(readFileSync(join(dataDir, 'oql.lock'), 'utf8'));
  } catch {
    return null;
  }
  if (!Number.isSafeInteger(lock?.pid) || lock.pid <= 0) return null;
  if (typeof lock.host === 'string' && lock.host !== '' && lock.host !== hostname()) return { pid: lock.pid, host: lock.host };
  try {
    process.kill(lock.pid, 0);
  } catch (e) {
    if (e.code !== 'EPERM') return null;
  }
  return { pid: lock.pid, host: hostname() };
}

function main(argv) {
  const root = process.cwd();
  const why = staleness(root);
  if (why === null) {
    console.error('dist/ is up to date; not building');
    return 0;
  }
  const holder = holderOf(resolve(root, '.oql-data'));
  if (holder !== null) {
    console.error(`dist/ needs a build (${why}), but oql serve (process ${holder.pid}${holder.host !== hostname() ? ` on ${holder.host}` : ''}) `
      + 'is running from it on ./.oql-data: a build would replace its files under it.');
    console.error(`Stop it first (kill ${holder.pid}: it stops cleanly on SIGTERM), then run npm start again.`);
    return 1;
  }
  console.error(`building dist/: ${why}`);
  const [command, ...args] = argv;
  if (command === undefined) {
    console.error('build-if-stale: give the build command, for example: node scripts/build-if-stale.mjs npm run build');
    return 2;
  }
  const run = spawnSync(command, args, { stdio: 'inherit', shell: process.platform === 'win32' });
  return run.status ?? 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = main(process.argv.slice(2));
