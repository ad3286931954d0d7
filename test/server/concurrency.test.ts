import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseOf } from '../../src/server/index.js';
import { startPgServer, type PgServer } from '../support/pg-server.js';
import { listen, type Answer, type Running } from './support.js';

/**
 * Concurrent writes over HTTP on a real PostgreSQL 15 server (the service on a pg Pool): 50
 * parallel bulk_upserts and updates on the same records lose nothing and duplicate nothing.
 * Expected rows and values are computed from the requests sent, and read back with SQL from the
 * database itself, not from the server's answers.
 */

const ACME = 'concurrency-acme-superadmin-key-1';
const GLOBEX = 'concurrency-globex-superadmin-key2';
const KEYS_ENV = `${ACME}=org_acme:superadmin:u_acme,${GLOBEX}=org_globex:superadmin:u_globex`;
const INDUSTRIES = ['software', 'retail', 'finance', 'healthcare', 'manufacturing'];
const TAGS = ['key', 'partner', 'churn_risk', 'new'];
const BASE = 10;

let server: PgServer;
let pool: pg.Pool;
let api: Running;
/** external_id → id of the base records, per organization, read from the database. */
const base = new Map<string, string[]>();

interface AccountRow { id: string; name: string; external_id: string | null; city: string | null; industry: string | null; annual_revenue: string | null; tags: string[] | null }

async function accounts(org: string): Promise<AccountRow[]> {
  const { rows } = await pool.query<AccountRow>(
    'SELECT id, name, external_id, city, industry, annual_revenue::text AS annual_revenue, tags FROM public.account WHERE org_id = $1 AND NOT is_deleted ORDER BY external_id',
    [org],
  );
  return rows;
}

const upsert = (key: string, values: unknown[]) => api.call('POST', '/api/v1/org/objects/account/record/bulk_upsert', { key, body: { values } });
const update = (key: string, id: string, body: unknown) => api.call('PUT', `/api/v1/org/objects/account/record/${encodeURIComponent(id)}`, { key, body });
const create = (key: string, records: unknown[]) => api.call('POST', '/api/v1/org/objects/account/record/bulk_create', { key, body: records });

function ok(a: Answer): void {
  expect(a.status, a.text.slice(0, 400)).toBe(200);
  expect(a.json.success).toBe(true);
}

beforeAll(async () => {
  server = await startPgServer({ settings: { max_connections: 60 } });
  pool = new pg.Pool({ connectionString: server.url, max: 10 });
  // The races need many writers of one user at once: above the default budget of concurrent requests.
  api = await listen({ db: databaseOf(pool), apiKeys: KEYS_ENV, env: {}, maxConcurrentRequests: 64 });
  for (const [org, key] of [['org_acme', ACME], ['org_globex', GLOBEX]] as const) {
    const created = await upsert(key, Array.from({ length: BASE }, (_, k) => ({ name: `Base ${k}`, external_id: `base-${k}` })));
    ok(created);
    const rows = await accounts(org);
    expect(rows.map((r) => r.external_id)).toEqual(Array.from({ length: BASE }, (_, k) => `base-${k}`));
    base.set(org, rows.map((r) => r.id));
  }
}, 120_000);

afterAll(async () => {
  await api?.close();
  await pool?.end();
  await server?.stop();
});

