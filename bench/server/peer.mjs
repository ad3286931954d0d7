// PostGraphile v5, the peer bench/server.mjs runs beside `oql serve` on the same PostgreSQL tables
// and rows. Not a dependency of the package: installed at bench time into a cache folder outside
// the clone (once; OQL_BENCH_CACHE moves it), and run as a child process on Node 22 or later,
// which PostGraphile 5 requires (this process's node when it is one, else Node 24 from npm
// through scripts/node-line.sh).
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(dirname(HERE));
const VERSION = '^5';

/** The folder PostGraphile is installed in, installing it the first time. */
export function installPostGraphile(log) {
  const dir = join(process.env.OQL_BENCH_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'oql-bench'), 'postgraphile-5');
  if (!existsSync(join(dir, 'node_modules', 'postgraphile', 'package.json'))) {
    mkdirSync(dir, { recursive: true });
    if (!existsSync(join(dir, 'package.json'))) writeFileSync(join(dir, 'package.json'), '{ "private": true }\n');
    log(`installing postgraphile@${VERSION} into ${dir} (once)`);
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `postgraphile@${VERSION}`], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  copyFileSync(join(HERE, 'postgraphile-server.mjs'), join(dir, 'postgraphile-server.mjs'));
  const version = JSON.parse(readFileSync(join(dir, 'node_modules', 'postgraphile', 'package.json'), 'utf8')).version;
  return { dir, version };
}

/** A node binary of line 22 or later. */
export function peerNode() {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  return execFileSync('sh', [join(ROOT, 'scripts', 'node-line.sh'), '24'], { encoding: 'utf8' }).trim();
}

/** PostGraphile on `databaseUrl` with a pool of `poolSize`; resolves with its URL (GraphQL at /graphql), its node's version and a stop function. */
export async function startPostGraphile(databaseUrl, poolSize, log) {
  const { dir, version } = installPostGraphile(log);
  const node = peerNode();
  const nodeVersion = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  const child = spawn(node, ['postgraphile-server.mjs'], {
    cwd: dir,
    env: { ...process.env, DATABASE_URL: databaseUrl, POOL_SIZE: String(poolSize), GRAPHILE_ENV: 'production', NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { ...(await listening(child, 'PostGraphile')), version, nodeVersion };
}

/**
 * A server started as a child process, once it prints "listening on <url>": its URL and a stop
 * function (SIGTERM, then SIGKILL after 10 s). Rejects with the end of its output if it exits first.
 */
export async function listening(child, name) {
  let seen = '';
  child.stderr.on('data', (c) => { seen += c; });
  const url = await new Promise((resolve, reject) => {
    child.stdout.on('data', (c) => {
      seen += c;
      const m = /listening on (http:\/\/[^\s]+)/.exec(seen);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}): ${seen.slice(-2000)}`)));
  });
  child.stdout.resume();
  return {
    url,
    pid: child.pid,
    /** What the child wrote so far, stdout and stderr. */
    output: () => seen,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
