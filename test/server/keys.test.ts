import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLL_GRACE_MS, databaseOf, issueApiKey, type ServiceDb } from '../../src/server/index.js';
import { KEYS, expectEnvelope, listen, type Running } from './support.js';
import { emptyPglite } from '../support/pglite-template.js';

/**
 * The API key endpoints over real HTTP, by API key, for two organizations and three roles: who
 * sees and manages which keys, a key shown once and working at once, roll with its grace period,
 * revocation that fails the key at its next request, expiry, and the audit trail.
 */

let pglite: PGlite;
let db: ServiceDb;
let api: Running;
/** A second server on the same database, with no key cache. */
let other: Running;
const acmeAdmin = { key: '', id: '' };

beforeAll(async () => {
  pglite = await emptyPglite();
  db = databaseOf(pglite);
  const keys = [
    `${KEYS.acmeAdmin}=org_acme:superadmin:u_acme_super`,
    `${KEYS.acmeMember}=org_acme:member:u_acme_member`,
    `${KEYS.globexAdmin}=org_globex:superadmin:u_globex_super`,
  ].join(',');
  api = await listen({ db, apiKeys: keys, env: {}, console: false } as never);
  other = await listen({ db, apiKeys: keys, env: {}, apiKeyCacheMs: 0, console: false } as never);
  const made = await issueApiKey(db, { orgId: 'org_acme', role: 'admin', userId: 'u_acme_admin', name: 'acme admin' });
  acmeAdmin.key = made.key;
  acmeAdmin.id = made.id;
}, 240_000);

afterAll(async () => {
  await api?.close();
  await other?.close();
  await pglite?.close();
});

const REPORT = { query: 'SELECT id FROM account LIMIT 1', slug: 'account' };
const ids = (answer: { json: any }): string[] => answer.json.data.keys.map((k: { id: string }) => k.id);

async function create(key: string, body: object) {
  return api.call('POST', '/api/v1/keys', { key, body });
}

describe('creating a key', () => {
  it('shows the whole key once, which works at once; the listing shows its name, prefix, last four and creator, never the key', async () => {
    const before = Date.now();
    const answer = await create(acmeAdmin.key, { name: '  Nightly export ', role: 'member' });
    expect(answer.status, answer.text).toBe(201);
    const { key, secret } = answer.json.data;
    expect(secret).toMatch(/^oql_[A-Za-z0-9_-]{43}$/);
    expect(key).toMatchObject({
      name: 'Nightly export', role: 'member', user_id: 'u_acme_admin', created_by: 'u_acme_admin', status: 'active', can_manage: true,
      prefix: secret.slice(0, 8), last4: secret.slice(-4), expires_at: null, last_used_at: null, revoked_at: null,
    });
    expect(key.created_at).toBeGreaterThanOrEqual(before);
    expect((await api.call('POST', '/api/v1/reports/count', { key: secret, body: REPORT })).status).toBe(200);
    const listed = await api.call('GET', '/api/v1/keys', { key: KEYS.acmeAdmin });
    expect(listed.text).not.toContain(secret);
    const shown = listed.json.data.keys.find((k: { id: string }) => k.id === key.id);
    expect(shown.last_used_at).toBeGreaterThanOrEqual(before);
    expect(ids(listed)[0]).toBe(key.id);
  });

  it('refuses a role above the creator\'s, a member naming another owner, a past expiry, and a blank or control-character name', async () => {
    expectEnvelope(await create(KEYS.acmeMember, { name: 'x', role: 'admin' }), 403, 'PERMISSION_DENIED');
    expectEnvelope(await create(acmeAdmin.key, { name: 'x', role: 'superadmin' }), 403, 'PERMISSION_DENIED');
    expectEnvelope(await create(KEYS.acmeMember, { name: 'x', role: 'member', user_id: 'u_acme_admin' }), 403, 'PERMISSION_DENIED');
    expectEnvelope(await create(acmeAdmin.key, { name: 'x', role: 'member', expires_at: Date.now() - 1 }), 400, 'VALIDATION_FAILED');
    expectEnvelope(await create(acmeAdmin.key, { name: '   ', role: 'member' }), 400, 'VALIDATION_FAILED');
    expectEnvelope(await create(acmeAdmin.key, { name: 'a\u0000b', role: 'member' }), 400, 'VALIDATION_FAILED');
    expectEnvelope(await create(acmeAdmin.key, { name: 'x', role: 'owner' }), 400, 'VALIDATION_FAILED');
    expectEnvelope(await create(acmeAdmin.key, { name: 'x', role: 'member', extra: 1 }), 400, 'VALIDATION_FAILED');
    // Past what epoch milliseconds can hold exactly: the schema's bound, not the store's own check (a 500).
    expectEnvelope(await create(acmeAdmin.key, { name: 'x', role: 'member', expires_at: 2 ** 64 }), 400, 'VALIDATION_FAILED');
    // A member's own key, and an admin's key for another user of the organization, are fine.
    expect((await create(KEYS.acmeMember, { name: 'mine', role: 'member' })).json.data.key.user_id).toBe('u_acme_member');
    expect((await create(acmeAdmin.key, { name: 'for ben', role: 'member', user_id: 'u_ben' })).json.data.key.user_id).toBe('u_ben');
  });

  it('an expiring key stops working when it expires', async () => {
    const answer = await create(acmeAdmin.key, { name: 'short', role: 'member', expires_at: Date.now() + 3_600_000 });
    const { key, secret } = answer.json.data;
    expect((await other.call('POST', '/api/v1/reports/count', { key: secret, body: REPORT })).status).toBe(200);
    // Time passes (the database's record of it, not a wait).
    await db.query('UPDATE oql_service.api_keys SET expires_at = $2 WHERE id = $1', [key.id, Date.now() - 1]);
    expectEnvelope(await other.call('POST', '/api/v1/reports/count', { key: secret, body: REPORT }), 401, 'UNAUTHENTICATED');
    const shown = (await api.call('GET', '/api/v1/keys', { key: KEYS.acmeAdmin })).json.data.keys.find((k: { id: string }) => k.id === key.id);
    expect(shown.status).toBe('expired');
  });
});

