import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import { didYouMean } from '../../src/diagnostics/suggest.js';
import { bulkCreate, bulkUpsert, getRecord, updateRecord } from '../../src/records/index.js';
import { createTables, recordCatalog } from './support.js';
import { emptyPglite } from '../support/pglite-template.js';

/**
 * Record writes against the bodies of issue 26: number strings that made the old decimal
 * expression backtrack, strings past the decimal cap, and records of 100,000 unknown keys.
 * Each is a VALIDATION_FAILED naming the field; did-you-mean searches are counted (the real
 * didYouMean behind a counter), never timed.
 */

vi.mock('../../src/diagnostics/suggest.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/diagnostics/suggest.js')>();
  return { ...real, didYouMean: vi.fn(real.didYouMean) };
});

const searches = vi.mocked(didYouMean);
const catalog = recordCatalog();
const ctx = { catalog, orgId: 'org_a', userId: 'u_1', now: () => 1_700_000_000_000 };
/** The most problems one write lists, and the most of them that search a hint (records/values.ts). */
const LISTED = 10_000;
const HINTED = 100;
const digitsThenZ = `${'0'.repeat(9_972)}Z`;
let db: PGlite;

beforeAll(async () => {
  db = await emptyPglite();
  await createTables(db, catalog);
});
afterAll(async () => {
  await db.close();
});
beforeEach(() => {
  searches.mockClear();
});

async function rejection(p: Promise<unknown>): Promise<OqlError> {
  const e = await p.then(() => null, (err: unknown) => err);
  expect(e).toBeInstanceOf(OqlError);
  expect((e as OqlError).status).toBe(400);
  return e as OqlError;
}

