import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadIntoDatabase } from '../../fixtures/index.js';
import { recordToolCall } from '../../src/server/index.js';
import { DocumentCheck } from '../support/openapi.js';
import { startPgDatabase } from '../support/pg-cluster.js';
import { pgServerAvailable, type PgServer } from '../support/pg-server.js';
import { API_KEYS_ENV, KEYS, crm, expectEnvelope, listen, liveRows, type Running } from './support.js';

/**
 * The service on the throwaway PostgreSQL 15 server through a pg Pool (`--database`): the
 * endpoints for two organizations, and the per-key concurrency limit with real statement timeouts.
 * The server binaries are required: without them this file fails, it does not skip.
 */

const { catalog, data } = crm;
const live = liveRows;
const SLOW_ORG = 'org_slow';
const SLOW_KEY = 'test-key-slow-superadmin-0006';

let pgServer: PgServer | undefined;
let api: Running;

beforeAll(async () => {
  expect(pgServerAvailable(), 'PostgreSQL 15 server binaries are required (apt-get install postgresql-15)').toBe(true);
  pgServer = await startPgDatabase();
  const pool = new pg.Pool({ connectionString: pgServer.url, max: 4 });
  try {
    await loadIntoDatabase(pool, catalog, data);
    // A fan-out across two virtual relations: far slower than the timeout below.
    await pool.query(`INSERT INTO account (id, org_id, name) SELECT 'slow_a' || g, $1, 'account ' || g FROM generate_series(1, 20) g`, [SLOW_ORG]);
    for (const table of ['contact', 'opportunity']) {
      await pool.query(
        `INSERT INTO ${table} (id, org_id, name, account) SELECT 'slow_${table}_' || g, $1, '${table} ' || g, 'slow_a' || (g % 20 + 1) FROM generate_series(1, 40000) g`,
        [SLOW_ORG],
      );
    }
    await pool.query('ANALYZE');
  } finally {
    await pool.end();
  }
  api = await listen({ database: pgServer.url, apiKeys: `${API_KEYS_ENV},${SLOW_KEY}=${SLOW_ORG}:member:u_slow`, env: {}, queryTimeoutMs: 1500 });
}, 240_000);

afterAll(async () => {
  try {
    await api?.close();
  } finally {
    await pgServer?.stop();
  }
});

