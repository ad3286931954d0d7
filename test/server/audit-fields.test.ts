import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureData, loadFixtureCatalog, loadIntoDatabase } from '../../fixtures/index.js';
import { DEFAULT_SYNC_LAG_MS } from '../../src/filter/connector.js';
import { AUDIT_FIELDS, catalogPayload, loadCatalog, withAuditFields } from '../../src/index.js';
import { addMissingAuditColumns } from '../../src/records/index.js';
import { databaseOf } from '../../src/server/index.js';
import { expectEnvelope, listen, type Running } from './support.js';
import { emptyPglite } from '../support/pglite-template.js';

/**
 * The audit fields (created_at, updated_at, created_by, updated_by) on every record of every
 * object, including objects whose schema declares none of them (the help desk's `site`) or only
 * some (`customer` declares created_at): filled from the writing key's user on create, update and
 * upsert, and returned by get one, filter, connector pages, upsert results and reports, for two
 * organizations that never see each other's records. Expected values are the user ids of the
 * keys the test wrote with, never read back from the service first.
 */

const helpdesk = loadFixtureCatalog('helpdesk');
const ORGS = ['org_north', 'org_south'] as const;
const keyOf = (org: string, n: 1 | 2) => `test-key-${org}-writer-${n}-000`;
const userOf = (org: string, n: 1 | 2) => `u_${org}_writer${n}`;
const KEYS_ENV = ORGS.flatMap((org) => [1, 2].map((n) => `${keyOf(org, n as 1 | 2)}=${org}:superadmin:${userOf(org, n as 1 | 2)}`)).join(',');

let pglite: PGlite;
let api: Running;

beforeAll(async () => {
  pglite = await emptyPglite();
  api = await listen({ db: databaseOf(pglite), catalog: helpdesk, apiKeys: KEYS_ENV, env: {} });
}, 180_000);

afterAll(async () => {
  try {
    await api?.close();
  } finally {
    await pglite?.close();
  }
});

/** What the test wrote: record id → the users it expects in created_by and updated_by. */
type Expected = Map<string, { created_by: string; updated_by: string }>;

async function writeSites(org: string): Promise<Expected> {
  const expected: Expected = new Map();
  const w1 = keyOf(org, 1);
  const w2 = keyOf(org, 2);
  const created = await api.call('POST', '/api/v1/org/objects/site/record/bulk_create', { key: w1, body: [{ name: `${org} alpha` }, { name: `${org} beta` }, { name: `${org} gamma` }] });
  expect(created.status).toBe(200);
  const ids = await idsByName(w1, org);
  for (const id of ids.values()) expected.set(id, { created_by: userOf(org, 1), updated_by: userOf(org, 1) });

  // writer 2 updates alpha and creates delta in one upsert, and updates beta on its own.
  const upsert = await api.call('POST', '/api/v1/org/objects/site/record/bulk_upsert', { key: w2, body: { values: [{ id: ids.get(`${org} alpha`), city: 'Pune' }, { name: `${org} delta` }] } });
  expect(upsert.status).toBe(200);
  const { created_records: createdRecords, updated_records: updatedRecords, records } = upsert.json.data;
  expect(createdRecords).toHaveLength(1);
  expect(createdRecords[0]).toMatchObject({ name: `${org} delta`, action: 'CREATED', created_by: userOf(org, 2), updated_by: userOf(org, 2), org_id: org });
  expect(typeof createdRecords[0].created_at).toBe('number');
  expect(updatedRecords).toEqual([expect.objectContaining({ id: ids.get(`${org} alpha`), city: 'Pune', updated_by: userOf(org, 2), action: 'UPDATED' })]);
  expect(typeof updatedRecords[0].updated_at).toBe('number');
  expect(records.map((r: { action: string }) => r.action)).toEqual(['UPDATED', 'CREATED']);
  expected.set(ids.get(`${org} alpha`)!, { created_by: userOf(org, 1), updated_by: userOf(org, 2) });
  expected.set(createdRecords[0].id, { created_by: userOf(org, 2), updated_by: userOf(org, 2) });

  const put = await api.call('PUT', `/api/v1/org/objects/site/record/${ids.get(`${org} beta`)}`, { key: w2, body: { city: 'Goa' } });
  expect(put.status).toBe(200);
  expect(put.json.data).toMatchObject({ id: ids.get(`${org} beta`), city: 'Goa', created_by: userOf(org, 1), updated_by: userOf(org, 2) });
  expect(put.json.data.updated_at).toBeGreaterThanOrEqual(put.json.data.created_at);
  expected.set(ids.get(`${org} beta`)!, { created_by: userOf(org, 1), updated_by: userOf(org, 2) });
  return expected;
}

