import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };

/**
 * The embedded database's process script is loaded by Node itself, so it must be found and must run wherever
 * the code that starts it runs: src/run/drivers/pglite under vitest (every other test of the embedded database),
 * and dist/ in the package, from an ES module bundle or a CommonJS one.
 */

// Each open of PGlite takes seconds, and minutes on a machine shared with other work: bounds against hangs, not timings.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 600_000 });

const ROOT = resolve(import.meta.dirname, '../..');
const BUILT = join(ROOT, 'dist/pglite-process.js');
const run = promisify(execFile);

let probe: string;
let dataDir: string;

beforeAll(async () => {
  // Inside the repository, so that the bundles and the copied script resolve @electric-sql/pglite
  // from its node_modules, as an installed package resolves it from the user's.
  probe = mkdtempSync(join(ROOT, '.probe-pglite-'));
  dataDir = mkdtempSync(join(tmpdir(), 'oql-probe-'));
  copyFileSync(BUILT, join(probe, 'pglite-process.js'));
  // A bundle of the service's side, as tsup makes dist/server.js and dist/cli.js (ESM) and
  // dist/index.cjs (CommonJS); the script beside it is the built one.
  const entry = join(ROOT, 'src/run/drivers/pglite/supervisor.ts');
  await build({ entryPoints: [entry], bundle: true, platform: 'node', target: 'node20', format: 'esm', outfile: join(probe, 'db.js'), logLevel: 'silent' });
  await build({ entryPoints: [entry], bundle: true, platform: 'node', target: 'node20', format: 'cjs', outfile: join(probe, 'db.cjs'), logLevel: 'silent' });
  writeFileSync(join(probe, 'package.json'), '{ "type": "module" }\n');
});

afterAll(() => {
  if (probe) rmSync(probe, { recursive: true, force: true });
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** Opens the database through one bundle in a fresh process and reports what it saw. */
async function throughBundle(load: string): Promise<{ rows: unknown[]; restarts: number; pid: number }> {
  const script = `
    const { EmbeddedDatabase } = ${load};
    const db = await EmbeddedDatabase.open({ dataDir: ${JSON.stringify(dataDir)}, timeoutMs: 60000, restartWaitMs: 600000, openTimeoutMs: 600000 });
    await db.exec('CREATE TABLE IF NOT EXISTS seen (id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY, pid int8)');
    await db.query('INSERT INTO seen (pid) VALUES ($1)', [process.pid]);
    await db.query('SELECT pg_sleep(30)', [], { timeoutMs: 1000 }).catch(() => {});
    // The last row written is this process's (process ids wrap around: a later process may have a smaller one).
    const { rows } = await db.query('SELECT count(*) AS n, (SELECT pid FROM seen ORDER BY id DESC LIMIT 1) = $1 AS mine FROM seen', [process.pid]);
    const restarts = db.stats().restarts;
    await db.close();
    process.stdout.write(JSON.stringify({ rows, restarts, pid: process.pid }));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: probe, timeout: 540_000 });
  return JSON.parse(stdout) as { rows: unknown[]; restarts: number; pid: number };
}

describe('the database process script in the package', () => {
  it('is built into dist/ under its own name, shipped, ASCII, with no source map and no import from src/', () => {
    const text = readFileSync(BUILT, 'latin1');
    expect(text).toMatch(/^[\x00-\x7f]*$/);
    expect(text).not.toContain('sourceMappingURL');
    const imports = [...text.matchAll(/(?:from|import)\s*\(?\s*["'`]([^"'`]+)["'`]/g)].map((m) => m[1]);
    expect(imports).toContain('@electric-sql/pglite');
    // Node's own modules it needs (its watchdog thread; reading PGlite's WebAssembly to compile it
    // ahead; the file modes of the data directory; the initdb kept in the temporary directory), and
    // PGlite: nothing of src/.
    for (const spec of imports) expect(spec).toMatch(/^(?:node:)?(?:worker_threads|fs|fs\/promises|os|path)$|^@electric-sql\/pglite(?:\/|$)/);
    expect(pkg.files).toContain('dist/*.js');
  });

  it('an ES module bundle starts it beside itself, kills it at the deadline and reopens it', async () => {
    const seen = await throughBundle(`await import('./db.js')`);
    expect(seen.rows).toEqual([{ n: 1, mine: true }]);
    expect(seen.restarts).toBe(1);
  });

  it('so does a CommonJS bundle, which has no import.meta.url', async () => {
    const seen = await throughBundle(`(await import('node:module')).createRequire(import.meta.url)('./db.cjs')`);
    expect(seen.rows).toEqual([{ n: 2, mine: true }]);
    expect(seen.restarts).toBe(1);
  });
});
