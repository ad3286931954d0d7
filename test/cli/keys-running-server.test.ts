import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { call, expectEnvelope } from '../server/support.js';
import { serve as serveProcess, type Served } from '../support/oql-serve.js';
import { NODE_FLAGS } from '../support/node-flags.js';

/**
 * `oql keys` and `oql workspaces` on an embedded directory that a running `oql serve` holds: the
 * command goes to that server, so a new key works on its first request, a revoked one fails on
 * its next, and both are still so after the server stops (cleanly or killed) and starts again.
 * A holder the command cannot reach makes it refuse, saying why and what to run.
 */

const dir = mkdtempSync(join(tmpdir(), 'oql-keys-live-'));
const servers: Served[] = [];
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const s of servers) await s.stop('SIGKILL');
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

async function oql(...argv: string[]): Promise<Run> {
  const io = { out: '', err: '', stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t), cwd: process.cwd(), env: {} };
  const code = await main(argv, io as CliIo);
  return { code, out: io.out, err: io.err };
}

async function serve(): Promise<Served> {
  const s = await serveProcess(['--data-dir', dir, '--demo'], { OQL_LOG_LEVEL: 'warn' });
  servers.push(s);
  return s;
}

/** A GET with headers fetch would not send as given (Host). */
function rawGet(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((done, fail) => {
    const req = request(url, { headers }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0));
    });
    req.on('error', fail);
    req.end();
  });
}

const REPORT = { query: 'SELECT id FROM opportunity LIMIT 10000', slug: 'opportunity' };

async function count(url: string, key: string): Promise<{ status: number; count?: number }> {
  const a = await call(url, 'POST', '/api/v1/reports/count', { key, body: REPORT });
  return { status: a.status, count: a.json?.data?.count };
}

async function createKey(org: string, role = 'member', ...more: string[]): Promise<{ key: string; id: string; err: string }> {
  const r = await oql('keys', 'create', '--org', org, '--role', role, ...more, '--data-dir', dir);
  expect(r.code, r.err).toBe(0);
  const id = /(key_[A-Za-z0-9_-]+)/.exec(r.err)?.[1];
  expect(id, r.err).toBeDefined();
  return { key: r.out.trim(), id: id!, err: r.err };
}

async function listed(revoked: boolean): Promise<{ id: string; orgId: string; revokedAt: number | null }[]> {
  const r = await oql('keys', 'list', '--json', ...(revoked ? ['--revoked'] : []), '--data-dir', dir);
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out);
}

