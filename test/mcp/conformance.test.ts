import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startHarness, type Harness } from './support.js';

/**
 * The MCP conformance suite (@modelcontextprotocol/conformance, pinned to the last release that
 * runs on Node 20) against the hosted endpoint. The suite's client sends no credentials, so it
 * talks to the endpoint through a loopback proxy that adds a workspace API key: everything else —
 * headers, bodies, status codes — passes through unchanged.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

let h: Harness;
let proxy: Server;
let proxyUrl: string;
let out: string;

beforeAll(async () => {
  h = await startHarness();
  const target = new URL(h.endpoint('acme'));
  proxy = createHttpServer((req, res) => {
    const headers = { ...req.headers, host: target.host, authorization: `Bearer ${KEYS.acmeAdmin}` };
    const upstream = httpRequest({ host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => { res.writeHead(502); res.end(); });
    req.pipe(upstream);
  });
  await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
  out = mkdtempSync(join(tmpdir(), 'oql-conformance-'));
}, 180_000);

afterAll(async () => {
  await new Promise((done) => proxy?.close(done));
  await h?.close();
  if (out) rmSync(out, { recursive: true, force: true });
});

interface Check { id: string; status: string; errorMessage?: string }

/** Runs one scenario; returns its checks (from the suite's checks.json). */
async function scenario(name: string): Promise<Check[]> {
  const dir = join(out, name);
  await run(process.execPath, [join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js'), 'server', '--url', proxyUrl, '--scenario', name, '-o', dir], { cwd: ROOT })
    .catch((e) => e);
  const found: Check[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(d, entry.name));
      else if (entry.name === 'checks.json') found.push(...(JSON.parse(readFileSync(join(d, entry.name), 'utf8')) as Check[]));
    }
  };
  walk(dir);
  return found;
}

/**
 * The scenarios that apply to a read-only query server. It offers tools only (no resources,
 * prompts, completions, logging, sampling or elicitation: those scenarios get "Method not found"),
 * and the tools-call and json-schema scenarios call the suite's own test tools by name, which only
 * its reference server has. The SSE scenarios pass with warnings: the endpoint is stateless, so
 * there is no session and no resumable stream to prime.
 */
const APPLICABLE = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection', 'server-sse-polling', 'server-sse-multiple-streams'];

describe('MCP conformance suite, server scenarios', () => {
  for (const name of APPLICABLE) {
    it(name, async () => {
      const checks = await scenario(name);
      expect(checks.length, `no checks recorded for ${name}`).toBeGreaterThan(0);
      const failed = checks.filter((c) => c.status === 'FAILURE');
      expect(failed, JSON.stringify(failed, null, 2)).toEqual([]);
    }, 120_000);
  }
});
