import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };

/**
 * scripts/build-if-stale.mjs, as `npm start` runs it, in a directory laid out like the package:
 * the build command it is given runs only when dist/ is older than a source, and never while a
 * live process holds ./.oql-data.
 */

const SCRIPT = resolve(import.meta.dirname, '../../scripts/build-if-stale.mjs');
const root = mkdtempSync(join(tmpdir(), 'oql-build-if-stale-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

function put(path: string, atSeconds: number): void {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), path);
  utimesSync(join(root, path), atSeconds, atSeconds);
}

/** Runs the script with a build command that writes a marker, and reports whether it ran. */
function run(): Promise<{ code: number | null; built: boolean; stderr: string }> {
  const marker = join(root, `built-${Math.random().toString(36).slice(2)}`);
  const child = spawn(process.execPath, [SCRIPT, process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, '')`], { cwd: root });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => void (stderr += c.toString('utf8')));
  return new Promise((done) => child.once('close', (code) => {
    let built = true;
    try {
      rmSync(marker);
    } catch {
      built = false;
    }
    done({ code, built, stderr });
  }));
}

describe('npm start builds only when it must', () => {
  it('is what npm start and npm run demo run before the server', () => {
    expect(pkg.scripts.start).toMatch(/^node scripts\/build-if-stale\.mjs npm run build && /);
    expect(pkg.scripts.demo).toMatch(/^node scripts\/build-if-stale\.mjs npm run build && /);
  });

  it('builds when dist/ is missing, not when it is newer than the sources, again when a source changes', async () => {
    put('src/index.ts', 1_000);
    put('package.json', 1_000);
    const missing = await run();
    expect(missing, missing.stderr).toMatchObject({ code: 0, built: true });
    expect(missing.stderr).toContain('dist/cli.js is missing');

    put('dist/cli.js', 2_000);
    put('dist/console/index.html', 2_000);
    const fresh = await run();
    expect(fresh, fresh.stderr).toMatchObject({ code: 0, built: false });

    put('src/run/deep/file.ts', 3_000);
    const changed = await run();
    expect(changed, changed.stderr).toMatchObject({ code: 0, built: true });
    expect(changed.stderr).toContain('src changed since the last build');
  });

  it('refuses to build under a live process holding ./.oql-data, and builds once it is gone', async () => {
    put('src/index.ts', 4_000);
    const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)']);
    children.push(holder);
    mkdirSync(join(root, '.oql-data'), { recursive: true });
    writeFileSync(join(root, '.oql-data/oql.lock'), JSON.stringify({ pid: holder.pid, host: hostname(), startedAt: new Date().toISOString() }));
    const refused = await run();
    expect(refused.code).toBe(1);
    expect(refused.built).toBe(false);
    expect(refused.stderr).toContain(`oql serve (process ${holder.pid})`);
    expect(refused.stderr).toContain(`kill ${holder.pid}`);

    const gone = new Promise((done) => holder.once('exit', done));
    holder.kill('SIGKILL');
    await gone;
    const after = await run();
    expect(after, after.stderr).toMatchObject({ code: 0, built: true });
  });
});
