process.env.TZ = 'America/New_York'; // before anything makes a Date: results must not depend on it

import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { OqlError } from '../../src/diagnostics/index.js';
import { ConcurrencyLimiter, count, errorEnvelope, execute, toEnvelope, type RunOptions } from '../../src/index.js';
import { decodeValue, runReadOnly } from '../../src/run/index.js';
import { databaseError, timeoutError } from '../../src/run/errors.js';
import { fixtureData, loadFixtureCatalog, loadIntoDatabase, zoneOffset, type Row } from '../../fixtures/index.js';
import { failure } from '../support/failure.js';
import { emptyPglite } from '../support/pglite-template.js';

const catalog = loadFixtureCatalog('crm');
const data = fixtureData('crm');
const ORG = 'org_acme';
const base: RunOptions = { catalog, orgId: ORG };

// ---- The oracle: expected results computed from the fixture rows, not from compiler output. ----

const live = (slug: string): Row[] => data.get(slug)!.filter((r) => r.org_id === ORG && r.is_deleted === false);
const byId = (slug: string): Map<string, Row> => new Map(live(slug).map((r) => [r.id as string, r]));
const sortById = <T extends Record<string, unknown>>(rows: T[]): T[] => [...rows].sort((a, b) => String(a.id).localeCompare(String(b.id)));

/** `YYYY-MM-DD HH:MM:SS` of an instant, in UTC, as Postgres writes a timestamp. */
function utcText(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.000Z$/, '').replace(/Z$/, '');
}
/** The wall-clock text of an instant in a zone. */
function zoneText(ms: number, zone: string): string {
  return utcText(ms + zoneOffset(zone, ms));
}

let db: PGlite;

beforeAll(async () => {
  db = await emptyPglite();
  await loadIntoDatabase(db, catalog, data);
});

afterAll(async () => {
  await db?.close();
});

describe('host time zone', () => {
  it('is not UTC in this file, so time-zone bugs would show', () => {
    expect(process.env.TZ).toBe('America/New_York');
    expect(new Date(0).getTimezoneOffset()).not.toBe(0);
  });
});