async function things(): Promise<number> {
  return (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM thing')).rows[0]!.n;
}

describe('number strings', () => {
  it('a run of digits ending in a letter is not a number, for every number type', async () => {
    const e = await rejection(bulkCreate(db, 'thing', [{ name: 'a', score: digitsThenZ, count: digitsThenZ, price: digitsThenZ }], ctx));
    expect(e.validationErrors!.map((v) => [v.field, v.error_code])).toEqual([['score', 'PARSE_INVALID_FORMAT'], ['count', 'PARSE_INVALID_FORMAT'], ['price', 'PARSE_INVALID_FORMAT']]);
    expect(e.validationErrors![0]!.message).toBe(`'score' is not a number: "${'0'.repeat(60)}…"`);
  });

  it('a 1,000-record create of such strings lists each record, and writes nothing', async () => {
    const before = await things();
    const e = await rejection(bulkCreate(db, 'thing', Array.from({ length: 1_000 }, (_, i) => ({ name: `n${i}`, score: digitsThenZ })), ctx));
    expect(e.validationErrors!.map((v) => v.record_index)).toEqual(Array.from({ length: 1_000 }, (_, i) => i));
    expect(await things()).toBe(before);
  });

  it('past 10,000 characters a string is refused by its length, digits or not', async () => {
    const e = await rejection(bulkCreate(db, 'thing', [{ name: 'b', score: '1'.repeat(10_001), count: `${' '.repeat(10_000)}1` }], ctx));
    expect(e.validationErrors!.map((v) => v.message)).toEqual([
      "'score' is not a number: a decimal has at most 10,000 characters, not 10,001",
      "'count' is not a number: a decimal has at most 10,000 characters, not 10,001",
    ]);
  });

  it('up to 10,000 characters, decimals with whitespace, signs and exponents are stored as their value', async () => {
    await bulkCreate(db, 'thing', [{ name: 'decimals', score: ` ${'0'.repeat(9_990)}12.5\n`, count: '+1e3', price: '\u00a0.25' }], ctx);
    const id = (await db.query<{ id: string }>("SELECT id FROM thing WHERE name = 'decimals'")).rows[0]!.id;
    expect(await getRecord(db, 'thing', id, ctx)).toMatchObject({ score: 12.5, count: 1000, price: 0.25 });
    const updated = await updateRecord(db, 'thing', id, { score: '-.5e1' }, ctx);
    expect(updated['score']).toBe(-5);
    const bad = await rejection(updateRecord(db, 'thing', id, { score: digitsThenZ }, ctx));
    expect(bad.validationErrors![0]!.error_code).toBe('PARSE_INVALID_FORMAT');
  });
});

function nested(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

describe('values nested deep', () => {
  it('a json value of 64 levels is stored; 65 and 100,000 are refused without overflowing the stack', async () => {
    await bulkCreate(db, 'thing', [{ name: 'deep 64', extra: nested(64) }], ctx);
    const id = (await db.query<{ id: string }>("SELECT id FROM thing WHERE name = 'deep 64'")).rows[0]!.id;
    expect((await getRecord(db, 'thing', id, ctx))['extra']).toEqual(nested(64));
    for (const levels of [65, 100_000]) {
      const e = await rejection(bulkCreate(db, 'thing', [{ name: 'deep', extra: nested(levels) }], ctx));
      expect(e.validationErrors!.map((v) => [v.field, v.error_code, v.message])).toEqual([['extra', 'PARSE_INVALID_FORMAT', "'extra' is nested more than 64 levels deep"]]);
    }
  });

  it('an upsert element fails on a value nested 100,000 deep and echoes it as null, so the answer can be serialized', async () => {
    const r = await bulkUpsert(db, 'thing', { values: [{ name: 'echo', extra: nested(100_000), score: nested(5_000), count: nested(64) }] }, ctx);
    const [item] = r.failed_records!;
    expect(item).toMatchObject({ action: 'FAILED', name: 'echo', extra: null, score: null, count: nested(64) });
    expect(() => JSON.stringify(r)).not.toThrow();
  });
});

describe('records of many unknown keys', () => {
  it('100,000 unknown keys list the first 10,000, the first 100 with a hint search', async () => {
    const record: Record<string, unknown> = { name: 'wide', nmae: 'typo' };
    for (let i = 0; i < 100_000; i++) record[`extra${i}`] = i;
    const e = await rejection(bulkCreate(db, 'thing', [record], ctx));
    expect(e.validationErrors).toHaveLength(LISTED);
    expect(e.validationErrors![0]).toMatchObject({ field: 'nmae', error_code: 'UNKNOWN_FIELD', meta_data: "did you mean 'name'?" });
    expect(e.validationErrors![LISTED - 1]!.field).toBe(`extra${LISTED - 2}`);
    expect(searches).toHaveBeenCalledTimes(HINTED);
    expect(searches.mock.calls.map((c) => c[0])).toEqual(e.validationErrors!.slice(0, HINTED).map((v) => v.field));
    // 'extra<n>' is near the column 'extra' while the search still runs, and has no hint after.
    expect(e.validationErrors![1]!.meta_data).toBe("did you mean 'extra'?");
    expect(e.validationErrors![HINTED]!.meta_data).toBeNull();
  });

  it('typos across the records of one create share the hint searches', async () => {
    const records = Array.from({ length: 300 }, (_, i) => ({ name: `r${i}`, scroe: 1 }));
    const e = await rejection(bulkCreate(db, 'thing', records, ctx));
    expect(e.validationErrors).toHaveLength(300);
    expect(e.validationErrors!.filter((v) => v.meta_data === "did you mean 'score'?")).toHaveLength(HINTED);
    expect(searches).toHaveBeenCalledTimes(HINTED);
  });

  it('an upsert element of 100,000 unknown keys fails alone; the others are written', async () => {
    const wide: Record<string, unknown> = { name: 'wide upsert' };
    for (let i = 0; i < 100_000; i++) wide[`k${i}`] = i;
    const r = await bulkUpsert(db, 'thing', { values: [wide, { name: 'narrow upsert', score: '7' }] }, ctx);
    expect(r.records.map((x) => x['action'])).toEqual(['FAILED', 'CREATED']);
    expect(r.failed_records![0]!['error_message']).toMatch(/^'k0' is not a field of 'thing'; 'k1' is not a field/);
    expect(searches).toHaveBeenCalledTimes(HINTED);
  });
});
