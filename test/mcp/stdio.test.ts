import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { insertRows } from '../../src/demo/load.js';
import { createServer } from '../../src/server/app.js';
import { openDatabase } from '../../src/run/open.js';
import { DATA, KEYS, jsonOf, textOf } from './support.js';
import { BUILT_CLI } from '../support/built-bundles.js';
import { NODE_FLAGS } from '../support/node-flags.js';

/**
 * `oql mcp --stdio` as an agent runs it: a child process spoken to through the SDK's stdio client
 * transport. The data directory is prepared here with both organizations' records and then handed
 * to the child; afterwards the tool log is read from it.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const API_KEYS = `${KEYS.acmeAdmin}=org_acme:superadmin:u_acme_admin,${KEYS.globexAdmin}=org_globex:superadmin:u_globex_admin`;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'oql-mcp-stdio-'));
  const db = await openDatabase({ dataDir: dir });
  const server = await createServer({ db, apiKeys: API_KEYS, env: {} });
  for (const [slug, rows] of Object.entries(DATA)) {
    await insertRows(db, server.catalog, server.catalog.objects.get(slug)!, rows.map((r) => ({ is_deleted: false, ...r })));
  }
  await server.close();
  await db.close();
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function spawnClient(key: string): { client: Client; transport: StdioClientTransport } {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...NODE_FLAGS, BUILT_CLI, 'mcp', '--stdio', '--data-dir', dir],
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', OQL_API_KEY: key },
    stderr: 'pipe',
  });
  return { client: new Client({ name: 'stdio-test', version: '1.0.0' }), transport };
}

describe('oql mcp --stdio', () => {
  it('serves the tools to a spawned agent as the key\'s organization, and logs the calls', async () => {
    const { client, transport } = spawnClient(KEYS.acmeAdmin);
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('execute_query');
      const rows = jsonOf(await client.callTool({
        name: 'execute_query',
        arguments: { query: "SELECT name FROM opportunity WHERE stage = 'proposal' LIMIT 10", slug: 'opportunity' },
      }));
      expect(rows.records).toEqual([{ name: 'Acme big deal' }]);
      const rejected = await client.callTool({ name: 'execute_query', arguments: { query: 'SELECT nme FROM opportunity LIMIT 1', slug: 'opportunity' } });
      expect(rejected.isError).toBe(true);
      expect(textOf(rejected)).toMatch(/UNKNOWN_COLUMN at 1:8 near "nme".*Hint: did you mean 'name'/);
    } finally {
      await client.close();
    }
    // The child has closed the embedded database; the log is readable from it now.
    const db = await openDatabase({ dataDir: dir });
    try {
      const { rows } = await db.query<{ org_id: string; user_id: string; tool_name: string; response_code: number; input_params: unknown }>(
        'SELECT org_id, user_id, tool_name, response_code, input_params FROM oql_service.tool_logs ORDER BY tool_call_timestamp, response_code',
      );
      expect(rows.map((r) => [r.org_id, r.user_id, r.tool_name, Number(r.response_code)])).toEqual([
        ['org_acme', 'u_acme_admin', 'execute_query', 200],
        ['org_acme', 'u_acme_admin', 'execute_query', 400],
      ]);
      expect(JSON.stringify(rows)).not.toContain(KEYS.acmeAdmin);
    } finally {
      await db.close();
    }
  }, 120_000);

  it('another organization\'s key sees only its own rows', async () => {
    const { client, transport } = spawnClient(KEYS.globexAdmin);
    await client.connect(transport);
    try {
      const rows = jsonOf(await client.callTool({
        name: 'execute_query',
        arguments: { query: "SELECT name FROM opportunity WHERE stage = 'proposal' LIMIT 10", slug: 'opportunity' },
      }));
      expect(rows.records).toEqual([{ name: 'Globex deal' }]);
    } finally {
      await client.close();
    }
  }, 120_000);

  it('answers every request it read when its input ends at once, and logs each call before it stops', async () => {
    const requests = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'sh', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      // Two calls: a user runs at most two queries at once.
      ...[2, 3].map((id) => ({
        jsonrpc: '2.0', id, method: 'tools/call',
        params: { name: 'count_query', arguments: { slug: 'opportunity', query: `SELECT id FROM opportunity WHERE amount > ${id} LIMIT 100` } },
      })),
    ];
    const child = spawn(process.execPath, [...NODE_FLAGS, BUILT_CLI, 'mcp', '--stdio', '--data-dir', dir], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', OQL_API_KEY: KEYS.acmeAdmin },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString('utf8'); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString('utf8'); });
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    // Everything at once, then the end of input, before the process has even opened its database.
    child.stdin.end(requests.map((r) => JSON.stringify(r)).join('\n') + '\n');
    expect(await exited, stderr).toBe(0);
    const answers = stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number; result?: { content?: { text: string }[] } });
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2, 3]);
    for (const a of answers.filter((x) => x.id > 1)) expect(JSON.parse(a.result!.content![0]!.text)).toHaveProperty('count');
    expect(stderr).not.toContain('could not be logged');
    const db = await openDatabase({ dataDir: dir });
    try {
      const { rows } = await db.query<{ input_params: { query: string } }>(
        "SELECT input_params FROM oql_service.tool_logs WHERE tool_name = 'count_query' AND org_id = 'org_acme'",
      );
      const logged = rows.map((r) => r.input_params.query);
      for (const r of requests.slice(2)) expect(logged).toContain((r.params as { arguments: { query: string } }).arguments.query);
    } finally {
      await db.close();
    }
  }, 120_000);

  it('refuses to start without a key, or with a key the database does not know', async () => {
    const run = promisify(execFile);
    const args = [...NODE_FLAGS, BUILT_CLI, 'mcp', '--stdio', '--data-dir', dir];
    const missing = await run(process.execPath, args, { cwd: ROOT, env: { PATH: process.env['PATH'] ?? '' } }).catch((e) => e);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('OQL_API_KEY');
    expect(missing.stdout).toBe('');
    const unknown = await run(process.execPath, args, { cwd: ROOT, env: { PATH: process.env['PATH'] ?? '', OQL_API_KEY: 'oql_not-a-key-of-this-database' } }).catch((e) => e);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('not an API key');
    expect(unknown.stdout).toBe('');
  }, 120_000);
});