describe('who sees which keys', () => {
  it('a member sees only their own keys; admins see every key of their organization; no one sees another organization\'s', async () => {
    const memberKeys = await api.call('GET', '/api/v1/keys', { key: KEYS.acmeMember });
    expect(memberKeys.status).toBe(200);
    expect(memberKeys.json.data.keys.length).toBeGreaterThan(0);
    for (const k of memberKeys.json.data.keys) expect(k.user_id).toBe('u_acme_member');
    const adminKeys = await api.call('GET', '/api/v1/keys', { key: acmeAdmin.key });
    const owners = new Set(adminKeys.json.data.keys.map((k: { user_id: string }) => k.user_id));
    expect([...owners]).toEqual(expect.arrayContaining(['u_acme_member', 'u_acme_admin', 'u_acme_super']));
    // The superadmin's key is visible to the admin but not theirs to manage.
    const superKey = adminKeys.json.data.keys.find((k: { user_id: string }) => k.user_id === 'u_acme_super');
    expect(superKey.can_manage).toBe(false);
    const globex = await api.call('GET', '/api/v1/keys', { key: KEYS.globexAdmin });
    const acmeIds = new Set(ids(adminKeys));
    expect(ids(globex).filter((id) => acmeIds.has(id))).toEqual([]);
    for (const k of globex.json.data.keys) expect(k.user_id).not.toMatch(/acme/);
    // Newest first.
    const created = adminKeys.json.data.keys.map((k: { created_at: number }) => k.created_at);
    expect(created).toEqual([...created].sort((x: number, y: number) => y - x));
  });

  it('no one revokes or rolls what they may not manage: another organization\'s key, another member\'s, a higher role\'s', async () => {
    const mine = (await create(KEYS.acmeMember, { name: 'member own', role: 'member' })).json.data.key;
    const superKey = (await api.call('GET', '/api/v1/keys', { key: acmeAdmin.key })).json.data.keys.find((k: { user_id: string }) => k.user_id === 'u_acme_super');
    expectEnvelope(await api.call('POST', `/api/v1/keys/${mine.id}/revoke`, { key: KEYS.globexAdmin }), 400, 'NOT_FOUND');
    expectEnvelope(await api.call('POST', `/api/v1/keys/${acmeAdmin.id}/revoke`, { key: KEYS.acmeMember }), 400, 'NOT_FOUND');
    expectEnvelope(await api.call('POST', `/api/v1/keys/${superKey.id}/revoke`, { key: acmeAdmin.key }), 403, 'PERMISSION_DENIED');
    expectEnvelope(await api.call('POST', `/api/v1/keys/${superKey.id}/roll`, { key: acmeAdmin.key }), 403, 'PERMISSION_DENIED');
    expectEnvelope(await api.call('POST', '/api/v1/keys/key_nosuch/revoke', { key: acmeAdmin.key }), 400, 'NOT_FOUND');
    // Still alive after all that.
    expect((await api.call('GET', '/api/v1/keys', { key: KEYS.acmeAdmin })).json.data.keys.find((k: { id: string }) => k.id === mine.id).status).toBe('active');
  });

  it('no credential, or an unknown one, lists nothing', async () => {
    expectEnvelope(await api.call('GET', '/api/v1/keys'), 401, 'UNAUTHENTICATED');
    expectEnvelope(await api.call('GET', '/api/v1/keys', { key: 'oql_not-a-key-at-all-0000000000000000000000000' }), 401, 'UNAUTHENTICATED');
  });
});

