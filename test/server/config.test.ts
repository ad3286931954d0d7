import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtureCatalog } from '../../fixtures/index.js';
import { createServer, databaseOf } from '../../src/server/index.js';
import { parseRoleAccess, resolveConfig } from '../../src/service/config.js';
import { KEYS, crmServiceOnPglite, expectEnvelope, liveRows, type CrmService } from './support.js';
import { emptyPglite } from '../support/pglite-template.js';

/**
 * The settings an operator gives through the environment (OQL_ROLE_ACCESS,
 * OQL_MAX_CONCURRENT_REPORTS, OQL_QUERY_TIMEOUT_MS): read, checked, and in force over HTTP.
 */

describe('OQL_ROLE_ACCESS', () => {
  it('reads role=slug,slug;role=slug', () => {
    expect(parseRoleAccess('member=account, contact;admin=account,lead,account')).toEqual({ member: ['account', 'contact'], admin: ['account', 'lead'] });
    expect(parseRoleAccess('')).toEqual({});
    expect(parseRoleAccess('member=')).toEqual({ member: [] });
  });

  it.each([
    ['member', /has no '='/],
    ['guest=account', /role 'guest'/],
    ['member=account;member=lead', /member twice/],
    ['member=Account', /'Account', which is not an object slug/],
    ['member=account;drop table', /has no '='/],
  ])('refuses %j with a clear INVALID_OPTIONS', (text, message) => {
    let thrown: unknown;
    try {
      parseRoleAccess(text);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toMatchObject({ code: 'INVALID_OPTIONS', message });
    expect((thrown as { hint?: string }).hint).toBe('write it as member=account,contact;admin=account,contact,lead');
  });

  it('is overridden by the roleAccess option', () => {
    expect(resolveConfig({ roleAccess: { admin: ['lead'] }, env: { OQL_ROLE_ACCESS: 'member=account' } }).roleAccess).toEqual({ admin: ['lead'] });
  });

  it('naming an object the catalog lacks stops the server from starting, with the likely slug', async () => {
    const pglite = await emptyPglite();
    try {
      const failed = await createServer({ db: databaseOf(pglite), env: { OQL_ROLE_ACCESS: 'member=account,opportunities' } }).then(() => null, (e) => e);
      expect(failed).toMatchObject({ code: 'INVALID_OPTIONS', message: "role access for member names the object 'opportunities', which the catalog does not have" });
      expect(failed.hint).toContain("'opportunity'");
    } finally {
      await pglite.close();
    }
  }, 60_000);
});

describe('numeric settings', () => {
  it('come from the environment, are checked, and yield to options', () => {
    const env = { OQL_MAX_CONCURRENT_REPORTS: '5', OQL_QUERY_TIMEOUT_MS: '1500' };
    expect(resolveConfig({ env })).toMatchObject({ maxConcurrentReports: 5, queryTimeoutMs: 1500 });
    expect(resolveConfig({ env, maxConcurrentReports: 1, queryTimeoutMs: 900 })).toMatchObject({ maxConcurrentReports: 1, queryTimeoutMs: 900 });
    // Unset, the timeout is the database's default, chosen when it is opened (20 s PostgreSQL, 5 s embedded).
    expect(resolveConfig({ env: {} })).toMatchObject({ maxConcurrentReports: 2, queryTimeoutMs: undefined });
    expect(resolveConfig({ env: { OQL_EMBEDDED_SLICE_MS: '250' } }).embeddedSliceMs).toBe(250);
    expect(resolveConfig({ env: { OQL_EMBEDDED_SLICE_MS: '250' }, embeddedSliceMs: 800 }).embeddedSliceMs).toBe(800);
    // Unset, the embedded database's own default (500 ms).
    expect(resolveConfig({ env: {} }).embeddedSliceMs).toBeUndefined();
    for (const [name, value] of [['OQL_MAX_CONCURRENT_REPORTS', '0'], ['OQL_QUERY_TIMEOUT_MS', '1.5'], ['OQL_QUERY_TIMEOUT_MS', '20s'], ['OQL_EMBEDDED_SLICE_MS', '0'], ['OQL_EMBEDDED_SLICE_MS', 'half a second']] as const) {
      expect(() => resolveConfig({ env: { [name]: value } })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining(name) }));
    }
  });

  it('set the caps on what a tenant creates, each checked', () => {
    const env = {
      OQL_MAX_KEYS_PER_USER: '7', OQL_MAX_KEYS_PER_ORG: '70', OQL_MAX_CONSOLE_SESSIONS_PER_KEY: '4',
      OQL_MAX_CONSOLE_SIGN_INS_PER_MINUTE: '6', OQL_MAX_TOOL_LOG_ENTRY_BYTES: '4096', OQL_MAX_TOOL_LOG_PAGE_BYTES: '65536',
    };
    expect(resolveConfig({ env })).toMatchObject({
      maxKeysPerUser: 7, maxKeysPerOrg: 70, maxConsoleSessionsPerKey: 4, maxConsoleSignInsPerMinute: 6, maxToolLogEntryBytes: 4096, maxToolLogPageBytes: 65536,
    });
    expect(resolveConfig({ env, maxKeysPerUser: 3 }).maxKeysPerUser).toBe(3);
    expect(resolveConfig({ env: {} })).toMatchObject({
      maxKeysPerUser: 100, maxKeysPerOrg: 1000, maxConsoleSessionsPerKey: 20, maxConsoleSignInsPerMinute: 30, maxToolLogEntryBytes: 65536, maxToolLogPageBytes: 4194304,
    });
    for (const [name, value] of [['OQL_MAX_KEYS_PER_USER', '0'], ['OQL_MAX_KEYS_PER_ORG', 'many'], ['OQL_MAX_CONSOLE_SESSIONS_PER_KEY', '-1'],
      ['OQL_MAX_CONSOLE_SIGN_INS_PER_MINUTE', '1.5'], ['OQL_MAX_TOOL_LOG_ENTRY_BYTES', '100'], ['OQL_MAX_TOOL_LOG_PAGE_BYTES', '64k']] as const) {
      expect(() => resolveConfig({ env: { [name]: value } })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining(name) }));
    }
  });
});