async function idsByName(key: string, org: string): Promise<Map<string, string>> {
  const a = await api.call('POST', '/api/v1/org/objects/site/filter', { key, body: { query: { fields: ['id', 'name'], filters: { and: [{ field: 'name', operator: 'starts_with', value: org }] } } } });
  expect(a.status).toBe(200);
  return new Map(a.json.data.records.map((r: { id: string; name: string }) => [r.name, r.id]));
}

/** Every record carries both user fields with the expected values, and nothing of another organization. */
function expectAudited(records: Record<string, unknown>[], expected: Expected, surface: string): void {
  expect(records.length, surface).toBe(expected.size);
  for (const r of records) {
    const want = expected.get(r.id as string);
    expect(want, `${surface}: record ${String(r.id)} is not one this organization wrote`).toBeDefined();
    expect({ created_by: r.created_by, updated_by: r.updated_by }, `${surface}: ${String(r.id)}`).toEqual(want);
  }
}

/** The newest updated_at of every site either organization wrote (epoch ms), read through the API. */
async function newestStamp(): Promise<number> {
  let newest = 0;
  for (const org of ORGS) {
    const a = await api.call('POST', '/api/v1/org/objects/site/filter', { key: keyOf(org, 1), body: { query: { fields: ['updated_at'] } } });
    expect(a.status).toBe(200);
    for (const r of a.json.data.records) newest = Math.max(newest, r.updated_at as number);
  }
  return newest;
}

/**
 * Until a record stamped at `stamp` is past the sync lag by the database's clock, the one a
 * connector page's cutoff is read from. Asked every 100 ms at most, bounded by 30 s.
 */
async function untilSyncable(stamp: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { rows } = await pglite.query<{ now: number }>('SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now');
    const left = stamp + DEFAULT_SYNC_LAG_MS + 1 - rows[0]!.now;
    if (left <= 0) return;
    if (Date.now() > deadline) throw new Error(`a record stamped at ${stamp} was still within the sync lag after 30 s`);
    await new Promise((resolve) => setTimeout(resolve, Math.min(left, 100)));
  }
}

