import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordToolCall } from '../../src/server/index.js';
import type { paths } from '../support/openapi-types.js';
import { DocumentCheck, operationsOf, type OpenApiDocument } from '../support/openapi.js';
import { API_KEYS_ENV, KEYS, crm, crmServiceOnPglite, listen, liveRows, type CrmService, type Running } from './support.js';

/**
 * A client generated from the served document (openapi-typescript types, committed as
 * test/support/openapi-types.ts and checked fresh by openapi.test.ts) calls every endpoint family
 * of a live server for two organizations, reading typed fields. Every answer it receives is held
 * to the document: a status the operation does not list, or a body outside its schema, fails the
 * call. Expected values come from the fixture files and rows, not from the server.
 */

// The catalog as the fixture file gives it (a service envelope): the objects and their columns, in order.
const objectsFile = (JSON.parse(readFileSync(new URL('../../fixtures/crm/objects-list.json', import.meta.url), 'utf8')) as { data: { slug: string; org_object_columns: { slug: string; relationship_type: number }[] }[] }).data;
const slugs = objectsFile.map((o) => o.slug);
const MEMBER_OBJECTS = ['account', 'contact', 'user'];

let service: CrmService;
let receiver: http.Server;
let check: DocumentCheck;
let small: Running;

type Client = ReturnType<typeof createClient<paths>>;

/** The JSON answer of an operation that answers CSV too when asked; these calls ask for JSON. */
function json<T>(data: T): Exclude<T, string> {
  if (typeof data === 'string') throw new Error(`a CSV answer where JSON was asked: ${data.slice(0, 100)}`);
  return data as Exclude<T, string>;
}

function client(url: string, key?: string): Client {
  const c = createClient<paths>({ baseUrl: url, headers: key === undefined ? {} : { authorization: `Bearer ${key}` } });
  c.use({
    async onResponse({ request, response, schemaPath }) {
      const type = response.headers.get('content-type') ?? '';
      const body = type.startsWith('text/event-stream') ? undefined : type.startsWith('text/csv') ? await response.clone().text() : await response.clone().json();
      check.check(request.method, schemaPath, response.status, response.headers, body);
    },
  });
  return c;
}

let acme: Client;
let globex: Client;
let acmeMember: Client;

beforeAll(async () => {
  receiver = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.statusCode = 204; res.end(); }); });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  // Webhooks to the loopback receiver above, and nowhere else.
  service = await crmServiceOnPglite({ roleAccess: { member: MEMBER_OBJECTS }, webhookAllowPrivate: true });
  check = new DocumentCheck((await (await fetch(`${service.api.url}/openapi.json`)).json()) as OpenApiDocument);
  small = await listen({ db: service.db, apiKeys: API_KEYS_ENV, env: {}, bodyLimit: 1024 });
  acme = client(service.api.url, KEYS.acmeAdmin);
  globex = client(service.api.url, KEYS.globexAdmin);
  acmeMember = client(service.api.url, KEYS.acmeMember);
}, 300_000);

afterAll(async () => {
  await new Promise((resolve) => receiver?.close(resolve));
  await small?.close();
  await service?.api.close();
  if (service && !service.pglite.closed) await service.pglite.close();
});

const byId = (a: Record<string, unknown>, b: Record<string, unknown>) => String(a['id']).localeCompare(String(b['id']));
const ids = (rows: readonly Record<string, unknown>[]) => rows.map((r) => String(r['id'])).sort();

