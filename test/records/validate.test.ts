import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import { bulkCreate, getRecord, RECORD_ERROR_CODES } from '../../src/records/index.js';
import { createTables, recordCatalog } from './support.js';
import { emptyPglite } from '../support/pglite-template.js';

const catalog = recordCatalog();
const ORG = 'org_a';
const ctx = { catalog, orgId: ORG, userId: 'u_1', now: () => 1_700_000_000_123 };
let db: PGlite;
let personId: string;
let otherOrgPerson: string;

beforeAll(async () => {
  db = await emptyPglite();
  await createTables(db, catalog);
  await db.query(`INSERT INTO person (id, org_id, name) VALUES ('p_a', 'org_a', 'Asha'), ('p_b', 'org_b', 'Bo'), ('p_gone', 'org_a', 'Gone')`);
  await db.query(`UPDATE person SET is_deleted = true WHERE id = 'p_gone'`);
  personId = 'p_a';
  otherOrgPerson = 'p_b';
});
afterAll(async () => {
  await db.close();
});

async function count(): Promise<number> {
  const r = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM thing');
  return r.rows[0]!.n;
}

/** The validation entries of a failed create (the call must fail). */
async function entries(records: unknown): Promise<{ field: string; error_code: string; record_index: number | null; message: string; meta_data: string | null; object_slug: string }[]> {
  const before = await count();
  const err = await bulkCreate(db, 'thing', records, ctx).then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(OqlError);
  const e = err as OqlError;
  expect(e.code).toBe('VALIDATION_FAILED');
  expect(e.status).toBe(400);
  expect(e.message).toBe('Failed to create records');
  expect(await count()).toBe(before);
  return e.validationErrors!.map((v) => ({ ...v }));
}

async function codeFor(field: string, value: unknown): Promise<string[]> {
  const list = await entries([{ name: 'x', [field]: value }]);
  for (const v of list) expect(v).toMatchObject({ object_slug: 'thing', field, record_index: 0 });
  return list.map((v) => v.error_code);
}

async function created(record: Record<string, unknown>): Promise<Record<string, unknown>> {
  await bulkCreate(db, 'thing', [record], ctx);
  const r = await db.query<{ id: string }>('SELECT id FROM thing WHERE name = $1 AND org_id = $2', [record.name, ORG]);
  expect(r.rows).toHaveLength(1);
  return getRecord(db, 'thing', r.rows[0]!.id, ctx);
}

