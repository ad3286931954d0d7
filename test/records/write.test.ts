import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import { catalogDdl } from '../../src/catalog/index.js';
import { bulkCreate, bulkUpsert, getRecord, updateRecord, type Writable } from '../../src/records/index.js';
import { startPgDatabase } from '../support/pg-cluster.js';
import { createTables, recordCatalog } from './support.js';
import { emptyPglite } from '../support/pglite-template.js';
import { configureFastCheck, runs } from '../props/harness.js';

const catalog = recordCatalog();
let clock = 1_700_000_000_000;
const A = { catalog, orgId: 'org_a', userId: 'u_a', now: () => clock };
const B = { catalog, orgId: 'org_b', userId: 'u_b', now: () => clock };
let db: PGlite;

beforeAll(async () => {
  db = await emptyPglite();
  await createTables(db, catalog);
  await db.query(`INSERT INTO person (id, org_id, name) VALUES ('p_a', 'org_a', 'Asha'), ('p_b', 'org_b', 'Bo')`);
});
afterAll(async () => {
  await db.close();
});

async function rows(org: string): Promise<{ id: string; name: string; email: string | null; external_id: string | null }[]> {
  const r = await db.query<{ id: string; name: string; email: string | null; external_id: string | null }>('SELECT id, name, email, external_id FROM thing WHERE org_id = $1 ORDER BY id', [org]);
  return r.rows;
}

async function idOf(org: string, name: string): Promise<string> {
  const r = await db.query<{ id: string }>('SELECT id FROM thing WHERE org_id = $1 AND name = $2', [org, name]);
  expect(r.rows).toHaveLength(1);
  return r.rows[0]!.id;
}

describe('bulkCreate', () => {
  it('creates every record in one call', async () => {
    const res = await bulkCreate(db, 'thing', [{ name: 'one', stage: 'new' }, { name: 'two', tags: ['a'] }, { name: 'three', owner: 'p_a' }], A);
    expect(res.message).toBe('3 records created');
    expect((await rows('org_a')).map((r) => r.name).sort()).toEqual(['one', 'three', 'two']);
  });

  it('writes nothing when one record of many is invalid', async () => {
    const before = await rows('org_a');
    const batch = Array.from({ length: 50 }, (_, i) => ({ name: `batch ${i}`, ...(i === 37 ? { email: 'broken' } : {}) }));
    const err = (await bulkCreate(db, 'thing', batch, A).catch((e: unknown) => e)) as OqlError;
    expect(err.validationErrors).toEqual([{ object_slug: 'thing', field: 'email', error_code: 'PARSE_INVALID_FORMAT', record_index: 37, message: expect.any(String), meta_data: null }]);
    expect(await rows('org_a')).toEqual(before);
  });

  it('writes nothing when the database refuses one row of many', async () => {
    // A constraint the catalog does not know refuses the 551st of 600 records.
    await db.exec(`ALTER TABLE thing ADD CONSTRAINT no_poison CHECK (name <> 'poison')`);
    try {
      const before = await rows('org_a');
      const batch = Array.from({ length: 600 }, (_, i) => ({ name: i === 550 ? 'poison' : `many ${i}` }));
      const err = await bulkCreate(db, 'thing', batch, A).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OqlError);
      expect(JSON.stringify(err)).not.toMatch(/no_poison|thing/);
      expect(await rows('org_a')).toEqual(before);
    } finally {
      await db.exec('ALTER TABLE thing DROP CONSTRAINT no_poison');
    }
  });
});