describe('revoking and rolling', () => {
  it('a revoked key gets 401 at its next request, on this server despite its cache and on another; revoking again changes nothing', async () => {
    const { key, secret } = (await create(acmeAdmin.key, { name: 'to revoke', role: 'member' })).json.data;
    // Cached as valid on `api` by this call.
    expect((await api.call('POST', '/api/v1/reports/count', { key: secret, body: REPORT })).status).toBe(200);
    const revoked = await api.call('POST', `/api/v1/keys/${key.id}/revoke`, { key: acmeAdmin.key });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.json.data.key).toMatchObject({ status: 'revoked', revoked_by: 'u_acme_admin', can_manage: false });
    expectEnvelope(await api.call('POST', '/api/v1/reports/count', { key: secret, body: REPORT }), 401, 'UNAUTHENTICATED');
    expectEnvelope(await other.call('POST', '/api/v1/reports/count', { key: secret, body: REPORT }), 401, 'UNAUTHENTICATED');
    const again = await api.call('POST', `/api/v1/keys/${key.id}/revoke`, { key: KEYS.acmeAdmin });
    expect(again.json.data.key.revoked_by).toBe('u_acme_admin');
    expect(again.json.data.key.revoked_at).toBe(revoked.json.data.key.revoked_at);
  });

  it('a member revokes their own key, which can be the one they call with', async () => {
    const { key, secret } = (await create(KEYS.acmeMember, { name: 'self', role: 'member' })).json.data;
    expect((await api.call('POST', `/api/v1/keys/${key.id}/revoke`, { key: secret })).status).toBe(200);
    expectEnvelope(await api.call('GET', '/api/v1/keys', { key: secret }), 401, 'UNAUTHENTICATED');
  });

  it('rolling gives a new key now; the old one keeps working until the grace period ends', async () => {
    const { key, secret } = (await create(acmeAdmin.key, { name: 'rolled', role: 'member' })).json.data;
    const before = Date.now();
    const rolled = await api.call('POST', `/api/v1/keys/${key.id}/roll`, { key: acmeAdmin.key });
    const after = Date.now();
    expect(rolled.status, rolled.text).toBe(201);
    const { key: next, secret: nextSecret, previous } = rolled.json.data;
    expect(nextSecret).not.toBe(secret);
    expect(next).toMatchObject({ name: 'rolled', role: 'member', user_id: 'u_acme_admin', rolled_from: key.id, created_by: 'u_acme_admin', expires_at: null });
    expect(previous.id).toBe(key.id);
    expect(previous.expires_at).toBeGreaterThanOrEqual(before + 24 * 3600 * 1000);
    expect(previous.expires_at).toBeLessThanOrEqual(after + 24 * 3600 * 1000);
    expect(ROLL_GRACE_MS).toBe(24 * 3600 * 1000);
    for (const s of [secret, nextSecret]) expect((await other.call('POST', '/api/v1/reports/count', { key: s, body: REPORT })).status).toBe(200);
    await db.query('UPDATE oql_service.api_keys SET expires_at = $2 WHERE id = $1', [key.id, Date.now() - 1]);
    expectEnvelope(await other.call('POST', '/api/v1/reports/count', { key: secret, body: REPORT }), 401, 'UNAUTHENTICATED');
    expect((await other.call('POST', '/api/v1/reports/count', { key: nextSecret, body: REPORT })).status).toBe(200);
    // An expired key cannot be rolled: there is nothing left to switch over from.
    expectEnvelope(await api.call('POST', `/api/v1/keys/${key.id}/roll`, { key: acmeAdmin.key }), 400, 'NOT_FOUND');
  });
});