describe('a typed client generated from /openapi.json', () => {
  it('lists the objects the role may read, with their columns', async () => {
    const all = await acme.POST('/api/v1/org/objects/list');
    expect(all.data?.data.map((o) => o.slug)).toEqual(slugs);
    const mine = await acmeMember.POST('/api/v1/org/objects/list');
    expect(mine.data?.data.map((o) => o.slug)).toEqual(slugs.filter((s) => MEMBER_OBJECTS.includes(s)));
    const contact = await acme.GET('/api/v1/org/objects/{slug}', { params: { path: { slug: 'contact' } } });
    expect(contact.data?.data.org_object_columns.map((c) => c.slug)).toEqual(objectsFile.find((o) => o.slug === 'contact')!.org_object_columns.map((c) => c.slug));
    const denied = await acmeMember.GET('/api/v1/org/objects/{slug}', { params: { path: { slug: 'opportunity' } } });
    expect(denied.response.status).toBe(403);
    expect(denied.error?.data.error_code).toBe('PERMISSION_DENIED');
    const unknown = await acme.GET('/api/v1/org/objects/{slug}', { params: { path: { slug: 'contcat' } } });
    expect([unknown.error?.data.error_code, unknown.error?.data.hint]).toEqual(['INVALID_SLUG', "did you mean 'contact'?"]);
  });

  it('lists both connector families\' entities with their fields', async () => {
    for (const family of ['flowconnector', 'syncconnector'] as const) {
      const list = family === 'flowconnector' ? await acme.POST('/api/v1/flowconnector/objects/list') : await acme.POST('/api/v1/syncconnector/objects/list');
      expect(list.data?.data.map((e) => e.entity_identifier)).toEqual(slugs);
      const entity = family === 'flowconnector'
        ? await acme.GET('/api/v1/flowconnector/objects/{slug}', { params: { path: { slug: 'account' } } })
        : await acme.GET('/api/v1/syncconnector/objects/{slug}', { params: { path: { slug: 'account' } } });
      const fields = entity.data?.data.fields ?? [];
      // Every column but the one-to-many relations, which hold no value.
      const stored = objectsFile.find((o) => o.slug === 'account')!.org_object_columns.filter((c) => c.relationship_type !== 2).map((c) => c.slug);
      // The data-sync form adds the two fields a sync with include_deleted sends.
      expect(fields.map((f) => f.field_name)).toEqual(family === 'syncconnector' ? [...stored, 'is_deleted', 'deleted_at'] : stored);
      if (family === 'syncconnector') {
        expect(fields.slice(-2).map((f) => [f.data_type, f.read_properties.is_nullable, f.read_properties.is_queryable])).toEqual([['Boolean', false, false], ['DateTime', true, false]]);
      }
      expect(fields.find((f) => f.field_name === 'id')?.is_primary_key).toBe(true);
      expect(fields.find((f) => f.field_name === 'updated_at')?.read_properties.is_timestamp_field_for_incremental_queries).toBe(true);
    }
    const member = await acmeMember.POST('/api/v1/syncconnector/objects/list');
    expect(member.data?.data.map((e) => e.entity_identifier)).toEqual(slugs.filter((s) => MEMBER_OBJECTS.includes(s)));
  });

  it('creates, reads, updates and upserts records that the other organization never sees', async () => {
    const path = { params: { path: { slug: 'contact' } } };
    const created = await acme.POST('/api/v1/org/objects/{slug}/record/bulk_create', { ...path, body: [{ name: 'Typed Client One', email: 'one@example.com' }, { name: 'Typed Client Two' }] });
    expect(created.data?.data.message).toBe('2 records created');
    const query = { fields: ['id', 'name', 'email'], filters: { and: [{ field: 'name', operator: 'starts_with', value: 'Typed Client ' }] } };
    const found = await acme.POST('/api/v1/org/objects/{slug}/filter', { ...path, body: { query } });
    const records = [...(json(found.data)?.data.records ?? [])].sort(byId);
    expect(records.map((r) => r['name']).sort()).toEqual(['Typed Client One', 'Typed Client Two']);
    const one = records.find((r) => r['name'] === 'Typed Client One')!;
    const id = String(one['id']);
    expect(json((await globex.POST('/api/v1/org/objects/{slug}/filter', { ...path, body: { query } })).data)?.data.records).toEqual([]);

    const record = await acme.GET('/api/v1/org/objects/{slug}/record/{id}', { params: { path: { slug: 'contact', id } } });
    expect([record.data?.data.id, record.data?.data.org_id, record.data?.data['email']]).toEqual([id, 'org_acme', 'one@example.com']);
    const theirs = await globex.GET('/api/v1/org/objects/{slug}/record/{id}', { params: { path: { slug: 'contact', id } } });
    expect([theirs.response.status, theirs.error?.data.error_code]).toEqual([400, 'NOT_FOUND']);

    const updated = await acme.PUT('/api/v1/org/objects/{slug}/record/{id}', { params: { path: { slug: 'contact', id } }, body: { name: 'Typed Client Renamed' } });
    expect([updated.data?.data['name'], updated.data?.data.updated_by, updated.data?.data.search_field]).toEqual(['Typed Client Renamed', 'u_acme_admin', 'typed client renamed']);
    const overwrite = await globex.PUT('/api/v1/org/objects/{slug}/record/{id}', { params: { path: { slug: 'contact', id } }, body: { name: 'Taken' } });
    expect(overwrite.error?.data.error_code).toBe('NOT_FOUND');
    const bad = await acme.PUT('/api/v1/org/objects/{slug}/record/{id}', { params: { path: { slug: 'contact', id } }, body: { email: 'nope' } });
    expect(bad.error?.data.validation_errors?.map((e) => [e.field, e.error_code])).toEqual([['email', 'PARSE_INVALID_FORMAT']]);

    const upsert = await acme.POST('/api/v1/org/objects/{slug}/record/bulk_upsert', { ...path, body: { values: [{ name: 'Typed Client Three' }, { id, name: 'Typed Client Again' }, { id: 'con_missing', name: 'Nobody' }] } });
    const result = upsert.data?.data;
    expect([result?.records_created, result?.records_updated]).toEqual([1, 1]);
    expect(result?.records.map((r) => r.action)).toEqual(['CREATED', 'UPDATED', 'FAILED']);
    expect(result?.created_records?.[0]?.org_id).toBe('org_acme');
    expect(result?.updated_records?.[0]?.id).toBe(id);
    expect(result?.failed_records?.[0]?.error_message).toMatch(/^Invalid id/);
    const foreign = await globex.POST('/api/v1/org/objects/{slug}/record/bulk_upsert', { ...path, body: { values: [{ id, name: 'Hijacked' }] } });
    expect(foreign.data?.data.failed_records?.map((r) => r.id)).toEqual([id]);
    expect((await acme.GET('/api/v1/org/objects/{slug}/record/{id}', { params: { path: { slug: 'contact', id } } })).data?.data['name']).toBe('Typed Client Again');

    const invalid = await acme.POST('/api/v1/org/objects/{slug}/record/bulk_create', { ...path, body: [{ name: 'Typed Client Bad', email: 'nope' }] });
    expect(invalid.error?.data.validation_errors?.map((e) => [e.record_index, e.field, e.error_code])).toEqual([[0, 'email', 'PARSE_INVALID_FORMAT']]);
    const denied = await acmeMember.POST('/api/v1/org/objects/{slug}/record/bulk_create', { params: { path: { slug: 'opportunity' } }, body: [{ name: 'x' }] });
    expect(denied.error?.data.error_code).toBe('PERMISSION_DENIED');
  });

  it("filters records and pages connector records of the caller's organization only", async () => {
    for (const [org, c] of [['org_acme', acme], ['org_globex', globex]] as const) {
      const live = liveRows('account', org);
      const filtered = await c.POST('/api/v1/org/objects/{slug}/filter', { params: { path: { slug: 'account' } }, body: { query: { fields: ['id'], pagination: { page: 1, page_size: 1000 } } } });
      expect(ids(json(filtered.data)?.data.records ?? [])).toEqual(ids(live));
      const pages: { id: string; updated_at?: string | null }[] = [];
      let token: string | null = null;
      for (let page = 0; page < 10; page++) {
        const answer: { data?: { data: { records: { id: string; updated_at?: string | null }[]; next_token: string | null } } } = await c.POST('/api/v1/flowconnector/objects/{slug}/records', { params: { path: { slug: 'account' } }, body: { query: { fields: ['name', 'updated_at'] }, next_token: token } });
        pages.push(...(answer.data?.data.records ?? []));
        token = answer.data?.data.next_token ?? null;
        if (token === null) break;
      }
      expect(token).toBeNull();
      expect(ids(pages)).toEqual(ids(live));
      for (const row of live) {
        const expected = typeof row.updated_at === 'number' ? new Date(row.updated_at).toISOString() : null;
        expect(pages.find((p) => p.id === row.id)?.updated_at, String(row.id)).toBe(expected);
      }
    }
    const wrong = await acme.POST('/api/v1/org/objects/{slug}/filter', { params: { path: { slug: 'account' } }, body: { query: { filters: { and: [{ field: 'name', operator: 'equals', value: 'x' }] } } } });
    expect(wrong.error?.data.validation_errors?.[0]?.meta_data).toBe('query.filters.and[0].operator');
    // With include_deleted, the fixture's soft-deleted accounts come as tombstones among the live ones, each organization its own.
    for (const [org, c] of [['org_acme', acme], ['org_globex', globex]] as const) {
      const answer = await c.POST('/api/v1/flowconnector/objects/{slug}/records', { params: { path: { slug: 'account' } }, body: { query: { fields: ['name', 'updated_at'] }, next_token: null, include_deleted: true } });
      const records = answer.data?.data.records ?? [];
      expect(answer.data?.data.next_token).toBeNull();
      const deleted = crm.data.get('account')!.filter((r) => r.org_id === org && r.is_deleted === true);
      expect(deleted.length).toBeGreaterThan(0);
      expect(ids(records.filter((r) => r.is_deleted === true))).toEqual(ids(deleted));
      expect(ids(records.filter((r) => r.is_deleted === false))).toEqual(ids(liveRows('account', org)));
      for (const row of deleted) {
        const updatedAt = typeof row.updated_at === 'number' ? new Date(row.updated_at).toISOString() : null;
        expect(records.find((r) => r.id === row.id)).toEqual({ id: row.id, is_deleted: true, deleted_at: null, updated_at: updatedAt });
      }
    }
    const forged = await acme.POST('/api/v1/flowconnector/objects/{slug}/records', { params: { path: { slug: 'account' } }, body: { query: { fields: ['name'] }, next_token: 'eyJ2IjoxfQ.forged' } });
    expect(forged.error?.data.error_code).toBe('INVALID_TOKEN');
  });

  it('runs reports (execute and count) over the caller\'s records, with positions for errors in the text', async () => {
    for (const [org, c] of [['org_acme', acme], ['org_globex', globex]] as const) {
      const body = { query: 'SELECT id FROM account LIMIT 10000', slug: 'account' };
      const rows = await c.POST('/api/v1/reports/execute', { body });
      expect(ids(json(rows.data)?.data.records ?? [])).toEqual(ids(liveRows('account', org)));
      // The same rows as CSV, asked for by Accept: a header row, then one id a line.
      const csv = await c.POST('/api/v1/reports/execute', { body, parseAs: 'text', headers: { accept: 'text/csv' } });
      expect(csv.response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect((csv.data as string).split('\r\n').slice(1, -1).sort()).toEqual(ids(liveRows('account', org)));
      const count = await c.POST('/api/v1/reports/count', { body });
      expect(count.data?.data.count).toBe(liveRows('account', org).length);
    }
    const withheld = await acmeMember.POST('/api/v1/reports/count', { body: { query: 'SELECT id FROM opportunity LIMIT 5', slug: 'opportunity' } });
    expect([withheld.data?.data.count, withheld.data?.data.message]).toEqual([0, "You do not have access to object 'opportunity'"]);
    const typo = await acme.POST('/api/v1/reports/execute', { body: { query: 'SELECT nme FROM account LIMIT 10', slug: 'account' } });
    expect([typo.error?.data.error_code, typo.error?.data.span?.column, typo.error?.data.span?.endColumn]).toEqual(['UNKNOWN_COLUMN', 8, 11]);
    expect(typo.error?.data.diagnostics?.map((d) => [d.code, d.severity])).toEqual([['UNKNOWN_COLUMN', 'error']]);
    const slug = await acme.POST('/api/v1/reports/count', { body: { query: 'SELECT id FROM account LIMIT 10', slug: 'acount' } });
    expect([slug.error?.data.message, slug.error?.data.status_code]).toEqual(['Invalid slug', 400]);
  });

  it("lists the organization's MCP tool calls to its superadmins only", async () => {
    const call = (orgId: string, toolName: string, timestamp: number) =>
      recordToolCall(service.db, { orgId, userId: `u_${orgId}`, toolName, inputParams: { slug: 'account' }, responseTime: 12.5, responseCode: 200, timestamp });
    const acmeIds = [await call('org_acme', 'list_objects', 1_000), await call('org_acme', 'execute_query', 2_000)];
    const globexId = await call('org_globex', 'describe_object', 3_000);
    const mine = await acme.POST('/api/v1/org/tool/mcp/logs/list', { body: {} });
    expect(mine.data?.data.logs.map((l) => [l.id, l.tool_name, l.tool_call_timestamp])).toEqual([[acmeIds[1], 'execute_query', 2_000], [acmeIds[0], 'list_objects', 1_000]]);
    expect(mine.data?.data.next).toBeNull();
    const theirs = await globex.POST('/api/v1/org/tool/mcp/logs/list');
    expect(theirs.data?.data.logs.map((l) => [l.id, l.user_id, l.input_params])).toEqual([[globexId, 'u_org_globex', { slug: 'account' }]]);
    const member = await acmeMember.POST('/api/v1/org/tool/mcp/logs/list', { body: { pointer: null } });
    expect([member.response.status, member.error?.data.error_code]).toEqual([403, 'PERMISSION_DENIED']);
    const forged = await acme.POST('/api/v1/org/tool/mcp/logs/list', { body: { pointer: 'forged' } });
    expect(forged.error?.data.error_code).toBe('INVALID_TOKEN');
    // Filtered by tool, user and time, never reaching the other organization's calls.
    const oneTool = await acme.POST('/api/v1/org/tool/mcp/logs/list', { body: { tool_name: 'list_objects' } });
    expect(oneTool.data?.data.logs.map((l) => l.id)).toEqual([acmeIds[0]]);
    const inRange = await acme.POST('/api/v1/org/tool/mcp/logs/list', { body: { user_id: 'u_org_acme', since: 1_500, until: 3_500 } });
    expect(inRange.data?.data.logs.map((l) => l.id)).toEqual([acmeIds[1]]);
    const otherTool = await acme.POST('/api/v1/org/tool/mcp/logs/list', { body: { tool_name: 'describe_object' } });
    expect(otherTool.data?.data.logs).toEqual([]);
    const huge = await acme.POST('/api/v1/org/tool/mcp/logs/list', { body: { since: 2 ** 64 } });
    expect(huge.error?.data.validation_errors?.map((e) => [e.field, e.meta_data])).toEqual([['since', 'body.since']]);
  });

  it("lists, creates, rolls and revokes API keys of the caller's organization only; a member sees their own", async () => {
    // The keys each organization holds, read from the table, not through the endpoints.
    const stored = async (org: string) => (await service.db.query<{ id: string }>('SELECT id FROM oql_service.api_keys WHERE org_id = $1', [org])).rows.map((r) => r.id).sort();
    const before = Date.now();
    const made = await acme.POST('/api/v1/keys', { body: { name: 'Typed client export', role: 'member' } });
    expect(made.response.status).toBe(201);
    const { key, secret } = made.data!.data;
    expect([key.name, key.role, key.user_id, key.created_by, key.status, key.can_manage]).toEqual(['Typed client export', 'member', 'u_acme_admin', 'u_acme_admin', 'active', true]);
    expect([key.prefix, key.last4]).toEqual([secret.slice(0, 8), secret.slice(-4)]);
    expect(key.created_at).toBeGreaterThanOrEqual(before);
    // The key works at once, for its own organization.
    const madeKey = client(service.api.url, secret);
    expect(json((await madeKey.POST('/api/v1/org/objects/{slug}/filter', { params: { path: { slug: 'account' } }, body: { query: { fields: ['id'], pagination: { page: 1, page_size: 1000 } } } })).data)?.data.records.map((r) => r['id']).sort())
      .toEqual(ids(liveRows('account', 'org_acme')));
    const globexKey = (await globex.POST('/api/v1/keys', { body: { name: 'Globex typed client', role: 'admin' } })).data!.data.key;

    for (const [org, c, theirs] of [['org_acme', acme, globexKey.id], ['org_globex', globex, key.id]] as const) {
      const listed = (await c.GET('/api/v1/keys')).data!.data.keys;
      expect(listed.map((k) => k.id).sort(), org).toEqual(await stored(org));
      expect(listed.map((k) => k.id), org).not.toContain(theirs);
      expect(listed.map((k) => k.created_at)).toEqual([...listed.map((k) => k.created_at)].sort((a, b) => b - a));
      // Neither can touch the other's key: it does not exist for them.
      for (const answer of [await c.POST('/api/v1/keys/{id}/revoke', { params: { path: { id: theirs } } }), await c.POST('/api/v1/keys/{id}/roll', { params: { path: { id: theirs } } })]) {
        expect([answer.response.status, answer.error?.data.error_code], org).toEqual([400, 'NOT_FOUND']);
      }
    }
    expect(JSON.stringify((await acme.GET('/api/v1/keys')).data)).not.toContain(secret);
    const mine = (await acmeMember.GET('/api/v1/keys')).data!.data.keys;
    expect(mine.length).toBeGreaterThan(0);
    expect(new Set(mine.map((k) => k.user_id))).toEqual(new Set(['u_acme_member']));
    const higher = await acmeMember.POST('/api/v1/keys', { body: { name: 'x', role: 'admin' } });
    expect([higher.response.status, higher.error?.data.error_code]).toEqual([403, 'PERMISSION_DENIED']);
    const blankAndPast = await acme.POST('/api/v1/keys', { body: { name: '  ', role: 'member', expires_at: before - 1 } });
    expect(blankAndPast.error?.data.validation_errors?.map((e) => [e.field, e.error_code])).toEqual([['name', 'INVALID_VALUE'], ['expires_at', 'INVALID_VALUE']]);
    const longId = await acme.POST('/api/v1/keys/{id}/revoke', { params: { path: { id: 'k'.repeat(300) } } });
    expect(longId.error?.data.validation_errors?.map((e) => [e.field, e.error_code])).toEqual([['id', 'TOO_LONG']]);

    const rolled = await acme.POST('/api/v1/keys/{id}/roll', { params: { path: { id: key.id } } });
    expect(rolled.response.status).toBe(201);
    const { key: next, secret: nextSecret, previous } = rolled.data!.data;
    expect([next.rolled_from, next.name, previous.id, previous.status]).toEqual([key.id, 'Typed client export', key.id, 'active']);
    expect(previous.expires_at).toBeGreaterThanOrEqual(before + 24 * 3600 * 1000);
    expect(nextSecret).not.toBe(secret);
    const revoked = await acme.POST('/api/v1/keys/{id}/revoke', { params: { path: { id: next.id } } });
    expect([revoked.data?.data.key.id, revoked.data?.data.key.status, revoked.data?.data.key.revoked_by, revoked.data?.data.key.can_manage]).toEqual([next.id, 'revoked', 'u_acme_admin', false]);
    const dead = await client(service.api.url, nextSecret).POST('/api/v1/org/objects/list');
    expect([dead.response.status, dead.error?.data.error_code]).toEqual([401, 'UNAUTHENTICATED']);
    const again = await acme.POST('/api/v1/keys/{id}/roll', { params: { path: { id: next.id } } });
    expect([again.response.status, again.error?.data.error_code]).toEqual([400, 'NOT_FOUND']);
  });

  it('lints a query without running it, with positions and fixes, for each organization alike', async () => {
    const query = 'SELECT id, nme FROM account';
    const linted = await acme.POST('/api/v1/reports/lint', { body: { query } });
    const result = linted.data!.data;
    expect([result.slug, result.error_count, result.warning_count]).toEqual(['account', 2, 0]);
    const unknown = result.diagnostics.find((d) => d.code === 'UNKNOWN_COLUMN')!;
    expect([unknown.span.start, unknown.span.end, unknown.span.line, unknown.span.column, unknown.hint]).toEqual([query.indexOf('nme'), query.indexOf('nme') + 3, 1, query.indexOf('nme') + 1, "did you mean 'name'?"]);
    const { fix } = result.diagnostics.find((d) => d.code === 'MISSING_LIMIT')!;
    const fixed = query.slice(0, fix!.range[0]) + fix!.text + query.slice(fix!.range[1]);
    const again = await acme.POST('/api/v1/reports/lint', { body: { query: fixed } });
    expect(again.data?.data.diagnostics.map((d) => d.code)).toEqual(['UNKNOWN_COLUMN']);
    // Lint reads no records: the other organization gets the same answer.
    expect((await globex.POST('/api/v1/reports/lint', { body: { query } })).data).toEqual(linted.data);
    const denied = await acmeMember.POST('/api/v1/reports/lint', { body: { query: 'SELECT id FROM opportunity LIMIT 1' } });
    expect([denied.response.status, denied.error?.data.error_code]).toEqual([403, 'PERMISSION_DENIED']);
    const unparsed = await acme.POST('/api/v1/reports/lint', { body: { query: 'SELECT id\nFROM account\nWHERE LIMIT 5' } });
    expect([unparsed.data?.data.slug, unparsed.data?.data.diagnostics[0]?.severity, unparsed.data?.data.diagnostics[0]?.span.line]).toEqual([null, 'error', 3]);
  });

  it('receives the documented refusals: 401 without a key, 400 for a body that is not JSON, 413 over the limit, 415 for another type', async () => {
    const anonymous = await client(service.api.url).POST('/api/v1/org/objects/list');
    expect([anonymous.response.status, anonymous.error?.data.error_code, anonymous.error?.data.hint]).toEqual([401, 'UNAUTHENTICATED', 'send Authorization: Bearer <API key>']);
    const body = { query: 'SELECT id FROM account LIMIT 1', slug: 'account' };
    const broken = await acme.POST('/api/v1/reports/count', { body, bodySerializer: () => '{"query": ' });
    expect(broken.error?.data.error_code).toBe('MALFORMED_JSON');
    const text = await acme.POST('/api/v1/reports/count', { body, bodySerializer: () => 'SELECT 1', headers: { 'content-type': 'text/plain' } });
    expect([text.response.status, text.error?.data.error_code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    const big = await client(small.url, KEYS.acmeAdmin).POST('/api/v1/org/objects/{slug}/record/bulk_create', { params: { path: { slug: 'contact' } }, body: [{ name: 'x'.repeat(2000) }] });
    expect([big.response.status, big.error?.data.error_code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
  });

  it('deletes, restores and reads what changed (the record lifecycle and the change log)', async () => {
    const head = await acme.GET('/api/v1/changes/head');
    const start = head.data!.data.cursor;
    const made = await acme.POST('/api/v1/org/objects/{slug}/record/bulk_create', { params: { path: { slug: 'lead' } }, body: [{ name: 'Lifecycle lead one' }, { name: 'Lifecycle lead two' }] });
    const [one, two] = made.data!.data.ids;
    const deleted = await acme.DELETE('/api/v1/org/objects/{slug}/record/{id}', { params: { path: { slug: 'lead', id: one! } } });
    expect(deleted.data?.data).toMatchObject({ id: one, is_deleted: true });
    const restored = await acme.POST('/api/v1/org/objects/{slug}/record/{id}/restore', { params: { path: { slug: 'lead', id: one! } } });
    expect(restored.data?.data.name).toBe('Lifecycle lead one');
    const bulk = await acme.POST('/api/v1/org/objects/{slug}/record/bulk_delete', { params: { path: { slug: 'lead' } }, body: { ids: [one!, two!] } });
    expect(bulk.data?.data.records.map((r) => r.id)).toEqual([one, two]);
    const page = await acme.GET('/api/v1/changes', { params: { query: { after: start, objects: 'lead' } } });
    expect(page.data?.data.changes.map((c) => [c.operation, c.record_id === one ? 1 : c.record_id === two ? 2 : c.record_id])).toEqual([['created', 1], ['created', 2], ['deleted', 1], ['restored', 1], ['deleted', 1], ['deleted', 2]]);
    // The other organization's feed has none of them.
    const theirs = await globex.GET('/api/v1/changes', { params: { query: { objects: 'lead', limit: '1000' } } });
    expect(theirs.data?.data.changes.some((c) => c.record_id === one || c.record_id === two)).toBe(false);
    const member = await acmeMember.DELETE('/api/v1/org/objects/{slug}/record/{id}', { params: { path: { slug: 'contact', id: 'nope' } } });
    expect(member.error?.data.error_code).toBe('PERMISSION_DENIED');
    // The stream from the same cursor gives the same changes as events of the Change schema.
    const controller = new AbortController();
    const stream = await acme.GET('/api/v1/changes/stream', { params: { query: { after: start, objects: 'lead' } }, parseAs: 'stream', signal: controller.signal });
    const reader = (stream.response.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while ((text.match(/^data: /gm) ?? []).length < 6) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    controller.abort();
    const events = [...text.matchAll(/^event: (.+)\ndata: (.+)$/gm)].map((m) => ({ event: m[1]!, data: JSON.parse(m[2]!) }));
    expect(events.map((e) => e.event)).toEqual(['record.created', 'record.created', 'record.deleted', 'record.restored', 'record.deleted', 'record.deleted']);
    for (const e of events) expect(check.schemaMatches('Change', e.data)).toBeNull();
  });

  it('manages webhook endpoints: add, list, read, change, ping, rotate, deliveries, replay, retry, remove', async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const made = await acme.POST('/api/v1/webhooks', { body: { url, objects: ['lead'], description: 'typed client' } });
    expect(made.response.status).toBe(201);
    const id = made.data!.data.id;
    expect(made.data!.data.secret).toMatch(/^whsec_/);
    expect((await acme.GET('/api/v1/webhooks')).data?.data.webhooks.map((w) => w.id)).toContain(id);
    expect((await globex.GET('/api/v1/webhooks')).data?.data.webhooks.map((w) => w.id)).not.toContain(id);
    expect((await acme.GET('/api/v1/webhooks/{id}', { params: { path: { id } } })).data?.data.url).toBe(url);
    expect((await globex.GET('/api/v1/webhooks/{id}', { params: { path: { id } } })).error?.data.error_code).toBe('NOT_FOUND');
    expect((await acme.PATCH('/api/v1/webhooks/{id}', { params: { path: { id } }, body: { status: 'paused' } })).data?.data.status).toBe('paused');
    expect((await acme.POST('/api/v1/webhooks/{id}/test', { params: { path: { id } } })).data?.data).toMatchObject({ success: true, http_status: 204 });
    const rotated = await acme.POST('/api/v1/webhooks/{id}/rotate-secret', { params: { path: { id } } });
    expect(rotated.data?.data.secret).not.toBe(made.data!.data.secret);
    expect((await acme.GET('/api/v1/webhooks/{id}/deliveries', { params: { path: { id } } })).data?.data.deliveries).toEqual([]);
    const head = (await acme.GET('/api/v1/changes/head')).data!.data.cursor;
    expect((await acme.POST('/api/v1/webhooks/{id}/replay', { params: { path: { id } }, body: { after: head } })).data?.data.cursor).toBe(head);
    // A dead letter without waiting out 24 hours of retries: a change of the log, and its dead-lettered attempt written as the sender writes one.
    await acme.POST('/api/v1/org/objects/{slug}/record/bulk_create', { params: { path: { slug: 'lead' } }, body: [{ name: 'Dead letter lead' }] });
    const change = (await acme.GET('/api/v1/changes', { params: { query: { after: head } } })).data!.data.changes[0]!;
    const { rows: [dead] } = await service.db.query<{ id: string }>(
      `INSERT INTO oql_service.webhook_attempts (endpoint_id, org_id, position, event_id, attempted_at, outcome, http_status, latency_ms, error, next_attempt_at)
       VALUES ($1, 'org_acme', $4::bigint, $3, $2, 'dead_lettered', 500, 3, 'the receiver answered HTTP 500', NULL) RETURNING id::text`,
      // The change's position: its cursor is "c" and the position in base 36.
      [id, Date.now(), change.event_id, [...change.cursor.slice(1)].reduce((n, ch) => n * 36n + BigInt(parseInt(ch, 36)), 0n).toString()]);
    const retried = await acme.POST('/api/v1/webhooks/{id}/deliveries/{delivery_id}/retry', { params: { path: { id, delivery_id: dead!.id } } });
    expect(retried.data?.data).toMatchObject({ success: true, http_status: 204, delivery: { event_id: change.event_id, cursor: change.cursor, outcome: 'succeeded' } });
    expect((await globex.POST('/api/v1/webhooks/{id}/deliveries/{delivery_id}/retry', { params: { path: { id, delivery_id: dead!.id } } })).error?.data.error_code).toBe('NOT_FOUND');
    expect((await acmeMember.GET('/api/v1/webhooks')).error?.data.error_code).toBe('PERMISSION_DENIED');
    expect((await acme.DELETE('/api/v1/webhooks/{id}', { params: { path: { id } } })).data?.data).toEqual({ id, deleted: true });
  });

  it('answers 503 in the error envelope once the database is gone', async () => {
    await service.pglite.close();
    const gone = await acme.POST('/api/v1/reports/count', { body: { query: 'SELECT id FROM account LIMIT 1', slug: 'account' } });
    expect([gone.response.status, gone.error?.data.error_code]).toEqual([503, 'DATABASE_ERROR']);
    // A key not seen before is looked up in the database, even for the catalog's endpoints.
    const unseen = await client(service.api.url, KEYS.initechAdmin).POST('/api/v1/org/objects/list');
    expect([unseen.response.status, unseen.error?.data.error_code]).toEqual([503, 'DATABASE_ERROR']);
  });

  it('has called every operation of the document and received its success answer', () => {
    const successOf = (op: { responses: object }) => Object.keys(op.responses).find((s) => s.startsWith('2'));
    const missing = operationsOf(check.document).filter(([method, path, op]) => !check.seen.has(`${method} ${path} ${successOf(op)}`)).map(([m, p]) => `${m} ${p}`);
    expect(missing).toEqual([]);
    // And at least these refusals, each held to the schema of the operation that gave it.
    const statuses = new Set([...check.seen].map((s) => s.split(' ')[2]));
    for (const s of ['400', '401', '403', '413', '415', '503']) expect(statuses.has(s), s).toBe(true);
  });
});