describe('execute on PGlite', () => {
  it('returns every live row of the tenant, keyed by output keys, with decoded types', async () => {
    const users = byId('user');
    const accounts = byId('account');
    const result = await execute(db, {
      slug: 'opportunity',
      query: 'SELECT id, name, amount, stage, close_date, created_at, sources, owner, owner.name, account.name AS account_name FROM opportunity LIMIT 1000',
    }, base);
    const expected = live('opportunity').map((r) => ({
      id: r.id,
      name: r.name,
      amount: r.amount,
      stage: r.stage,
      close_date: r.close_date,
      created_at: r.created_at,
      sources: r.sources,
      owner: r.owner,
      'owner.name': users.get(r.owner as string)?.name ?? null,
      account_name: accounts.get(r.account as string)?.name ?? null,
    }));
    expect(result.message).toBeUndefined();
    expect(result.records.length).toBe(expected.length);
    expect(Object.keys(result.records[0]!)).toEqual(['id', 'name', 'amount', 'stage', 'close_date', 'created_at', 'sources', 'owner', 'owner.name', 'account_name']);
    expect(sortById(result.records)).toEqual(sortById(expected));
    // The oracle's types are the decoded types: numbers for numeric and epoch bigints, arrays for multiselects.
    const sample = result.records.find((r) => r.amount !== null && r.close_date !== null && Array.isArray(r.sources) && (r.sources as unknown[]).length > 0)!;
    expect(typeof sample.amount).toBe('number');
    expect(typeof sample.close_date).toBe('number');
    expect(typeof sample.created_at).toBe('number');
    expect(result.records.some((r) => Array.isArray(r.sources) && r.sources.length === 0)).toBe(true);
    expect(result.records.some((r) => r.sources === null)).toBe(true);
  });

  it('decodes booleans and date columns of another object', async () => {
    const result = await execute(db, {
      slug: 'contact',
      query: 'SELECT id, is_primary, birthday, to_timestamp(birthday / 1000)::date AS birthday_day FROM contact LIMIT 1000',
    }, base);
    const expected = live('contact').map((r) => ({
      id: r.id,
      is_primary: r.is_primary,
      birthday: r.birthday,
      birthday_day: r.birthday === null ? null : new Date(r.birthday as number).toISOString().slice(0, 10),
    }));
    expect(sortById(result.records)).toEqual(sortById(expected));
    expect(result.records.some((r) => r.is_primary === true)).toBe(true);
    expect(result.records.some((r) => r.is_primary === false)).toBe(true);
  });

  it('returns timestamp, timestamptz and date results as zone-independent text', async () => {
    const result = await execute(db, {
      slug: 'opportunity',
      query: `SELECT id,
          to_timestamp(created_at / 1000) AS at_utc,
          to_timestamp(created_at / 1000) AT TIME ZONE 'Asia/Kolkata' AS at_kolkata,
          date_trunc('day', to_timestamp(created_at / 1000) AT TIME ZONE 'America/New_York') AS ny_day,
          to_timestamp(close_date / 1000)::date AS close_day
        FROM opportunity WHERE created_at IS NOT NULL AND close_date IS NOT NULL LIMIT 1000`,
    }, base);
    const expected = live('opportunity')
      .filter((r) => r.created_at !== null && r.close_date !== null)
      .map((r) => {
        const seconds = Math.floor((r.created_at as number) / 1000) * 1000;
        return {
          id: r.id,
          at_utc: `${utcText(seconds)}+00`,
          at_kolkata: zoneText(seconds, 'Asia/Kolkata'),
          ny_day: `${zoneText(seconds, 'America/New_York').slice(0, 10)} 00:00:00`,
          close_day: new Date(r.close_date as number).toISOString().slice(0, 10),
        };
      });
    expect(expected.length).toBeGreaterThan(50);
    expect(sortById(result.records)).toEqual(sortById(expected));
  });

  it('returns counts, sums and epoch aggregates as numbers', async () => {
    const result = await execute(db, {
      slug: 'opportunity',
      query: 'SELECT stage, COUNT(*) AS n, SUM(amount) AS total, MIN(close_date) AS first_close, MAX(created_at) AS last_created FROM opportunity GROUP BY stage LIMIT 100',
    }, base);
    const groups = new Map<unknown, Row[]>();
    for (const r of live('opportunity')) groups.set(r.stage, [...(groups.get(r.stage) ?? []), r]);
    const nums = (rows: Row[], key: string) => rows.map((r) => r[key]).filter((v): v is number => typeof v === 'number');
    expect(result.records.length).toBe(groups.size);
    for (const rec of result.records) {
      const rows = groups.get(rec.stage)!;
      expect(rows, `group ${String(rec.stage)}`).toBeDefined();
      expect(rec.n).toBe(rows.length);
      const amounts = nums(rows, 'amount');
      if (amounts.length === 0) expect(rec.total).toBeNull();
      else expect(rec.total as number).toBeCloseTo(amounts.reduce((a, b) => a + b, 0), 6);
      expect(rec.first_close).toBe(Math.min(...nums(rows, 'close_date')));
      expect(rec.last_created).toBe(Math.max(...nums(rows, 'created_at')));
      expect(typeof rec.n).toBe('number');
    }
  });

  it('runs on a driver it cannot hand parsers to, with the same results (fallback decoding)', async () => {
    const plain = { query: (text: string, params?: unknown[]) => db.query(text, params) };
    const query = `SELECT id, amount, close_date, sources, to_timestamp(created_at / 1000) AT TIME ZONE 'Asia/Kolkata' AS at_kolkata,
        to_timestamp(close_date / 1000)::date AS close_day, to_timestamp(created_at / 1000) AS at_utc
      FROM opportunity WHERE created_at IS NOT NULL AND close_date IS NOT NULL LIMIT 1000`;
    const direct = await execute(db, { slug: 'opportunity', query }, base);
    const viaPlain = await execute(plain, { slug: 'opportunity', query }, base);
    expect(sortById(viaPlain.records)).toEqual(sortById(direct.records));
  });
});

describe('count on PGlite', () => {
  it('stops at the LIMIT when more rows exist', async () => {
    expect(live('opportunity').length).toBeGreaterThan(5);
    expect(await count(db, { slug: 'opportunity', query: 'SELECT id FROM opportunity LIMIT 5' }, base)).toEqual({ count: 5 });
  });

  it('is exact when fewer rows than the LIMIT exist, and equals the rows execute returns', async () => {
    const stages = live('opportunity').map((r) => r.stage).filter((s): s is string => typeof s === 'string');
    const stage = stages.sort()[0]!;
    const expected = live('opportunity').filter((r) => r.stage === stage).length;
    const query = `SELECT id FROM opportunity WHERE stage = '${stage}' LIMIT 1000`;
    const result = await count(db, { slug: 'opportunity', query }, base);
    expect(result).toEqual({ count: expected });
    expect(expected).toBeGreaterThan(0);
    expect(expected).toBeLessThan(1000);
    expect((await execute(db, { slug: 'opportunity', query }, base)).records.length).toBe(expected);
  });

  it('counts grouped rows, not input rows', async () => {
    const groups = new Set(live('opportunity').map((r) => r.stage)).size;
    expect(await count(db, { slug: 'opportunity', query: 'SELECT stage, COUNT(*) AS n FROM opportunity GROUP BY stage LIMIT 100' }, base)).toEqual({ count: groups });
  });
});