describe('50 parallel bulk_upserts and updates on the same records', () => {
  it('keep every field each request wrote and create every new record exactly once', async () => {
    const ids = base.get('org_acme')!;
    // Request r writes one field of base record r % 10 (five requests per record, each a different
    // field), and the upserts also create three new records each.
    const requests = Array.from({ length: 50 }, (_, r) => {
      const k = r % BASE;
      const fresh = (n: number) => Array.from({ length: n }, (_, j) => ({ name: `New ${r}-${j}`, external_id: `new-${String(r).padStart(2, '0')}-${j}` }));
      switch (Math.floor(r / BASE)) {
        case 0: return { r, kind: 'upsert' as const, send: () => upsert(ACME, [{ id: ids[k], city: `City ${k}` }, ...fresh(3)]) };
        case 1: return { r, kind: 'update' as const, send: () => update(ACME, ids[k]!, { annual_revenue: 1000 * k + 1 }) };
        case 2: return { r, kind: 'upsert' as const, send: () => upsert(ACME, [{ id: ids[k], industry: INDUSTRIES[k % INDUSTRIES.length] }, ...fresh(3)]) };
        case 3: return { r, kind: 'update' as const, send: () => update(ACME, ids[k]!, { name: `Renamed ${k}` }) };
        default: return { r, kind: 'upsert' as const, send: () => upsert(ACME, [{ id: ids[k], tags: [TAGS[k % TAGS.length]] }, ...fresh(3)]) };
      }
    });
    // The other organization writes its own records with the same ids' shapes at the same time.
    const globexIds = base.get('org_globex')!;
    const rival = Array.from({ length: 10 }, (_, k) => () => update(GLOBEX, globexIds[k]!, { city: `Globex ${k}` }));

    const answers = await Promise.all([...requests.map((q) => q.send()), ...rival.map((f) => f())]);
    for (const a of answers) ok(a);
    for (const [i, q] of requests.entries()) {
      if (q.kind !== 'upsert') continue;
      const d = answers[i]!.json.data;
      expect(d.records.map((x: { action: string }) => x.action)).toEqual(['UPDATED', 'CREATED', 'CREATED', 'CREATED']);
      expect([d.records_created, d.records_updated, d.failed_records]).toEqual([3, 1, null]);
    }

    // Independently: what the requests wrote.
    const expectedNew = requests.filter((q) => q.kind === 'upsert').flatMap((q) => [0, 1, 2].map((j) => `new-${String(q.r).padStart(2, '0')}-${j}`));
    const rows = await accounts('org_acme');
    expect(rows).toHaveLength(BASE + expectedNew.length);
    expect(rows.filter((r) => r.external_id!.startsWith('new-')).map((r) => r.external_id)).toEqual([...expectedNew].sort());
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
    for (const row of rows.filter((r) => r.external_id!.startsWith('new-'))) {
      const [, r, j] = /^new-(\d+)-(\d)$/.exec(row.external_id!)!;
      expect(row.name).toBe(`New ${Number(r)}-${j}`);
    }
    for (let k = 0; k < BASE; k++) {
      const row = rows.find((x) => x.id === ids[k])!;
      expect(row).toEqual({
        id: ids[k], external_id: `base-${k}`, name: `Renamed ${k}`, city: `City ${k}`,
        industry: INDUSTRIES[k % INDUSTRIES.length], annual_revenue: String(1000 * k + 1), tags: [TAGS[k % TAGS.length]],
      });
    }
    // The other organization: its own writes, and nothing of org_acme's.
    const globex = await accounts('org_globex');
    expect(globex.map((r) => [r.external_id, r.name, r.city])).toEqual(Array.from({ length: BASE }, (_, k) => [`base-${k}`, `Base ${k}`, `Globex ${k}`]));
  }, 120_000);

  it('end with one of the written values when 50 requests write the same field of one record', async () => {
    const id = base.get('org_acme')![0]!;
    const before = (await accounts('org_acme')).length;
    const written = Array.from({ length: 50 }, (_, r) => `Contended ${r}`);
    const answers = await Promise.all(written.map((city, r) => (r % 2 === 0 ? update(ACME, id, { city }) : upsert(ACME, [{ id, city }]))));
    for (const a of answers) ok(a);
    const rows = await accounts('org_acme');
    expect(rows).toHaveLength(before);
    const row = rows.find((x) => x.id === id)!;
    expect(written).toContain(row.city);
    // Fields no request touched are as they were.
    expect([row.name, row.industry, row.annual_revenue]).toEqual(['Renamed 0', INDUSTRIES[0], '1']);
  }, 120_000);

  it('create one record, not two, when parallel requests race to take the same unique external_id', async () => {
    const upserts = await Promise.all(Array.from({ length: 20 }, (_, r) => upsert(ACME, [{ name: `Racer ${r}`, external_id: 'race-upsert' }])));
    for (const a of upserts) ok(a);
    const actions = upserts.map((a) => a.json.data.records[0].action as string);
    expect(actions.filter((x) => x === 'CREATED')).toHaveLength(1);
    expect(actions.filter((x) => x === 'FAILED')).toHaveLength(19);

    const creates = await Promise.all(Array.from({ length: 20 }, (_, r) => create(ACME, [{ name: `Creator ${r}`, external_id: 'race-create' }, { name: `Companion ${r}`, external_id: `race-companion-${r}` }])));
    expect(creates.filter((a) => a.status === 200)).toHaveLength(1);
    for (const a of creates.filter((x) => x.status !== 200)) expect([a.status, a.json.data.error_code]).toEqual([400, 'VALIDATION_FAILED']);

    const { rows } = await pool.query<{ external_id: string; n: number }>(
      "SELECT external_id, count(*)::int AS n FROM public.account WHERE org_id = 'org_acme' AND external_id LIKE 'race-%' GROUP BY external_id ORDER BY external_id",
    );
    // One winner of each race; of the bulk_creates, only the winner's companion exists (all or nothing).
    expect(rows.filter((r) => r.external_id.startsWith('race-companion-'))).toHaveLength(1);
    expect(rows.filter((r) => !r.external_id.startsWith('race-companion-'))).toEqual([{ external_id: 'race-create', n: 1 }, { external_id: 'race-upsert', n: 1 }]);
  }, 120_000);
});