describe('values per type', () => {
  it.each([
    ['email', 'ana@example.com', 'ana@example.com'],
    ['phone', '9876543210', '+919876543210'],
    ['phone', '+91 98765 43210', '+919876543210'],
    ['any_phone', '+1 415 555 2671', '+14155552671'],
    ['site', 'https://example.com/x', 'https://example.com/x'],
    ['site', 'example.com', 'example.com'],
    ['score', 12.5, 12.5],
    ['score', '-3.25', -3.25],
    ['count', 42, 42],
    ['price', 1999.99, 1999.99],
    ['active', 1, true],
    ['active', false, false],
    ['born_on', 946_684_800_000, 946_684_800_000],
    ['seen_at', 1_700_000_000_001, 1_700_000_000_001],
    ['stage', 'won', 'won'],
    ['tags', ['c', 'a', 'c'], ['c', 'a']],
    ['tags', [], null],
    ['extra', { nested: [1, 'two', null], ok: true }, { nested: [1, 'two', null], ok: true }],
    ['owner', 'p_a', 'p_a'],
    ['email', null, null],
    ['email', '', null],
  ])('%s accepts %j and stores %j', async (field, input, stored) => {
    const name = `valid ${field} ${JSON.stringify(input)}`;
    const record = await created({ name, [field]: input });
    expect(record[field]).toEqual(stored);
  });

  it.each([
    ['email', 'not-an-email', 'PARSE_INVALID_FORMAT'],
    ['email', 'a@b', 'PARSE_INVALID_FORMAT'],
    ['email', 42, 'TYPE_MISMATCH'],
    ['phone', '12345', 'PARSE_INVALID_FORMAT'],
    ['phone', '+14155552671', 'PARSE_INVALID_FORMAT'], // a valid number, but not +91
    ['phone', '98765432101', 'PARSE_INVALID_FORMAT'], // eleven digits
    ['any_phone', 'call me', 'PARSE_INVALID_FORMAT'],
    ['site', 'ftp://example.com', 'PARSE_INVALID_FORMAT'],
    ['site', 'not a url', 'PARSE_INVALID_FORMAT'],
    ['score', 'twelve', 'PARSE_INVALID_FORMAT'],
    ['score', true, 'TYPE_MISMATCH'],
    ['count', 1.5, 'PARSE_INVALID_FORMAT'],
    ['count', 2 ** 60, 'PARSE_INVALID_FORMAT'],
    ['active', 2, 'PARSE_INVALID_FORMAT'],
    ['active', 'true', 'TYPE_MISMATCH'],
    ['born_on', 946_684_800_001, 'PARSE_INVALID_FORMAT'], // not UTC midnight
    ['born_on', '2000-01-01', 'PARSE_INVALID_FORMAT'],
    ['seen_at', 1.5, 'PARSE_INVALID_FORMAT'],
    ['seen_at', 9e15, 'PARSE_INVALID_FORMAT'],
    ['stage', 'maybe', 'INVALID_OPTION'],
    ['tags', ['a', 'z'], 'INVALID_OPTION'],
    ['tags', 'a', 'TYPE_MISMATCH'],
    ['owner', 'p_nobody', 'INVALID_RELATION'],
    ['owner', 'p_b', 'INVALID_RELATION'], // a person of another organization
    ['owner', 'p_gone', 'INVALID_RELATION'], // soft-deleted
    ['owner', 7, 'TYPE_MISMATCH'],
    ['name', 'nul\u0000byte', 'PARSE_INVALID_FORMAT'],
    ['name', '\ud800 alone', 'PARSE_INVALID_FORMAT'],
    ['name', { a: 1 }, 'TYPE_MISMATCH'],
    ['extra', { bad: 'nul\u0000' }, 'PARSE_INVALID_FORMAT'],
    ['nmae', 'typo', 'UNKNOWN_FIELD'],
    ['id', 'thi_mine', 'READ_ONLY_FIELD'],
    ['created_at', 1, 'READ_ONLY_FIELD'],
    ['updated_by', 'p_a', 'READ_ONLY_FIELD'],
    ['search_field', 'x', 'READ_ONLY_FIELD'],
    ['org_id', 'org_b', 'READ_ONLY_FIELD'],
    ['object_id', 'obj', 'READ_ONLY_FIELD'],
    ['notes', ['n_1'], 'READ_ONLY_FIELD'],
  ])('%s refuses %j with %s', async (field, value, code) => {
    expect(await codeFor(field, value)).toEqual([code]);
  });

  it('gives the options of an enum and a near match of an unknown field in meta_data', async () => {
    const list = await entries([{ name: 'x', stage: 'maybe', nmae: 'y' }]);
    expect(list.find((v) => v.field === 'stage')!.meta_data).toBe('new, won, lost');
    expect(list.find((v) => v.field === 'nmae')!.meta_data).toMatch(/name/);
  });

  it('refuses a missing, null or empty required column', async () => {
    const list = await entries([{ email: 'a@b.co' }, { name: null }, { name: '' }]);
    expect(list.map((v) => [v.record_index, v.field, v.error_code])).toEqual([[0, 'name', 'REQUIRED'], [1, 'name', 'REQUIRED'], [2, 'name', 'REQUIRED']]);
  });

  it('reports every problem of every record at once, with its index', async () => {
    const list = await entries([
      { name: 'fine' },
      { name: 'two problems', email: 'nope', stage: 'maybe' },
      'not an object',
      { stage: 'won', owner: 'p_nobody' },
    ]);
    expect(list.map((v) => [v.record_index, v.field, v.error_code]).sort()).toEqual([
      [1, 'email', 'PARSE_INVALID_FORMAT'],
      [1, 'stage', 'INVALID_OPTION'],
      [2, '', 'INVALID_RECORD'],
      [3, 'name', 'REQUIRED'],
      [3, 'owner', 'INVALID_RELATION'],
    ].sort());
    for (const v of list) expect(v.message.length).toBeGreaterThan(0);
  });

  it('lists every code it uses with a meaning', () => {
    for (const code of ['PARSE_INVALID_FORMAT', 'TYPE_MISMATCH', 'REQUIRED', 'UNKNOWN_FIELD', 'READ_ONLY_FIELD', 'INVALID_OPTION', 'NOT_UNIQUE', 'INVALID_RELATION', 'INVALID_RECORD', 'INVALID_ID']) {
      expect(RECORD_ERROR_CODES).toHaveProperty(code);
    }
  });
});