// On PGlite and on PostgreSQL 15: the rows go to the server as one JSON document, taken apart there.
describe.each(['pglite', 'postgres'] as const)('bulkCreate on %s, every type stored as written', (kind) => {
  configureFastCheck(`records/write/${kind}`);
  let target: Writable;
  let close = async () => {};
  beforeAll(async () => {
    if (kind === 'pglite') {
      target = db;
      return;
    }
    const server = await startPgDatabase();
    const pool = new pg.Pool({ connectionString: server.url, max: 2 });
    for (const s of catalogDdl(catalog, { uniqueIndexes: true })) await pool.query(s);
    target = pool;
    close = async () => {
      await pool.end();
      await server.stop();
    };
  }, 60_000);
  afterAll(() => close());
  // A text as JSON carries it and the write path accepts it: no NUL, no unpaired surrogate.
  const storable = (s: string) => !s.includes('\u0000') && !/[\ud800-\udfff]/.test(s.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ''));
  const text = fc.string({ unit: 'binary', maxLength: 40 }).filter(storable);
  const json: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3 }).filter((v) => storable(JSON.stringify(v)));
  const number = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.constantFrom(0.1, 1e21, -1e-7, 123456789.123456789, Number.MAX_SAFE_INTEGER));
  const day = 86_400_000;
  const thing = fc.record({
    name: text.filter((s) => s.trim() !== ''),
    score: number,
    count: fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }),
    price: number,
    active: fc.boolean(),
    born_on: fc.integer({ min: -100_000_000, max: 100_000_000 }).map((d) => d * day),
    seen_at: fc.integer({ min: -8.64e15, max: 8.64e15 }),
    stage: fc.constantFrom('new', 'won', 'lost'),
    tags: fc.uniqueArray(fc.constantFrom('a', 'b', 'c')),
    extra: json,
    external_id: text,
  }, { requiredKeys: ['name'] });

  it('reads back every field as it was sent, for any values of every type', async () => {
    let batch = 0;
    // Half the batches are one record sent several times: a value the same in every row of an
    // INSERT travels as a single bind parameter (src/records/write.ts), a path of its own.
    const batches = fc.oneof(fc.array(thing, { minLength: 1, maxLength: 12 }), fc.tuple(thing, fc.integer({ min: 2, max: 6 })).map(([r, n]) => Array.from({ length: n }, () => r)));
    await fc.assert(
      fc.asyncProperty(batches, async (records) => {
        // Unique values of the batch: the external_id made unique by the batch and the index.
        batch++;
        const sent = records.map((r, i) => ('external_id' in r ? { ...r, external_id: `${r.external_id}|${batch}.${i}` } : r));
        // What the service was sent, as its JSON body carries it.
        const wire = JSON.parse(JSON.stringify(sent)) as Record<string, unknown>[];
        const { ids } = await bulkCreate(target, 'thing', wire, A);
        expect(ids).toHaveLength(wire.length);
        for (const [i, id] of ids.entries()) {
          const got = await getRecord(target, 'thing', id, A);
          // A number past 2^53 is read back as its exact decimal text (docs/records.md): compared as the number it is.
          // '' and an empty array leave the column empty, read back as null (src/records/values.ts).
          for (const [field, value] of Object.entries(wire[i]!)) {
            const expected = value === '' || (Array.isArray(value) && value.length === 0) ? null : value;
            expect(typeof value === 'number' && typeof got[field] === 'string' ? Number(got[field]) : got[field], field).toEqual(expected);
          }
        }
      }),
      { numRuns: runs(40, 400) },
    );
  });
});

describe('getRecord and updateRecord', () => {
  it('returns the record decoded, and updates only the fields sent', async () => {
    await bulkCreate(db, 'thing', [{ name: 'upd', email: 'old@example.com', score: 1.5, tags: ['a', 'b'], born_on: 0, extra: { k: 1 } }], A);
    const id = await idOf('org_a', 'upd');
    const got = await getRecord(db, 'thing', id, A);
    expect(got).toMatchObject({ id, name: 'upd', email: 'old@example.com', score: 1.5, tags: ['a', 'b'], born_on: 0, extra: { k: 1 }, phone: null, stage: null, created_at: clock, updated_at: clock, created_by: 'u_a' });
    const created = clock;
    clock += 5_000;
    const updated = await updateRecord(db, 'thing', id, { email: 'new@example.com', stage: 'won' }, { ...A, userId: 'u_other' });
    expect(updated).toEqual({ ...got, email: 'new@example.com', stage: 'won', updated_at: clock, updated_by: 'u_other' });
    expect(updated.created_at).toBe(created);
    expect(await getRecord(db, 'thing', id, A)).toEqual(updated);
  });

  it('recomputes search_field when the name changes, and clears a field set to null', async () => {
    const id = await idOf('org_a', 'upd');
    const updated = await updateRecord(db, 'thing', id, { name: 'Renamed  THING', email: null }, A);
    expect(updated).toMatchObject({ name: 'Renamed  THING', search_field: 'renamed thing', email: null });
  });

  it('fails with every problem and changes nothing', async () => {
    const id = await idOf('org_a', 'Renamed  THING');
    const before = await getRecord(db, 'thing', id, A);
    const err = (await updateRecord(db, 'thing', id, { phone: '123', name: '', created_at: 5 }, A).catch((e: unknown) => e)) as OqlError;
    expect(err.code).toBe('VALIDATION_FAILED');
    expect(err.message).toBe('Failed to update record');
    expect(err.validationErrors!.map((v) => [v.field, v.error_code, v.record_index])).toEqual([
      ['phone', 'PARSE_INVALID_FORMAT', null], ['name', 'REQUIRED', null], ['created_at', 'READ_ONLY_FIELD', null],
    ]);
    expect(await getRecord(db, 'thing', id, A)).toEqual(before);
  });

  it('answers NOT_FOUND alike for a missing, a soft-deleted and another organization\'s record', async () => {
    await bulkCreate(db, 'thing', [{ name: 'b secret', email: 'b@example.com' }], B);
    const bId = await idOf('org_b', 'b secret');
    await bulkCreate(db, 'thing', [{ name: 'deleted' }], A);
    const deleted = await idOf('org_a', 'deleted');
    await db.query('UPDATE thing SET is_deleted = true WHERE id = $1', [deleted]);
    const answers = [];
    for (const id of ['thi_doesnotexist', bId, deleted, "' OR 1=1 --"]) {
      for (const call of [() => getRecord(db, 'thing', id, A), () => updateRecord(db, 'thing', id, { name: 'hijack' }, A)]) {
        const e = (await call().catch((x: unknown) => x)) as OqlError;
        expect(e).toBeInstanceOf(OqlError);
        answers.push([e.code, e.status, e.message, e.validationErrors ?? null, typeof e.metaData]);
      }
    }
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]).toEqual(['NOT_FOUND', 400, 'Record not found', null, 'string']);
    expect((await rows('org_b')).map((r) => r.name)).toEqual(['b secret']);
  });
});