describe('oql keys against a running oql serve', () => {
  let kept: { key: string; id: string; err: string };
  let gone: { key: string; id: string };
  let other: { key: string; id: string };
  let killedKey: { key: string; id: string };

  it('creates keys through the server: each works on its first request; a revoked one fails on the next; the admin host is private', async () => {
    const s = await serve();
    kept = await createKey('org_demo');
    expect(kept.err).toContain('through the oql serve running on it');
    expect(await count(s.url, kept.key)).toMatchObject({ status: 200 });
    const demoCount = (await count(s.url, kept.key)).count!;
    expect(demoCount).toBeGreaterThan(0);
    gone = await createKey('org_demo', 'superadmin');
    // An organization the server's database knows nothing of is refused, by the server, unless it is meant.
    const misspelt = await oql('keys', 'create', '--org', 'org_elsewhere', '--role', 'member', '--data-dir', dir);
    expect(misspelt.code).toBe(2);
    expect(misspelt.out).toBe('');
    expect(misspelt.err).toContain("organization 'org_elsewhere' has no data, workspace or key");
    expect(misspelt.err).toContain('add --new-org');
    // Another organization's key sees none of org_demo's rows.
    other = await createKey('org_elsewhere', 'member', '--new-org');
    expect(await count(s.url, other.key)).toEqual({ status: 200, count: 0 });
    expect(await count(s.url, gone.key)).toEqual({ status: 200, count: demoCount });

    const revoked = await oql('keys', 'revoke', gone.id, '--data-dir', dir);
    expect(revoked.code, revoked.err).toBe(0);
    expect(revoked.err).toContain(`revoked ${gone.id} of org_demo`);
    expect(revoked.err).toContain('refused from now on');
    // The very next request: no wait for a cache to expire.
    expectEnvelope(await call(s.url, 'POST', '/api/v1/reports/count', { key: gone.key, body: REPORT }), 401, 'UNAUTHENTICATED');
    // The cache was cleared, not the keys: the others are looked up again and still work.
    expect(await count(s.url, kept.key)).toEqual({ status: 200, count: demoCount });
    expect((await oql('keys', 'revoke', gone.id, '--data-dir', dir)).code).toBe(1);

    const live = await listed(false);
    expect(live.map((k) => k.id)).toEqual(expect.arrayContaining([kept.id, other.id]));
    // Named as it was made: by --name, or after the command and the role.
    const named = await createKey('org_demo', 'admin', '--name', 'Nightly export');
    const names = new Map((await listed(false)).map((k) => [k.id, (k as { name?: string | null }).name]));
    expect([names.get(kept.id), names.get(named.id)]).toEqual(['CLI member key', 'Nightly export']);
    const table = (await oql('keys', 'list', '--org', 'org_demo', '--data-dir', dir)).out;
    expect(table.split('\n').find((l) => l.includes(named.id))).toContain('Nightly export');
    expect(live.map((k) => k.id)).not.toContain(gone.id);
    expect((await listed(true)).find((k) => k.id === gone.id)?.revokedAt).toEqual(expect.any(Number));

    // Workspaces too: the MCP host knows the new one at once (401 for want of a token, not 404).
    const ws = await oql('workspaces', 'create', '--subdomain', 'elsewhere', '--org', 'org_elsewhere', '--data-dir', dir);
    expect(ws.code, ws.err).toBe(0);
    expect((await oql('workspaces', 'list', '--data-dir', dir)).out).toContain('elsewhere=org_elsewhere');
    expect((await call(s.mcpAddress, 'POST', '/elsewhere/mcp', { body: {} })).status).toBe(401);

    // The admin host answers only the oql command of this machine, with the secret only its user can read.
    const file = join(dir, 'oql-admin.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const address = JSON.parse(readFileSync(file, 'utf8')) as { url: string; secret: string; pid: number };
    expect(address.pid).toBe(s.child.pid);
    expect(address.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(address.secret.length).toBeGreaterThanOrEqual(43);
    const ask = (headers: Record<string, string>) => rawGet(`${address.url}/keys`, headers);
    expect(await ask({})).toBe(401);
    expect(await ask({ authorization: `Bearer ${address.secret}x` })).toBe(401);
    expect(await ask({ authorization: `Bearer ${address.secret}` })).toBe(200);
    // A web page (it sends an Origin) and a rebinding host name are refused even with the secret.
    expect(await ask({ authorization: `Bearer ${address.secret}`, origin: 'http://evil.example' })).toBe(403);
    expect(await ask({ authorization: `Bearer ${address.secret}`, host: 'evil.example' })).toBe(403);
    // It is not on the service's own port (where GET /keys is the console's page, not a listing).
    expect((await call(s.url, 'POST', '/keys/revoke', { headers: { authorization: `Bearer ${address.secret}` }, body: { id: 'key_x' } })).status).toBe(404);

    expect(await s.stop('SIGTERM')).toBe(0);
    // A clean stop leaves neither the lock nor the admin address behind.
    expect(existsSync(join(dir, 'oql.lock'))).toBe(false);
    expect(existsSync(join(dir, 'oql-admin.json'))).toBe(false);
  }, 300_000);

  it('keeps every change after a clean stop and a restart, and says how to make another key', async () => {
    // Without a server the command opens the directory itself.
    const all = await listed(true);
    expect(all.find((k) => k.id === gone.id)?.revokedAt).toEqual(expect.any(Number));
    expect(all.find((k) => k.id === kept.id)?.revokedAt).toBeNull();

    const s = await serve();
    expect(s.stdout()).not.toContain('shown once');
    expect(s.stdout()).toMatch(/API keys {2}\d+ live keys already exist/);
    expect((await count(s.url, kept.key)).status).toBe(200);
    expectEnvelope(await call(s.url, 'POST', '/api/v1/reports/count', { key: gone.key, body: REPORT }), 401, 'UNAUTHENTICATED');
    // The printed command, run as printed.
    const printed = /make another: oql (.+)$/m.exec(s.stdout())?.[1];
    expect(printed).toBe(`keys create --org org_demo --role superadmin --data-dir ${dir}`);
    const made = await oql(...printed!.split(' '));
    expect(made.code, made.err).toBe(0);
    expect((await count(s.url, made.out.trim())).status).toBe(200);

    // Created through the server, then the server is killed: the key is on disk all the same.
    killedKey = await createKey('org_demo');
    expect(await s.stop('SIGKILL')).toBeNull();
    expect((await listed(false)).map((k) => k.id)).toContain(killedKey.id);
    const again = await serve();
    expect((await count(again.url, killedKey.key)).status).toBe(200);
    expectEnvelope(await call(again.url, 'POST', '/api/v1/reports/count', { key: gone.key, body: REPORT }), 401, 'UNAUTHENTICATED');
    expect(await again.stop('SIGTERM')).toBe(0);
  }, 300_000);

});

describe('a holder the command cannot reach', () => {
  const MODULE = resolve(import.meta.dirname, '../../src/run/data-dir-lock.ts');

  /** Another process that holds `target` the way a server does, and answers nothing. */
  async function holder(target: string): Promise<number> {
    const script = `import(${JSON.stringify(MODULE)}).then((m) => { m.lockDataDir(${JSON.stringify(target)}); process.stdout.write('held\\n'); setInterval(() => {}, 1000); });`;
    const child = spawn(process.execPath, [...NODE_FLAGS, '--import', 'tsx', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    await new Promise<void>((done) => child.stdout!.once('data', () => done()));
    return child.pid!;
  }

  it('refuses, names the process and the reason, and prints the command that works once it is stopped', async () => {
    const target = mkdtempSync(join(tmpdir(), 'oql-held-'));
    try {
      const pid = await holder(target);
      const refused = await oql('keys', 'create', '--org', 'org_demo', '--role', 'member', '--data-dir', target);
      expect(refused.code).toBe(1);
      expect(refused.out).toBe('');
      expect(refused.err).toContain(`held by process ${pid}`);
      expect(refused.err).toContain('has no admin host');
      expect(refused.err).toContain(`kill ${pid}`);
      expect(refused.err).toContain(`then run: oql keys create --org org_demo --role member --data-dir ${target}`);
      // Nothing was opened: the directory holds no database files of ours.
      expect(existsSync(join(target, 'PG_VERSION'))).toBe(false);

      // An address that nobody answers at (a port that was closed), in that holder's name.
      writeFileSync(join(target, 'oql-admin.json'), JSON.stringify({ pid, host: hostname(), url: 'http://127.0.0.1:9', secret: 's'.repeat(43) }), { mode: 0o600 });
      const silent = await oql('workspaces', 'list', '--data-dir', target);
      expect(silent.code).toBe(1);
      expect(silent.err).toContain('does not answer at its admin address http://127.0.0.1:9');
      expect(silent.err).toContain(`then run: oql workspaces list --data-dir ${target}`);

      // A secret other users could read is not presented.
      rmSync(join(target, 'oql-admin.json'));
      writeFileSync(join(target, 'oql-admin.json'), JSON.stringify({ pid, host: 'h', url: 'http://127.0.0.1:9', secret: 's' }), { mode: 0o644 });
      const loose = await oql('keys', 'list', '--data-dir', target);
      expect(loose.code).toBe(1);
      expect(loose.err).toContain('readable by other users');
    } finally {
      rmSync(target, { recursive: true, force: true });
    }
  }, 120_000);
});
