import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteRecords, purgeDeleted, restoreRecord } from '../../src/records/lifecycle.js';
import { bulkCreate, getRecord, updateRecord } from '../../src/records/write.js';
import { databaseOf } from '../../src/run/database-of.js';
import { createServer, type OqlServer } from '../../src/server/app.js';
import { ChangeLog } from '../../src/service/changes/log.js';
import { listeningSql, WebhookStore } from '../../src/service/webhooks/store.js';
import { MIGRATIONS, migrate } from '../../src/service/migrations.js';
import { configureFastCheck, runs } from '../props/harness.js';
import { emptyPglite } from '../support/pglite-template.js';
import type { PGlite } from '@electric-sql/pglite';

/**
 * The log keeps what a change did and rebuilds the record after it on reading: from the first
 * checkpoint after it (a change that kept its record) or from the table. Rebuilt either way, every
 * record is the one the write left. And a log written before migration 13, which kept each
 * change's record and event id in its row, reads on after the migration.
 */

configureFastCheck('changes/rebuild');

let pglite: PGlite;
let server: OqlServer;

beforeAll(async () => {
  pglite = await emptyPglite();
  const db = databaseOf(pglite);
  await migrate(db, MIGRATIONS.filter((m) => m.version < 13));
  // Two changes as the service wrote them then: migration 12's function, the record as JSON text in the row.
  await db.query(
    `SELECT oql_service.append_changes('org_acme', 'u_old', 'rest', ARRAY['contact', 'contact'], ARRAY['con_old', 'con_old'], ARRAY['created', 'updated'],
       ARRAY[NULL, '["name"]'], ARRAY['{"id": "con_old", "name": "Old"}', '{"id": "con_old", "name": "Older"}'], ARRAY[NULL, '{"name": "Old"}'])`);
  server = await createServer({ db, env: {}, log: false });
}, 120_000);

afterAll(async () => {
  await server?.close();
  await pglite?.close();
});

type Op =
  | { kind: 'create'; n: number }
  | { kind: 'update'; pick: number }
  | { kind: 'delete'; pick: number }
  | { kind: 'restore'; pick: number }
  | { kind: 'purge' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 3 }).map((n) => ({ kind: 'create' as const, n })) },
  { weight: 5, arbitrary: fc.nat().map((pick) => ({ kind: 'update' as const, pick })) },
  { weight: 2, arbitrary: fc.nat().map((pick) => ({ kind: 'delete' as const, pick })) },
  { weight: 2, arbitrary: fc.nat().map((pick) => ({ kind: 'restore' as const, pick })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'purge' as const }) },
);

let run = 0;

