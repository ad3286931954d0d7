import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `import 'oql'` must load no HTTP framework: the service lives in `oql/server`. A child process
 * imports an entry with a resolve hook that records every module it loads, then lists the
 * CommonJS cache too; the server entry is the control that shows the check can see Fastify.
 */

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'oql-import-'));
const FRAMEWORKS = /\/node_modules\/(fastify|@fastify\/[^/]+|pino|find-my-way|avvio|light-my-request|express|koa|hono|@hapi\/[^/]+)\//;

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function modulesLoadedBy(entry: string, name: string): Promise<string[]> {
  const trace = join(dir, `${name}.txt`);
  const script = `
    import { createRequire } from 'node:module';
    await import(${JSON.stringify(pathToFileURL(entry).href)});
    console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));
  `;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--import', './test/server/support/trace-loads.mjs', '--input-type=module', '-e', script], {
    cwd: process.cwd(), env: { ...process.env, OQL_TRACE_FILE: trace },
  });
  const cjs = JSON.parse(stdout.trim().split('\n').pop()!) as string[];
  const esm = readFileSync(trace, 'utf8').split('\n').filter((l) => l.length > 0);
  return [...esm, ...cjs.map((p) => pathToFileURL(p).href)];
}

describe("the library entry 'oql'", () => {
  it('loads no HTTP framework', async () => {
    const loaded = await modulesLoadedBy('src/index.ts', 'library');
    expect(loaded.some((u) => u.endsWith('/src/index.ts'))).toBe(true);
    expect(loaded.filter((u) => FRAMEWORKS.test(u))).toEqual([]);
    expect(loaded.filter((u) => u.includes('/src/server/'))).toEqual([]);
  }, 60_000);

  it('and oql compile, which loads the CLI, load none either', async () => {
    const trace = join(dir, 'compile.txt');
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--import', './test/server/support/trace-loads.mjs', 'src/cli/main.ts', 'compile', 'SELECT name FROM account LIMIT 1', '--slug', 'account'], {
      cwd: process.cwd(), env: { ...process.env, OQL_TRACE_FILE: trace },
    });
    expect(stdout).toContain('SELECT');
    const loaded = readFileSync(trace, 'utf8').split('\n').filter((l) => l.length > 0);
    expect(loaded.some((u) => u.endsWith('/src/cli/cli.ts'))).toBe(true);
    expect(loaded.filter((u) => FRAMEWORKS.test(u) || u.includes('/src/server/'))).toEqual([]);
  }, 60_000);

  it('while oql/server does load Fastify (the check sees it)', async () => {
    const loaded = await modulesLoadedBy('src/server/index.ts', 'server');
    expect(loaded.some((u) => /\/node_modules\/fastify\//.test(u))).toBe(true);
  }, 60_000);
});
