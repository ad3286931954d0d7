import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The node arguments that make a child process record every ES module it loads into `OQL_TRACE_FILE`. */
export const TRACE_LOADS = ['--import', 'tsx', '--import', './test/server/support/trace-loads.mjs'];

/**
 * Runs `body` (an ES module's text, TypeScript sources importable through tsx) in a child
 * process and returns the URL of every module it loaded: the ES modules the resolve hook saw and
 * the CommonJS cache at the end. For checks that an entry does not load an optional dependency.
 */
export async function modulesLoaded(body: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'oql-loads-'));
  try {
    const trace = join(dir, 'trace.txt');
    const script = `
      import { createRequire } from 'node:module';
      ${body}
      console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));
    `;
    const { stdout } = await run(process.execPath, [...TRACE_LOADS, '--input-type=module', '-e', script], {
      cwd: process.cwd(), env: { ...process.env, OQL_TRACE_FILE: trace },
    });
    const cjs = JSON.parse(stdout.trim().split('\n').pop()!) as string[];
    return [...tracedModules(trace), ...cjs.map((p) => pathToFileURL(p).href)];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The module URLs a traced process wrote to its trace file. */
export function tracedModules(traceFile: string): string[] {
  return readFileSync(traceFile, 'utf8').split('\n').filter((l) => l.length > 0);
}

/** The statement that imports a repository file by path, for `modulesLoaded`. */
export function importOf(path: string): string {
  return `await import(${JSON.stringify(pathToFileURL(path).href)});`;
}
