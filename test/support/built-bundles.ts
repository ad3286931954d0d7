import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Part of vitest's global setup (global-setup.ts): the bundles in dist/ (tsup) are built once,
 * before any test file runs, when one is missing or older than a source. The tests that run the built CLI, the README's
 * commands and the embedded database's built process script read them; were each to build them on its own,
 * two of them running side by side could empty dist/ (tsup cleans it) under the other.
 */

const ROOT = resolve(import.meta.dirname, '../..');
/**
 * The built CLI, which the tests that start `oql serve`, `oql mcp --stdio` or a command as a
 * process run, as `npm start` runs it: built once per run, and a process of it starts on half the
 * CPU of one from the sources through tsx (0.99 s against 1.92 s for `oql serve --memory --demo`,
 * measured side by side).
 */
export const BUILT_CLI = join(ROOT, 'dist/cli.js');
/** The built files the tests run. */
export const BUILT = ['dist/cli.js', 'dist/index.js', 'dist/index.cjs', 'dist/server.js', 'dist/pglite-process.js'].map((f) => join(ROOT, f));

function newestSource(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

export async function buildBundles(): Promise<void> {
  const sources = Math.max(newestSource(join(ROOT, 'src')), statSync(join(ROOT, 'tsup.config.ts')).mtimeMs);
  if (BUILT.every((f) => existsSync(f) && statSync(f).mtimeMs >= sources)) return;
  // Without the declaration files, which no test reads (tsup.config.ts).
  await promisify(execFile)('npx', ['tsup'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, OQL_BUILD_DECLARATIONS: '0' } });
}
