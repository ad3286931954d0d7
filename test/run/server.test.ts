process.env.TZ = 'America/New_York'; // before anything makes a Date: results must not depend on it

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OqlError } from '../../src/diagnostics/index.js';
import { ConcurrencyLimiter, count, errorEnvelope, execute, type RunOptions } from '../../src/index.js';
import { runReadOnly } from '../../src/run/index.js';
import { fixtureData, loadFixtureCatalog, loadIntoDatabase, zoneOffset, type Row } from '../../fixtures/index.js';
import { pgServerAvailable, startPgServer, type PgServer } from '../support/pg-server.js';
import { failure } from '../support/failure.js';

/**
 * Runtime behaviour that needs a real PostgreSQL server: statement timeouts (PGlite runs in the
 * JS thread and cannot cancel a statement), concurrent connections, pooled-connection hygiene.
 * The server binaries are required: without them this file fails, it does not skip.
 */

const catalog = loadFixtureCatalog('crm');
const data = fixtureData('crm');
const ORG = 'org_acme';
const SLOW_ORG = 'org_slow';
const base: RunOptions = { catalog, orgId: ORG };

// A fan-out across two virtual relations: 20 accounts x 2000 contacts x 2000 opportunities = 80M
// joined rows for the ILIKE tests, which takes far longer than any timeout used below.
const SLOW = {
  slug: 'account',
  query: "SELECT COUNT(*) AS n FROM account WHERE contacts.name ILIKE '%x%' OR opportunities.name ILIKE '%y%' LIMIT 1",
};
const slowOptions: RunOptions = { catalog, orgId: SLOW_ORG };

let server: PgServer | undefined;
let pool: pg.Pool | undefined;

const live = (slug: string): Row[] => data.get(slug)!.filter((r) => r.org_id === ORG && r.is_deleted === false);
const sortById = <T extends Record<string, unknown>>(rows: T[]): T[] => [...rows].sort((a, b) => String(a.id).localeCompare(String(b.id)));
const utcText = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').replace(/\.000Z$/, '').replace(/Z$/, '');

function db(): pg.Pool {
  if (!pool) throw new Error('the server did not start (see beforeAll)');
  return pool;
}

beforeAll(async () => {
  expect(pgServerAvailable(), 'PostgreSQL 15 server binaries are required (apt-get install postgresql-15)').toBe(true);
  server = await startPgServer();
  pool = new pg.Pool({ connectionString: server.url, max: 8 });
  await loadIntoDatabase(pool, catalog, data);
  await pool.query(
    `INSERT INTO account (id, org_id, name) SELECT 'slow_a' || g, $1, 'account ' || g FROM generate_series(1, 20) g`, [SLOW_ORG],
  );
  for (const table of ['contact', 'opportunity']) {
    await pool.query(
      `INSERT INTO ${table} (id, org_id, name, account) SELECT 'slow_${table}_' || g, $1, '${table} ' || g, 'slow_a' || (g % 20 + 1) FROM generate_series(1, 40000) g`,
      [SLOW_ORG],
    );
  }
  await pool.query('ANALYZE');
});

afterAll(async () => {
  try {
    await pool?.end();
  } finally {
    await server?.stop();
  }
});

describe('decoding on node-postgres', () => {
  const query = `SELECT id, amount, close_date, created_at, sources,
      to_timestamp(created_at / 1000) AS at_utc,
      to_timestamp(created_at / 1000) AT TIME ZONE 'Asia/Kolkata' AS at_kolkata,
      to_timestamp(close_date / 1000)::date AS close_day
    FROM opportunity WHERE created_at IS NOT NULL AND close_date IS NOT NULL LIMIT 1000`;
  const expected = () => live('opportunity')
    .filter((r) => r.created_at !== null && r.close_date !== null)
    .map((r) => {
      const seconds = Math.floor((r.created_at as number) / 1000) * 1000;
      return {
        id: r.id,
        amount: r.amount,
        close_date: r.close_date,
        created_at: r.created_at,
        sources: r.sources,
        at_utc: `${utcText(seconds)}+00`,
        at_kolkata: utcText(seconds + zoneOffset('Asia/Kolkata', seconds)),
        close_day: new Date(r.close_date as number).toISOString().slice(0, 10),
      };
    });

  it('runs on the host zone America/New_York', () => {
    expect(new Date(0).getTimezoneOffset()).not.toBe(0);
  });

  it('decodes numbers, epochs, arrays and time text from a Pool', async () => {
    const result = await execute(db(), { slug: 'opportunity', query }, base);
    expect(sortById(result.records)).toEqual(sortById(expected()));
  });

  it('decodes the same from a single Client, serialising concurrent calls on it', async () => {
    const client = new pg.Client({ connectionString: server!.url });
    await client.connect();
    try {
      const options = { ...base, limiter: new ConcurrencyLimiter(4) };
      const [a, b, c] = await Promise.all([
        execute(client, { slug: 'opportunity', query }, options),
        count(client, { slug: 'opportunity', query }, options),
        execute(client, { slug: 'opportunity', query: 'SELECT id, amount / 0 AS x FROM opportunity LIMIT 5' }, options).catch((e: OqlError) => e),
      ]);
      expect(sortById(a.records)).toEqual(sortById(expected()));
      expect(b.count).toBe(expected().length);
      expect(c).toMatchObject({ code: 'QUERY_FAILED', status: 400 });
      // Every transaction was closed: the client is idle, not inside a transaction.
      const status = await client.query("SELECT current_setting('transaction_read_only') AS ro");
      expect(status.rows[0].ro).toBe('off');
    } finally {
      await client.end();
    }
  });
});

