import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/catalog/index.js';
import { KEYS, crm, crmServiceOnPglite, expectEnvelope, liveRows, type CrmService, type Running } from './support.js';

/**
 * Records (bulk_create, bulk_upsert, get, update), objects (list and details) and the connector
 * entities of both families over real HTTP on PGlite, for two organizations: org_globex never reads, updates or upserts anything of org_acme.
 */

const { catalog } = crm;
const live = liveRows;

let service: CrmService;
let pglite: PGlite;
let api: Running;

beforeAll(async () => {
  service = await crmServiceOnPglite({ maxBulkRecords: 5, roleAccess: { member: ['account', 'contact', 'user'] } });
  ({ pglite, api } = service);
}, 180_000);

afterAll(async () => {
  await service?.close();
});

const rowCount = async (table: string): Promise<number> =>
  (await pglite.query<{ n: number }>(`SELECT count(*)::int AS n FROM public.${table}`)).rows[0]!.n;

/** Ids of the caller's leads with this company, through the filter endpoint. */
async function leadsOf(key: string, company: string): Promise<{ id: string; name: string; email: string | null }[]> {
  const a = await api.call('POST', '/api/v1/org/objects/lead/filter', { key, body: { query: { fields: ['id', 'name', 'email'], filters: { and: [{ field: 'company', operator: 'eq', value: company }] } } } });
  expect(a.status).toBe(200);
  return a.json.data.records;
}

describe('bulk_create', () => {
  const path = '/api/v1/org/objects/lead/record/bulk_create';

  it('creates every record for the caller\'s organization only, with the system fields set', async () => {
    const body = [
      { name: 'Ada Lovelace', email: 'ada@example.com', company: 'Create Co' },
      { name: 'Grace Hopper', email: 'grace@example.com', company: 'Create Co' },
    ];
    const a = await api.call('POST', path, { key: KEYS.acmeAdmin, body });
    expect(a.status).toBe(200);
    expect(a.json.success).toBe(true);
    expect(typeof a.json.data.message).toBe('string');
    const mine = await leadsOf(KEYS.acmeAdmin, 'Create Co');
    expect(mine.map((r) => r.name).sort()).toEqual(['Ada Lovelace', 'Grace Hopper']);
    expect(await leadsOf(KEYS.globexAdmin, 'Create Co')).toEqual([]);
    const got = await api.call('GET', `/api/v1/org/objects/lead/record/${mine[0]!.id}`, { key: KEYS.acmeAdmin });
    // A role limited to other objects may not read leads.
    expectEnvelope(await api.call('GET', `/api/v1/org/objects/lead/record/${mine[0]!.id}`, { key: KEYS.acmeMember }), 403, 'PERMISSION_DENIED');
    expect(got.status).toBe(200);
    expect(got.json.data).toMatchObject({ id: mine[0]!.id, org_id: 'org_acme' });
    expect(got.json.data.created_by).toBe('u_acme_admin');
    expect(typeof got.json.data.created_at).toBe('number');
  });

  it('writes nothing when one record is invalid, and names it', async () => {
    const before = await rowCount('lead');
    const a = await api.call('POST', path, { key: KEYS.acmeAdmin, body: [{ name: 'Fine', company: 'Atomic' }, { name: 'Broken', email: 'not-an-email', company: 'Atomic' }] });
    expectEnvelope(a, 400, 'VALIDATION_FAILED');
    expect(a.json.data.message).toBe('Failed to create records');
    expect(a.json.data.validation_errors).toContainEqual(expect.objectContaining({ record_index: 1, field: 'email', error_code: 'PARSE_INVALID_FORMAT' }));
    expect(await rowCount('lead')).toBe(before);
  });

  it('refuses more records than the configured maximum with the envelope', async () => {
    const before = await rowCount('lead');
    const a = await api.call('POST', path, { key: KEYS.acmeAdmin, body: Array.from({ length: 6 }, (_, i) => ({ name: `n${i}` })) });
    expectEnvelope(a, 400, 'VALIDATION_FAILED');
    expect(a.json.data.validation_errors[0].error_code).toBe('TOO_MANY_RECORDS');
    expect(await rowCount('lead')).toBe(before);
  });
});