describe('restricted access', () => {
  it('returns no records and a message, and runs no SQL', async () => {
    const spies = [vi.spyOn(db, 'query'), vi.spyOn(db, 'exec'), vi.spyOn(db, 'transaction')];
    try {
      const options = { ...base, access: ['opportunity', 'user'] };
      const query = 'SELECT id, account.name AS account_name FROM opportunity LIMIT 5';
      const result = await execute(db, { slug: 'opportunity', query }, options);
      expect(result.records).toEqual([]);
      expect(result.message).toMatch(/'account'/);
      const counted = await count(db, { slug: 'opportunity', query }, options);
      expect(counted).toEqual({ count: 0, message: result.message });
      for (const spy of spies) expect(spy).not.toHaveBeenCalled();
      // With access to both objects the same query runs.
      const allowed = await execute(db, { slug: 'opportunity', query }, { ...base, access: ['opportunity', 'account'] });
      expect(allowed.records.length).toBe(5);
      expect(spies.some((s) => s.mock.calls.length > 0)).toBe(true);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });
});

describe('errors', () => {
  it('propagates compile errors as OqlError 400 without touching the database', async () => {
    const spy = vi.spyOn(db, 'transaction');
    try {
      const err = await failure(execute(db, { slug: 'opportunity', query: 'SELECT id FROM opportunity' }, base));
      expect(err.code).toBe('MISSING_LIMIT');
      expect(err.status).toBe(400);
      const slug = await failure(count(db, { slug: 'account', query: 'SELECT id FROM opportunity LIMIT 5' }, base));
      expect(slug.code).toBe('INVALID_SLUG');
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });

  it('maps division by zero to QUERY_FAILED 400 with the driver error kept as cause', async () => {
    const err = await failure(execute(db, { slug: 'opportunity', query: 'SELECT id, amount / 0 AS x FROM opportunity LIMIT 5' }, base));
    expect(err.code).toBe('QUERY_FAILED');
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/division by zero/);
    expect(err.hint).toMatch(/CASE WHEN/);
    expect((err.cause as { code?: string }).code).toBe('22012');
    expect(Object.keys(err)).not.toContain('cause');
    // The failed transaction was rolled back: the connection still works.
    expect((await count(db, { slug: 'opportunity', query: 'SELECT id FROM opportunity LIMIT 3' }, base)).count).toBe(3);
  });

  it('maps a scalar subquery returning several rows to QUERY_FAILED 400', async () => {
    const err = await failure(execute(db, { slug: 'opportunity', query: 'SELECT id, (SELECT name FROM contact) AS x FROM opportunity LIMIT 5' }, base));
    expect(err).toMatchObject({ code: 'QUERY_FAILED', status: 400, message: 'a subquery used as a value returned more than one row' });
  });

  it('names an unknown time zone in its own words', async () => {
    const err = await failure(execute(db, {
      slug: 'opportunity',
      query: "SELECT id, to_timestamp(created_at / 1000) AT TIME ZONE 'Mars/Olympus' AS t FROM opportunity LIMIT 5",
    }, base));
    expect(err).toMatchObject({ code: 'QUERY_FAILED', status: 400, message: "time zone 'Mars/Olympus' is not recognized" });
  });

  it('keeps driver messages out of errors it cannot explain', () => {
    const syntax = databaseError(Object.assign(new Error('relation "secret_table" does not exist'), { code: '42P01' }), 20_000);
    expect(syntax).toMatchObject({ code: 'QUERY_FAILED', status: 500 });
    expect(syntax.message).not.toMatch(/secret/);
    const refused = databaseError(Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432'), { code: 'ECONNREFUSED', syscall: 'connect' }), 20_000);
    expect(refused).toMatchObject({ code: 'DATABASE_ERROR', status: 503 });
    expect(refused.message).not.toMatch(/10\.0\.0\.7/);
    expect(databaseError(Object.assign(new Error('terminating connection'), { code: '57P01' }), 1).status).toBe(503);
    expect(databaseError(Object.assign(new Error('x'), { code: '08006' }), 1).code).toBe('DATABASE_ERROR');
    expect(databaseError(new Error('Connection terminated unexpectedly'), 1).status).toBe(503);
    expect(databaseError(new TypeError('undefined is not a function'), 1)).toMatchObject({ code: 'QUERY_FAILED', status: 500 });
    expect(databaseError(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }), 500).message)
      .toBe('the query timed out after 0.5 seconds');
    expect(timeoutError(20_000).message).toBe('the query timed out after 20 seconds');
    expect(timeoutError(1_000).message).toBe('the query timed out after 1 second');
  });

  it('refuses writes inside the read-only transaction, even when handed raw SQL', async () => {
    const before = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM account');
    // SELECT INTO creates a table: the read-only transaction stops it.
    const selectInto = await failure(runReadOnly(db, 'SELECT id INTO stolen FROM account', []));
    expect(selectInto).toMatchObject({ code: 'QUERY_FAILED', status: 400 });
    expect((selectInto.cause as { code?: string }).code).toBe('25006');
    // Statements that are not a SELECT are never sent.
    for (const sql of ["INSERT INTO account (id, org_id) VALUES ('x', 'org_acme')", "UPDATE account SET name = 'pwned'", 'COMMIT']) {
      expect(await failure(runReadOnly(db, sql, []))).toMatchObject({ code: 'QUERY_FAILED', status: 500 });
    }
    const smuggled = await failure(runReadOnly(db, "SELECT 1; COMMIT; INSERT INTO account (id, org_id) VALUES ('y', 'org_acme')", []));
    expect(smuggled.code).toBe('QUERY_FAILED');
    const after = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM account');
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
    expect((await db.query<{ t: string | null }>("SELECT to_regclass('stolen')::text AS t")).rows[0]!.t).toBeNull();
  });

  it('rejects bad options with INVALID_OPTIONS', async () => {
    await expect(execute(db, { slug: 'opportunity', query: 'SELECT id FROM opportunity LIMIT 1' }, { ...base, timeoutMs: 0 }))
      .rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    await expect(execute(db, { slug: 'opportunity', query: 'SELECT id FROM opportunity LIMIT 1' }, { ...base, maxConcurrent: 0 }))
      .rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });
});