describe('statement timeout', () => {
  it('answers 504 within the timeout plus a margin', async () => {
    const started = performance.now();
    const err = await failure(execute(db(), SLOW, { ...slowOptions, timeoutMs: 300 }));
    const elapsed = performance.now() - started;
    expect(err).toMatchObject({ code: 'QUERY_TIMEOUT', status: 504, message: 'the query timed out after 0.3 seconds' });
    expect((err.cause as { code?: string }).code).toBe('57014');
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(300 + 2000);
    expect(errorEnvelope(err).data).toMatchObject({ status_code: 504, error_code: 'QUERY_TIMEOUT' });
  });

  it('applies to count as well', async () => {
    const err = await failure(count(db(), SLOW, { ...slowOptions, timeoutMs: 500 }));
    expect(err).toMatchObject({ code: 'QUERY_TIMEOUT', status: 504, message: 'the query timed out after 0.5 seconds' });
  });

  it('leaves the pooled connection usable', async () => {
    const single = new pg.Pool({ connectionString: server!.url, max: 1 });
    try {
      await failure(execute(single, SLOW, { ...slowOptions, timeoutMs: 200 }));
      expect(await count(single, { slug: 'opportunity', query: 'SELECT id FROM opportunity LIMIT 7' }, base)).toEqual({ count: 7 });
      expect(single.totalCount).toBe(1);
    } finally {
      await single.end();
    }
  });
});

describe('concurrency limit', () => {
  it('lets two of three concurrent calls from one client run and refuses the third with 429', async () => {
    const limiter = new ConcurrencyLimiter(2);
    const options = { ...base, clientId: 'agent-1', limiter };
    const query = { slug: 'opportunity', query: 'SELECT id, name, owner.name FROM opportunity LIMIT 100' };
    const results = await Promise.allSettled([execute(db(), query, options), execute(db(), query, options), execute(db(), query, options)]);
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.reason).toMatchObject({
      code: 'TOO_MANY_REQUESTS',
      status: 429,
      message: 'too many concurrent analytics requests are running; retry later',
    });
    expect(errorEnvelope(rejected[0]!.reason).data.status_code).toBe(429);
    for (const r of results) if (r.status === 'fulfilled') expect(r.value.records).toHaveLength(100);
    expect(limiter.running('agent-1')).toBe(0);
    expect((await execute(db(), query, options)).records).toHaveLength(100);
  });

  it('releases slots after timeouts', async () => {
    const limiter = new ConcurrencyLimiter(2);
    const options = { ...slowOptions, clientId: 'agent-2', limiter, timeoutMs: 300 };
    const started = performance.now();
    const results = await Promise.allSettled([execute(db(), SLOW, options), count(db(), SLOW, options), execute(db(), SLOW, options)]);
    expect(performance.now() - started).toBeLessThan(300 + 2000);
    const codes = results.map((r) => (r.status === 'rejected' ? (r.reason as OqlError).code : 'ok'));
    expect(codes).toEqual(['QUERY_TIMEOUT', 'QUERY_TIMEOUT', 'TOO_MANY_REQUESTS']);
    expect(limiter.running('agent-2')).toBe(0);
    const fast = await count(db(), { slug: 'account', query: 'SELECT id FROM account LIMIT 100' }, options);
    expect(fast).toEqual({ count: 20 });
  });

  it('shares the default limiter between calls that give no limiter', async () => {
    const options = { ...slowOptions, clientId: 'agent-3', timeoutMs: 300 };
    const results = await Promise.allSettled([execute(db(), SLOW, options), execute(db(), SLOW, options), execute(db(), SLOW, options)]);
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as OqlError).status : 200))).toEqual([504, 504, 429]);
    expect((await count(db(), { slug: 'account', query: 'SELECT id FROM account LIMIT 100' }, options)).count).toBe(20);
  });
});