describe('get and update across organizations', () => {
  const acmeLead = () => live('lead', 'org_acme')[0]!;

  it('finds a record of another organization nowhere: NOT_FOUND, as for a missing id', async () => {
    const id = acmeLead().id as string;
    const theirs = await api.call('GET', `/api/v1/org/objects/lead/record/${id}`, { key: KEYS.globexAdmin });
    const missing = await api.call('GET', '/api/v1/org/objects/lead/record/org_globex_lead_999999', { key: KEYS.globexAdmin });
    expectEnvelope(theirs, 400, 'NOT_FOUND');
    expectEnvelope(missing, 400, 'NOT_FOUND');
    expect(theirs.json.data.validation_errors).toBeNull();
    expect(theirs.text.replaceAll(id, 'ID')).toBe(missing.text.replaceAll('org_globex_lead_999999', 'ID'));
    const own = await api.call('GET', `/api/v1/org/objects/lead/record/${id}`, { key: KEYS.acmeAdmin });
    expect(own.json.data).toMatchObject({ id, name: acmeLead().name });
  });

  it('updates only the fields sent, and never another organization\'s record', async () => {
    const id = acmeLead().id as string;
    const denied = await api.call('PUT', `/api/v1/org/objects/lead/record/${id}`, { key: KEYS.globexAdmin, body: { name: 'taken over' } });
    expectEnvelope(denied, 400, 'NOT_FOUND');
    const a = await api.call('PUT', `/api/v1/org/objects/lead/record/${id}`, { key: KEYS.acmeAdmin, body: { company: 'Renamed Ltd' } });
    expect(a.status).toBe(200);
    expect(a.json.data).toMatchObject({ id, name: acmeLead().name, company: 'Renamed Ltd', updated_by: 'u_acme_admin' });
    const bad = await api.call('PUT', `/api/v1/org/objects/lead/record/${id}`, { key: KEYS.acmeAdmin, body: { phone: 'call me maybe' } });
    expectEnvelope(bad, 400, 'VALIDATION_FAILED');
    expect(bad.json.data.message).toBe('Failed to update record');
    expect(bad.json.data.validation_errors[0]).toMatchObject({ field: 'phone', error_code: 'PARSE_INVALID_FORMAT' });
    const after = await api.call('GET', `/api/v1/org/objects/lead/record/${id}`, { key: KEYS.acmeAdmin });
    expect(after.json.data.name).toBe(acmeLead().name);
    expect(after.json.data.company).toBe('Renamed Ltd');
  });
});

describe('bulk_upsert', () => {
  it('creates, updates and fails element by element, in request order, never touching another organization', async () => {
    const acmeId = live('lead', 'org_acme')[1]!.id as string;
    const globexId = live('lead', 'org_globex')[0]!.id as string;
    const a = await api.call('POST', '/api/v1/org/objects/lead/record/bulk_upsert', {
      key: KEYS.globexAdmin,
      body: { values: [{ name: 'New One', company: 'Upsert Co' }, { id: globexId, company: 'Upsert Co' }, { id: acmeId, name: 'hijack' }] },
    });
    expect(a.status).toBe(200);
    expect(a.json.success).toBe(true);
    const d = a.json.data;
    expect(d.records_created).toBe(1);
    expect(d.records_updated).toBe(1);
    expect(d.records.map((r: { action: string }) => r.action)).toEqual(['CREATED', 'UPDATED', 'FAILED']);
    expect(d.failed_records).toHaveLength(1);
    expect(typeof d.failed_records[0].error_message).toBe('string');
    const acme = await api.call('GET', `/api/v1/org/objects/lead/record/${acmeId}`, { key: KEYS.acmeAdmin });
    expect(acme.json.data.name).toBe(live('lead', 'org_acme')[1]!.name);
    expect((await leadsOf(KEYS.globexAdmin, 'Upsert Co')).length).toBe(2);
    expect(await leadsOf(KEYS.acmeAdmin, 'Upsert Co')).toEqual([]);
  });
});

