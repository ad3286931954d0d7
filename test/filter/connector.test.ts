import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import { compileConnectorPage, type ConnectorOptions } from '../../src/filter/index.js';
import { connectorRecords } from '../../src/query/filter.js';
import { errorEnvelope } from '../../src/query/envelope.js';
import { PROPERTY_TIMEOUT, configureFastCheck, runs } from '../props/harness.js';
import { filterHarness, sorted } from './harness.js';

/**
 * The connector (docs/connector.md) on PGlite: token pagination returns every record once in
 * (timestamp, id) order, datetimes as ISO strings that round-trip, the sync lag holds back
 * recent records, tokens are bound to their request and expire, and an incremental sync with
 * writes between its pages loses nothing. Expectations come from the fixture rows or from
 * hand-written SQL over the tables, never from the code under test.
 */

configureFastCheck('filter/connector');
const { env, state } = filterHarness();
const SECRET = 'connector-test-secret-0123456789';
const DAY = 86_400_000;
const FAR = Date.UTC(2100, 0, 1);

const crm = (extra: Partial<ConnectorOptions> = {}): ConnectorOptions => ({ catalog: env.crm.catalog, slug: 'contact', orgId: 'org_acme', tokenSecret: SECRET, now: FAR, ...extra });

async function walk(body: { query: Record<string, unknown> }, options: ConnectorOptions, between?: () => Promise<void>): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  let token: string | null = null;
  for (let pages = 0; ; pages++) {
    if (pages > 10_000) throw new Error('the sync does not end');
    const page = await connectorRecords(state.db, { ...body, next_token: token }, options);
    expect(page.records.length).toBeLessThanOrEqual(options.pageSize ?? 3000);
    out.push(...page.records);
    token = page.next_token;
    if (token === null) return out;
    await between?.();
  }
}

async function rejected(p: Promise<unknown>): Promise<OqlError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(OqlError);
    return e as OqlError;
  }
  throw new Error('expected a rejection');
}

