import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { main, type CliIo } from '../../src/cli/main.js';
import { connect, jsonOf } from './support.js';
import { BUILT_CLI } from '../support/built-bundles.js';
import { NODE_FLAGS } from '../support/node-flags.js';

function capture(): CliIo & { out: string; err: string } {
  const io = { out: '', err: '', stdout: (t: string) => { io.out += t; }, stderr: (t: string) => { io.err += t; }, env: {} };
  return io;
}

describe('oql serve with the MCP host', () => {
  it('refuses flag combinations and URLs that cannot work', async () => {
    const alone = capture();
    expect(await main(['serve', '--only', 'mcp', '--memory'], alone)).toBe(2);
    expect(alone.err).toContain('--base-url');
    const which = capture();
    expect(await main(['serve', '--only', 'both', '--memory'], which)).toBe(2);
    expect(which.err).toContain('api or mcp');
    const same = capture();
    expect(await main(['serve', '--port', '9000', '--mcp-port', '9000', '--memory'], same)).toBe(2);
    expect(same.err).toContain('two ports');
    const badUrl = capture();
    expect(await main(['serve', '--mcp-url', 'ftp://x', '--memory', '--port', '0'], badUrl)).toBe(2);
    expect(badUrl.err).toContain('mcpUrl must be an http or https URL');
  }, 60_000);

  it('runs both hosts in one process; the demo workspace answers on the MCP host with the public URL given', async () => {
    const key = 'serve-test-key-demo-superadmin-1';
    const child = spawn(process.execPath, [...NODE_FLAGS, BUILT_CLI, 'serve', '--memory', '--port', '0', '--demo',
      '--mcp-url', 'https://mcp.example.com/'], {
      cwd: process.cwd(), env: { ...process.env, OQL_API_KEYS: `${key}=org_demo:superadmin:u_demo`, OQL_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let out = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
    try {
      const mcpAddress = await new Promise<string>((resolve, reject) => {
        const timer = setInterval(() => {
          const m = /MCP host {2}(http:\/\/127\.0\.0\.1:\d+); endpoint https:\/\/mcp\.example\.com\/<workspace>\/mcp/.exec(out);
          if (m) { clearInterval(timer); resolve(m[1]!); }
          if (child.exitCode !== null) { clearInterval(timer); reject(new Error(`serve exited: ${out}`)); }
        }, 100);
      });
      expect(out).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+/);
      // The metadata carries the public URL, not the listening address.
      const meta = await (await fetch(`${mcpAddress}/demo/.well-known/oauth-protected-resource`)).json() as any;
      expect(meta.resource).toBe('https://mcp.example.com/demo/mcp');
      const client = await connect(`${mcpAddress}/demo/mcp`, key);
      try {
        const { records } = jsonOf(await client.callTool({ name: 'execute_query', arguments: { query: 'SELECT COUNT(*) AS n FROM opportunity LIMIT 1', slug: 'opportunity' } }));
        expect(records).toHaveLength(1);
        expect(records[0].n).toBeGreaterThan(0);
      } finally {
        await client.close();
      }
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 120_000);
});
