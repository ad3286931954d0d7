import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main, type CliIo } from '../../src/cli/main.js';
import { call } from './support.js';
import { BUILT_CLI } from '../support/built-bundles.js';
import { NODE_FLAGS } from '../support/node-flags.js';

/**
 * `oql keys` and `oql serve` as a user runs them, on a data directory of their own: a key made by
 * `oql keys create` serves requests, and SIGTERM finishes a request in flight before the process
 * exits. (Start-up of the service on a database is startup.test.ts.)
 */

const dir = mkdtempSync(join(tmpdir(), 'oql-serve-'));

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function capture(): CliIo & { out: string; err: string } {
  const io = { out: '', err: '', stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t), cwd: process.cwd(), env: {} };
  return io;
}

/** The child's stdout so far, and a way to wait for a pattern in what comes after a point. */
function watch(child: ChildProcess): { text(): string; waitFor(pattern: RegExp, from?: number): Promise<RegExpExecArray> } {
  let seen = '';
  const waiters = new Set<() => void>();
  child.stdout!.on('data', (chunk: Buffer) => {
    seen += chunk.toString('utf8');
    for (const w of [...waiters]) w();
  });
  return {
    text: () => seen,
    waitFor: (pattern, from = 0) => new Promise((resolve, reject) => {
      const check = () => {
        const m = pattern.exec(seen.slice(from));
        if (m) {
          waiters.delete(check);
          resolve(m);
        }
      };
      waiters.add(check);
      child.once('exit', (code) => reject(new Error(`oql serve exited (${code}) before printing ${pattern}: ${seen}`)));
      check();
    }),
  };
}

describe('oql keys and oql serve', () => {
  it('creates a key with oql keys create, serves with it, and stops on SIGTERM after finishing a request in flight', async () => {
    const io = capture();
    expect(await main(['keys', 'create', '--org', 'org_cli', '--role', 'admin', '--user', 'u_cli', '--new-org', '--data-dir', dir], io)).toBe(0);
    const key = io.out.trim();
    expect(key).toMatch(/^oql_[A-Za-z0-9_-]{43}$/);
    expect(io.err).toContain('org_cli');

    const usage = capture();
    expect(await main(['keys', 'create', '--org', 'org_cli', '--role', 'owner', '--data-dir', dir], usage)).toBe(2);

    const child = spawn(process.execPath, [...NODE_FLAGS, BUILT_CLI, 'serve', '--data-dir', dir, '--port', '0', '--demo'], {
      cwd: process.cwd(), env: { ...process.env, OQL_LOG_LEVEL: 'debug', OQL_API_KEYS: '' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const out = watch(child);
    try {
      const [, url] = await out.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      await out.waitFor(/OpenAPI document/);
      // A key existed, so none was created or printed.
      expect(out.text()).not.toContain('shown once');
      expect((await call(url!, 'GET', '/health')).status).toBe(200);
      const mark = out.text().length;
      const inFlight = call(url!, 'POST', '/api/v1/reports/execute', { key, body: { query: 'SELECT name, owner.name AS owner FROM opportunity LIMIT 50', slug: 'opportunity' } });
      await out.waitFor(/"route":"\/api\/v1\/reports\/execute","msg":"request received"/, mark);
      child.kill('SIGTERM');
      const answer = await inFlight;
      expect(answer.status).toBe(200);
      // org_cli has no records: the demo data belongs to org_demo.
      expect(answer.json).toEqual({ success: true, data: { records: [] } });
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 240_000);
});