describe('audit fields on an object whose schema has none', () => {
  const written = new Map<string, Expected>();
  beforeAll(async () => {
    for (const org of ORGS) written.set(org, await writeSites(org));
  }, 120_000);

  it('get one returns all four, the users being the writers', async () => {
    for (const org of ORGS) {
      for (const [id, want] of written.get(org)!) {
        const a = await api.call('GET', `/api/v1/org/objects/site/record/${id}`, { key: keyOf(org, 1) });
        expect(a.status).toBe(200);
        expect(a.json.data).toMatchObject({ id, org_id: org, ...want });
        expect(typeof a.json.data.created_at).toBe('number');
        expect(typeof a.json.data.updated_at).toBe('number');
        // The other organization cannot read it.
        expectEnvelope(await api.call('GET', `/api/v1/org/objects/site/record/${id}`, { key: keyOf(ORGS[1 - ORGS.indexOf(org)]!, 1) }), 400, 'NOT_FOUND');
      }
    }
  });

  it('filter returns them among all fields by default, by name, and filters on them', async () => {
    for (const org of ORGS) {
      const want = written.get(org)!;
      const all = await api.call('POST', '/api/v1/org/objects/site/filter', { key: keyOf(org, 2), body: { query: {} } });
      expect(all.status).toBe(200);
      for (const r of all.json.data.records) for (const f of AUDIT_FIELDS) expect(r, `filter record ${r.id}`).toHaveProperty(f.slug);
      expectAudited(all.json.data.records, want, 'filter, all fields');
      const named = await api.call('POST', '/api/v1/org/objects/site/filter', { key: keyOf(org, 2), body: { query: { fields: ['id', 'created_by', 'updated_by'] } } });
      expectAudited(named.json.data.records, want, 'filter, named fields');
      const byWriter = await api.call('POST', '/api/v1/org/objects/site/filter', { key: keyOf(org, 1), body: { query: { fields: ['id'], filters: { and: [{ field: 'updated_by', operator: 'eq', value: userOf(org, 2) }] } } } });
      const expectedIds = [...want].filter(([, w]) => w.updated_by === userOf(org, 2)).map(([id]) => id).sort();
      expect(byWriter.json.data.records.map((r: { id: string }) => r.id).sort()).toEqual(expectedIds);
    }
  });

  it('connector pages return them, the timestamps as ISO strings', { timeout: 30_000 }, async () => {
    // Records stamped within the sync lag wait for the next sync: until the last write is older.
    await untilSyncable(await newestStamp());
    for (const org of ORGS) {
      const records: Record<string, unknown>[] = [];
      let token: string | null = null;
      do {
        const a = await api.call('POST', '/api/v1/flowconnector/objects/site/records', { key: keyOf(org, 1), body: { query: { fields: ['created_by', 'updated_by', 'created_at', 'updated_at'] }, next_token: token } });
        expect(a.status).toBe(200);
        records.push(...a.json.data.records);
        token = a.json.data.next_token;
      } while (token !== null);
      expectAudited(records, written.get(org)!, 'connector');
      for (const r of records) {
        expect(r.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        expect(Date.parse(r.updated_at as string)).toBeGreaterThanOrEqual(Date.parse(r.created_at as string));
      }
    }
  });

  it('reports can select and group by them', async () => {
    for (const org of ORGS) {
      const a = await api.call('POST', '/api/v1/reports/execute', { key: keyOf(org, 1), body: { query: 'SELECT id, created_by, updated_by FROM site LIMIT 100', slug: 'site' } });
      expect(a.status).toBe(200);
      expectAudited(a.json.data.records, written.get(org)!, 'reports');
      const grouped = await api.call('POST', '/api/v1/reports/execute', { key: keyOf(org, 1), body: { query: 'SELECT created_by, COUNT(id) AS n FROM site GROUP BY created_by LIMIT 10', slug: 'site' } });
      const counts = new Map<string, number>();
      for (const w of written.get(org)!.values()) counts.set(w.created_by, (counts.get(w.created_by) ?? 0) + 1);
      expect(new Map(grouped.json.data.records.map((r: { created_by: string; n: number }) => [r.created_by, r.n]))).toEqual(counts);
    }
  });

  it('a client cannot set them', async () => {
    const a = await api.call('POST', '/api/v1/org/objects/site/record/bulk_create', { key: keyOf('org_north', 1), body: [{ name: 'forged', created_by: 'someone_else', updated_at: 5 }] });
    expectEnvelope(a, 400, 'VALIDATION_FAILED');
    expect(a.json.data.validation_errors.map((e: { field: string; error_code: string }) => [e.field, e.error_code])).toEqual([['created_by', 'READ_ONLY_FIELD'], ['updated_at', 'READ_ONLY_FIELD']]);
  });

  it('completes an object that declares only some of them, keeping the declared one', async () => {
    for (const org of ORGS) {
      const a = await api.call('POST', '/api/v1/org/objects/customer/record/bulk_upsert', { key: keyOf(org, 2), body: { values: [{ name: `${org} customer` }] } });
      expect(a.status).toBe(200);
      const id = a.json.data.created_records[0].id as string;
      const got = await api.call('GET', `/api/v1/org/objects/customer/record/${id}`, { key: keyOf(org, 1) });
      expect(got.json.data).toMatchObject({ created_by: userOf(org, 2), updated_by: userOf(org, 2) });
      expect(got.json.data.created_at).toBe(got.json.data.updated_at);
    }
  });

  it('entity schemas and object details list them', async () => {
    for (const family of ['flowconnector', 'syncconnector']) {
      const a = await api.call('GET', `/api/v1/${family}/objects/site`, { key: keyOf('org_north', 1) });
      const fields = new Map(a.json.data.fields.map((f: { field_name: string }) => [f.field_name, f]));
      for (const f of AUDIT_FIELDS) expect(fields.has(f.slug), `${family} site.${f.slug}`).toBe(true);
      expect(fields.get('updated_at')).toMatchObject({ data_type: 'DateTime', read_properties: { is_timestamp_field_for_incremental_queries: true } });
      expect(fields.get('created_by')).toMatchObject({ data_type: 'String', read_properties: { is_timestamp_field_for_incremental_queries: false } });
    }
    const details = await api.call('GET', '/api/v1/org/objects/site/', { key: keyOf('org_south', 1) });
    const columns = details.json.data.org_object_columns.filter((c: { slug: string }) => AUDIT_FIELDS.some((f) => f.slug === c.slug));
    expect(columns.map((c: { slug: string; column_type: string }) => [c.slug, c.column_type])).toEqual(AUDIT_FIELDS.map((f) => [f.slug, 'system']));
  });
});

describe('withAuditFields', () => {
  it('leaves a catalog that declares all four as it is', () => {
    const crm = loadFixtureCatalog('crm');
    expect(withAuditFields(crm)).toBe(crm);
  });

  it('adds the missing ones as read-only text and datetime columns, and reads back from its payload', () => {
    const done = withAuditFields(helpdesk);
    expect(done.version).not.toBe(helpdesk.version);
    const site = done.objects.get('site')!;
    expect(AUDIT_FIELDS.map((f) => [f.slug, site.columns.get(f.slug)?.type, site.columns.get(f.slug)?.column, site.columns.get(f.slug)?.isSystem])).toEqual([
      ['created_at', 'datetime', 'created_at', true], ['updated_at', 'datetime', 'updated_at', true],
      ['created_by', 'text', 'created_by', true], ['updated_by', 'text', 'updated_by', true],
    ]);
    // customer declares created_at itself: kept, the other three added after its columns.
    expect(done.objects.get('customer')!.columns.get('created_at')).toBe(helpdesk.objects.get('customer')!.columns.get('created_at'));
    expect(loadCatalog(catalogPayload(done)).version).toBe(done.version);
  });

  it('keeps the service payload of an object and appends the added columns to it', () => {
    const payload = [{ id: 'obj_77', slug: 'deal', display_singular_name: 'Deal', display_plural_name: 'Deals', org_object_columns: [
      { slug: 'id', column_data_type: 1, column_type: 'system', display_name: 'ID' },
      { slug: 'name', column_data_type: 1, is_primary: 1, display_name: 'Name', extra_key: 'kept' },
    ] }];
    const done = withAuditFields(loadCatalog(payload, { typeCodes: { 1: 'text', 2: 'datetime' } }));
    const out = catalogPayload(done) as { org_object_columns: Record<string, unknown>[] }[];
    expect(out[0]!.org_object_columns.map((c) => c.slug)).toEqual(['id', 'name', 'created_at', 'updated_at', 'created_by', 'updated_by']);
    expect(out[0]!.org_object_columns[1]!.extra_key).toBe('kept');
    expect(loadCatalog(out, { typeCodes: { 1: 'text', 2: 'datetime' } }).version).toBe(done.version);
  });

  it('refuses a catalog whose physical column already holds another field', () => {
    const catalog = loadCatalog({ objects: { deal: { columns: { author: 'text' } } } }, { columnName: (_o, c) => (c === 'author' ? 'created_by' : c) });
    expect(() => withAuditFields(catalog)).toThrowError(expect.objectContaining({ code: 'CATALOG_DUPLICATE_SLUG', message: expect.stringContaining("column 'deal.author'") }));
  });
});

describe('a database made before every object carried the audit fields', () => {
  it('starts: the missing columns are added, old rows read back null there, new writes fill them', async () => {
    const old = await emptyPglite();
    try {
      // The tables and rows as the service made them from the help desk schema alone.
      await loadIntoDatabase(old, helpdesk, fixtureData('helpdesk'));
      const oldSite = (await old.query<{ id: string; org_id: string }>("SELECT id, org_id FROM site WHERE org_id = 'org_north' AND NOT is_deleted LIMIT 1")).rows[0]!;
      const started = await listen({ db: databaseOf(old), catalog: helpdesk, apiKeys: KEYS_ENV, env: {} });
      try {
        const columns = await old.query<{ column_name: string }>("SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = 'site'");
        for (const f of AUDIT_FIELDS) expect(columns.rows.map((r) => r.column_name)).toContain(f.slug);
        const before = await started.call('GET', `/api/v1/org/objects/site/record/${oldSite.id}`, { key: keyOf('org_north', 1) });
        expect(before.json.data).toMatchObject({ created_at: null, updated_at: null, created_by: null, updated_by: null });
        const after = await started.call('PUT', `/api/v1/org/objects/site/record/${oldSite.id}`, { key: keyOf('org_north', 2), body: { city: 'Kochi' } });
        expect(after.status).toBe(200);
        expect(after.json.data).toMatchObject({ created_by: null, updated_by: userOf('org_north', 2), city: 'Kochi' });
        expect(typeof after.json.data.updated_at).toBe('number');
      } finally {
        await started.close();
      }
      // A second start finds nothing to add.
      expect(await addMissingAuditColumns(old, withAuditFields(helpdesk))).toEqual([]);
    } finally {
      await old.close();
    }
  }, 120_000);

  it('adds exactly the missing columns, and names them', async () => {
    const db = await emptyPglite();
    try {
      await db.exec('CREATE TABLE public.site (id text NOT NULL, org_id text NOT NULL, is_deleted boolean NOT NULL DEFAULT false, name text, created_by text)');
      const added = await addMissingAuditColumns(db, withAuditFields(helpdesk));
      // Only site exists; the other tables are left to the DDL.
      expect(added.sort()).toEqual(['"public"."site"."created_at"', '"public"."site"."updated_at"', '"public"."site"."updated_by"'].sort());
      const types = await db.query<{ column_name: string; data_type: string }>("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'site' AND column_name = ANY($1)", [AUDIT_FIELDS.map((f) => f.slug)]);
      expect(Object.fromEntries(types.rows.map((r) => [r.column_name, r.data_type]))).toEqual({ created_at: 'bigint', updated_at: 'bigint', created_by: 'text', updated_by: 'text' });
    } finally {
      await db.close();
    }
  });
});