describe('on PostgreSQL 15 through a pg Pool', () => {
  it('answers /health', async () => {
    expect((await api.call('GET', '/health')).json).toEqual({ success: true, data: { status: 'ok' } });
    expect(api.server.db.kind).toBe('postgres');
  });

  it('runs reports, filters and connector pages for two organizations, each seeing only its own records', async () => {
    for (const [org, key] of [['org_acme', KEYS.acmeAdmin], ['org_globex', KEYS.globexAdmin]] as const) {
      const ids = live('opportunity', org).map((r) => r.id).sort();
      const report = await api.call('POST', '/api/v1/reports/execute', { key, body: { query: 'SELECT id FROM opportunity LIMIT 10000', slug: 'opportunity' } });
      expect(report.json.data.records.map((r: { id: string }) => r.id).sort()).toEqual(ids);
      const count = await api.call('POST', '/api/v1/reports/count', { key, body: { query: 'SELECT id FROM opportunity LIMIT 10000', slug: 'opportunity' } });
      expect(count.json.data.count).toBe(ids.length);
      const filter = await api.call('POST', '/api/v1/org/objects/opportunity/filter', { key, body: { query: { fields: ['id'], pagination: { page: 1, page_size: 1000 } } } });
      expect(filter.json.data.records.map((r: { id: string }) => r.id).sort()).toEqual(ids);
      const sync = await api.call('POST', '/api/v1/flowconnector/objects/opportunity/records', { key, body: { query: { fields: ['name'] } } });
      expect(sync.json.data.records.map((r: { id: string }) => r.id).sort()).toEqual(ids);
    }
    const acmeIds = live('opportunity', 'org_acme').slice(0, 3).map((r) => `'${r.id}'`).join(', ');
    const guess = await api.call('POST', '/api/v1/reports/execute', { key: KEYS.globexAdmin, body: { query: `SELECT id FROM opportunity WHERE id IN (${acmeIds}) LIMIT 10`, slug: 'opportunity' } });
    expect(guess.json).toEqual({ success: true, data: { records: [] } });
  });

  it('writes and reads records per organization', async () => {
    const created = await api.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: KEYS.acmeAdmin, body: [{ name: 'Pg One', email: 'one@example.com' }, { name: 'Pg Two' }] });
    expect(created.status).toBe(200);
    const found = await api.call('POST', '/api/v1/org/objects/contact/filter', { key: KEYS.acmeAdmin, body: { query: { fields: ['id', 'name'], filters: { and: [{ field: 'name', operator: 'starts_with', value: 'Pg ' }] } } } });
    const ids = found.json.data.records.map((r: { id: string }) => r.id);
    expect(found.json.data.records.map((r: { name: string }) => r.name).sort()).toEqual(['Pg One', 'Pg Two']);
    for (const id of ids) {
      expectEnvelope(await api.call('GET', `/api/v1/org/objects/contact/record/${id}`, { key: KEYS.globexAdmin }), 400, 'NOT_FOUND');
      expectEnvelope(await api.call('PUT', `/api/v1/org/objects/contact/record/${id}`, { key: KEYS.globexAdmin, body: { name: 'x' } }), 400, 'NOT_FOUND');
    }
    const upsert = await api.call('POST', '/api/v1/org/objects/contact/record/bulk_upsert', { key: KEYS.globexAdmin, body: { values: [{ id: ids[0], name: 'x' }] } });
    expect(upsert.json.data.records.map((r: { action: string }) => r.action)).toEqual(['FAILED']);
    const updated = await api.call('PUT', `/api/v1/org/objects/contact/record/${ids[0]}`, { key: KEYS.acmeAdmin, body: { name: 'Pg Renamed' } });
    expect(updated.json.data).toMatchObject({ id: ids[0], name: 'Pg Renamed', updated_by: 'u_acme_admin' });
    const theirs = await api.call('POST', '/api/v1/org/objects/contact/filter', { key: KEYS.globexAdmin, body: { query: { fields: ['id'], filters: { and: [{ field: 'name', operator: 'starts_with', value: 'Pg ' }] } } } });
    expect(theirs.json.data.records).toEqual([]);
  });

  it('lists tool logs per organization', async () => {
    const acme = [];
    for (let i = 0; i < 5; i++) acme.push(await recordToolCall(api.server.db, { orgId: 'org_acme', userId: 'u', toolName: 't', inputParams: { i }, responseTime: 1, responseCode: 200, timestamp: 1_000 + i }));
    await recordToolCall(api.server.db, { orgId: 'org_globex', userId: 'u', toolName: 't', inputParams: {}, responseTime: 1, responseCode: 200, timestamp: 5_000 });
    const a = await api.call('POST', '/api/v1/org/tool/mcp/logs/list/', { key: KEYS.acmeAdmin });
    expect(a.json.data.logs.map((l: { id: string }) => l.id)).toEqual([...acme].reverse());
    expect(a.json.data.next).toBeNull();
  });

  it('refuses exactly one of three concurrent heavy reports from one key with 429, and times the others out with 504', async () => {
    const slow = { slug: 'account', query: "SELECT COUNT(*) AS n FROM account WHERE contacts.name ILIKE '%x%' OR opportunities.name ILIKE '%y%' LIMIT 1" };
    const answers = await Promise.all([0, 1, 2].map(() => api.call('POST', '/api/v1/reports/execute', { key: SLOW_KEY, body: slow })));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([429, 504, 504]);
    for (const a of answers) expectEnvelope(a, a.status, a.status === 429 ? 'TOO_MANY_REQUESTS' : 'QUERY_TIMEOUT');
    // Both refusals as /openapi.json documents them for this operation.
    const documented = new DocumentCheck((await api.call('GET', '/openapi.json')).json);
    for (const a of answers) documented.check('POST', '/api/v1/reports/execute', a.status, a.headers, a.json);
    expect(answers.find((a) => a.status === 504)!.json.data.message).toBe('the query timed out after 1.5 seconds');
    // The slots are free again, and another key never shared them.
    const after = await api.call('POST', '/api/v1/reports/count', { key: SLOW_KEY, body: { query: 'SELECT id FROM account LIMIT 100', slug: 'account' } });
    expect(after.json).toEqual({ success: true, data: { count: 20 } });
  }, 60_000);

  it("keeps one key's heavy reports from using another key's slots", async () => {
    const slow = { slug: 'account', query: "SELECT COUNT(*) AS n FROM account WHERE contacts.name ILIKE '%x%' OR opportunities.name ILIKE '%y%' LIMIT 1" };
    const heavy = [0, 1].map(() => api.call('POST', '/api/v1/reports/execute', { key: SLOW_KEY, body: slow }));
    const other = await api.call('POST', '/api/v1/reports/count', { key: KEYS.acmeAdmin, body: { query: 'SELECT id FROM account LIMIT 5', slug: 'account' } });
    expect(other.status).toBe(200);
    expect((await Promise.all(heavy)).map((a) => a.status)).toEqual([504, 504]);
  }, 60_000);
});
