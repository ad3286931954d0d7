import { PGlite } from '@electric-sql/pglite';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import { bulkCreate, bulkUpsert, getRecord, updateRecord } from '../../src/records/index.js';
import { createTables, recordCatalog } from './support.js';
import { emptyPglite } from '../support/pglite-template.js';

// Every injection payload of the security suite in every string position of the record
// functions: stored verbatim as data where the column takes free text, refused with a
// validation entry where it does not, and in every case the statements sent are exactly those of
// a harmless value, and nothing of the other organization changes.

const PAYLOAD_DIR = new URL('../security/payloads/', import.meta.url);

function payloads(): string[] {
  const seen = new Set<string>();
  for (const f of readdirSync(PAYLOAD_DIR).filter((n) => n.endsWith('.txt')).sort()) {
    for (const raw of readFileSync(new URL(f, PAYLOAD_DIR), 'utf8').split('\n')) {
      const line = raw.replace(/\r$/, '');
      if (line.trim() !== '' && !/^# /.test(line)) seen.add(line);
    }
  }
  return [...seen];
}

const catalog = recordCatalog();
const A = { catalog, orgId: 'org_a', userId: 'u_a', now: () => 1_700_000_000_000 };
let raw: PGlite;
let statements: string[] = [];
/** PGlite with every statement text recorded, transactions included. */
let db: PGlite;

function recording<T extends object>(target: T): T {
  return new Proxy(target, {
    get(t, key) {
      const v = Reflect.get(t, key) as unknown;
      if (key === 'query') return (text: string, params?: unknown[]) => { statements.push(text); return (v as (a: string, b?: unknown[]) => unknown).call(t, text, params); };
      if (key === 'transaction') return (fn: (tx: object) => unknown) => (v as (f: (tx: object) => unknown) => unknown).call(t, (tx: object) => fn(recording(tx)));
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
}

async function snapshot(): Promise<string> {
  const b = await raw.query("SELECT * FROM thing WHERE org_id = 'org_b' ORDER BY id");
  const p = await raw.query('SELECT * FROM person ORDER BY id');
  return JSON.stringify([b.rows, p.rows]);
}

let bBefore: string;
let bId: string;

beforeAll(async () => {
  raw = await emptyPglite();
  await createTables(raw, catalog);
  await raw.query(`INSERT INTO person (id, org_id, name) VALUES ('p_a', 'org_a', 'Asha'), ('p_b', 'org_b', 'Bo')`);
  db = recording(raw);
  await bulkCreate(raw, 'thing', [{ name: 'b one', external_id: 'b-ext', owner: 'p_b' }, { name: 'b two' }], { ...A, orgId: 'org_b', userId: 'u_b' });
  bId = (await raw.query<{ id: string }>("SELECT id FROM thing WHERE org_id = 'org_b' ORDER BY name LIMIT 1")).rows[0]!.id;
  bBefore = await snapshot();
});
afterAll(async () => {
  await raw.close();
});

/** The statements a call sends, with the payload's own text (if any) never among them. */
async function statementsOf(call: () => Promise<unknown>): Promise<{ sql: string[]; result: unknown }> {
  statements = [];
  const result = await call().catch((e: unknown) => e);
  return { sql: statements, result };
}

describe('injection payloads in every string field', () => {
  const list = payloads();

  it('has the payload lists', () => {
    expect(list.length).toBeGreaterThan(100);
  });

  it('stores free text verbatim and sends the statements of a harmless value', async () => {
    const baseline = await statementsOf(() => bulkCreate(db, 'thing', [{ name: 'harmless', external_id: 'harmless', extra: { p: 'harmless' } }], A));
    expect(baseline.result).toEqual({ message: '1 record created', ids: [expect.stringMatching(/^thi_/)] });
    for (const [i, p] of list.entries()) {
      const run = await statementsOf(() => bulkCreate(db, 'thing', [{ name: p, external_id: `${i}:${p}`, extra: { p, [p]: 1 } }], A));
      expect(run.result, p).toEqual({ message: '1 record created', ids: [expect.stringMatching(/^thi_/)] });
      expect(run.sql, p).toEqual(baseline.sql);
      const r = await raw.query<{ id: string }>("SELECT id FROM thing WHERE org_id = 'org_a' AND external_id = $1", [`${i}:${p}`]);
      expect(r.rows, p).toHaveLength(1);
      const record = await getRecord(db, 'thing', r.rows[0]!.id, A);
      expect([record.name, record.external_id, record.extra], p).toEqual([p, `${i}:${p}`, { p, [p]: 1 }]);
    }
  }, 120_000);

  it('refuses payloads in typed fields with validation entries, never a database error', async () => {
    const baseline = await statementsOf(() => bulkCreate(db, 'thing', [{ name: 'n', email: 'harmless', site: 'harmless', stage: 'harmless', tags: ['harmless'], owner: 'harmless', phone: 'harmless', score: 'harmless' }], A));
    const baseCodes = (baseline.result as OqlError).validationErrors!.map((v) => [v.field, v.error_code]);
    expect(baseCodes).toEqual([['email', 'PARSE_INVALID_FORMAT'], ['site', 'PARSE_INVALID_FORMAT'], ['stage', 'INVALID_OPTION'], ['tags', 'INVALID_OPTION'], ['phone', 'PARSE_INVALID_FORMAT'], ['score', 'PARSE_INVALID_FORMAT'], ['owner', 'INVALID_RELATION']]);
    const same = await statementsOf(() => bulkCreate(db, 'thing', [{ name: 'n', email: 'harmless', stage: 'harmless', tags: ['harmless'], owner: 'harmless' }], A));
    for (const p of list) {
      const run = await statementsOf(() => bulkCreate(db, 'thing', [{ name: 'n', email: p, stage: p, tags: [p], owner: p }], A));
      expect(run.sql, p).toEqual(same.sql);
      expect(run.result, p).toBeInstanceOf(OqlError);
      const e = run.result as OqlError;
      expect(e.code, p).toBe('VALIDATION_FAILED');
      expect(e.validationErrors!.map((v) => v.field).sort(), p).toEqual(['email', 'owner', 'stage', 'tags']);
    }
  }, 120_000);

  it('answers payloads as ids and slugs with NOT_FOUND, a FAILED element or Invalid slug', async () => {
    for (const p of list) {
      await expect(getRecord(db, 'thing', p, A), p).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(updateRecord(db, 'thing', p, { name: 'x' }, A), p).rejects.toMatchObject({ code: 'NOT_FOUND' });
      const up = await bulkUpsert(db, 'thing', { values: [{ id: p, name: 'x' }] }, A);
      expect(up.records.map((r) => r.action), p).toEqual(['FAILED']);
      await expect(getRecord(db, p, 'x', A), p).rejects.toMatchObject({ code: 'INVALID_SLUG' });
    }
  }, 120_000);

  it('touched nothing of the other organization', async () => {
    expect(await snapshot()).toBe(bBefore);
    await expect(getRecord(db, 'thing', bId, A)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await getRecord(db, 'thing', bId, { ...A, orgId: 'org_b' })).name).toBe('b one');
  });
});

describe('two organizations', () => {
  it('org A cannot update, upsert or relate to org B\'s records, even knowing their ids', async () => {
    await expect(updateRecord(db, 'thing', bId, { name: 'taken' }, A)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const up = await bulkUpsert(db, 'thing', { values: [{ id: bId, name: 'taken' }, { name: 'related', owner: 'p_b' }] }, A);
    expect(up.records.map((r) => r.action)).toEqual(['FAILED', 'FAILED']);
    expect(up.records[1]!.error_message).toMatch(/owner/);
    await expect(bulkCreate(db, 'thing', [{ name: 'x', owner: 'p_b' }], A)).rejects.toMatchObject({ validationErrors: [expect.objectContaining({ field: 'owner', error_code: 'INVALID_RELATION' })] });
    expect(await snapshot()).toBe(bBefore);
  });

  it('an external_id of org B does not block org A, and org A\'s does not leak B\'s record', async () => {
    await bulkCreate(db, 'thing', [{ name: 'a with b ext', external_id: 'b-ext' }], A);
    const mine = await raw.query<{ org_id: string }>("SELECT org_id FROM thing WHERE external_id = 'b-ext' ORDER BY org_id");
    expect(mine.rows.map((r) => r.org_id)).toEqual(['org_a', 'org_b']);
    expect(await snapshot()).toBe(bBefore);
  });
});
