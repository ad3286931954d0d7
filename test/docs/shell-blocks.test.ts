import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };
import { NODE_FLAGS } from '../support/node-flags.js';

/**
 * Every `sh` block of the README and the docs pages, run as written against a server started the
 * way `npm start` starts it, from a directory where `npx oql` is the built CLI (as in a clone
 * after `npm start`). The only change is the one a reader makes: the values of the documented
 * placeholders `OQL=`, `MCP=` and `K=` are replaced by the server's addresses and its key, and
 * the same three are set in the shell, as in the reader's terminal after the first block.
 *
 * Blocks that install or run the suite itself are checked, not run (a suite that runs itself
 * never ends): they may hold only the commands listed in SUITE_COMMANDS.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md') && f !== 'diagnostics.md').map((f) => `docs/${f}`)];
const SUITE_COMMANDS = [/^npm ci && npm (start|test)$/, /^npx vitest run( [\w/.-]+)*$/, /^npm run (openapi|bench|bench:server|grammar)\b/];
const PLACEHOLDER = /^(OQL|MCP|K)=\S+(\s+#.*)?$/gm;
const BLOCK_TIMEOUT_MS = 300_000;

interface Block {
  readonly page: string;
  readonly line: number;
  readonly text: string;
}

function blocksOf(page: string): Block[] {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const out: Block[] = [];
  for (const m of text.matchAll(/^```(?:sh|bash)[ \t]*\n([\s\S]*?)^```[ \t]*$/gm)) {
    out.push({ page, line: text.slice(0, m.index).split('\n').length, text: m[1]! });
  }
  return out;
}

/** The commands of a block: its lines without comments and blank lines. */
function commands(block: Block): string[] {
  return block.text.split('\n').map((l) => l.replace(/(^|\s)#.*$/, '').trim()).filter((l) => l !== '');
}

const isSuiteBlock = (b: Block): boolean => commands(b).some((c) => /^npm ci\b|^npx vitest\b|^npm run\b/.test(c));

const all = PAGES.flatMap(blocksOf);
const runnable = all.filter((b) => !isSuiteBlock(b));
let cwd: string;
let server: ChildProcess | undefined;
const env: Record<string, string> = {};

beforeAll(async () => {
  // A directory of its own, where `npx oql` is the built CLI and ./.oql-data the server's.
  cwd = mkdtempSync(join(tmpdir(), 'oql-readme-'));
  mkdirSync(join(cwd, 'node_modules/.bin'), { recursive: true });
  symlinkSync(CLI, join(cwd, 'node_modules/.bin/oql'));
  // What `npm start` runs after building (checked below), on free ports.
  server = spawn(process.execPath, [...NODE_FLAGS, CLI, 'serve', '--demo', '--port', '0'], { cwd, env: { ...process.env, OQL_LOG_LEVEL: 'warn', OQL_API_KEYS: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise<void>((ready, fail) => {
    server!.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('OpenAPI document')) ready();
    });
    server!.once('exit', (code) => fail(new Error(`oql serve exited (${code}): ${out}`)));
  });
  env['OQL'] = /listening on (http:\/\/\S+)/.exec(out)![1]!;
  env['MCP'] = /MCP host {2}(http:\/\/\S+);/.exec(out)![1]!;
  env['K'] = /^ {2}(oql_[A-Za-z0-9_-]{43})$/m.exec(out)![1]!;
}, 600_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((done) => server!.once('exit', done));
    server.kill('SIGTERM');
    await exited;
  }
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

function runBlock(block: Block): Promise<{ code: number; stdout: string; stderr: string; script: string }> {
  const script = block.text.replace(PLACEHOLDER, (_line, name: string, comment: string | undefined) => `${name}=${env[name]}${comment ?? ''}`);
  return new Promise((done) => {
    execFile('bash', ['-c', script], { cwd, env: { ...process.env, ...env, OQL_API_KEYS: '' }, timeout: BLOCK_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => done({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr, script }));
  });
}

/** The ids of the JSON-RPC requests written in a block (notifications have none). */
function requestIds(text: string): number[] {
  return [...text.matchAll(/\{"jsonrpc":"2\.0","id":(\d+),"method":/g)].map((m) => Number(m[1]));
}

/** The ids of the JSON-RPC answers in a block's output: one per line, or per `data:` line of SSE. */
function answeredIds(stdout: string): number[] {
  const ids: number[] = [];
  for (const line of stdout.split('\n')) {
    try {
      const message = JSON.parse(line.replace(/^data: /, '')) as { id?: unknown; result?: unknown; error?: unknown };
      if (typeof message.id === 'number' && ('result' in message || 'error' in message)) ids.push(message.id);
    } catch {
      // Not a JSON-RPC line.
    }
  }
  return ids;
}

describe('the README and the docs pages', () => {
  it('a block\'s JSON-RPC requests are found, so the check that each is answered checks something', () => {
    const stdio = runnable.find((b) => b.page === 'docs/mcp.md' && b.text.includes('oql mcp --stdio'));
    expect(stdio, 'the stdio example of docs/mcp.md').toBeDefined();
    expect(requestIds(stdio!.text)).toEqual([1, 2]);
    expect(answeredIds('{"result":{},"jsonrpc":"2.0","id":1}\ndata: {"jsonrpc":"2.0","id":2,"error":{"code":-1}}\n{"jsonrpc":"2.0","method":"x"}')).toEqual([1, 2]);
  });

  it('README links every docs page, and the pages it links exist', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    for (const page of readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'))) expect(readme, page).toContain(`](docs/${page})`);
    for (const [, target] of readme.matchAll(/\]\(((?:docs\/)?[\w./-]+\.md)(?:#[\w-]+)?\)/g)) expect(existsSync(join(ROOT, target!)), target).toBe(true);
    for (const page of ['rest', 'query-language', 'filter', 'connector', 'mcp', 'oauth', 'cli', 'limits', 'deployment']) {
      expect(existsSync(join(ROOT, `docs/${page}.md`)), page).toBe(true);
    }
  });

  it('cite no section of a document the reader cannot see', () => {
    for (const page of PAGES) {
      const text = readFileSync(join(ROOT, page), 'utf8');
      // Section numbers such as (4.5), (4.11–4.15) or "section 7"; measured ratios (0.82–0.85) are not.
      expect(text, page).not.toMatch(/\b(section|rule) \d|\((?:[1-9]|1\d)\.\d{1,2}(?:[,–-] ?(?:[1-9]|1\d)\.\d{1,2})*\)|contract section/i);
    }
  });

  it('have shell blocks, and the ones that install or run the suite hold only those commands', () => {
    expect(runnable.length).toBeGreaterThan(10);
    const suite = all.filter(isSuiteBlock);
    expect(suite.map((b) => b.page)).toContain('README.md');
    for (const b of suite) {
      for (const c of commands(b)) expect(SUITE_COMMANDS.some((p) => p.test(c)), `${b.page}:${b.line}: ${c}`).toBe(true);
    }
    // The server the blocks run against is the one `npm start` starts.
    expect(pkg.scripts.start).toBe('node scripts/build-if-stale.mjs npm run build && node dist/cli.js serve --demo');
    expect(pkg.scripts.test).toMatch(/^vitest run\b/);
  });

  it.each(runnable.map((b) => [`${b.page}:${b.line}`, b] as const))('%s runs as written', async (_where, block) => {
    const r = await runBlock(block);
    const context = `${block.page}:${block.line}\n${r.script}\n--- stdout\n${r.stdout.slice(0, 2000)}\n--- stderr\n${r.stderr.slice(0, 2000)}`;
    expect(r.code, context).toBe(0);
    // A block of assignments alone prints nothing; any other prints what it was run for.
    if (commands(block).some((c) => !/^[A-Z]+=\S+$/.test(c))) expect(r.stdout.trim().length, context).toBeGreaterThan(0);
    expect(r.stdout, context).not.toContain('"success":false');
    expect(r.stdout, context).not.toContain('"isError":true');
    expect(r.stdout, context).not.toMatch(/"jsonrpc":"2\.0","id":\d+,"error"|"error":\{"code":-\d+/);
    expect(r.stderr, context).not.toMatch(/command not found|No such file|Run 'oql .*--help'/);
    // Every JSON-RPC request the block sends (over HTTP or piped to stdio) has its answer.
    expect(answeredIds(r.stdout), context).toEqual(expect.arrayContaining(requestIds(block.text)));
  }, BLOCK_TIMEOUT_MS + 10_000);
});

describe('the stdio example as it was written before', () => {
  it('a one-character key exits 2 and says the rule and a key that works', async () => {
    const r = await new Promise<{ code: number; stderr: string }>((done) => {
      execFile(process.execPath, [...NODE_FLAGS, CLI, 'mcp', '--stdio', '--memory', '--demo'], { cwd: ROOT, env: { ...process.env, OQL_API_KEYS: 'k=org_demo:superadmin', OQL_API_KEY: 'k' }, timeout: 120_000 },
        (error, _stdout, stderr) => done({ code: typeof error?.code === 'number' ? error.code : 0, stderr }));
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('OQL_API_KEYS entry 1: the key must be at least 16 characters long, and this one has 1');
    expect(r.stderr).toContain('for example demo-key-0123456789=org_demo:superadmin');
  }, 130_000);
});