describe('connector records', () => {
  it('walks an incremental sync page by page: each record once, ordered by (updated_at, id), ISO datetimes', async () => {
    const live = env.crm.oracle.live('contact', 'org_acme');
    const times = live.map((r) => r['updated_at']).filter((v): v is number => typeof v === 'number').sort((a, b) => a - b);
    const from = times[Math.floor(times.length / 3)]!;
    const records = await walk({ query: { fields: ['name', 'email', 'updated_at', 'birthday', 'tags'].slice(0, 4), filter: { and: [{ field: 'updated_at', operator: 'gte', value: from }] } } }, crm({ pageSize: 13 }));
    const expected = live
      .filter((r) => typeof r['updated_at'] === 'number' && (r['updated_at'] as number) >= from)
      .sort((a, b) => (a['updated_at'] as number) - (b['updated_at'] as number) || ((a['id'] as string) < (b['id'] as string) ? -1 : 1));
    const iso = (v: unknown) => (typeof v === 'number' ? new Date(v).toISOString() : null);
    expect(records).toEqual(expected.map((r) => ({ id: r['id'], name: r['name'] === '' ? null : r['name'], email: r['email'] ?? null, updated_at: iso(r['updated_at']), birthday: iso(r['birthday']) })));
    for (const r of records.slice(0, 20)) expect(Date.parse(r['updated_at'] as string)).toBe(live.find((x) => x['id'] === r['id'])!['updated_at']);
  });

  it('without a filter returns every record, those without updated_at last', async () => {
    const records = await walk({ query: { fields: ['updated_at'] } }, crm({ pageSize: 17, orgId: 'org_globex' }));
    const live = env.crm.oracle.live('contact', 'org_globex');
    expect(sorted(records.map((r) => r['id']))).toEqual(sorted(live.map((r) => r['id'])));
    const firstNull = records.findIndex((r) => r['updated_at'] === null);
    expect(firstNull).toBeGreaterThan(0);
    expect(records.slice(firstNull).every((r) => r['updated_at'] === null)).toBe(true);
  });

  it('pages by id alone on an object without updated_at', async () => {
    const records = await walk({ query: { fields: ['subject'] } }, { catalog: env.helpdesk.catalog, slug: 'ticket', orgId: 'org_south', tokenSecret: SECRET, pageSize: 50 });
    const ids = env.helpdesk.oracle.live('ticket', 'org_south').map((r) => r['id'] as string).sort();
    expect(records.map((r) => r['id'])).toEqual(ids);
  });

  it('leaves records stamped at or after now − syncLagMs for the next sync', async () => {
    const live = env.crm.oracle.live('contact', 'org_acme');
    const times = live.map((r) => r['updated_at']).filter((v): v is number => typeof v === 'number').sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)]!;
    const records = await walk({ query: { fields: ['updated_at'], filter: { and: [{ field: 'updated_at', operator: 'gte', value: 0 }] } } }, crm({ now: median + 60_000, syncLagMs: 60_000, pageSize: 1000 }));
    expect(records.length).toBe(times.filter((t) => t < median).length);
    const defaultLag = await walk({ query: { fields: ['updated_at'], filter: { and: [{ field: 'updated_at', operator: 'gte', value: 0 }] } } }, crm({ now: median + 5_001, pageSize: 1000 }));
    expect(defaultLag.length).toBe(times.filter((t) => t <= median).length);
  });

  it('accepts the returned ISO datetimes back as filter values, and the other operators', async () => {
    const first = (await connectorRecords(state.db, { query: { fields: ['updated_at'], filter: { and: [{ field: 'updated_at', operator: 'gte', value: 0 }] } } }, crm({ pageSize: 5 }))).records[3]!;
    const same = await connectorRecords(state.db, { query: { fields: ['status'], filter: { and: [{ field: 'updated_at', operator: 'eq', value: first['updated_at'] }, { field: 'id', operator: 'eq', value: first['id'] }] } } }, crm());
    expect(same.records.map((r) => r['id'])).toEqual([first['id']]);
    const active = await walk({ query: { fields: ['status'], filter: { and: [{ field: 'status', operator: 'in', value: ['active', 'bounced'] }, { field: 'created_at', operator: 'lte', value: Date.UTC(2025, 0, 1) }] } } }, crm({ pageSize: 40 }));
    const expected = env.crm.oracle.live('contact', 'org_acme').filter((r) => ['active', 'bounced'].includes(r['status'] as string) && typeof r['created_at'] === 'number' && (r['created_at'] as number) <= Date.UTC(2025, 0, 1));
    expect(sorted(active.map((r) => r['id']))).toEqual(sorted(expected.map((r) => r['id'])));
  });

  it('rejects bad bodies with every problem', async () => {
    const e = await rejected(connectorRecords(state.db, { query: { filter: { and: [{ field: 'updated_at', operator: 'gte' }, { or: [] }, { field: 'nmae', operator: 'eq', value: 'x' }] } }, next_token: 5 }, crm()));
    expect(e.code).toBe('VALIDATION_FAILED');
    expect(e.validationErrors!.map((v) => [v.meta_data, v.error_code])).toEqual([
      ['next_token', 'INVALID_BODY'],
      ['query.fields', 'INVALID_BODY'],
      ['query.filter.and[0].value', 'INVALID_BODY'],
      ['query.filter.and[1].or', 'INVALID_BODY'],
      ['query.filter.and[1]', 'INVALID_BODY'],
      ['query.filter.and[2].field', 'UNKNOWN_FIELD'],
    ]);
  });
});

describe('next_token', () => {
  const body = { query: { fields: ['name'], filter: { and: [{ field: 'updated_at', operator: 'gte', value: 0 }] } } };
  const firstToken = async (o: ConnectorOptions = crm({ pageSize: 10 })): Promise<string> => (await connectorRecords(state.db, body, o)).next_token!;

  it('continues only the request it was issued for', async () => {
    const token = await firstToken();
    const expectInvalid = async (b: unknown, o: ConnectorOptions, why: RegExp) => {
      const e = await rejected(connectorRecords(state.db, b, o));
      expect(e.code).toBe('INVALID_TOKEN');
      expect(e.status).toBe(400);
      expect(e.message).toMatch(why);
      expect(errorEnvelope(e).data.error_code).toBe('INVALID_TOKEN');
    };
    const next = { ...body, next_token: token };
    await expect(connectorRecords(state.db, next, crm({ pageSize: 10 }))).resolves.toBeTruthy();
    await expectInvalid(next, crm({ pageSize: 10, orgId: 'org_globex' }), /another request/);
    await expectInvalid(next, crm({ pageSize: 10, slug: 'lead' }), /another request/);
    await expectInvalid({ ...next, query: { ...body.query, fields: ['name', 'email'] } }, crm({ pageSize: 10 }), /another request/);
    await expectInvalid({ ...next, query: { ...body.query, filter: { and: [{ field: 'updated_at', operator: 'gte', value: 1 }] } } }, crm({ pageSize: 10 }), /another request/);
    await expectInvalid(next, crm({ pageSize: 10, tokenSecret: 'another-secret-0123456789abcdef' }), /altered/);
    await expectInvalid(next, crm({ pageSize: 10, now: FAR + 2 * 3_600_000 }), /expired/);
    const [payload, sig] = token.split('.') as [string, string];
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString());
    decoded.k = [0, ''];
    const forged = `${Buffer.from(JSON.stringify(decoded)).toString('base64url')}.${sig}`;
    await expectInvalid({ ...body, next_token: forged }, crm({ pageSize: 10 }), /altered/);
    const flipped = `${payload}.${sig.slice(0, -2)}${sig.endsWith('AA') ? 'AB' : 'AA'}`;
    await expectInvalid({ ...body, next_token: flipped }, crm({ pageSize: 10 }), /altered/);
    for (const garbage of ['', 'abc', '.', 'a.b.c', '{"v":1}', "' OR 1=1 --", 'x'.repeat(10_000)]) await expectInvalid({ ...body, next_token: garbage }, crm({ pageSize: 10 }), /Invalid next_token/);
  });

  it('is the same request whatever the key order of the filter', async () => {
    const token = await firstToken();
    const reordered = { query: { filter: { and: [{ value: 0, operator: 'gte', field: 'updated_at' }] }, fields: ['name'] }, next_token: token };
    await expect(connectorRecords(state.db, reordered, crm({ pageSize: 10 }))).resolves.toBeTruthy();
  });
});

