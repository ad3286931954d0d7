import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runs, runSeed } from '../props/harness.js';
import { KEYS, startChangesService, type ChangesHarness, type DbKind } from './support.js';

/**
 * Replay equals state. Several clients write leads concurrently — create, upsert (new and
 * existing), update, delete, restore and purge, in random interleavings (on PostgreSQL their
 * transactions commit out of order) — while a consumer follows the feed with random page sizes
 * and waits, hanging up in the middle of long-polls and resuming from its last cursor. Applying
 * the changes it read, in order, must rebuild exactly the leads that get-one and the filter
 * return at the end, deletions included, with no change read twice. The other organization,
 * writing beside them, must never appear in the feed.
 */

const DAY = 86_400_000;
const STATUSES = ['new', 'working', 'nurturing', 'converted', 'disqualified'];

type Op =
  | { kind: 'create'; names: string[] }
  | { kind: 'upsert'; pick: number; name: string; fresh: string }
  | { kind: 'update'; pick: number; score: number; status: number }
  | { kind: 'delete'; picks: number[] }
  | { kind: 'restore'; pick: number }
  | { kind: 'purge' };

const name = fc.string({ minLength: 1, maxLength: 12 }).map((s) => `L ${s}`);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('create' as const), names: fc.array(name, { minLength: 1, maxLength: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('upsert' as const), pick: fc.nat(), name, fresh: name }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('update' as const), pick: fc.nat(), score: fc.integer({ min: -1000, max: 1000 }), status: fc.nat(4) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), picks: fc.array(fc.nat(), { minLength: 1, maxLength: 2 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('restore' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'purge' as const }) },
);

interface Reading {
  readonly limit: number;
  readonly wait: 0 | 1;
  /** Hang up this read after a moment (only when it waits). */
  readonly hangUp: boolean;
}
const reading: fc.Arbitrary<Reading> = fc.record({ limit: fc.integer({ min: 1, max: 7 }), wait: fc.constantFrom(0 as const, 1 as const), hangUp: fc.boolean() });