describe('records rebuilt from what the log kept', () => {
  it('are the records each write left, whether the walk starts at a checkpoint or at the table', async () => {
    const logs = { always: new ChangeLog(server.db, server.catalog, { checkpoint: () => true }), never: new ChangeLog(server.db, server.catalog, { checkpoint: () => false }) };
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 24 }), fc.integer({ min: 1, max: 7 }), async (ops, limit) => {
        run++;
        for (const [name, log] of Object.entries(logs)) {
          const orgId = `org_rebuild_${name}_${run}`;
          const ctx = { catalog: server.catalog, orgId, userId: 'u_rebuild', changes: log.sink({ user_id: 'u_rebuild', surface: 'cli' }) };
          const get = (id: string) => getRecord(server.db, 'contact', id, ctx);
          const live: string[] = [];
          const deleted: string[] = [];
          // What each write left, in the order of the writes; the records a purge removes in one batch by id.
          const want: [string, string, Record<string, unknown> | null][] = [];
          const updates: { changed_fields: string[]; previous: Record<string, unknown> }[] = [];
          let i = 0;
          for (const o of ops) {
            i++;
            if (o.kind === 'create') {
              const { ids } = await bulkCreate(server.db, 'contact', Array.from({ length: o.n }, (_, k) => ({ name: `Made ${i}.${k}` })), ctx);
              for (const id of ids) want.push([id, 'created', await get(id)]);
              live.push(...ids);
            } else if (o.kind === 'update' && live.length > 0) {
              const id = live[o.pick % live.length]!;
              const before = await get(id);
              const after = await updateRecord(server.db, 'contact', id, { name: `Renamed ${i}`, status: i % 2 ? 'active' : 'inactive' }, ctx);
              want.push([id, 'updated', after]);
              // What changed, from get-one before and the answer after: fields in the record's order, with their old values.
              const differ = Object.keys(after).filter((k) => JSON.stringify(after[k]) !== JSON.stringify(before[k]));
              updates.push({ changed_fields: differ, previous: Object.fromEntries(differ.map((k) => [k, before[k]])) });
            } else if (o.kind === 'delete' && live.length > 0) {
              const id = live.splice(o.pick % live.length, 1)[0]!;
              const before = await get(id);
              const [gone] = await deleteRecords(server.db, 'contact', [id], ctx);
              // As the docs describe a deleted record: its values, updated_at and updated_by of the deletion, then the three lifecycle fields.
              want.push([id, 'deleted', { ...before, updated_at: gone!.deleted_at, updated_by: 'u_rebuild', is_deleted: true, deleted_at: gone!.deleted_at, deleted_by: 'u_rebuild' }]);
              deleted.push(id);
            } else if (o.kind === 'restore' && deleted.length > 0) {
              const id = deleted.splice(o.pick % deleted.length, 1)[0]!;
              want.push([id, 'restored', await restoreRecord(server.db, 'contact', id, ctx)]);
              live.push(id);
            } else if (o.kind === 'purge' && deleted.length > 0) {
              await purgeDeleted(server.db, server.catalog, { deletedBefore: Date.now() + 1000, changes: log.sink({ user_id: null, surface: 'system' }) });
              for (const id of [...deleted].sort()) want.push([id, 'purged', null]);
              deleted.length = 0;
            }
          }
          const got: [string, string, Record<string, unknown> | null][] = [];
          const gotUpdates: { changed_fields: string[] | null; previous: Record<string, unknown> | null }[] = [];
          let after = 0n;
          for (;;) {
            const page = await log.read(orgId, after, ['contact'], limit);
            got.push(...page.changes.map((c) => [c.record_id, c.operation, c.record] as [string, string, Record<string, unknown> | null]));
            gotUpdates.push(...page.changes.filter((c) => c.operation === 'updated').map((c) => ({ changed_fields: c.changed_fields, previous: c.previous })));
            after = [...page.next_cursor.slice(1)].reduce((n, ch) => n * 36n + BigInt(parseInt(ch, 36)), 0n);
            if (!page.has_more) break;
          }
          // Key order too, with one purge's records in id order on both sides.
          expect(JSON.stringify(purgesById(got))).toBe(JSON.stringify(purgesById(want)));
          expect(JSON.stringify(gotUpdates)).toBe(JSON.stringify(updates));
          // Each way was taken: every update, delete and restore kept its record, or none did.
          const kept = (await server.db.query<{ n: string }>('SELECT count(*)::text AS n FROM oql_service.changes WHERE org_id = $1 AND record IS NOT NULL', [orgId])).rows[0]!.n;
          expect(Number(kept)).toBe(name === 'never' ? 0 : want.filter(([, what]) => ['updated', 'deleted', 'restored'].includes(what)).length);
        }
      }),
      { numRuns: runs(12, 200) },
    );
  }, 120_000);
});

/** Consecutive purges sorted by record id: one purge's order among its records is the database's. */
function purgesById(list: [string, string, unknown][]): [string, string, unknown][] {
  const out = [...list];
  for (let i = 0; i < out.length; ) {
    let j = i;
    while (j < out.length && out[j]![1] === 'purged') j++;
    if (j > i) out.splice(i, j - i, ...out.slice(i, j).sort((a, b) => (a[0] < b[0] ? -1 : 1)));
    i = j === i ? i + 1 : j;
  }
  return out;
}