describe('unique columns', () => {
  it('refuses a value another live record holds, and the same value twice in one request', async () => {
    await bulkCreate(db, 'thing', [{ name: 'holder', external_id: 'ext-1' }], ctx);
    const list = await entries([{ name: 'dup', external_id: 'ext-1' }]);
    expect(list.map((v) => [v.field, v.error_code])).toEqual([['external_id', 'NOT_UNIQUE']]);
    const twice = await entries([{ name: 'one', external_id: 'ext-2' }, { name: 'two', external_id: 'ext-2' }]);
    expect(twice.map((v) => [v.record_index, v.field, v.error_code, v.meta_data])).toEqual([[1, 'external_id', 'NOT_UNIQUE', '0']]);
  });

  it('is per organization: another organization may use the same value', async () => {
    await bulkCreate(db, 'thing', [{ name: 'other org holder', external_id: 'ext-1' }], { ...ctx, orgId: 'org_b' });
    const r = await db.query<{ org_id: string }>("SELECT org_id FROM thing WHERE external_id = 'ext-1' ORDER BY org_id");
    expect(r.rows.map((x) => x.org_id)).toEqual(['org_a', 'org_b']);
  });

  it('lets a soft-deleted record give up its value', async () => {
    await bulkCreate(db, 'thing', [{ name: 'to delete', external_id: 'ext-9' }], ctx);
    await db.query("UPDATE thing SET is_deleted = true WHERE external_id = 'ext-9'");
    await bulkCreate(db, 'thing', [{ name: 'reuser', external_id: 'ext-9' }], ctx);
    const r = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM thing WHERE external_id = 'ext-9' AND NOT is_deleted");
    expect(r.rows[0]!.n).toBe(1);
  });
});

describe('system fields and ids', () => {
  it('sets id, timestamps, users, search_field, object_id and org_id', async () => {
    const record = await created({ name: '  Ünïcode   Name ' });
    expect(record.id).toMatch(/^thi_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(record).toMatchObject({
      created_at: 1_700_000_000_123, updated_at: 1_700_000_000_123, created_by: 'u_1', updated_by: 'u_1',
      search_field: 'ünïcode name', object_id: 'obj_thing', org_id: ORG, name: '  Ünïcode   Name ',
    });
  });

  it('makes ids that sort by creation time', async () => {
    const ids: string[] = [];
    for (const t of [1_000, 2_000, 2_000, 2_000, 1_700_000_000_000]) {
      await bulkCreate(db, 'thing', [{ name: `sorted ${t} ${ids.length}` }], { ...ctx, now: () => t });
      const r = await db.query<{ id: string }>('SELECT id FROM thing WHERE name = $1', [`sorted ${t} ${ids.length}`]);
      ids.push(r.rows[0]!.id);
    }
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('limits and bad calls', () => {
  it('refuses more records than the maximum with a 400', async () => {
    const err = await bulkCreate(db, 'thing', [{ name: 'a' }, { name: 'b' }, { name: 'c' }], { ...ctx, maxRecords: 2 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'TOO_MANY_RECORDS', status: 400 });
  });

  it('answers an unknown slug as compile does', async () => {
    await expect(bulkCreate(db, 'thingz', [], ctx)).rejects.toMatchObject({ code: 'INVALID_SLUG', status: 400, message: expect.stringMatching(/^Invalid slug/) });
    await expect(getRecord(db, '__proto__', 'x', ctx)).rejects.toMatchObject({ code: 'INVALID_SLUG' });
  });

  it('refuses a body that is not an array', async () => {
    const list = await entries({ name: 'not in an array' });
    expect(list.map((v) => [v.record_index, v.error_code])).toEqual([[null, 'INVALID_RECORD']]);
  });

  it('treats __proto__ as an unknown field, not as a prototype', async () => {
    const list = await entries([JSON.parse('{"name": "p", "__proto__": {"stage": "won"}}')]);
    expect(list.map((v) => [v.field, v.error_code])).toEqual([['__proto__', 'UNKNOWN_FIELD']]);
  });
});