describe('objects: list and details', () => {
  it('lists the objects a key may read, in the service payload shape that loadCatalog reads back', async () => {
    const all = await api.call('POST', '/api/v1/org/objects/list', { key: KEYS.acmeAdmin });
    expect(all.status).toBe(200);
    expect(all.json.data.map((o: { slug: string }) => o.slug).sort()).toEqual([...catalog.objects.keys()].sort());
    for (const o of all.json.data) expect(Array.isArray(o.org_object_columns)).toBe(true);
    // What the endpoint gives is what the service's clients feed to loadCatalog: the same catalog.
    expect(loadCatalog(all.json.data, {}).version).toBe(catalog.version);
    // Each caller sees its own organization in the payload, never the one the catalog came from.
    const orgIds = (value: unknown): string[] => JSON.stringify(value).match(/"org_id":"[^"]*"/g) ?? [];
    expect(orgIds(all.json.data).length).toBeGreaterThan(10);
    expect(new Set(orgIds(all.json.data))).toEqual(new Set(['"org_id":"org_acme"']));
    const globex = await api.call('POST', '/api/v1/org/objects/list', { key: KEYS.globexAdmin });
    expect(new Set(orgIds(globex.json.data))).toEqual(new Set(['"org_id":"org_globex"']));
    expect(new Set(orgIds((await api.call('GET', '/api/v1/org/objects/lead/', { key: KEYS.globexAdmin })).json.data))).toEqual(new Set(['"org_id":"org_globex"']));
    const member = await api.call('POST', '/api/v1/org/objects/list', { key: KEYS.acmeMember });
    expect(member.json.data.map((o: { slug: string }) => o.slug).sort()).toEqual(['account', 'contact', 'user']);
    const one = await api.call('GET', '/api/v1/org/objects/account/', { key: KEYS.acmeAdmin });
    expect(one.json.data.slug).toBe('account');
    expect(one.json.data.org_object_columns.map((c: { slug: string }) => c.slug)).toEqual(expect.arrayContaining(['name', 'industry', 'owner']));
    expectEnvelope(await api.call('GET', '/api/v1/org/objects/opportunity/', { key: KEYS.acmeMember }), 403, 'PERMISSION_DENIED');
    expectEnvelope(await api.call('GET', '/api/v1/org/objects/acount/', { key: KEYS.acmeAdmin }), 400, 'INVALID_SLUG');
  });
});

describe('connector entities of both families', () => {
  it('describes entities for both connector families', async () => {
    for (const family of ['flowconnector', 'syncconnector']) {
      const list = await api.call('POST', `/api/v1/${family}/objects/list/`, { key: KEYS.globexAdmin });
      expect(list.status).toBe(200);
      expect(list.json.data.map((e: { entity_identifier: string }) => e.entity_identifier).sort()).toEqual([...catalog.objects.keys()].sort());
      const schema = await api.call('GET', `/api/v1/${family}/objects/contact`, { key: KEYS.globexAdmin });
      expect(schema.json.data.entity_identifier).toBe('contact');
      expect(schema.json.data.fields.map((f: { field_name: string }) => f.field_name)).toEqual(expect.arrayContaining(['id', 'name', 'email', 'updated_at']));
      expectEnvelope(await api.call('GET', `/api/v1/${family}/objects/nope`, { key: KEYS.globexAdmin }), 400, 'INVALID_SLUG');
      const member = await api.call('POST', `/api/v1/${family}/objects/list/`, { key: KEYS.acmeMember });
      expect(member.json.data.map((e: { entity_identifier: string }) => e.entity_identifier).sort()).toEqual(['account', 'contact', 'user']);
      expectEnvelope(await api.call('GET', `/api/v1/${family}/objects/lead`, { key: KEYS.acmeMember }), 403, 'PERMISSION_DENIED');
    }
  });
});