describe('concurrency limit', () => {
  it('fails the call over the limit at once with 429 and releases slots afterwards', async () => {
    const limiter = new ConcurrencyLimiter(2);
    const options = { ...base, clientId: 'client-a', limiter };
    const query = { slug: 'opportunity', query: 'SELECT id, name FROM opportunity LIMIT 50' };
    const settled: string[] = [];
    const calls = [0, 1, 2].map((i) => execute(db, query, options).then(
      () => settled.push(`ok${i}`),
      (e: OqlError) => settled.push(`${e.status}:${i}`),
    ));
    expect(limiter.running('client-a')).toBe(2);
    // Another client has its own budget.
    await expect(execute(db, query, { ...options, clientId: 'client-b' })).resolves.toMatchObject({ records: expect.any(Array) });
    await Promise.all(calls);
    expect(settled[0]).toBe('429:2'); // rejected before either query finished
    expect(settled.filter((s) => s.startsWith('ok')).sort()).toEqual(['ok0', 'ok1']);
    expect(limiter.running('client-a')).toBe(0);
    // Released after errors too.
    await failure(execute(db, { slug: 'opportunity', query: 'SELECT id, amount / 0 AS x FROM opportunity LIMIT 5' }, options));
    expect(limiter.running('client-a')).toBe(0);
    expect((await execute(db, query, options)).records.length).toBe(50);
  });

  it('has a working default limiter keyed by clientId', async () => {
    const query = { slug: 'opportunity', query: 'SELECT id FROM opportunity LIMIT 5' };
    const results = await Promise.allSettled([execute(db, query, base), execute(db, query, base), execute(db, query, base)]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toMatchObject({
      code: 'TOO_MANY_REQUESTS',
      status: 429,
      message: 'too many concurrent analytics requests are running; retry later',
    });
    await expect(execute(db, query, base)).resolves.toMatchObject({ records: expect.any(Array) });
  });

  it('counts a released slot once', () => {
    const limiter = new ConcurrencyLimiter(1);
    const release = limiter.acquire('c');
    expect(() => limiter.acquire('c')).toThrow(OqlError);
    release();
    release();
    expect(limiter.running('c')).toBe(0);
    const again = limiter.acquire('c');
    expect(() => limiter.acquire('c')).toThrow(/too many concurrent/);
    again();
    expect(() => new ConcurrencyLimiter(0)).toThrow(OqlError);
  });
});

describe('envelopes', () => {
  it('wraps results', async () => {
    const result = await execute(db, { slug: 'opportunity', query: 'SELECT id FROM opportunity LIMIT 2' }, base);
    expect(toEnvelope(result)).toEqual({ success: true, data: { records: result.records } });
    expect(toEnvelope({ count: 3 })).toEqual({ success: true, data: { count: 3 } });
  });

  it("says 'Invalid slug' as the service does, with the details beside it", async () => {
    const err = await failure(execute(db, { slug: 'account', query: 'SELECT id FROM opportunity LIMIT 5' }, base));
    const envelope = errorEnvelope(err);
    expect(envelope).toMatchObject({ success: false, data: { message: 'Invalid slug', status_code: 400, error_code: 'INVALID_SLUG', validation_errors: null } });
    expect(envelope.data.meta_data).toMatch(/opportunity/);
    expect(envelope.data.span).toMatchObject({ line: 1 });
  });

  it('carries compile errors with hint and position', async () => {
    const err = await failure(execute(db, { slug: 'opportunity', query: 'SELECT id FROM opportunity' }, base));
    const { data } = errorEnvelope(err);
    expect(data).toMatchObject({ status_code: 400, error_code: 'MISSING_LIMIT', message: err.message });
    expect(data.hint).toMatch(/LIMIT/);
    expect(data.diagnostics?.[0]).toMatchObject({ code: 'MISSING_LIMIT' });
  });

  it('carries runtime statuses and hides everything that is not a library error', async () => {
    const runtime = errorEnvelope(await failure(execute(db, { slug: 'opportunity', query: 'SELECT id, amount / 0 AS x FROM opportunity LIMIT 5' }, base)));
    expect(runtime.data).toMatchObject({ status_code: 400, error_code: 'QUERY_FAILED' });
    expect(runtime.data.span).toBeUndefined();
    expect(errorEnvelope(timeoutError(20_000)).data).toMatchObject({ status_code: 504, error_code: 'QUERY_TIMEOUT', message: 'the query timed out after 20 seconds' });
    const internal = errorEnvelope(new Error('password authentication failed for user "svc" at db.internal:5432'));
    expect(internal).toEqual({
      success: false,
      data: { message: 'internal server error', status_code: 500, error_code: 'INTERNAL_ERROR', validation_errors: null, meta_data: null },
    });
    expect(JSON.stringify(errorEnvelope('string thrown'))).not.toMatch(/string thrown/);
  });
});

describe('decodeValue', () => {
  it('normalises what other drivers return', () => {
    expect(decodeValue('1714521600000', 'date')).toBe(1714521600000);
    // A ::date result is a calendar date, typed apart from a date column's epoch milliseconds.
    expect(decodeValue('2024-05-01', 'calendar_date')).toBe('2024-05-01');
    expect(decodeValue(new Date(Date.UTC(2024, 4, 1)), 'calendar_date')).toBe('2024-05-01');
    expect(decodeValue(new Date(2024, 4, 1), 'calendar_date')).toBe('2024-05-01');
    expect(decodeValue(new Date(2024, 4, 1, 13, 5, 9, 500), 'timestamp')).toBe('2024-05-01 13:05:09.5');
    expect(decodeValue(new Date(Date.UTC(2024, 4, 1, 13, 5, 9)), 'timestamptz')).toBe('2024-05-01 13:05:09+00');
    expect(decodeValue('12.50', 'number')).toBe(12.5);
    expect(decodeValue(12n, 'datetime')).toBe(12);
    expect(decodeValue('1 day', 'number')).toBe('1 day');
    expect(decodeValue('NaN', 'number')).toBe('NaN'); // JSON has no number for it
    expect(decodeValue('{a,"b c",NULL,"q\\"x"}', 'multiselect')).toEqual(['a', 'b c', null, 'q"x']);
    expect(decodeValue('{}', 'multiselect')).toEqual([]);
    expect(decodeValue(null, 'multiselect')).toBeNull();
    expect(decodeValue(undefined, 'text')).toBeNull();
    expect(decodeValue('t', 'boolean')).toBe(true);
  });
});
