import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadIntoDatabase } from '../../fixtures/index.js';
import { startPgDatabase } from '../support/pg-cluster.js';
import { type PgServer } from '../support/pg-server.js';
import { API_KEYS_ENV, KEYS, crm, crmServiceOnPglite, expectEnvelope, listen, type CrmService, type Running } from './support.js';

/**
 * What one tenant may create of API keys, on embedded PGlite and on PostgreSQL, for two
 * organizations: live keys per user and per organization, counted so that creations sent at once
 * cannot pass together; and the key listing a page at a time with a cursor, so no key drops out of
 * every admin's view.
 */

const PER_USER = 5;
const PER_ORG = 9;
// Room for the whole burst at once: the caps, not the concurrency budget, must be what refuses.
const caps = { maxKeysPerUser: PER_USER, maxKeysPerOrg: PER_ORG, maxConcurrentRequests: 50 };

let pgServer: PgServer | undefined;
let pool: pg.Pool | undefined;
let pglite: CrmService | undefined;
const apis: Record<string, Running> = {};

beforeAll(async () => {
  pglite = await crmServiceOnPglite({ ...caps, console: false } as never);
  apis['PGlite'] = pglite.api;
  pgServer = await startPgDatabase();
  pool = new pg.Pool({ connectionString: pgServer.url, max: 3 });
  await loadIntoDatabase(pool, crm.catalog, crm.data);
  apis['PostgreSQL'] = await listen({ database: pgServer.url, apiKeys: API_KEYS_ENV, env: {}, console: false, ...caps } as never);
}, 240_000);

afterAll(async () => {
  await apis['PostgreSQL']?.close();
  await pglite?.close();
  await pool?.end();
  await pgServer?.stop();
});

const create = (api: Running, key: string, name: string, extra: object = {}) =>
  api.call('POST', '/api/v1/keys', { key, body: { name, role: 'member', ...extra } });

/** Every key the caller can see, page by page, and the pages' sizes. */
async function everyKey(api: Running, key: string, limit: number): Promise<{ ids: string[]; created: number[]; pages: number[] }> {
  const ids: string[] = [];
  const created: number[] = [];
  const pages: number[] = [];
  let cursor: string | null = null;
  do {
    const answer = await api.call('GET', `/api/v1/keys?limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, { key });
    expect(answer.status, answer.text.slice(0, 300)).toBe(200);
    ids.push(...answer.json.data.keys.map((k: { id: string }) => k.id));
    created.push(...answer.json.data.keys.map((k: { created_at: number }) => k.created_at));
    pages.push(answer.json.data.keys.length);
    cursor = answer.json.data.next;
  } while (cursor !== null);
  return { ids, created, pages };
}

describe.each(['PGlite', 'PostgreSQL'])('keys on %s', (name) => {
  it('lets a member make at most its cap of live keys of 20 sent at once; another organization is untouched', async () => {
    const api = apis[name]!;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => create(api, KEYS.acmeMember, `burst ${i}`)));
    // The member's own bootstrap key is one of its live keys.
    expect(answers.filter((a) => a.status === 201)).toHaveLength(PER_USER - 1);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused).toHaveLength(20 - (PER_USER - 1));
    for (const a of refused) expectEnvelope(a, 400, 'TOO_MANY_KEYS');
    expect(refused[0]!.json.data.message).toContain(String(PER_USER));
    // A key of another organization's member is made meanwhile.
    expect((await create(api, KEYS.globexMember, 'globex one')).status).toBe(201);
  });

  it('counts the organization\'s live keys, frees a place when one is revoked, and counts a roll as a new key', async () => {
    const api = apis[name]!;
    // The organization holds the bootstrap keys of its admin and member, and the member's others.
    const made: string[] = [];
    for (let i = 0; ; i++) {
      const answer = await create(api, KEYS.acmeAdmin, `admin ${i}`);
      if (answer.status !== 201) {
        expectEnvelope(answer, 400, 'TOO_MANY_KEYS');
        expect(answer.json.data.message).toContain('organization');
        break;
      }
      made.push(answer.json.data.key.id);
      expect(i).toBeLessThan(PER_ORG);
    }
    const listed = await everyKey(api, KEYS.acmeAdmin, 1000);
    expect(listed.ids).toHaveLength(PER_ORG);
    expectEnvelope(await api.call('POST', `/api/v1/keys/${made[0]}/roll`, { key: KEYS.acmeAdmin }), 400, 'TOO_MANY_KEYS');
    expect((await api.call('POST', `/api/v1/keys/${made[0]}/revoke`, { key: KEYS.acmeAdmin })).status).toBe(200);
    expect((await create(api, KEYS.acmeAdmin, 'after revoke')).status).toBe(201);
    expectEnvelope(await create(api, KEYS.acmeAdmin, 'over again'), 400, 'TOO_MANY_KEYS');
    // Globex is under its own cap.
    expect((await create(api, KEYS.globexAdmin, 'globex admin key')).status).toBe(201);
  });

  it('pages the listing with a cursor: every key once, newest first, each caller its own keys', async () => {
    const api = apis[name]!;
    const whole = await everyKey(api, KEYS.acmeAdmin, 1000);
    expect(whole.pages).toEqual([whole.ids.length]);
    const paged = await everyKey(api, KEYS.acmeAdmin, 3);
    expect(paged.ids).toEqual(whole.ids);
    expect(paged.pages.every((n) => n <= 3)).toBe(true);
    expect(paged.pages.length).toBe(Math.ceil(whole.ids.length / 3));
    expect(paged.created).toEqual([...paged.created].sort((a, b) => b - a));
    // The member pages through its own keys only.
    const mine = await everyKey(api, KEYS.acmeMember, 2);
    expect(mine.ids.length).toBe(PER_USER);
    for (const id of mine.ids) expect(whole.ids).toContain(id);
    // Another organization's cursor goes on through the caller's own keys only.
    const first = await api.call('GET', '/api/v1/keys?limit=1', { key: KEYS.acmeAdmin });
    const foreign = await api.call('GET', `/api/v1/keys?cursor=${encodeURIComponent(first.json.data.next)}`, { key: KEYS.globexAdmin });
    expect(foreign.status).toBe(200);
    for (const k of foreign.json.data.keys) expect(whole.ids).not.toContain(k.id);
    expectEnvelope(await api.call('GET', '/api/v1/keys?cursor=not-a-cursor', { key: KEYS.acmeAdmin }), 400, 'INVALID_TOKEN');
    expect((await api.call('GET', '/api/v1/keys?limit=1001', { key: KEYS.acmeAdmin })).status).toBe(400);
  });
});