describe('read-only transaction', () => {
  const accounts = async (): Promise<{ n: number; names: number }> => {
    const r = await db().query("SELECT count(*)::int AS n, count(*) FILTER (WHERE name = 'pwned')::int AS names FROM account");
    return r.rows[0];
  };

  it('refuses writes even when handed raw SQL the compiler would never emit', async () => {
    // A SELECT that writes: the read-only transaction, not the SELECT-only check, has to stop it.
    await db().query(
      "CREATE OR REPLACE FUNCTION sneaky_write() RETURNS int LANGUAGE sql AS $$ INSERT INTO account (id, org_id, name) VALUES ('evil', 'org_acme', 'pwned') RETURNING 1 $$",
    );
    await db().query('CREATE SEQUENCE IF NOT EXISTS sneaky_seq');
    const before = await accounts();
    const refusedByDatabase = [
      'SELECT sneaky_write() AS x',
      "SELECT nextval('sneaky_seq') AS x",
      'SELECT id INTO stolen FROM account',
      'SELECT id FROM account FOR UPDATE',
      "SELECT set_config('transaction_read_only', 'off', true)",
    ];
    for (const sql of refusedByDatabase) {
      const err = await failure(runReadOnly(db(), sql, []));
      expect(err.code, sql).toBe('QUERY_FAILED');
      expect(err.status, sql).toBe(400);
      expect((err.cause as { code?: string }).code, sql).toMatch(/^25/);
      expect(err.message, sql).toBe('the query tried to change data; analytics queries are read-only');
    }
    const neverSent = [
      "INSERT INTO account (id, org_id, name) VALUES ('evil', 'org_acme', 'pwned')",
      "UPDATE account SET name = 'pwned'",
      'DELETE FROM account',
      'WITH gone AS (DELETE FROM account RETURNING id) SELECT count(*) FROM gone',
      'COMMIT',
      'SET TRANSACTION READ WRITE',
    ];
    for (const sql of neverSent) {
      const err = await failure(runReadOnly(db(), sql, []));
      expect(err, sql).toMatchObject({ code: 'QUERY_FAILED', status: 500 });
    }
    // Several statements in one: the extended protocol takes one, so nothing runs after COMMIT.
    const smuggled = await failure(runReadOnly(db(), "SELECT 1; COMMIT; INSERT INTO account (id, org_id, name) VALUES ('evil2', 'org_acme', 'pwned')", []));
    expect(smuggled.code).toBe('QUERY_FAILED');
    expect((smuggled.cause as { code?: string }).code).toBe('42601');
    expect(await accounts()).toEqual(before);
    expect(before.names).toBe(0);
    expect((await db().query("SELECT last_value, is_called FROM sneaky_seq")).rows[0]).toEqual({ last_value: '1', is_called: false });
    expect((await db().query("SELECT to_regclass('stolen') AS t")).rows[0].t).toBeNull();
  });

  it('ends in ROLLBACK, so a smuggled session setting does not outlive the call', async () => {
    const single = new pg.Pool({ connectionString: server!.url, max: 1 });
    try {
      const original = (await single.query("SELECT current_setting('search_path') AS s")).rows[0].s;
      await runReadOnly(single, "SELECT set_config('search_path', 'pg_catalog', false) AS s", []);
      await runReadOnly(single, "SELECT set_config('statement_timeout', '0', false) AS s", []);
      expect((await single.query("SELECT current_setting('search_path') AS s")).rows[0].s).toBe(original);
      expect((await single.query("SELECT current_setting('statement_timeout') AS s")).rows[0].s).toBe('0');
      const inside = await runReadOnly(single, "SELECT current_setting('statement_timeout') AS t, current_setting('TimeZone') AS z, current_setting('transaction_read_only') AS ro", [], { timeoutMs: 1234 });
      expect(inside.rows[0]).toEqual({ t: '1234ms', z: 'UTC', ro: 'on' });
    } finally {
      await single.end();
    }
  });
});

describe('connection failures', () => {
  it('maps a refused connection to DATABASE_ERROR 503 without the address', async () => {
    const nowhere = new pg.Pool({ host: '127.0.0.1', port: 1, user: 'postgres', connectionTimeoutMillis: 2000 });
    try {
      const err = await failure(execute(nowhere, { slug: 'opportunity', query: 'SELECT id FROM opportunity LIMIT 1' }, base));
      expect(err).toMatchObject({ code: 'DATABASE_ERROR', status: 503 });
      expect(errorEnvelope(err).data.message).not.toMatch(/127\.0\.0\.1/);
    } finally {
      await nowhere.end();
    }
  });

  it('maps a connection killed mid-query to 503 and drops that connection from the pool', async () => {
    const single = new pg.Pool({ connectionString: server!.url, max: 1 });
    try {
      const running = execute(single, SLOW, { ...slowOptions, timeoutMs: 30_000, limiter: new ConcurrencyLimiter(1) });
      // Kill the backend once the statement is running (polling: a loaded machine may take a while).
      for (let killed = 0, tries = 0; killed === 0 && tries < 200; tries++) {
        await new Promise((r) => setTimeout(r, 50));
        const r = await db().query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%ILIKE%' AND pid <> pg_backend_pid()",
        );
        killed = r.rowCount ?? 0;
      }
      const err = await failure(running);
      expect(err).toMatchObject({ code: 'DATABASE_ERROR', status: 503 });
      expect(await count(single, { slug: 'opportunity', query: 'SELECT id FROM opportunity LIMIT 2' }, base)).toEqual({ count: 2 });
    } finally {
      await single.end();
    }
  });
});
