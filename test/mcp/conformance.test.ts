import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest, type ClientRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsent, pkcePair, postConsent } from '../oauth/support.js';
import { freePort } from '../support/ports.js';
import { KEYS, startHarness, type Harness } from './support.js';
import { CONFORMANCE_VERSION, EXPECTED_FAILURES, type Era } from './conformance-baseline.js';

/**
 * The MCP conformance suite (@modelcontextprotocol/conformance, the version pinned in
 * package.json) on Node 24 — the binary scripts/node-line.sh gives, as .ci/run uses — against the
 * hosted endpoint, in both protocol eras the endpoint speaks (2025-11-25: initialize handshake;
 * 2026-07-28: stateless, per-request _meta), and its authorization-server scenarios against the
 * workspace's authorization server, once with a registered client and once with a Client ID
 * Metadata Document this test serves itself.
 *
 * The suite's MCP client sends no credentials, so it talks to the endpoint through a loopback
 * proxy that adds an OAuth access token (obtained here through a metadata-document client);
 * everything else passes through unchanged. Every check must pass except the ones
 * ./conformance-baseline.ts lists with their reasons, and those must still fail (a stale entry is
 * an error, as in the suite's own expected-failures files).
 */

const ROOT = resolve(import.meta.dirname, '../..');
const SUITE = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const run = promisify(execFile);

interface Check { id: string; status: string; errorMessage?: string }

let h: Harness;
let node24: string;
let documents: Server;
let documentsUrl: string;
let proxy: Server;
let proxyUrl: string;
let out: string;

/** Client ID Metadata Documents, served as a client would publish them (here on loopback http). */
const served = new Map<string, Record<string, unknown>>();

async function listen(server: Server): Promise<string> {
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Publishes a metadata document and returns its URL, the client_id. */
function publish(name: string, redirectUris: string[]): string {
  const clientId = `${documentsUrl}/clients/${name}.json`;
  served.set(`/clients/${name}.json`, {
    client_id: clientId, client_name: `conformance ${name}`, redirect_uris: redirectUris, application_type: 'native',
    grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none',
  });
  return clientId;
}

/** The browser's part: open the consent page, approve with the workspace's key, follow the redirect. */
async function approve(authorizeUrl: string): Promise<string> {
  const form = await openConsent(authorizeUrl);
  if (form.status !== 200) throw new Error(`consent page answered ${form.status}: ${form.html.slice(0, 300)}`);
  const answer = await postConsent(authorizeUrl, form, { api_key: KEYS.acmeAdmin, decision: 'approve' });
  const location = answer.headers.get('location');
  if (answer.status !== 302 || !location) throw new Error(`approval answered ${answer.status}: ${await answer.text()}`);
  return location;
}

/** An access token for the proxy, through the whole flow with a metadata-document client. */
async function accessToken(): Promise<string> {
  const redirect = 'http://127.0.0.1:9/callback';
  const clientId = publish('proxy', [redirect]);
  const { verifier, challenge } = pkcePair();
  const authorize = new URL(`${h.baseUrl}/api/v1/acme/oauth/authorize`);
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: redirect, code_challenge: challenge, code_challenge_method: 'S256', resource: h.endpoint('acme'), state: 's' })) {
    authorize.searchParams.set(k, v);
  }
  const code = new URL(await approve(authorize.href)).searchParams.get('code')!;
  const res = await fetch(`${h.baseUrl}/api/v1/acme/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', client_id: clientId, code, redirect_uri: redirect, code_verifier: verifier, resource: h.endpoint('acme') }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`no access token: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** The proxy's requests to the service still open. */
const upstreams = new Set<ClientRequest>();

beforeAll(async () => {
  node24 = (await run('sh', [join(ROOT, 'scripts/node-line.sh'), '24'], { cwd: ROOT, timeout: 600_000 })).stdout.trim();
  h = await startHarness({ oauth: { clientMetadata: { allowLoopbackHttp: true } } });
  documents = createHttpServer((req, res) => {
    const doc = served.get(req.url ?? '');
    if (!doc) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(JSON.stringify(doc));
  });
  documentsUrl = await listen(documents);
  const bearer = await accessToken();
  const target = new URL(h.endpoint('acme'));
  proxy = createHttpServer((req, res) => {
    const headers = { ...req.headers, host: target.host, authorization: `Bearer ${bearer}` };
    const upstream = httpRequest({ host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => { res.writeHead(502); res.end(); });
    // A stream the suite left open (SSE) keeps its upstream request, and so the service, busy.
    upstreams.add(upstream);
    upstream.on('close', () => upstreams.delete(upstream));
    req.pipe(upstream);
  });
  proxyUrl = `${await listen(proxy)}/mcp`;
  out = mkdtempSync(join(tmpdir(), 'oql-conformance-'));
}, 900_000);

afterAll(async () => {
  for (const upstream of upstreams) upstream.destroy();
  proxy?.closeAllConnections();
  documents?.closeAllConnections();
  await new Promise((done) => proxy?.close(done));
  await new Promise((done) => documents?.close(done));
  await h?.close();
  if (out) rmSync(out, { recursive: true, force: true });
}, 300_000);

/** Every checks.json under a directory, by scenario (the directory names carry it). */
function checksUnder(dir: string): Map<string, Check[]> {
  const found = new Map<string, Check[]>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const scenario = entry.name.replace(/^(server|authorization-server)-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
    const file = join(dir, entry.name, 'checks.json');
    found.set(scenario, [...(found.get(scenario) ?? []), ...(JSON.parse(readFileSync(file, 'utf8')) as Check[])]);
  }
  return found;
}

/** Checks that failed but are not excused, and excused checks that no longer fail. */
function judge(era: Era | 'authorization', scenario: string, checks: Check[]): { unexpected: Check[]; stale: string[] } {
  const excused = EXPECTED_FAILURES[era]?.[scenario];
  const failed = checks.filter((c) => c.status === 'FAILURE');
  const unexpected = failed.filter((c) => !(excused && (excused.checks === '*' || excused.checks.includes(c.id))));
  const stale = excused && excused.checks !== '*' ? excused.checks.filter((id) => !failed.some((c) => c.id === id)) : [];
  if (excused?.checks === '*' && failed.length === 0) stale.push('*');
  return { unexpected, stale };
}

describe('the pinned conformance suite', () => {
  it(`is ${CONFORMANCE_VERSION}, run on Node 24`, async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'node_modules/@modelcontextprotocol/conformance/package.json'), 'utf8')) as { version: string };
    expect(pkg.version).toBe(CONFORMANCE_VERSION);
    const { stdout } = await run(node24, ['-p', 'process.versions.node']);
    expect(stdout.trim()).toMatch(/^24\./);
  });
});

