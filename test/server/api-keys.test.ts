import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { ApiKeyVerifier, createServer, issueApiKey, listApiKeys, revokeApiKey, databaseOf, type OqlServer, type ServiceDb } from '../../src/server/index.js';
import { migrate } from '../../src/service/migrations.js';
import { call, expectEnvelope } from './support.js';
import { emptyPglite } from '../support/pglite-template.js';

/**
 * API keys: listing and revoking them, the in-process cache of verified keys (bounded, keyed by
 * hash, expiring, never holding an unknown key), and both over real HTTP for two organizations.
 */

let pglite: PGlite;
let db: ServiceDb;

beforeAll(async () => {
  pglite = await emptyPglite();
  db = databaseOf(pglite);
  await migrate(db);
}, 60_000);

afterAll(async () => {
  await pglite?.close();
});

describe('ApiKeyVerifier', () => {
  it('trusts a verified key until its time is up, then asks the database again', async () => {
    let now = 1_000_000;
    const keys = new ApiKeyVerifier(db, 5_000, () => now);
    const a = await issueApiKey(db, { orgId: 'org_ka', role: 'member', userId: 'u_a' });
    const b = await issueApiKey(db, { orgId: 'org_kb', role: 'admin', userId: 'u_b' });
    expect(await keys.verify(a.key)).toMatchObject({ orgId: 'org_ka', userId: 'u_a', role: 'member', clientId: a.id });
    expect(await keys.verify(b.key)).toMatchObject({ orgId: 'org_kb', userId: 'u_b', role: 'admin', clientId: b.id });
    expect(await revokeApiKey(db, a.id)).toBe('org_ka');
    now += 4_999;
    // Revoked in the database, still inside the cache time: the documented window.
    expect((await keys.verify(a.key))?.orgId).toBe('org_ka');
    now += 1;
    expect(await keys.verify(a.key)).toBeNull();
    // The other organization's key is untouched by it.
    expect((await keys.verify(b.key))?.orgId).toBe('org_kb');
  });

  it('never keeps an unknown key, and forget() drops every entry at once', async () => {
    const now = 5_000_000;
    const keys = new ApiKeyVerifier(db, 60_000, () => now);
    const c = await issueApiKey(db, { orgId: 'org_kc', role: 'member' });
    await revokeApiKey(db, c.id);
    expect(await keys.verify(c.key)).toBeNull();
    // Stored again (OQL_API_KEYS at a start): valid at once, nothing negative was cached.
    await db.query("UPDATE oql_service.api_keys SET revoked_at = NULL WHERE id = $1", [c.id]);
    expect((await keys.verify(c.key))?.orgId).toBe('org_kc');
    await revokeApiKey(db, c.id);
    expect((await keys.verify(c.key))?.orgId).toBe('org_kc');
    keys.forget();
    expect(await keys.verify(c.key)).toBeNull();
  });

  it('holds at most its bound of keys, dropping the oldest', async () => {
    const now = 9_000_000;
    const keys = new ApiKeyVerifier(db, 60_000, () => now, 2);
    const issued = [];
    for (let i = 0; i < 3; i++) issued.push(await issueApiKey(db, { orgId: `org_bound${i}`, role: 'member' }));
    for (const k of issued) expect(await keys.verify(k.key)).not.toBeNull();
    for (const k of issued) await revokeApiKey(db, k.id);
    // The first was dropped to make room for the third: it is looked up, and found revoked.
    expect(await keys.verify(issued[0]!.key)).toBeNull();
    expect((await keys.verify(issued[2]!.key))?.orgId).toBe('org_bound2');
  });

  it('with a time of 0 asks the database every time', async () => {
    const keys = new ApiKeyVerifier(db, 0);
    const d = await issueApiKey(db, { orgId: 'org_kd', role: 'member' });
    expect((await keys.verify(d.key))?.orgId).toBe('org_kd');
    await revokeApiKey(db, d.id);
    expect(await keys.verify(d.key)).toBeNull();
  });
});