describe('the change log across migration 13', () => {
  it('reads the changes kept whole as they were, then the new ones after them', async () => {
    const log = new ChangeLog(server.db, server.catalog);
    const { rows: old } = await pglite.query<{ position: string; event_id: string }>("SELECT position::text, event_id::text FROM oql_service.changes WHERE org_id = 'org_acme' ORDER BY position");
    expect(old.map((r) => r.position)).toEqual(['1', '2']);
    const ctx = { catalog: server.catalog, orgId: 'org_acme', userId: 'u_new', changes: log.sink({ user_id: 'u_new', surface: 'cli' }) };
    const { ids } = await bulkCreate(server.db, 'contact', [{ name: 'New One' }, { name: 'New Two' }], ctx);
    const renamed = await updateRecord(server.db, 'contact', ids[0]!, { name: 'New One Renamed' }, ctx);

    const page = await log.read('org_acme', 0n, ['contact'], 100);
    expect(page.changes.map((c) => [c.record_id, c.operation, c.actor.user_id])).toEqual([
      ['con_old', 'created', 'u_old'], ['con_old', 'updated', 'u_old'], [ids[0], 'created', 'u_new'], [ids[1], 'created', 'u_new'], [ids[0], 'updated', 'u_new'],
    ]);
    expect(page.changes.slice(0, 2).map((c) => [c.event_id, c.record, c.previous])).toEqual([
      [old[0]!.event_id, { id: 'con_old', name: 'Old' }, null],
      [old[1]!.event_id, { id: 'con_old', name: 'Older' }, { name: 'Old' }],
    ]);
    expect(page.changes[2]!.record).toMatchObject({ id: ids[0], name: 'New One' });
    expect(page.changes[4]!.record).toEqual(renamed);
    // One position each, in order, the new ones after the old.
    // A cursor is "c" and the position in base 36.
    const positions = page.changes.map((c) => [...c.cursor.slice(1)].reduce((n, ch) => n * 36n + BigInt(parseInt(ch, 36)), 0n));
    for (let i = 1; i < positions.length; i++) expect(positions[i]! > positions[i - 1]!).toBe(true);
    expect(new Set(page.changes.map((c) => c.event_id)).size).toBe(5);
    // Read one at a time from each cursor: the same changes.
    let after = 0n;
    const stepped = [];
    for (;;) {
      const one = await log.read('org_acme', after, ['contact'], 1);
      if (one.changes.length === 0) break;
      stepped.push(one.changes[0]!);
      after = positions[stepped.length - 1]!;
    }
    expect(stepped).toEqual(page.changes);
  });
});

describe('a write says whether anything listens to its changes', () => {
  it('says yes for an organization with an active webhook endpoint only, on every kind of write, in the write\'s own statements', async () => {
    const store = new WebhookStore(server.db);
    const head = 0n;
    // org_hears: an active endpoint; org_paused: a paused one (and an active one of another organization); org_none: none.
    await store.create('org_hears', 'u_a', { url: 'https://hooks.example.com/a', description: null, objects: null, operations: null }, head, 10);
    const paused = await store.create('org_paused', 'u_a', { url: 'https://hooks.example.com/p', description: null, objects: null, operations: null }, head, 10);
    await server.db.query(`UPDATE oql_service.webhook_endpoints SET status = 'paused' WHERE id = $1`, [paused.id]);
    const heard: Record<string, boolean[]> = {};
    for (const checkpoint of [true, false]) {
      const log = new ChangeLog(server.db, server.catalog, { checkpoint: () => checkpoint, listening: listeningSql });
      for (const orgId of ['org_hears', 'org_paused', 'org_none']) {
        const answers = (heard[orgId] ??= []);
        const ctx = () => ({ catalog: server.catalog, orgId, userId: 'u_a', changes: log.sink({ user_id: 'u_a', surface: 'rest' }) });
        let c = ctx();
        const { ids } = await bulkCreate(server.db, 'contact', [{ name: 'One' }, { name: 'Two' }], c);
        answers.push(c.changes.listened!);
        c = ctx();
        await bulkCreate(server.db, 'contact', [{ name: 'Three' }], c);
        answers.push(c.changes.listened!);
        c = ctx();
        await updateRecord(server.db, 'contact', ids[0]!, { name: 'Renamed' }, c);
        answers.push(c.changes.listened!);
        c = ctx();
        await deleteRecords(server.db, 'contact', [ids[0]!], c);
        answers.push(c.changes.listened!);
        c = ctx();
        await restoreRecord(server.db, 'contact', ids[0]!, c);
        answers.push(c.changes.listened!);
      }
    }
    expect(heard).toEqual({
      org_hears: Array(10).fill(true),
      org_paused: Array(10).fill(false),
      org_none: Array(10).fill(false),
    });
    // A sink that recorded nothing heard nothing; a log with no condition to ask cannot tell, and says so.
    expect(new ChangeLog(server.db, server.catalog, { listening: listeningSql }).sink({ user_id: 'u_a', surface: 'rest' }).listened).toBe(false);
    const blind = new ChangeLog(server.db, server.catalog).sink({ user_id: 'u_a', surface: 'rest' });
    expect(blind.listened).toBe(true);
  });
});
