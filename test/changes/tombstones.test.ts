import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteQualified } from '../../src/catalog/quote.js';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import { connectorRecords } from '../../src/query/filter.js';
import { deleteRecords, type Writable } from '../../src/records/index.js';
import { PROPERTY_TIMEOUT, assertSized, configureFastCheck, runs } from '../props/harness.js';
import { expectEnvelope } from '../server/support.js';
import { KEYS, rawClient, startChangesService, type ChangesHarness, type DbKind } from './support.js';

/**
 * Tombstones in connector syncs (docs/connector.md, "Deletes"), on embedded PGlite and on
 * PostgreSQL 15, two organizations: records are written, deleted and restored through the REST
 * API, and synced page by page with and without include_deleted. The truth is read from the table
 * with plain SQL, never from the code under test. Pages are read through the library with a pinned
 * `now` and no lag, so that what was just written is due without waiting; the cutoff's other term,
 * the oldest open write transaction, still holds (the late-deletion test relies on it).
 */

configureFastCheck('changes/tombstones');
const SECRET = 'tombstone-test-secret-0123456789';
const FAR = Date.UTC(2100, 0, 1);
const ORGS = { org_acme: KEYS.acmeAdmin, org_globex: KEYS.globexAdmin } as const;
type Org = keyof typeof ORGS;