describe('include_deleted', () => {
  const body = { query: { fields: ['name'], filter: { and: [{ field: 'updated_at', operator: 'gte', value: 0 }] } }, next_token: null };

  it('left out or false compiles the statement as before; true keeps that statement whole as the live half', () => {
    const plain = compileConnectorPage(body, crm({ pageSize: 10 }));
    expect(compileConnectorPage({ ...body, include_deleted: false }, crm({ pageSize: 10 }))).toEqual(plain);
    const withTombstones = compileConnectorPage({ ...body, include_deleted: true }, crm({ pageSize: 10 }));
    expect(withTombstones.sql).toContain(`(${plain.sql}) AS "live" UNION ALL (`);
    expect(withTombstones.params.slice(0, plain.params.length)).toEqual(plain.params);
    expect(withTombstones.columns.map((c) => c.key)).toEqual([...plain.columns.map((c) => c.key), '$is_deleted', '$deleted_at']);
  });

  it('walks a sync without a filter: every live record and a tombstone for every deleted one, once each, those without updated_at last', async () => {
    // The fixture's tables are the catalog's alone; the service adds deleted_at at start-up.
    await state.db.query('ALTER TABLE contact ADD COLUMN IF NOT EXISTS deleted_at bigint');
    const records = await walk({ query: { fields: ['updated_at'] }, include_deleted: true } as { query: Record<string, unknown> }, crm({ pageSize: 7, orgId: 'org_globex' }));
    const rows = env.crm.data.get('contact')!.filter((r) => r['org_id'] === 'org_globex');
    const deleted = rows.filter((r) => r['is_deleted'] === true);
    expect(deleted.some((r) => r['updated_at'] === null || r['updated_at'] === undefined)).toBe(true);
    expect(sorted(records.filter((r) => r['is_deleted'] === true).map((r) => r['id']))).toEqual(sorted(deleted.map((r) => r['id'])));
    expect(sorted(records.filter((r) => r['is_deleted'] === false).map((r) => r['id']))).toEqual(sorted(env.crm.oracle.live('contact', 'org_globex').map((r) => r['id'])));
    expect(new Set(records.map((r) => r['id'])).size).toBe(records.length);
    const firstNull = records.findIndex((r) => r['updated_at'] === null);
    expect(records.slice(firstNull).every((r) => r['updated_at'] === null)).toBe(true);
    expect(records.slice(firstNull).some((r) => r['is_deleted'] === true)).toBe(true);
  });

  it('is refused where a sync cannot place deletions, and must be true or false', async () => {
    const problems = async (b: unknown, o: ConnectorOptions) => {
      const e = await rejected(connectorRecords(state.db, b, o));
      expect(e.code).toBe('VALIDATION_FAILED');
      return e.validationErrors!.map((v) => [v.meta_data, v.error_code, v.message]);
    };
    expect(await problems({ ...body, include_deleted: 'true' }, crm())).toEqual([['include_deleted', 'INVALID_BODY', 'include_deleted must be true or false, not a string']]);
    const byBirthday = { query: { fields: ['name'], filter: { and: [{ field: 'birthday', operator: 'gte', value: 0 }] } }, include_deleted: true };
    expect(await problems(byBirthday, crm())).toEqual([['include_deleted', 'INVALID_BODY', expect.stringMatching(/follows updated_at.*this one follows 'birthday'/)]]);
    const ticket = { catalog: env.helpdesk.catalog, slug: 'ticket', orgId: 'org_south', tokenSecret: SECRET };
    expect(await problems({ query: { fields: ['subject'] }, include_deleted: true }, ticket)).toEqual([['include_deleted', 'INVALID_BODY', expect.stringMatching(/has no updated_at/)]]);
  });
});