describe('bulkUpsert', () => {
  it('creates, updates and fails element by element, in request order', async () => {
    const existing = await idOf('org_a', 'one');
    const bId = await idOf('org_b', 'b secret');
    clock += 1_000;
    const res = await bulkUpsert(db, 'thing', {
      values: [
        { name: 'fresh', email: 'fresh@example.com' },
        { id: existing, stage: 'lost' },
        { id: 'thi_unknown', name: 'ghost' },
        { id: bId, name: 'stolen' },
        { id: 42, name: 'numeric id' },
        { name: 'bad', email: 'nope' },
        'not an object',
      ],
    }, A);
    expect(res.records_created).toBe(1);
    expect(res.records_updated).toBe(1);
    expect(res.records.map((r) => r.action)).toEqual(['CREATED', 'UPDATED', 'FAILED', 'FAILED', 'FAILED', 'FAILED', 'FAILED']);
    expect(res.created_records).toEqual([res.records[0]]);
    expect(res.updated_records).toEqual([res.records[1]]);
    expect(res.failed_records).toEqual(res.records.slice(2));
    expect(res.records[0]).toMatchObject({ name: 'fresh', email: 'fresh@example.com', action: 'CREATED', object_id: 'obj_thing', org_id: 'org_a', system_created_at: clock, created_at: clock });
    expect(res.records[1]).toEqual({ id: existing, stage: 'lost', updated_at: clock, updated_by: 'u_a', object_id: 'obj_thing', org_id: 'org_a', search_field: 'one', action: 'UPDATED' });
    expect(res.records[2]).toMatchObject({ action: 'FAILED', id: 'thi_unknown', name: 'ghost', error_message: expect.stringMatching(/^Invalid id/) });
    expect(res.records[3]).toMatchObject({ action: 'FAILED', id: bId, name: 'stolen', error_message: expect.stringMatching(/^Invalid id/) });
    expect(res.records[4]).toMatchObject({ action: 'FAILED', id: 42, error_message: expect.stringMatching(/^Invalid id/) });
    expect(res.records[5]).toMatchObject({ action: 'FAILED', id: null, name: 'bad', error_message: expect.stringContaining('email') });
    expect(res.records[6]).toMatchObject({ action: 'FAILED', id: null });
    expect((await getRecord(db, 'thing', existing, A)).stage).toBe('lost');
    expect((await getRecord(db, 'thing', bId, B)).name).toBe('b secret');
    expect((await rows('org_a')).filter((r) => r.name === 'bad' || r.name === 'ghost')).toEqual([]);
  });

  it('gives null lists when nothing falls in them', async () => {
    const res = await bulkUpsert(db, 'thing', { values: [{ name: 'only created' }] }, A);
    expect(res).toMatchObject({ records_created: 1, records_updated: 0, failed_records: null, updated_records: null });
    const none = await bulkUpsert(db, 'thing', { values: [] }, A);
    expect(none).toEqual({ records_created: 0, records_updated: 0, failed_records: null, created_records: null, updated_records: null, records: [] });
  });

  it('sees its own earlier elements: a repeated unique value fails the later one only', async () => {
    const res = await bulkUpsert(db, 'thing', { values: [{ name: 'u1', external_id: 'same' }, { name: 'u2', external_id: 'same' }] }, A);
    expect(res.records.map((r) => r.action)).toEqual(['CREATED', 'FAILED']);
    expect(res.records[1]!.error_message).toMatch(/unique/);
  });

  it('refuses a body without a values array, and too many values', async () => {
    await expect(bulkUpsert(db, 'thing', [{ name: 'x' }], A)).rejects.toMatchObject({ code: 'VALIDATION_FAILED', validationErrors: [expect.objectContaining({ field: 'values', error_code: 'INVALID_RECORD' })] });
    await expect(bulkUpsert(db, 'thing', { values: [{}, {}] }, { ...A, maxRecords: 1 })).rejects.toMatchObject({ code: 'TOO_MANY_RECORDS', status: 400 });
  });
});