interface Row {
  id: string;
  name: string | null;
  updated_at: number | null;
  is_deleted: boolean;
  deleted_at: number | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

describe.each<DbKind>(['pglite', 'postgres'])('connector tombstones on %s', (kind) => {
  let h: ChangesHarness;
  let table: string;

  beforeAll(async () => {
    h = await startChangesService(kind);
    const obj = h.server.catalog.objects.get('contact')!;
    table = quoteQualified(h.server.catalog.mapping.schema, obj.table);
  }, 120_000);

  afterAll(async () => {
    await h?.close();
  });

  /** Every contact row of the organization, deleted ones included. */
  async function truth(org: Org): Promise<Map<string, Row>> {
    const { rows } = await h.db.query<Record<string, unknown>>(`SELECT id, name, updated_at, is_deleted, deleted_at FROM ${table} WHERE org_id = $1`, [org]);
    const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
    return new Map(rows.map((r) => [String(r['id']), { id: String(r['id']), name: (r['name'] as string | null) ?? null, updated_at: num(r['updated_at']), is_deleted: r['is_deleted'] === true, deleted_at: num(r['deleted_at']) }]));
  }

  const options = (org: Org, pageSize: number) => ({ catalog: h.server.catalog, slug: 'contact', orgId: org, tokenSecret: SECRET, now: FAR, syncLagMs: 0, pageSize });
  const body = (from: number | null, includeDeleted: boolean, token: string | null) => ({
    query: { fields: ['name', 'status', 'updated_at'], ...(from === null ? {} : { filter: { and: [{ field: 'updated_at', operator: 'gte', value: from }] } }) },
    next_token: token,
    ...(includeDeleted ? { include_deleted: true } : {}),
  });

  /** One sync walked to its last page: every record in delivery order, and the page count. */
  async function sync(org: Org, from: number | null, includeDeleted: boolean, pageSize = 3, between?: () => Promise<void>): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    let token: string | null = null;
    for (let pages = 0; ; pages++) {
      if (pages > 1000) throw new Error('the sync does not end');
      const page = await connectorRecords(h.db, body(from, includeDeleted, token), options(org, pageSize));
      expect(page.records.length).toBeLessThanOrEqual(pageSize);
      out.push(...page.records);
      token = page.next_token;
      if (token === null) return out;
      await between?.();
    }
  }

  /** The largest updated_at a sync delivered: where the consumer's next sync starts (gte). */
  const cursorOf = (records: Record<string, unknown>[], from: number) => records.reduce((m, r) => (typeof r['updated_at'] === 'string' ? Math.max(m, Date.parse(r['updated_at'])) : m), from);

  async function create(org: Org, names: string[]): Promise<string[]> {
    const a = await h.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: ORGS[org], body: names.map((name) => ({ name, status: 'active' })) });
    expect(a.status, a.text).toBe(200);
    return a.json.data.ids as string[];
  }
  async function remove(org: Org, id: string): Promise<number> {
    const a = await h.call('DELETE', `/api/v1/org/objects/contact/record/${id}`, { key: ORGS[org] });
    expect(a.status, a.text).toBe(200);
    return a.json.data.deleted_at as number;
  }
  async function restore(org: Org, id: string): Promise<void> {
    const a = await h.call('POST', `/api/v1/org/objects/contact/record/${id}/restore`, { key: ORGS[org] });
    expect(a.status, a.text).toBe(200);
  }
  async function rename(org: Org, id: string, name: string): Promise<void> {
    const a = await h.call('PUT', `/api/v1/org/objects/contact/record/${id}`, { key: ORGS[org], body: { name } });
    expect(a.status, a.text).toBe(200);
  }

  function expectKeysetOrder(records: Record<string, unknown>[]): void {
    const keys = records.map((r) => [typeof r['updated_at'] === 'string' ? Date.parse(r['updated_at']) : Infinity, String(r['id'])] as const);
    for (let i = 1; i < keys.length; i++) {
      const [[a, x], [b, y]] = [keys[i - 1]!, keys[i]!];
      expect(a < b || (a === b && x < y), `${x} before ${y}`).toBe(true);
    }
  }

  it('sends a tombstone for each record deleted since the cursor, in (updated_at, id) order, and none of the other organization\'s', async () => {
    const acme = await create('org_acme', ['T1 Acme', 'T2 Acme', 'T3 Acme', 'T4 Acme', 'T5 Acme']);
    const globex = await create('org_globex', ['T1 Globex', 'T2 Globex']);
    const start = cursorOf(await sync('org_acme', null, true), 0);

    const deletedAt = new Map<string, number>();
    for (const id of [acme[1]!, acme[3]!]) deletedAt.set(id, await remove('org_acme', id));
    const bulk = await h.call('POST', '/api/v1/org/objects/contact/record/bulk_delete', { key: KEYS.acmeAdmin, body: { ids: [acme[4]] } });
    expect(bulk.status, bulk.text).toBe(200);
    deletedAt.set(acme[4]!, bulk.json.data.records[0].deleted_at);
    await remove('org_globex', globex[0]!);

    const records = await sync('org_acme', start, true, 2);
    expectKeysetOrder(records);
    const rows = await truth('org_acme');
    const tombstones = records.filter((r) => r['is_deleted'] === true);
    expect(new Set(tombstones.map((r) => r['id']))).toEqual(new Set(deletedAt.keys()));
    for (const t of tombstones) {
      const row = rows.get(t['id'] as string)!;
      expect(row.deleted_at).toBe(deletedAt.get(row.id));
      expect(t).toEqual({ id: row.id, is_deleted: true, deleted_at: iso(row.deleted_at), updated_at: iso(row.updated_at) });
    }
    // Live records: the requested fields, then is_deleted false and deleted_at null.
    for (const r of records.filter((x) => x['is_deleted'] !== true)) {
      expect(Object.keys(r)).toEqual(['id', 'name', 'status', 'updated_at', 'is_deleted', 'deleted_at']);
      expect([r['is_deleted'], r['deleted_at'], rows.get(r['id'] as string)?.is_deleted]).toEqual([false, null, false]);
    }
    const foreign = new Set((await truth('org_globex')).keys());
    expect(records.filter((r) => foreign.has(r['id'] as string))).toEqual([]);

    // The other organization gets its own tombstone and nothing of the first one.
    const theirs = await sync('org_globex', start, true);
    expect(theirs.filter((r) => r['is_deleted'] === true).map((r) => r['id'])).toEqual([globex[0]]);
    expect(theirs.filter((r) => rows.has(r['id'] as string))).toEqual([]);
  });

  it('brings a record deleted then restored back live, as a tombstone only in a sync between the two', async () => {
    const [id] = await create('org_acme', ['Restored Acme']);
    const start = cursorOf(await sync('org_acme', null, true), 0);
    await remove('org_acme', id!);
    const between = await sync('org_acme', start, true);
    expect(between.filter((r) => r['id'] === id).map((r) => r['is_deleted'])).toEqual([true]);
    await restore('org_acme', id!);
    const after = await sync('org_acme', cursorOf(between, start), true);
    const restored = (await truth('org_acme')).get(id!)!;
    expect(after.filter((r) => r['id'] === id)).toEqual([{ id, name: 'Restored Acme', status: 'active', updated_at: iso(restored.updated_at), is_deleted: false, deleted_at: null }]);
    // Deleted and restored within one sync's window: the record comes live, once.
    await remove('org_acme', id!);
    await restore('org_acme', id!);
    const both = await sync('org_acme', cursorOf(after, start), true);
    expect(both.filter((r) => r['id'] === id).map((r) => r['is_deleted'])).toEqual([false]);
  });

  it('rebuilds the live set exactly by replaying syncs with include_deleted, writes between pages included', async () => {
    for (const org of Object.keys(ORGS) as Org[]) {
      const mirror = new Map<string, string | null>();
      const apply = (records: Record<string, unknown>[]) => {
        for (const r of records) {
          if (r['is_deleted'] === true) mirror.delete(r['id'] as string);
          else mirror.set(r['id'] as string, (r['name'] as string | null) ?? null);
        }
      };
      const mine = await create(org, Array.from({ length: 8 }, (_, i) => `Replay ${i} ${org}`));
      let step = 0;
      // Deterministic writes between pages: deletes, restores, renames and creates in turn.
      const write = async () => {
        const rows = [...(await truth(org)).values()].filter((r) => mine.includes(r.id));
        const pick = rows[(step * 5) % rows.length]!;
        switch (step++ % 4) {
          case 0: if (!pick.is_deleted) await remove(org, pick.id); break;
          case 1: if (pick.is_deleted) await restore(org, pick.id); else await rename(org, pick.id, `${pick.name} renamed`); break;
          case 2: mine.push(...(await create(org, [`Replay late ${step} ${org}`]))); break;
          default: if (!pick.is_deleted) await remove(org, pick.id);
        }
      };
      let records = await sync(org, null, true, 3, write);
      apply(records);
      let from = cursorOf(records, 0);
      for (let round = 0; round < 3; round++) {
        records = await sync(org, from, true, 2, round < 2 ? write : undefined);
        apply(records);
        from = cursorOf(records, from);
      }
      // A last sync with no writes during it: the mirror is the live set, every record and name.
      apply(await sync(org, from, true, 2));
      const live = new Map([...(await truth(org)).values()].filter((r) => !r.is_deleted).map((r) => [r.id, r.name]));
      expect(new Map([...mirror].sort())).toEqual(new Map([...live].sort()));
      expect([...(await truth(org)).values()].some((r) => r.is_deleted && mine.includes(r.id))).toBe(true);
    }
  });

  it('replays to the live set under random writes of both organizations between pages and syncs (property)', async () => {
    type Op = { op: 'create' | 'rename' | 'delete' | 'restore'; pick: number; org: Org };
    const opArb = fc.record({ op: fc.constantFrom('create', 'rename', 'delete', 'restore'), pick: fc.nat(1000), org: fc.constantFrom<Org>('org_acme', 'org_acme', 'org_globex') }) as fc.Arbitrary<Op>;
    let serial = 0;
    const apply = async ({ op, pick, org }: Op) => {
      const rows = [...(await truth(org)).values()].filter((r) => r.updated_at !== null).sort((a, b) => (a.id < b.id ? -1 : 1));
      const live = rows.filter((r) => !r.is_deleted);
      const deleted = rows.filter((r) => r.is_deleted);
      const target = (list: Row[]) => list[pick % list.length]!;
      if (op === 'delete' && live.length > 0) await remove(org, target(live).id);
      else if (op === 'restore' && deleted.length > 0) await restore(org, target(deleted).id);
      else if (op === 'rename' && live.length > 0) await rename(org, target(live).id, `Prop ${serial++} ${org}`);
      else await create(org, [`Prop ${serial++} ${org}`]);
    };
    await assertSized(fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 10 }), fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 3, maxLength: 3 }), async (ops, sizes) => {
      const queue = [...ops];
      const between = async () => {
        const next = queue.shift();
        if (next) await apply(next);
      };
      const mirror = new Map<string, string | null>();
      const take = (records: Record<string, unknown>[]) => {
        for (const r of records) {
          if (r['is_deleted'] === true) mirror.delete(r['id'] as string);
          else mirror.set(r['id'] as string, (r['name'] as string | null) ?? null);
        }
      };
      let records = await sync('org_acme', null, true, sizes[0]!, between);
      take(records);
      let from = cursorOf(records, 0);
      for (let round = 1; queue.length > 0 || round < 3; round++) {
        if (round > 50) throw new Error('the writes never ran out');
        await between();
        records = await sync('org_acme', from, true, sizes[round % sizes.length]!, between);
        take(records);
        from = cursorOf(records, from);
      }
      // A last sync with no writes during it. A write between the pages of a sync is delivered by
      // that sync only when no write transaction of the database (the service's own, a lease
      // released just after an answer, autovacuum's) was open at its first page; otherwise it
      // waits for the next sync, as the connector promises (docs/connector.md).
      take(await sync('org_acme', from, true, sizes[0]!));
      const live = new Map([...(await truth('org_acme')).values()].filter((r) => !r.is_deleted).map((r) => [r.id, r.name]));
      expect(new Map([...mirror].sort())).toEqual(new Map([...live].sort()));
    }), runs(4, 60));
  }, PROPERTY_TIMEOUT);

  it('without the flag, answers as before: live records only, no lifecycle keys, tokens of one mode refused in the other', async () => {
    const [gone] = await create('org_acme', ['Flag Off Acme']);
    await remove('org_acme', gone!);
    const withFlag = await sync('org_acme', null, true, 4);
    const without = await sync('org_acme', null, false, 4);
    const live = [...(await truth('org_acme')).values()].filter((r) => !r.is_deleted).map((r) => r.id);
    expect(new Set(without.map((r) => r['id']))).toEqual(new Set(live));
    for (const r of without) expect(Object.keys(r)).toEqual(['id', 'name', 'status', 'updated_at']);
    expect(without.some((r) => r['id'] === gone)).toBe(false);
    expect(withFlag.some((r) => r['id'] === gone && r['is_deleted'] === true)).toBe(true);
    expect(without).toEqual(withFlag.filter((r) => r['is_deleted'] === false).map(({ is_deleted: _d, deleted_at: _a, ...r }) => r));

    const first = await connectorRecords(h.db, body(null, true, null), options('org_acme', 2));
    const plain = await connectorRecords(h.db, body(null, false, null), options('org_acme', 2));
    for (const [token, flag] of [[first.next_token!, false], [plain.next_token!, true]] as const) {
      const e = await connectorRecords(h.db, body(null, flag, token), options('org_acme', 2)).then(() => null, (err: unknown) => err);
      expect(e).toBeInstanceOf(OqlError);
      expect((e as OqlError).code).toBe('INVALID_TOKEN');
      expect((e as OqlError).message).toContain('include_deleted');
    }
  });

  it('serves tombstones over REST and refuses include_deleted where a sync cannot place deletions', async () => {
    // A deletion stamped a minute ago (by hand, as another writer would): due past the service's sync lag.
    const [id] = await create('org_acme', ['Over REST Acme']);
    const at = Date.now() - 60_000;
    await h.db.query(`UPDATE ${table} SET is_deleted = true, deleted_at = $2, updated_at = $2 WHERE org_id = 'org_acme' AND id = $1`, [id, at]);
    const path = '/api/v1/flowconnector/objects/contact/records';
    const rest = await h.call('POST', path, { key: KEYS.acmeAdmin, body: body(at, true, null) });
    expect(rest.status, rest.text).toBe(200);
    expect(rest.json.data.records).toContainEqual({ id, is_deleted: true, deleted_at: iso(at), updated_at: iso(at) });
    const other = await h.call('POST', path, { key: KEYS.globexAdmin, body: body(at, true, null) });
    expect(other.json.data.records.some((r: { id: string }) => r.id === id)).toBe(false);

    const notBoolean = await h.call('POST', path, { key: KEYS.acmeAdmin, body: { ...body(null, false, null), include_deleted: 'yes' } });
    expectEnvelope(notBoolean, 400, 'VALIDATION_FAILED');
    expect(notBoolean.text).toContain('include_deleted');
    const byCreated = await h.call('POST', path, { key: KEYS.acmeAdmin, body: { query: { fields: ['name'], filter: { and: [{ field: 'created_at', operator: 'gte', value: 0 }] } }, include_deleted: true } });
    expectEnvelope(byCreated, 400, 'VALIDATION_FAILED');
    expect(byCreated.text).toContain('updated_at');
  });

  it.runIf(kind === 'postgres')('delivers the tombstone of a deletion that commits late, after newer records were delivered', async () => {
    const [late, ...others] = await create('org_acme', ['Late Delete Acme', 'Other 1 Acme', 'Other 2 Acme']);
    const start = cursorOf(await sync('org_acme', null, true), 0);
    const client = await rawClient(h);
    let release = () => {};
    let deleting: Promise<unknown> = Promise.resolve();
    try {
      let reached!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const atCommit = new Promise<void>((resolve) => (reached = resolve));
      const held: Writable = {
        async query(text: string, params?: unknown[]) {
          if (text === 'COMMIT') {
            reached();
            await gate;
          }
          return client.query(text, params);
        },
      };
      deleting = deleteRecords(held, 'contact', [late], { catalog: h.server.catalog, orgId: 'org_acme', userId: 'u_slow' });
      await atCommit;
      // While the deletion is open: newer writes commit, and a sync pages through them.
      for (const id of others) await rename('org_acme', id!, `renamed while open ${id}`);
      await create('org_acme', ['Created While Open Acme']);
      const during = await sync('org_acme', start, true, 1);
      // The late record itself may come again live (it shares the start's instant), never as a tombstone yet.
      expect(during.some((r) => r['id'] === late && r['is_deleted'] === true)).toBe(false);
      release();
      await deleting;
      const stamp = (await truth('org_acme')).get(late!)!.updated_at!;
      // The rows stamped after the deletion committed before it; the sync stayed behind its stamp.
      expect(during.every((r) => Date.parse(r['updated_at'] as string) < stamp)).toBe(true);
      const next = await sync('org_acme', cursorOf(during, start), true, 1);
      expect(next.filter((r) => r['id'] === late)).toEqual([{ id: late, is_deleted: true, deleted_at: iso(stamp), updated_at: iso(stamp) }]);
      expect(next.some((r) => others.includes(r['id'] as string))).toBe(true);
    } finally {
      release();
      await deleting.catch(() => undefined);
      await client.end();
    }
  });
});