for (const era of ['2025-11-25', '2026-07-28'] as const) {
  describe(`MCP conformance suite, server scenarios, protocol ${era}`, () => {
    let results: Map<string, Check[]>;

    beforeAll(async () => {
      const dir = join(out, era);
      // Exit code 1 whenever any check fails; the checks themselves are judged below.
      await run(node24, [SUITE, 'server', '--url', proxyUrl, '--suite', 'all', '--spec-version', era, '-o', dir], { cwd: ROOT, timeout: 600_000 })
        .catch((e: { code?: unknown }) => { if (typeof e.code !== 'number') throw e; });
      results = checksUnder(dir);
    }, 900_000);

    it('ran every scenario of the era, each with checks', () => {
      expect(results.size).toBeGreaterThan(20);
      const empty = [...results].filter(([, checks]) => checks.length === 0).map(([name]) => name);
      expect(empty).toEqual([]);
    });

    it('fails no check beyond the baseline, and every baselined check still fails', () => {
      const problems: string[] = [];
      for (const [scenario, checks] of results) {
        const { unexpected, stale } = judge(era, scenario, checks);
        for (const c of unexpected) problems.push(`${scenario}: ${c.id} failed: ${c.errorMessage ?? ''}`);
        for (const id of stale) problems.push(`${scenario}: ${id} is in the baseline but did not fail`);
      }
      for (const scenario of Object.keys(EXPECTED_FAILURES[era] ?? {})) {
        if (!results.has(scenario)) problems.push(`${scenario} is in the baseline but did not run`);
      }
      expect(problems).toEqual([]);
    });

    it('fails baselined checks for the reason the baseline gives', () => {
      const wrong: string[] = [];
      for (const [scenario, checks] of results) {
        const excused = EXPECTED_FAILURES[era]?.[scenario];
        if (!excused) continue;
        for (const c of checks.filter((x) => x.status === 'FAILURE')) {
          if (!excused.message.test(c.errorMessage ?? '')) wrong.push(`${scenario}: ${c.id}: ${c.errorMessage}`);
        }
      }
      expect(wrong).toEqual([]);
    });

    it('passes the protocol core: initialization or statelessness, tools/list, DNS-rebinding protection', () => {
      const core = era === '2025-11-25' ? ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'] : ['server-stateless', 'tools-list', 'dns-rebinding-protection', 'http-header-validation'];
      for (const name of core) {
        const checks = results.get(name) ?? [];
        expect(checks.filter((c) => c.status === 'SUCCESS').length, name).toBeGreaterThan(0);
      }
    });
  });
}

