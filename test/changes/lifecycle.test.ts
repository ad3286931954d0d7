import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ChangeLog } from '../../src/service/changes/log.js';
import { expectEnvelope } from '../server/support.js';
import { allChanges, KEYS, startChangesService, type ChangesHarness, type DbKind } from './support.js';

/**
 * The record lifecycle and the change log over real HTTP, on embedded PGlite and on PostgreSQL 15:
 * delete, bulk delete, restore and purge, a deleted record absent from every read, and every write
 * in the feed for its own organization only.
 */

const DAY = 86_400_000;

describe.each<DbKind>(['pglite', 'postgres'])('the record lifecycle on %s', (kind) => {
  let h: ChangesHarness;

  beforeAll(async () => {
    // Changes are kept longer than deleted records, so one round can purge without pruning the purge's own change.
    h = await startChangesService(kind, { changesRetentionDays: 40 });
  }, 120_000);

  afterAll(async () => {
    await h?.close();
  });

  const filterNames = async (key: string, slug: string) => {
    const a = await h.call('POST', `/api/v1/org/objects/${slug}/filter`, { key, body: { query: { fields: slug === 'contact' ? ['id', 'name', 'account.name'] : ['id', 'name'], pagination: { page: 1, page_size: 100 } } } });
    expect(a.status, a.text).toBe(200);
    return a.json.data.records as { id: string; name: string; 'account.name'?: string | null }[];
  };
  const reportCount = async (key: string, slug: string) => {
    const a = await h.call('POST', '/api/v1/reports/execute', { key, body: { slug, query: `SELECT COUNT(*) AS n FROM ${slug} LIMIT 1` } });
    expect(a.status, a.text).toBe(200);
    return Number(a.json.data.records[0].n);
  };

  it('deletes a record, which then reads as absent everywhere, and restores it', async () => {
    const before = await reportCount(KEYS.acmeAdmin, 'account');
    const del = await h.call('DELETE', '/api/v1/org/objects/account/record/acc_a2', { key: KEYS.acmeAdmin });
    expect(del.status, del.text).toBe(200);
    expect(del.json).toEqual({ success: true, data: { id: 'acc_a2', is_deleted: true, deleted_at: expect.any(Number) } });

    expectEnvelope(await h.call('GET', '/api/v1/org/objects/account/record/acc_a2', { key: KEYS.acmeAdmin }), 400, 'NOT_FOUND');
    expectEnvelope(await h.call('PUT', '/api/v1/org/objects/account/record/acc_a2', { key: KEYS.acmeAdmin, body: { city: 'Goa' } }), 400, 'NOT_FOUND');
    expect((await filterNames(KEYS.acmeAdmin, 'account')).map((r) => r.id)).toEqual(['acc_a1']);
    expect(await reportCount(KEYS.acmeAdmin, 'account')).toBe(before - 1);
    // The contacts of the deleted account see no account through their relation.
    const contacts = await filterNames(KEYS.acmeAdmin, 'contact');
    expect(contacts.find((c) => c.id === 'con_a2')!['account.name']).toBeNull();
    expect(contacts.find((c) => c.id === 'con_a1')!['account.name']).toBe('Acme Retail');
    // Deleting it again, or deleting an id nobody has, names the id.
    const again = await h.call('DELETE', '/api/v1/org/objects/account/record/acc_a2', { key: KEYS.acmeAdmin });
    expectEnvelope(again, 400, 'NOT_FOUND');
    expect(again.json.data.meta_data).toContain('"acc_a2"');

    const restored = await h.call('POST', '/api/v1/org/objects/account/record/acc_a2/restore', { key: KEYS.acmeAdmin });
    expect(restored.status, restored.text).toBe(200);
    expect(restored.json.data).toMatchObject({ id: 'acc_a2', name: 'Acme Soft', external_id: 'EXT-A2', updated_by: 'u_acme_admin' });
    expect((await h.call('GET', '/api/v1/org/objects/account/record/acc_a2', { key: KEYS.acmeAdmin })).json.data.name).toBe('Acme Soft');
    expect((await filterNames(KEYS.acmeAdmin, 'contact')).find((c) => c.id === 'con_a2')!['account.name']).toBe('Acme Soft');
    expect(await reportCount(KEYS.acmeAdmin, 'account')).toBe(before);
    // A live record cannot be restored.
    expectEnvelope(await h.call('POST', '/api/v1/org/objects/account/record/acc_a2/restore', { key: KEYS.acmeAdmin }), 400, 'NOT_FOUND');
  });

  it('keeps each organization to its own records: another organization cannot delete, restore or see the deletion', async () => {
    expectEnvelope(await h.call('DELETE', '/api/v1/org/objects/contact/record/con_a1', { key: KEYS.globexAdmin }), 400, 'NOT_FOUND');
    expect((await h.call('GET', '/api/v1/org/objects/contact/record/con_a1', { key: KEYS.acmeAdmin })).status).toBe(200);
    const del = await h.call('DELETE', '/api/v1/org/objects/contact/record/con_g1', { key: KEYS.globexAdmin });
    expect(del.status).toBe(200);
    expectEnvelope(await h.call('POST', '/api/v1/org/objects/contact/record/con_g1/restore', { key: KEYS.acmeAdmin }), 400, 'NOT_FOUND');
    expect((await filterNames(KEYS.acmeAdmin, 'contact')).every((c) => c.name.endsWith('Acme'))).toBe(true);
    expect((await h.call('POST', '/api/v1/org/objects/contact/record/con_g1/restore', { key: KEYS.globexAdmin })).status).toBe(200);
  });

  it('refuses a member with 403 in the envelope', async () => {
    expectEnvelope(await h.call('DELETE', '/api/v1/org/objects/contact/record/con_a1', { key: KEYS.acmeMember }), 403, 'PERMISSION_DENIED');
    expectEnvelope(await h.call('POST', '/api/v1/org/objects/contact/record/bulk_delete', { key: KEYS.acmeMember, body: { ids: ['con_a1'] } }), 403, 'PERMISSION_DENIED');
    expectEnvelope(await h.call('POST', '/api/v1/org/objects/contact/record/con_a1/restore', { key: KEYS.acmeMember }), 403, 'PERMISSION_DENIED');
    expect((await h.call('GET', '/api/v1/org/objects/contact/record/con_a1', { key: KEYS.acmeMember })).status).toBe(200);
  });

  it('bulk-deletes all or none, naming every id that is not there', async () => {
    const made = await h.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'Del One Acme' }, { name: 'Del Two Acme' }] });
    expect(made.status, made.text).toBe(200);
    const ids: string[] = made.json.data.ids;
    expect(ids).toHaveLength(2);
    const refused = await h.call('POST', '/api/v1/org/objects/contact/record/bulk_delete', { key: KEYS.acmeAdmin, body: { ids: [...ids, 'con_nope', 'con_g1'] } });
    expectEnvelope(refused, 400, 'NOT_FOUND');
    expect(refused.json.data.meta_data).toContain('"con_nope"');
    expect(refused.json.data.meta_data).toContain('"con_g1"');
    for (const id of ids) expect((await h.call('GET', `/api/v1/org/objects/contact/record/${id}`, { key: KEYS.acmeAdmin })).status).toBe(200);
    const done = await h.call('POST', '/api/v1/org/objects/contact/record/bulk_delete', { key: KEYS.acmeAdmin, body: { ids: [...ids, ids[0]] } });
    expect(done.status, done.text).toBe(200);
    expect(done.json.data.records.map((r: { id: string }) => r.id)).toEqual(ids);
    for (const id of ids) expectEnvelope(await h.call('GET', `/api/v1/org/objects/contact/record/${id}`, { key: KEYS.acmeAdmin }), 400, 'NOT_FOUND');
  });

  it('refuses to restore a record whose unique value another record took meanwhile', async () => {
    expect((await h.call('DELETE', '/api/v1/org/objects/account/record/acc_a1', { key: KEYS.acmeAdmin })).status).toBe(200);
    const taker = await h.call('POST', '/api/v1/org/objects/account/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'Acme Taker', external_id: 'EXT-A1' }] });
    expect(taker.status, taker.text).toBe(200);
    const refused = await h.call('POST', '/api/v1/org/objects/account/record/acc_a1/restore', { key: KEYS.acmeAdmin });
    expectEnvelope(refused, 400, 'VALIDATION_FAILED');
    expect(refused.json.data.validation_errors[0]).toMatchObject({ field: 'external_id', error_code: 'NOT_UNIQUE' });
    expect((await h.call('DELETE', `/api/v1/org/objects/account/record/${taker.json.data.ids[0]}`, { key: KEYS.acmeAdmin })).status).toBe(200);
    expect((await h.call('POST', '/api/v1/org/objects/account/record/acc_a1/restore', { key: KEYS.acmeAdmin })).status).toBe(200);
  });

  it('records every write as one change, in order, for its own organization only', async () => {
    const start = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.acmeAdmin })).json.data.cursor as string;
    const globexStart = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.globexAdmin })).json.data.cursor as string;
    const made = await h.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'Feed Acme', status: 'active' }] });
    const id = made.json.data.ids[0] as string;
    expect((await h.call('PUT', `/api/v1/org/objects/contact/record/${id}`, { key: KEYS.acmeAdmin, body: { status: 'inactive' } })).status).toBe(200);
    const upsert = await h.call('POST', '/api/v1/org/objects/contact/record/bulk_upsert', { key: KEYS.acmeAdmin, body: { values: [{ id, name: 'Feed Acme 2' }, { name: 'Feed Upserted Acme' }, { id: 'con_nope', name: 'x' }] } });
    expect(upsert.json.data.records_created).toBe(1);
    expect((await h.call('DELETE', `/api/v1/org/objects/contact/record/${id}`, { key: KEYS.acmeAdmin })).status).toBe(200);
    expect((await h.call('POST', `/api/v1/org/objects/contact/record/${id}/restore`, { key: KEYS.acmeAdmin })).status).toBe(200);
    const final = (await h.call('GET', `/api/v1/org/objects/contact/record/${id}`, { key: KEYS.acmeAdmin })).json.data;

    const { changes } = await allChanges(h, KEYS.acmeAdmin, start);
    expect(changes.map((c) => [c.record_id === id ? 'it' : c.record?.name, c.operation])).toEqual([
      ['it', 'created'], ['it', 'updated'], ['it', 'updated'], ['Feed Upserted Acme', 'created'], ['it', 'deleted'], ['it', 'restored'],
    ]);
    const [created, updated, upserted] = changes;
    expect(created.record).toMatchObject({ id, name: 'Feed Acme', status: 'active', org_id: 'org_acme' });
    expect(updated.changed_fields).toEqual(expect.arrayContaining(['status']));
    expect(updated.previous.status).toBe('active');
    expect(updated.record.status).toBe('inactive');
    expect(upserted.changed_fields).toContain('name');
    expect(upserted.previous.name).toBe('Feed Acme');
    expect(changes[4].record).toMatchObject({ id, is_deleted: true, deleted_by: 'u_acme_admin', deleted_at: expect.any(Number) });
    // The last change holds the record exactly as get-one returns it.
    expect(changes[5].record).toEqual(final);
    expect(Object.keys(changes[5].record)).toEqual(Object.keys(final));
    for (const c of changes) {
      expect(c.actor).toEqual({ user_id: 'u_acme_admin', surface: 'rest' });
      expect(c.event_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(c.object_slug).toBe('contact');
    }
    expect(new Set(changes.map((c) => c.event_id)).size).toBe(changes.length);
    // The other organization saw none of it.
    expect((await allChanges(h, KEYS.globexAdmin, globexStart)).changes).toEqual([]);
    // Reading from a change's own cursor gives what came after it, nothing twice.
    const rest = await allChanges(h, KEYS.acmeAdmin, changes[2].cursor);
    expect(rest.changes.map((c) => c.event_id)).toEqual(changes.slice(3).map((c) => c.event_id));
  });

  it('gives every change the record as that write left it, whatever happened to the record since', async () => {
    const start = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.acmeAdmin })).json.data.cursor as string;
    const made = await h.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'History A', status: 'active' }, { name: 'History B' }, { name: 'History C' }] });
    const [a, b, c] = made.json.data.ids as string[];
    const get = async (id: string) => {
      const answer = await h.call('GET', `/api/v1/org/objects/contact/record/${id}`, { key: KEYS.acmeAdmin });
      expect(answer.status, answer.text).toBe(200);
      return answer.json.data as Record<string, unknown>;
    };
    const put = async (id: string, body: object) => expect((await h.call('PUT', `/api/v1/org/objects/contact/record/${id}`, { key: KEYS.acmeAdmin, body })).status).toBe(200);
    // What the docs say a deleted record is: its values, updated_at and updated_by of the deletion, then is_deleted, deleted_at and deleted_by.
    const remove = async (id: string) => {
      const before = await get(id);
      const answer = await h.call('DELETE', `/api/v1/org/objects/contact/record/${id}`, { key: KEYS.acmeAdmin });
      expect(answer.status, answer.text).toBe(200);
      const at = answer.json.data.deleted_at as number;
      return { ...before, updated_at: at, updated_by: 'u_acme_admin', is_deleted: true, deleted_at: at, deleted_by: 'u_acme_admin' };
    };
    // The record after each write, in the order of the writes: what get-one answered right after it.
    const expected: (Record<string, unknown> | null)[] = [await get(a), await get(b), await get(c)];
    await put(a, { name: 'History A2' });
    expected.push(await get(a));
    await put(a, { status: 'inactive' });
    expected.push(await get(a));
    expected.push(await remove(a));
    expect((await h.call('POST', `/api/v1/org/objects/contact/record/${a}/restore`, { key: KEYS.acmeAdmin })).status).toBe(200);
    expected.push(await get(a));
    await put(a, { name: 'History A3' });
    expected.push(await get(a));
    expected.push(await remove(b));
    expect((await h.server.maintenance.run(Date.now() + 31 * DAY)).purged).toBeGreaterThanOrEqual(1);
    expected.push(null);

    // One change a page, so a reader steps through the three creates of one write one at a time.
    const stepped: any[] = [];
    let cursor = start;
    for (;;) {
      const page = (await h.call('GET', `/api/v1/changes?after=${cursor}&limit=1`, { key: KEYS.acmeAdmin })).json.data;
      stepped.push(...page.changes);
      cursor = page.next_cursor;
      if (!page.has_more) break;
    }
    const ours = stepped.filter((ch) => [a, b, c].includes(ch.record_id));
    expect(ours.map((ch) => [ch.record_id, ch.operation])).toEqual([
      [a, 'created'], [b, 'created'], [c, 'created'], [a, 'updated'], [a, 'updated'], [a, 'deleted'], [a, 'restored'], [a, 'updated'], [b, 'deleted'], [b, 'purged'],
    ]);
    // Key order too: a record reads as get-one writes it.
    expect(JSON.stringify(ours.map((ch) => ch.record))).toBe(JSON.stringify(expected));
    // The first update: the fields whose values differ between the two get-one answers around it, with their old values.
    const differ = Object.keys(expected[3]!).filter((k) => JSON.stringify(expected[3]![k]) !== JSON.stringify(expected[0]![k]));
    expect(differ).toEqual(expect.arrayContaining(['name', 'updated_at']));
    expect([...ours[3].changed_fields].sort()).toEqual([...differ].sort());
    expect(ours[3].previous).toEqual(Object.fromEntries(differ.map((k) => [k, expected[0]![k]])));
    // Read again in one page: the same changes, event ids and all, each cursor its own.
    const whole = (await allChanges(h, KEYS.acmeAdmin, start)).changes;
    expect(whole).toEqual(stepped);
    expect(new Set(whole.map((ch) => ch.event_id)).size).toBe(whole.length);
    expect(new Set(whole.map((ch) => ch.cursor)).size).toBe(whole.length);
  });

  it('reads a change the log kept with its record, as it was kept', async () => {
    const start = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.acmeAdmin })).json.data.cursor as string;
    // Rows as the log wrote them before it rebuilt records on reading: the record and the event id in the row.
    const record = { id: 'con_kept_whole', name: 'Kept Whole', org_id: 'org_acme' };
    await h.db.query(
      `INSERT INTO oql_service.changes (org_id, object_slug, record_id, operation, changed_fields, record, previous, event_id, actor_user_id, actor_surface, committed_at)
       VALUES ('org_acme', 'contact', 'con_kept_whole', 'created', NULL, $1::json, NULL, '7d444840-9dc0-11d1-b245-5ffdce74fad2', 'u_old', 'cli', 1700000000000),
              ('org_acme', 'contact', 'con_kept_whole', 'updated', '["name"]', $2::json, '{"name": "Kept Whole"}', '7d444840-9dc0-11d1-b245-5ffdce74fad3', 'u_old', 'cli', 1700000000001)`,
      [JSON.stringify(record), JSON.stringify({ ...record, name: 'Kept Renamed' })]);
    const { changes } = await allChanges(h, KEYS.acmeAdmin, start);
    expect(changes.map(({ cursor, ...rest }) => rest)).toEqual([
      { event_id: '7d444840-9dc0-11d1-b245-5ffdce74fad2', object_slug: 'contact', record_id: 'con_kept_whole', operation: 'created', changed_fields: null, record, previous: null, actor: { user_id: 'u_old', surface: 'cli' }, committed_at: 1700000000000 },
      { event_id: '7d444840-9dc0-11d1-b245-5ffdce74fad3', object_slug: 'contact', record_id: 'con_kept_whole', operation: 'updated', changed_fields: ['name'], record: { ...record, name: 'Kept Renamed' }, previous: { name: 'Kept Whole' }, actor: { user_id: 'u_old', surface: 'cli' }, committed_at: 1700000000001 },
    ]);
  });

  it('narrows the feed to the objects asked for and the role may read, and refuses bad cursors and parameters', async () => {
    const start = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.acmeAdmin })).json.data.cursor as string;
    await h.call('POST', '/api/v1/org/objects/account/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'Narrow Account Acme' }] });
    await h.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'Narrow Contact Acme' }] });
    const only = await h.call('GET', `/api/v1/changes?after=${start}&objects=account`, { key: KEYS.acmeAdmin });
    expect(only.json.data.changes.map((c: any) => c.record.name)).toEqual(['Narrow Account Acme']);
    expectEnvelope(await h.call('GET', '/api/v1/changes?objects=acount', { key: KEYS.acmeAdmin }), 400, 'INVALID_SLUG');
    expectEnvelope(await h.call('GET', '/api/v1/changes?after=12', { key: KEYS.acmeAdmin }), 400, 'INVALID_CURSOR');
    expectEnvelope(await h.call('GET', "/api/v1/changes?after=c1'%3B--", { key: KEYS.acmeAdmin }), 400, 'INVALID_CURSOR');
    expect((await h.call('GET', '/api/v1/changes?limit=5000', { key: KEYS.acmeAdmin })).status).toBe(400);
    expect((await h.call('GET', '/api/v1/changes?wait=31', { key: KEYS.acmeAdmin })).status).toBe(400);
    expectEnvelope(await h.call('GET', '/api/v1/changes'), 401, 'UNAUTHENTICATED');
  });

  it('answers a long-poll as soon as a change commits, and an empty page with the same cursor when the wait runs out', async () => {
    const head = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.globexAdmin })).json.data.cursor as string;
    const empty = await h.call('GET', `/api/v1/changes?after=${head}&wait=1`, { key: KEYS.globexAdmin });
    expect(empty.json.data).toEqual({ changes: [], next_cursor: head, has_more: false });
    // A wait long past the test's own time limit: only the commit can end it in time.
    const polled = h.call('GET', `/api/v1/changes?after=${head}&wait=30`, { key: KEYS.globexAdmin });
    // Another organization's write does not answer it.
    await h.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'Not For Globex Acme' }] });
    await h.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: KEYS.globexAdmin, body: [{ name: 'Awaited Globex' }] });
    const answer = await polled;
    expect(answer.json.data.changes.map((c: any) => c.record.name)).toEqual(['Awaited Globex']);
  }, 20_000);

  it('purges records deleted long enough ago, as a change, and expires cursors older than the retention', async () => {
    const start = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.acmeAdmin })).json.data.cursor as string;
    const made = await h.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'Purged Acme' }] });
    const id = made.json.data.ids[0] as string;
    expect((await h.call('DELETE', `/api/v1/org/objects/contact/record/${id}`, { key: KEYS.acmeAdmin })).status).toBe(200);
    // Not yet 30 days: nothing goes.
    expect((await h.server.maintenance.run(Date.now() + 29 * DAY)).purged).toBe(0);
    expect((await h.server.maintenance.run(Date.now() + 31 * DAY)).purged).toBeGreaterThanOrEqual(1);
    expectEnvelope(await h.call('POST', `/api/v1/org/objects/contact/record/${id}/restore`, { key: KEYS.acmeAdmin }), 400, 'NOT_FOUND');
    const { changes } = await allChanges(h, KEYS.acmeAdmin, start);
    const purge = changes.find((c) => c.record_id === id && c.operation === 'purged');
    expect(purge).toMatchObject({ record: null, actor: { user_id: null, surface: 'system' } });
    expect((await allChanges(h, KEYS.globexAdmin)).changes.some((c) => c.record_id === id)).toBe(false);

    // Past the retention every change so far goes, and a cursor from before is told to resynchronise.
    expect((await h.server.maintenance.run(Date.now() + 41 * DAY)).pruned).toBeGreaterThan(0);
    const expired = await h.call('GET', `/api/v1/changes?after=${start}`, { key: KEYS.acmeAdmin });
    expectEnvelope(expired, 410, 'CURSOR_EXPIRED');
    expect(expired.json.data.hint).toContain('/api/v1/changes/head');
    // The head still works, and so does reading from it.
    const head = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.acmeAdmin })).json.data.cursor as string;
    expect((await h.call('GET', `/api/v1/changes?after=${head}`, { key: KEYS.acmeAdmin })).json.data.changes).toEqual([]);
  });

  it('answers the readers one commit wakes with one read per page, never with another organization\'s or another object set\'s page', async () => {
    const head = async (key: string) => {
      const a = await h.call('GET', '/api/v1/changes/head', { key });
      expect(a.status, a.text).toBe(200);
      return a.json.data.cursor as string;
    };
    const watcher = h.server.service.ops.feed.watcher;
    /** Resolves once `n` readers wait on this instance; fails with how many did. */
    const waitingReaches = async (n: number) => {
      const deadline = Date.now() + 30_000;
      while (watcher.waiting !== n) {
        if (Date.now() > deadline) throw new Error(`${watcher.waiting} readers wait, not ${n}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    const acmeHead = await head(KEYS.acmeAdmin);
    const globexHead = await head(KEYS.globexAdmin);
    const poll = (key: string, after: string, objects?: string) =>
      h.call('GET', `/api/v1/changes?after=${after}&wait=25${objects === undefined ? '' : `&objects=${objects}`}`, { key });
    const reads = vi.spyOn(ChangeLog.prototype, 'read');
    /** How many reads the log ran for this organization after this cursor, of every object (no list) or of contacts only. */
    const readsOf = (org: string, after: string, contactsOnly: boolean) => reads.mock.calls.filter(([o, a, objects]) =>
      o === org && `c${a.toString(36)}` === after && (objects.length === 1 && objects[0] === 'contact') === contactsOnly).length;
    try {
      const idle = watcher.waiting;
      const acmeAll = [1, 2, 3].map(() => poll(KEYS.acmeAdmin, acmeHead));
      const acmeContacts = [1, 2].map(() => poll(KEYS.acmeAdmin, acmeHead, 'contact'));
      const globexAll = [1, 2].map(() => poll(KEYS.globexAdmin, globexHead));
      await waitingReaches(idle + 7);
      // Each reader read its first page alone.
      expect([readsOf('org_acme', acmeHead, false), readsOf('org_acme', acmeHead, true), readsOf('org_globex', globexHead, false)]).toEqual([3, 2, 2]);

      const account = await h.call('POST', '/api/v1/org/objects/account/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'Shared Read Account' }] });
      expect(account.status, account.text).toBe(200);
      const accountId = account.json.data.ids[0] as string;
      for (const answer of await Promise.all(acmeAll)) {
        expect(answer.status, answer.text).toBe(200);
        expect(answer.json.data.changes.map((c: { record_id: string; operation: string }) => [c.record_id, c.operation])).toEqual([[accountId, 'created']]);
      }
      // Three readers of one page woken by one commit: one read between them.
      expect(readsOf('org_acme', acmeHead, false)).toBe(4);
      // The readers of contacts were woken too, found nothing of theirs, and wait again; globex's never woke.
      await waitingReaches(idle + 4);

      const contact = await h.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'Shared Read Contact' }] });
      expect(contact.status, contact.text).toBe(200);
      const contactId = contact.json.data.ids[0] as string;
      for (const answer of await Promise.all(acmeContacts)) {
        expect(answer.status, answer.text).toBe(200);
        expect(answer.json.data.changes.map((c: { record_id: string; object_slug: string }) => [c.object_slug, c.record_id])).toEqual([['contact', contactId]]);
      }
      // On PostgreSQL the head poll wakes them again while the head is past their cursor: a count only without it.
      if (kind === 'pglite') expect(readsOf('org_acme', acmeHead, true)).toBe(4);

      const globex = await h.call('POST', '/api/v1/org/objects/account/record/bulk_create', { key: KEYS.globexAdmin, body: [{ name: 'Shared Read Globex' }] });
      expect(globex.status, globex.text).toBe(200);
      const globexId = globex.json.data.ids[0] as string;
      for (const answer of await Promise.all(globexAll)) {
        expect(answer.status, answer.text).toBe(200);
        expect(answer.json.data.changes.map((c: { record_id: string }) => c.record_id)).toEqual([globexId]);
      }
      expect(readsOf('org_globex', globexHead, false)).toBe(3);
    } finally {
      reads.mockRestore();
    }
  });
});