describe.each<DbKind>(['pglite', 'postgres'])('replay of the change log on %s', (kind) => {
  let h: ChangesHarness;
  /** Ids of leads any client created, live or not: what the clients pick from. */
  const known: string[] = [];

  beforeAll(async () => {
    // Changes outlive the purge age, so a purge round never prunes what the consumer has yet to read.
    h = await startChangesService(kind, { changesRetentionDays: 40 });
  }, 120_000);

  afterAll(async () => {
    await h?.close();
  });

  const pick = (n: number) => (known.length === 0 ? 'lea_none' : known[n % known.length]!);

  async function run(o: Op, key: string): Promise<void> {
    const base = '/api/v1/org/objects/lead/record';
    switch (o.kind) {
      case 'create': {
        const a = await h.call('POST', `${base}/bulk_create`, { key, body: o.names.map((n) => ({ name: n })) });
        if (a.status === 200) known.push(...a.json.data.ids);
        return;
      }
      case 'upsert': {
        const a = await h.call('POST', `${base}/bulk_upsert`, { key, body: { values: [{ id: pick(o.pick), name: o.name }, { name: o.fresh }] } });
        if (a.status === 200) for (const r of a.json.data.records) if (r.action === 'CREATED') known.push(r.id);
        return;
      }
      case 'update':
        await h.call('PUT', `${base}/${pick(o.pick)}`, { key, body: { score: o.score, status: STATUSES[o.status] } });
        return;
      case 'delete':
        await h.call('POST', `${base}/bulk_delete`, { key, body: { ids: o.picks.map(pick) } });
        return;
      case 'restore':
        await h.call('POST', `${base}/${pick(o.pick)}/restore`, { key });
        return;
      case 'purge':
        // Far enough ahead that every lead deleted so far is past its 30 days; the changes' own retention is further still.
        await h.server.maintenance.run(Date.now() + 31 * DAY);
        return;
    }
  }

  it('rebuilds exactly what get-one and the filter return, deletions included, from the changes read in order', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.array(op, { minLength: 1, maxLength: 8 }), { minLength: 2, maxLength: 3 }),
      fc.array(op, { maxLength: 4 }),
      fc.array(reading, { minLength: 1, maxLength: 12 }),
      async (clients, globexOps, readings) => {
        const start = (await h.call('GET', '/api/v1/changes/head', { key: KEYS.acmeAdmin })).json.data.cursor as string;
        // The state when this run starts, as the feed's consumer would have it from earlier runs.
        const state = new Map<string, Record<string, unknown>>();
        for (const r of await allLeads()) state.set(r.id as string, r);
        const read: any[] = [];
        let cursor = start;
        let writing = true;
        let i = 0;
        const consumer = (async () => {
          for (;;) {
            const r = readings[i++ % readings.length]!;
            const controller = new AbortController();
            // Only a read sent after every write was acknowledged may end the run when it is empty.
            const sentAfterWrites = !writing;
            const wait = writing ? r.wait : 0;
            const url = `${h.baseUrl}/api/v1/changes?after=${cursor}&limit=${r.limit}&objects=lead&wait=${wait}`;
            const answer = fetch(url, { headers: { authorization: `Bearer ${KEYS.acmeAdmin}` }, signal: controller.signal });
            if (r.hangUp && wait > 0) setImmediate(() => controller.abort());
            let page: any;
            try {
              const res = await answer;
              const body = (await res.json()) as { data: unknown };
              // Hung-up long-polls still finishing their reads count against the user's requests at
              // once: a consumer that resumes at once meets the limit, and waits as it is told.
              if (res.status === 429 && (body.data as { error_code?: string }).error_code === 'TOO_MANY_REQUESTS') {
                await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after') ?? '1') * 1000));
                continue;
              }
              if (res.status !== 200) throw new Error(`the feed answered ${res.status}: ${JSON.stringify(body)}`);
              page = body.data;
            } catch (e) {
              if (controller.signal.aborted) continue; // hung up: resume from the same cursor
              throw e;
            }
            read.push(...page.changes);
            cursor = page.next_cursor;
            if (sentAfterWrites && !page.has_more && page.changes.length === 0) return;
          }
        })();
        await Promise.all([
          ...clients.map(async (ops) => { for (const o of ops) await run(o, KEYS.acmeAdmin); }),
          (async () => { for (const o of globexOps) await run(o, KEYS.globexAdmin); })(),
        ]);
        writing = false;
        await consumer;

        expect(new Set(read.map((c) => c.event_id)).size).toBe(read.length);
        const fromLog = new Set<string>();
        for (const c of read) {
          fromLog.add(c.record_id);
          expect(c.record === null || c.record.org_id === 'org_acme').toBe(true);
          if (c.operation === 'created' || c.operation === 'updated' || c.operation === 'restored') state.set(c.record_id, c.record);
          else state.delete(c.record_id);
        }
        const live = await allLeads();
        expect([...state.keys()].sort()).toEqual(live.map((r) => r.id as string).sort());
        for (const r of live) {
          const rebuilt = state.get(r.id as string)!;
          for (const [field, value] of Object.entries(r)) expect(rebuilt[field], `${r.id}.${field}`).toEqual(value);
        }
        // get-one agrees, field for field and in order, with what the log said last.
        for (const id of [...state.keys()].filter((id) => fromLog.has(id)).slice(0, 20)) {
          const one = await h.call('GET', `/api/v1/org/objects/lead/record/${id}`, { key: KEYS.acmeAdmin });
          expect(one.json.data).toEqual(state.get(id));
          expect(Object.keys(one.json.data)).toEqual(Object.keys(state.get(id)!));
        }
      },
    ), { numRuns: runs(4, 40), seed: runSeed() });
  }, 240_000);

  /** Every live lead of org_acme, whole, as the filter returns it. */
  async function allLeads(): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    for (let page = 1; ; page++) {
      const a = await h.call('POST', '/api/v1/org/objects/lead/filter', { key: KEYS.acmeAdmin, body: { query: { pagination: { page, page_size: 1000 } } } });
      expect(a.status, a.text).toBe(200);
      out.push(...a.json.data.records);
      if (a.json.data.records.length < 1000) return out;
    }
  }
});
