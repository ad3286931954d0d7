import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseOf, recordToolCall, type ServiceDb } from '../../src/server/index.js';
import { KEYS, expectEnvelope, listen, type Running } from './support.js';
import { emptyPglite } from '../support/pglite-template.js';

/**
 * The endpoints an editor reads beside the reports: POST /api/v1/reports/lint (the library's
 * diagnostics with spans, hints and fixes) and the tool-log listing narrowed by tool, user and
 * time, for two organizations.
 */

let pglite: PGlite;
let db: ServiceDb;
let api: Running;

beforeAll(async () => {
  pglite = await emptyPglite();
  db = databaseOf(pglite);
  api = await listen({
    db, env: {}, roleAccess: { member: ['account'] },
    apiKeys: [`${KEYS.acmeAdmin}=org_acme:superadmin:u_a`, `${KEYS.acmeMember}=org_acme:member:u_m`, `${KEYS.globexAdmin}=org_globex:superadmin:u_g`].join(','),
  });
}, 240_000);

afterAll(async () => {
  await api?.close();
  await pglite?.close();
});

const lint = (body: object, key: string = KEYS.acmeAdmin) => api.call('POST', '/api/v1/reports/lint', { key, body });

describe('POST /api/v1/reports/lint', () => {
  it('lists every diagnostic with its position, hint and fix, and takes the slug from the query when none is sent', async () => {
    const query = 'SELECT id, nme FROM opportunity';
    const answer = await lint({ query });
    expect(answer.status, answer.text).toBe(200);
    const { slug, diagnostics, error_count: errors } = answer.json.data;
    expect(slug).toBe('opportunity');
    expect(errors).toBe(2);
    const unknown = diagnostics.find((d: { code: string }) => d.code === 'UNKNOWN_COLUMN');
    expect(unknown.span).toMatchObject({ start: query.indexOf('nme'), end: query.indexOf('nme') + 3, line: 1, column: query.indexOf('nme') + 1 });
    expect(unknown.hint).toContain("'name'");
    const limit = diagnostics.find((d: { code: string }) => d.code === 'MISSING_LIMIT');
    expect(limit.fix.range[0]).toBeLessThanOrEqual(query.length);
    // The fix, applied as written, leaves only the unknown column.
    const fixed = query.slice(0, limit.fix.range[0]) + limit.fix.text + query.slice(limit.fix.range[1]);
    const again = await lint({ query: fixed });
    expect(again.json.data.diagnostics.map((d: { code: string }) => d.code)).toEqual(['UNKNOWN_COLUMN']);
    const clean = await lint({ query: 'SELECT id, name FROM opportunity ORDER BY name LIMIT 5' });
    expect(clean.json.data).toEqual({ slug: 'opportunity', diagnostics: [], error_count: 0, warning_count: 0 });
  });

  it('a text that does not parse has no slug, and its syntax error points at line and column', async () => {
    const query = 'SELECT id\nFROM account\nWHERE LIMIT 5';
    const answer = await lint({ query });
    expect(answer.json.data.slug).toBeNull();
    const [first] = answer.json.data.diagnostics;
    expect(first.severity).toBe('error');
    expect(first.span.line).toBe(3);
    expect((await lint({ query: '' })).json.data.diagnostics[0].code).toBe('EMPTY_QUERY');
  });

  it('checks the sent slug against the FROM, refuses an object the role may not read, and a body that is not one', async () => {
    const answer = await lint({ query: 'SELECT id FROM account LIMIT 5', slug: 'contact' });
    expect(answer.json.data.diagnostics[0].code).toBe('INVALID_SLUG');
    expectEnvelope(await lint({ query: 'SELECT id FROM contact LIMIT 5' }, KEYS.acmeMember), 403, 'PERMISSION_DENIED');
    expect((await lint({ query: 'SELECT id FROM account LIMIT 5' }, KEYS.acmeMember)).status).toBe(200);
    expectEnvelope(await lint({ text: 'SELECT 1' }), 400, 'VALIDATION_FAILED');
    expectEnvelope(await api.call('POST', '/api/v1/reports/lint', { body: { query: 'SELECT id FROM account LIMIT 1' } }), 401, 'UNAUTHENTICATED');
  });
});

describe('tool logs narrowed by tool, user and time', () => {
  const T0 = 1_700_000_000_000;
  beforeAll(async () => {
    const calls = [];
    for (let i = 0; i < 12; i++) {
      calls.push({ orgId: 'org_acme', userId: i % 3 === 0 ? 'u_x' : 'u_y', toolName: i % 2 === 0 ? 'execute_query' : 'list_objects', inputParams: { i }, responseTime: 5, responseCode: 200, timestamp: T0 + i * 1000 });
    }
    calls.push({ orgId: 'org_globex', userId: 'u_x', toolName: 'execute_query', inputParams: { globex: true }, responseTime: 5, responseCode: 200, timestamp: T0 + 500 });
    for (const c of calls) await recordToolCall(db, c);
  });

  const list = (body: object, key: string = KEYS.acmeAdmin) => api.call('POST', '/api/v1/org/tool/mcp/logs/list/', { key, body });
  const seen = (answer: { json: any }): number[] => answer.json.data.logs.map((l: { input_params: { i: number } }) => l.input_params.i);

  it('each filter and their combination, newest first, and never another organization\'s entries', async () => {
    expect(seen(await list({ tool_name: 'list_objects' }))).toEqual([11, 9, 7, 5, 3, 1]);
    expect(seen(await list({ user_id: 'u_x' }))).toEqual([9, 6, 3, 0]);
    expect(seen(await list({ since: T0 + 4000, until: T0 + 7000 }))).toEqual([6, 5, 4]);
    expect(seen(await list({ tool_name: 'execute_query', user_id: 'u_x', since: T0 + 1 }))).toEqual([6]);
    expect(seen(await list({}))).toHaveLength(12);
    const globex = await list({ user_id: 'u_x' }, KEYS.globexAdmin);
    expect(globex.json.data.logs.map((l: { input_params: unknown }) => l.input_params)).toEqual([{ globex: true }]);
  });

  it('refuses a filter of the wrong type', async () => {
    expectEnvelope(await list({ since: 'yesterday' }), 400, 'VALIDATION_FAILED');
    expectEnvelope(await list({ tool_name: '' }), 400, 'VALIDATION_FAILED');
    // Beyond Postgres's int8: refused by the schema, naming the field, before any statement runs.
    const huge = await list({ until: 2 ** 64 });
    expectEnvelope(huge, 400, 'VALIDATION_FAILED');
    expect(huge.json.data.validation_errors.map((e: { field: string }) => e.field)).toEqual(['until']);
  });
});