describe('incremental sync with writes between pages', () => {
  const TENANT = 'org_initech';
  const table = '"public"."contact"';

  async function truth(from: number, upTo: number): Promise<Map<string, number>> {
    const r = await state.db.query<{ id: string; updated_at: string }>(`SELECT id, updated_at::text FROM ${table} WHERE org_id = $1 AND is_deleted = false AND updated_at >= $2 AND updated_at <= $3`, [TENANT, from, upTo]);
    return new Map(r.rows.map((x) => [x.id, Number(x.updated_at)]));
  }

  it('delivers every record updated at or after the start, in its latest version, at least once', async () => {
    const base = await state.db.query<{ m: string; lo: string }>(`SELECT max(updated_at)::text AS m, percentile_disc(0.5) WITHIN GROUP (ORDER BY updated_at)::text AS lo FROM ${table} WHERE org_id = $1`, [TENANT]);
    let clock = Number(base.rows[0]!.m) + DAY;
    const start = Number(base.rows[0]!.lo);
    const ids = (await state.db.query<{ id: string }>(`SELECT id FROM ${table} WHERE org_id = $1 AND is_deleted = false ORDER BY id`, [TENANT])).rows.map((r) => r.id);
    let inserted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.array(fc.record({ row: fc.nat(ids.length - 1), insert: fc.boolean(), tick: fc.constantFrom(0, 0, 1, 7) }), { maxLength: 6 }), { minLength: 1, maxLength: 12 }),
        async (pageSize, writes) => {
          const lag = 1000;
          // Ties at page boundaries: a run of records sharing one timestamp.
          const tie = clock++;
          await state.db.query(`UPDATE ${table} SET updated_at = $2 WHERE org_id = $1 AND id = ANY($3::text[])`, [TENANT, tie, ids.slice(0, 25)]);
          clock += lag + 1;
          const delivered = new Map<string, Set<number>>();
          const note = (records: Record<string, unknown>[]) => {
            for (const r of records) {
              expect((r['id'] as string).startsWith(`${TENANT}_`)).toBe(true);
              const set = delivered.get(r['id'] as string) ?? new Set<number>();
              set.add(Date.parse(r['updated_at'] as string));
              delivered.set(r['id'] as string, set);
            }
          };
          let from = start;
          let round = 0;
          let lastCutoff = 0;
          // Sync rounds: the first with writes between its pages, then until a round sees no writes.
          for (let quiet = false; !quiet; round++) {
            quiet = round > 0;
            const batch = round === 0 ? writes.slice() : [];
            const options: ConnectorOptions = { catalog: env.crm.catalog, slug: 'contact', orgId: TENANT, tokenSecret: SECRET, pageSize, now: clock, syncLagMs: lag };
            lastCutoff = clock - lag - 1;
            const records = await walk({ query: { fields: ['updated_at'], filter: { and: [{ field: 'updated_at', operator: 'gte', value: from }] } } }, options, async () => {
              const step = batch.shift();
              for (const w of step ?? []) {
                clock += w.tick;
                if (w.insert) {
                  inserted++;
                  await state.db.query(`INSERT INTO ${table} (id, org_id, is_deleted, name, updated_at) VALUES ($1, $2, false, 'synced', $3)`, [`${TENANT}_contact_new${inserted}`, TENANT, clock]);
                } else {
                  await state.db.query(`UPDATE ${table} SET updated_at = $3 WHERE org_id = $1 AND id = $2`, [TENANT, ids[w.row], clock]);
                }
              }
            });
            note(records);
            const seen = records.map((r) => Date.parse(r['updated_at'] as string));
            if (seen.length) from = Math.max(from, ...seen);
            clock += lag + 1;
          }
          // The last round's cutoff is past every write, so every record from the start on is due.
          const expected = await truth(start, lastCutoff);
          expect(expected.size).toBe((await truth(start, FAR)).size);
          const missing = [...expected].filter(([id, ts]) => !delivered.get(id)?.has(ts));
          expect(missing).toEqual([]);
        },
      ),
      { numRuns: runs(15, 300) },
    );
  }, PROPERTY_TIMEOUT);
});
