import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { TRACE_LOADS, importOf, modulesLoaded, tracedModules } from '../support/modules-loaded.js';

/**
 * `import 'oql'` must load no HTTP framework: the service lives in `oql/server`. A child process
 * imports an entry with a resolve hook that records every module it loads, then lists the
 * CommonJS cache too; the server entry is the control that shows the check can see Fastify.
 */

const run = promisify(execFile);
const FRAMEWORKS = /\/node_modules\/(fastify|@fastify\/[^/]+|pino|find-my-way|avvio|light-my-request|express|koa|hono|@hapi\/[^/]+)\//;

describe("the library entry 'oql'", () => {
  it('loads no HTTP framework', async () => {
    const loaded = await modulesLoaded(importOf('src/index.ts'));
    expect(loaded.some((u) => u.endsWith('/src/index.ts'))).toBe(true);
    expect(loaded.filter((u) => FRAMEWORKS.test(u))).toEqual([]);
    expect(loaded.filter((u) => u.includes('/src/server/'))).toEqual([]);
    // Nor the console: its server side lives under src/console, its front end is a built file.
    expect(loaded.filter((u) => u.includes('/src/console/') || /\/node_modules\/preact\//.test(u))).toEqual([]);
  }, 60_000);

  it('and oql compile, which loads the CLI, load none either', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'oql-import-'));
    const trace = join(dir, 'compile.txt');
    let loaded: string[];
    try {
      const { stdout } = await run(process.execPath, [...TRACE_LOADS, 'src/cli/main.ts', 'compile', 'SELECT name FROM account LIMIT 1', '--slug', 'account'], {
        cwd: process.cwd(), env: { ...process.env, OQL_TRACE_FILE: trace },
      });
      expect(stdout).toContain('SELECT');
      loaded = tracedModules(trace);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(loaded.some((u) => u.endsWith('/src/cli/cli.ts'))).toBe(true);
    expect(loaded.filter((u) => FRAMEWORKS.test(u) || u.includes('/src/server/'))).toEqual([]);
  }, 60_000);

  it('while oql/server does load Fastify (the check sees it)', async () => {
    const loaded = await modulesLoaded(importOf('src/server/index.ts'));
    expect(loaded.some((u) => /\/node_modules\/fastify\//.test(u))).toBe(true);
    expect(loaded.some((u) => u.includes('/src/console/plugin.ts'))).toBe(true);
  }, 60_000);
});