describe('listing and revoking', () => {
  it('lists ids, organizations, users and roles, never a key or its hash; revoked keys only when asked', async () => {
    const e = await issueApiKey(db, { orgId: 'org_list', role: 'superadmin', userId: 'u_e' });
    const f = await issueApiKey(db, { orgId: 'org_list', role: 'member' });
    await issueApiKey(db, { orgId: 'org_other', role: 'member' });
    await revokeApiKey(db, f.id);
    const live = await listApiKeys(db, { orgId: 'org_list' });
    expect(live.map((k) => k.id)).toEqual([e.id]);
    expect(live[0]).toMatchObject({ orgId: 'org_list', userId: 'u_e', role: 'superadmin', revokedAt: null });
    expect(JSON.stringify(live)).not.toContain(e.key);
    const all = await listApiKeys(db, { orgId: 'org_list', revoked: true });
    expect(all.map((k) => k.id).sort()).toEqual([e.id, f.id].sort());
    expect(all.find((k) => k.id === f.id)!.revokedAt).toEqual(expect.any(Number));
    expect(await revokeApiKey(db, f.id)).toBeNull();
    expect(await revokeApiKey(db, 'key_nosuch')).toBeNull();
  });
});

function capture(): CliIo & { out: string; err: string } {
  const io = { out: '', err: '', stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t), cwd: process.cwd(), env: {} };
  return io;
}

describe('oql keys list and revoke, and a server on the same data', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'oql-keys-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a key revoked with oql keys revoke no longer authenticates, and the other organization\'s key still does', async () => {
    const created: { key: string; id: string }[] = [];
    // Nothing in the directory belongs to either organization yet: without --new-org, a refusal.
    const misspelt = capture();
    expect(await main(['keys', 'create', '--org', 'org_one', '--role', 'superadmin', '--data-dir', dir], misspelt)).toBe(2);
    expect(misspelt.out).toBe('');
    expect(misspelt.err).toContain("organization 'org_one' has no data, workspace or key");
    expect(misspelt.err).toContain('--new-org');
    for (const org of ['org_one', 'org_two']) {
      const io = capture();
      expect(await main(['keys', 'create', '--org', org, '--role', 'superadmin', '--new-org', '--data-dir', dir], io)).toBe(0);
      const id = /(key_[A-Za-z0-9_-]+)/.exec(io.err)?.[1];
      expect(id, io.err).toBeDefined();
      created.push({ key: io.out.trim(), id: id! });
    }
    // An organization that has a key (a revoked one too) is known: no --new-org needed.
    const second = capture();
    expect(await main(['keys', 'create', '--org', 'org_two', '--role', 'admin', '--data-dir', dir], second)).toBe(0);
    expect(second.err).toContain('an admin key for org_two');
    const listed = capture();
    expect(await main(['keys', 'list', '--org', 'org_one', '--json', '--data-dir', dir], listed)).toBe(0);
    expect(JSON.parse(listed.out).map((k: { id: string }) => k.id)).toEqual([created[0]!.id]);
    expect(listed.out).not.toContain(created[0]!.key);

    const revoked = capture();
    expect(await main(['keys', 'revoke', created[0]!.id, '--data-dir', dir], revoked)).toBe(0);
    expect(revoked.err).toContain(`revoked ${created[0]!.id} of org_one`);
    const again = capture();
    expect(await main(['keys', 'revoke', created[0]!.id, '--data-dir', dir], again)).toBe(1);
    expect(again.err).toContain('no live key has the id');
    const usage = capture();
    expect(await main(['keys', 'revoke', '--data-dir', dir], usage)).toBe(2);

    let server: OqlServer | undefined;
    try {
      server = await createServer({ dataDir: dir, env: {}, log: false });
      await server.app.listen({ port: 0, host: '127.0.0.1' });
      const url = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
      const body = { query: 'SELECT id FROM account LIMIT 1', slug: 'account' };
      expectEnvelope(await call(url, 'POST', '/api/v1/reports/count', { key: created[0]!.key, body }), 401, 'UNAUTHENTICATED');
      const ok = await call(url, 'POST', '/api/v1/reports/count', { key: created[1]!.key, body });
      expect(ok.status, ok.text).toBe(200);
      // Revoked while the server runs: cached for up to its key-cache time, and gone after forget().
      await revokeApiKey(server.db, created[1]!.id);
      server.keys.forget();
      expectEnvelope(await call(url, 'POST', '/api/v1/reports/count', { key: created[1]!.key, body }), 401, 'UNAUTHENTICATED');
    } finally {
      await server?.close();
    }
  }, 120_000);

  it('OQL_API_KEY_CACHE_MS is read and checked', async () => {
    const failed = await createServer({ db, env: { OQL_API_KEY_CACHE_MS: '-1' }, log: false }).then(() => null, (e) => e);
    expect(failed).toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringContaining('OQL_API_KEY_CACHE_MS') });
    const zero = await createServer({ db, env: { OQL_API_KEY_CACHE_MS: '0' }, log: false });
    try {
      expect(zero.config.apiKeyCacheMs).toBe(0);
    } finally {
      await zero.close();
    }
  }, 60_000);
});
