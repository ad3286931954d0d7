import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeLog } from '../../src/service/changes/log.js';
import { allChanges, KEYS, rawClient, startChangesService, type ChangesHarness } from './support.js';

/**
 * Commit order, never a skip, on PostgreSQL 15: a transaction holds its change's position and
 * has not committed while other writes come and readers read. With positions taken when a row is
 * written and nothing more, the later write would commit first with a larger position, a reader
 * would step past the held one, and miss it when it commits. Here the held change is read first,
 * then the later one: nothing skipped, nothing out of order. And a read of the log that a held
 * lock keeps waiting ends at the statement budget, as every read of the service does.
 */

let h: ChangesHarness;
let held: pg.Client;
let watcher: pg.Client;

beforeAll(async () => {
  h = await startChangesService('postgres');
  held = await rawClient(h);
  watcher = await rawClient(h);
}, 120_000);

afterAll(async () => {
  await held?.end().catch(() => {});
  await watcher?.end().catch(() => {});
  await h?.close();
});

/** Resolves once a backend waits for an advisory lock: the writer queued behind the held transaction. */
async function someoneWaitsForTheChangeLock(): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    const { rows } = await watcher.query(
      // This file's database only: the cluster is shared with the files run beside it.
      `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`);
    if (rows[0].n > 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('no writer ever waited for the change lock');
}

/** The held connection's open transaction as a write sees it; its last statement does not commit: the test does. */
const heldTx = {
  rows: async (text: string, params: readonly unknown[]) => (await held.query(text, params as unknown[])).rows,
  lastRows: async (text: string, params: readonly unknown[]) => (await held.query(text, params as unknown[])).rows,
};

describe('positions in commit order on PostgreSQL', () => {
  it('never hands a reader a change that commits after one it has not seen yet', async () => {
    const start = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.acmeAdmin })).json.data.cursor as string;
    // A write transaction of org_acme that has taken its position and is still open.
    await held.query('BEGIN');
    const sink = new ChangeLog(h.db, h.server.catalog).sink({ user_id: 'u_held', surface: 'cli' });
    await sink.append(heldTx, 'org_acme',
      [{ objectSlug: 'contact', recordId: 'con_a1', operation: 'updated', record: { id: 'con_a1' }, changedFields: ['name'], previous: { name: 'Asha Acme' } }]);

    // A later write of the same organization through the API: it queues for the organization's change lock.
    const later = h.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'Later Acme' }] });
    await someoneWaitsForTheChangeLock();
    // Another organization is not held up by it.
    const globex = await h.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: KEYS.globexAdmin, body: [{ name: 'Free Globex' }] });
    expect(globex.status, globex.text).toBe(200);
    expect((await allChanges(h, KEYS.globexAdmin)).changes.map((c) => c.record?.name)).toContain('Free Globex');

    // Nothing of org_acme is readable yet: neither has committed.
    const during = await allChanges(h, KEYS.acmeAdmin, start);
    expect(during.changes).toEqual([]);
    expect(during.cursor).toBe(start);

    await held.query('COMMIT');
    expect((await later).status).toBe(200);
    const after = await allChanges(h, KEYS.acmeAdmin, during.cursor);
    expect(after.changes.map((c) => [c.actor.user_id, c.operation])).toEqual([['u_held', 'updated'], ['u_acme_admin', 'created']]);
  });

  it('leaves nothing of a write that rolls back', async () => {
    const start = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.acmeAdmin })).json.data.cursor as string;
    await held.query('BEGIN');
    await new ChangeLog(h.db, h.server.catalog).sink({ user_id: 'u_held', surface: 'cli' }).append(heldTx, 'org_acme',
      [{ objectSlug: 'contact', recordId: 'con_a2', operation: 'deleted', record: { id: 'con_a2' } }]);
    await held.query('ROLLBACK');
    // A write that fails validation records nothing either.
    const refused = await h.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'Fine Acme' }, { email: 'not an email' }] });
    expect(refused.status).toBe(400);
    const ok = await h.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'Kept Acme' }] });
    expect(ok.status).toBe(200);
    expect((await allChanges(h, KEYS.acmeAdmin, start)).changes.map((c) => c.record?.name)).toEqual(['Kept Acme']);
  });
});

describe('a read of the log held up on PostgreSQL', () => {
  it('ends at the statement budget with QUERY_TIMEOUT, the page and the rebuild alike, and reads on once nothing holds it', async () => {
    const start = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.acmeAdmin })).json.data.cursor as string;
    const made = await h.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'Budget Acme' }] });
    expect(made.status, made.text).toBe(200);
    const [change] = (await allChanges(h, KEYS.acmeAdmin, start)).changes;
    expect(change).toMatchObject({ operation: 'created', record: { name: 'Budget Acme' } });
    const after = 0n;
    const log = new ChangeLog(h.db, h.server.catalog, { timeoutMs: 300 });
    const hold = async (table: string, read: () => Promise<unknown>) => {
      await held.query('BEGIN');
      await held.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      try {
        await expect(read()).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
      } finally {
        await held.query('ROLLBACK');
      }
    };
    // The page: the log itself held.
    await hold('oql_service.changes', () => log.read('org_acme', after, ['contact'], 1000));
    await hold('oql_service.changes', () => log.upcoming('org_acme', after, null, null, 10));
    // The rebuild: a create keeps only its id, so its record is read from the table, held here.
    await hold('public.contact', () => log.read('org_acme', after, ['contact'], 1000));
    // Nothing holds them now: the same reads answer, the new contact among them.
    const page = await log.read('org_acme', after, ['contact'], 1000);
    expect(page.changes.map((c) => c.event_id)).toContain(change.event_id);
    expect(page.changes.find((c) => c.event_id === change.event_id)?.record).toEqual(change.record);
  });
});