/**
 * Runs the suite's authorization-server scenarios (metadata, then the authorization code grant)
 * for one client, made for the suite's callback port. The suite prints the authorization URL for a
 * person to open; this plays the person, and the redirect lands on the suite's own listener.
 *
 * The suite binds its callback port itself, some time after it was chosen here: should another
 * process have taken it in between (the suite then cannot listen, and the redirect finds nobody),
 * the run is made again on another port, with a new client.
 */
async function authorizationScenarios(name: string, makeClient: (port: number) => Promise<string>): Promise<Map<string, Check[]>> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const clientId = await makeClient(port);
    const dir = join(out, `authorization-${name}`);
    rmSync(dir, { recursive: true, force: true });
    const child = spawn(node24, [SUITE, 'authorization', '--url', `${h.baseUrl}/acme`, '--client-id', clientId,
      '--resource', h.endpoint('acme'), '--port', String(port), '-o', dir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let printed = '';
    let followed: Promise<unknown> | undefined;
    const prefix = `${h.baseUrl}/api/v1/acme/oauth/authorize?`;
    child.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      // Whole lines only: a chunk can end in the middle of the URL.
      const line = printed.split('\n').slice(0, -1).find((l) => l.startsWith(prefix));
      // The redirect goes to the suite's callback listener, as a browser would deliver it. Should
      // that fail, the suite would wait for its callback for ever: it is stopped, and the test
      // fails with the reason below.
      if (line && !followed) {
        followed = approve(line.trim()).then((location) => fetch(location)).then((r) => r.text());
        followed.catch(() => child.kill('SIGTERM'));
      }
    });
    child.stderr.on('data', (chunk: Buffer) => { printed += chunk.toString(); });
    const code = await new Promise<number | null>((done) => child.on('close', done));
    expect(followed, `the suite printed no authorization URL:\n${printed}`).toBeDefined();
    const portTaken = await followed!.then(() => false, (e: Error & { cause?: { code?: string } }) => {
      if (attempt < 3 && (e.cause?.code === 'ECONNREFUSED' || /EADDRINUSE/.test(printed))) return true;
      throw e;
    });
    if (portTaken) continue;
    expect([0, 1], printed).toContain(code);
    return checksUnder(dir);
  }
}

describe('MCP conformance suite, authorization-server scenarios', () => {
  const clients: Record<string, (port: number) => Promise<string>> = {
    'cimd': async (port) => publish(`suite-${port}`, [`http://127.0.0.1:${port}/callback`]),
    // RFC 7591's minimal registration: a name and redirect URIs, nothing else.
    'dcr': async (port) => {
      const res = await fetch(`${h.baseUrl}/api/v1/acme/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'conformance suite', redirect_uris: [`http://127.0.0.1:${port}/callback`] }),
      });
      if (res.status !== 201) throw new Error(`registration answered ${res.status}: ${await res.text()}`);
      return ((await res.json()) as { client_id: string }).client_id;
    },
  };
  const described = { cimd: 'a Client ID Metadata Document client', dcr: 'a dynamically registered client' } as const;

  for (const [kind, makeClient] of Object.entries(clients)) {
    it(`passes every check with ${described[kind as keyof typeof described]}`, async () => {
      const results = await authorizationScenarios(kind, makeClient);
      expect([...results.keys()].sort()).toEqual(['authorization-code-grant', 'authorization-server-metadata-endpoint']);
      const all = [...results.values()].flat();
      expect(all.map((c) => c.id).sort()).toEqual(['authorization-code-grant', 'authorization-server-metadata', 'authorization-server-metadata-cimd']);
      const problems = [...results].flatMap(([scenario, checks]) => {
        const { unexpected, stale } = judge('authorization', scenario, checks);
        return [...unexpected.map((c) => `${c.id}: ${c.errorMessage}`), ...stale];
      });
      expect(problems).toEqual([]);
      expect(all.filter((c) => c.status !== 'SUCCESS')).toEqual([]);
    }, 300_000);
  }
});
