import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { onTestFinished } from 'vitest';
import { main } from '../../src/cli/main.js';
import { compile, type CompileOptions, type CompiledQuery } from '../../src/index.js';
import { DEMO_ORGANIZATIONS, demoData } from '../../src/demo/demo.js';
import { loadFixtureCatalog } from '../../fixtures/index.js';
import { Oracle } from '../support/oracle.js';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI in process, capturing what it writes. */
export async function cli(argv: readonly string[], options: { cwd?: string; tty?: boolean; stdin?: string } = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: (t) => { stdout += t; },
    stderr: (t) => { stderr += t; },
    stdoutIsTTY: options.tty ?? false,
    stderrIsTTY: options.tty ?? false,
    cwd: options.cwd ?? process.cwd(),
    env: {},
    ...(options.stdin === undefined ? {} : { readStdin: async () => options.stdin! }),
  });
  return { code, stdout, stderr };
}

/**
 * A temporary directory holding the given files (paths relative to it), removed when the test that
 * made it finishes.
 */
export function tempTree(files: Readonly<Record<string, string>>): string {
  const root = mkdtempSync(join(tmpdir(), 'oql-cli-'));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    const abs = join(root, path);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, text);
  }
  return root;
}

/** 1-based line and column of an offset, counted here rather than with the library's LineMap. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: before[before.length - 1]!.length + 1 };
}

/** No stack frames: "    at fn (file:line:col)". */
export const STACK_LINE = /^\s+at .+:\d+:\d+\)?$/m;

/** compile() for a query the caller may read. */
export function compiledQuery(text: string, options: CompileOptions): CompiledQuery {
  const r = compile(text, options);
  if (r.kind !== 'query') throw new Error(`restricted: ${r.message}`);
  return r;
}

/**
 * The rows the embedded example CRM holds for `oql run` and `oql demo` (the demo data, not the
 * test data), as the oracle the CLI tests check their output against.
 */
export async function embeddedDemoOracle(): Promise<Oracle> {
  return new Oracle(await demoData(loadFixtureCatalog('crm'), { organizations: DEMO_ORGANIZATIONS }));
}