describe('read-only sessions (OQL_READ_SESSIONS)', () => {
  it('are on unless set to 0 or false, yield to the option, and refuse any other value', () => {
    expect(resolveConfig({ env: {} }).readSessions).toBe(true);
    expect(resolveConfig({ env: { OQL_READ_SESSIONS: '' } }).readSessions).toBe(true);
    expect(resolveConfig({ env: { OQL_READ_SESSIONS: '1' } }).readSessions).toBe(true);
    expect(resolveConfig({ env: { OQL_READ_SESSIONS: '0' } }).readSessions).toBe(false);
    expect(resolveConfig({ env: { OQL_READ_SESSIONS: 'false' } }).readSessions).toBe(false);
    expect(resolveConfig({ env: { OQL_READ_SESSIONS: '0' }, readSessions: true }).readSessions).toBe(true);
    expect(() => resolveConfig({ env: { OQL_READ_SESSIONS: 'off' } })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: "OQL_READ_SESSIONS must be 1 or 0, not 'off'" }));
  });
});

describe('role access from the environment, over HTTP', () => {
  let service: CrmService;
  const catalog = loadFixtureCatalog('crm');

  beforeAll(async () => {
    service = await crmServiceOnPglite({ env: { OQL_ROLE_ACCESS: 'member=account,user' } });
  }, 180_000);
  afterAll(async () => {
    await service?.close();
  });

  it('limits members of both organizations to the objects listed, and leaves other roles alone', async () => {
    expect(catalog.objects.has('lead')).toBe(true);
    for (const [org, member, admin] of [['org_acme', KEYS.acmeMember, KEYS.acmeAdmin], ['org_globex', KEYS.globexMember, KEYS.globexAdmin]] as const) {
      const lead = liveRows('lead', org)[0]!;
      expectEnvelope(await service.api.call('GET', `/api/v1/org/objects/lead/record/${lead.id}`, { key: member }), 403, 'PERMISSION_DENIED');
      const own = await service.api.call('GET', `/api/v1/org/objects/lead/record/${lead.id}`, { key: admin });
      expect(own.status).toBe(200);
      expect(own.json.data).toMatchObject({ id: lead.id, org_id: org });
      const count = await service.api.call('POST', '/api/v1/reports/count', { key: member, body: { query: 'SELECT id FROM account LIMIT 1000', slug: 'account' } });
      expect(count.json).toEqual({ success: true, data: { count: liveRows('account', org).length } });
    }
  });
});
