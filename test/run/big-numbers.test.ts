import { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogDdl, loadCatalog } from '../../src/catalog/index.js';
import { connectorRecords, filterRecords } from '../../src/query/filter.js';
import { execute } from '../../src/index.js';
import { getRecord } from '../../src/records/index.js';
import { decodeValue, parseNumber } from '../../src/run/decode.js';
import { startPgDatabase } from '../support/pg-cluster.js';
import { pgServerAvailable, type PgServer } from '../support/pg-server.js';
import { emptyPglite } from '../support/pglite-template.js';

/**
 * Numbers a JSON double cannot hold exactly come back as strings with every digit; the others
 * as numbers. Checked on int8 and numeric values read by every read path (reports, filter,
 * get one, connector pages) on PostgreSQL 15 and PGlite, for two tenants. The expected values
 * are the literals the rows were inserted with.
 */

const catalog = loadCatalog({ objects: { ledger: { columns: { name: 'text', amount: 'number', qty: 'integer', booked_at: 'datetime' } } } });
const MAX = '9007199254740991'; // 2^53 − 1

/** Each row as inserted (text literals), and what a client must get back for each value. */
const ROWS: readonly { id: string; amount: string; qty: string; booked_at: string; expect: { amount: unknown; qty: unknown; booked_at: unknown } }[] = [
  { id: 'r1', amount: '9007199254740993', qty: '12', booked_at: '9007199254740993', expect: { amount: '9007199254740993', qty: 12, booked_at: '9007199254740993' } },
  { id: 'r2', amount: '0.1000000000000000055511151231257827', qty: '-9007199254740993', booked_at: '1700000000000', expect: { amount: '0.1000000000000000055511151231257827', qty: '-9007199254740993', booked_at: 1700000000000 } },
  { id: 'r3', amount: '100.00', qty: '-3', booked_at: '1', expect: { amount: 100, qty: -3, booked_at: 1 } },
  { id: 'r4', amount: '12345678901234567890.5', qty: MAX, booked_at: '-9007199254740992', expect: { amount: '12345678901234567890.5', qty: 9007199254740991, booked_at: '-9007199254740992' } },
  { id: 'r5', amount: 'NaN', qty: '9007199254740992', booked_at: '0', expect: { amount: 'NaN', qty: '9007199254740992', booked_at: 0 } },
  { id: 'r6', amount: '0.00000000000000000001', qty: '1234567890123456', booked_at: '1234567890123456', expect: { amount: 1e-20, qty: 1234567890123456, booked_at: 1234567890123456 } },
  { id: 'r7', amount: '123456789012.345', qty: '0', booked_at: '-1', expect: { amount: 123456789012.345, qty: 0, booked_at: -1 } },
];
const OTHER_ORG_ROW = { id: 'x1', amount: '1', qty: '2', booked_at: '3' };

type Db = pg.Pool | PGlite;

async function load(pool: Db): Promise<void> {
  // Either driver; their `query` signatures differ only in overloads.
  const db = pool as unknown as { query(text: string, params?: unknown[]): Promise<unknown> };
  for (const statement of catalogDdl(catalog)) await db.query(statement);
  const insert = 'INSERT INTO public.ledger (id, org_id, name, amount, qty, booked_at) VALUES ($1, $2, $1, $3::numeric, $4::numeric, $5::bigint)';
  for (const r of ROWS) await db.query(insert, [r.id, 'org_a', r.amount, r.qty, r.booked_at]);
  await db.query(insert, [OTHER_ORG_ROW.id, 'org_b', OTHER_ORG_ROW.amount, OTHER_ORG_ROW.qty, OTHER_ORG_ROW.booked_at]);
}

function surfaces(db: () => Db): void {
  const byId = (records: Record<string, unknown>[]) => new Map(records.map((r) => [r.id as string, r]));
  const expectRows = (records: Record<string, unknown>[], fields: readonly ('amount' | 'qty' | 'booked_at')[]) => {
    expect(records.map((r) => r.id).sort()).toEqual(ROWS.map((r) => r.id));
    const got = byId(records);
    for (const r of ROWS) for (const f of fields) expect(got.get(r.id)![f], `${r.id}.${f}`).toStrictEqual(r.expect[f]);
  };

  it('reports: columns and aggregates', async () => {
    const { records } = await execute(db(), { slug: 'ledger', query: 'SELECT id, amount, qty, booked_at FROM ledger LIMIT 100' }, { catalog, orgId: 'org_a' });
    expectRows(records, ['amount', 'qty', 'booked_at']);
    const sum = async (ids: string) => (await execute(db(), { slug: 'ledger', query: `SELECT sum(qty) AS total, count(id) AS n FROM ledger WHERE id IN (${ids}) LIMIT 1` }, { catalog, orgId: 'org_a' })).records;
    expect(await sum("'r1', 'r5'")).toStrictEqual([{ total: String(12n + 9007199254740992n), n: 2 }]);
    expect(await sum("'r2', 'r4'")).toStrictEqual([{ total: -2, n: 2 }]);
    expect(await sum("'r1', 'r2', 'r3'")).toStrictEqual([{ total: Number(12n - 9007199254740993n - 3n), n: 3 }]);
  });

  it('filter, get one and connector pages', async () => {
    const filtered = await filterRecords(db(), { query: { fields: ['id', 'amount', 'qty', 'booked_at'] } }, { catalog, slug: 'ledger', orgId: 'org_a' });
    expectRows(filtered.records, ['amount', 'qty', 'booked_at']);
    const got: Record<string, unknown>[] = [];
    for (const r of ROWS) got.push(await getRecord(db(), 'ledger', r.id, { catalog, orgId: 'org_a' }));
    expectRows(got, ['amount', 'qty', 'booked_at']);
    const page = await connectorRecords(db(), { query: { fields: ['amount', 'qty'] } }, { catalog, slug: 'ledger', orgId: 'org_a', tokenSecret: 'big-numbers-secret-0123456789' });
    expectRows(page.records, ['amount', 'qty']);
    // The same values survive the JSON a client receives.
    expect(JSON.parse(JSON.stringify(page.records)).find((r: { id: string }) => r.id === 'r1').amount).toBe('9007199254740993');
  });
}

describe('on PostgreSQL 15', () => {
  let server: PgServer | undefined;
  let pool: pg.Pool;
  beforeAll(async () => {
    expect(pgServerAvailable(), 'PostgreSQL 15 server binaries are required (apt-get install postgresql-15)').toBe(true);
    server = await startPgDatabase();
    pool = new pg.Pool({ connectionString: server.url, max: 2 });
    await load(pool);
  }, 180_000);
  afterAll(async () => {
    await pool?.end();
    await server?.stop();
  });
  surfaces(() => pool);
});

describe('on PGlite', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await emptyPglite();
    await load(db);
  }, 180_000);
  afterAll(async () => {
    await db?.close();
  });
  surfaces(() => db);
});

describe('parseNumber', () => {
  it('keeps an integer as a number exactly when it is a safe integer', () => {
    const limit = 2n ** 53n;
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), (n) => {
        const got = parseNumber(n.toString());
        if (n > -limit && n < limit) expect(got).toBe(Number(n));
        else expect(got).toBe(n.toString());
      }),
      { numRuns: 2000 },
    );
    for (const n of [limit - 1n, limit, limit + 1n, -limit + 1n, -limit]) {
      const within = n > -limit && n < limit;
      expect(parseNumber(n.toString())).toBe(within ? Number(n) : n.toString());
      expect(decodeValue(n, 'integer')).toBe(within ? Number(n) : n.toString());
    }
  });

  it('keeps a decimal as a number when the double holds its digits, else as its text', () => {
    for (const [text, want] of [
      ['1.5', 1.5], ['-0.25', -0.25], ['100.00', 100], ['0.1', 0.1], ['0.000', 0], ['3.14159265358979', 3.14159265358979],
      ['0.30000000000000004', 0.30000000000000004], ['123456789.123456789', '123456789.123456789'],
      ['1.00000000000000000001', '1.00000000000000000001'], ['Infinity', 'Infinity'], ['-Infinity', '-Infinity'], ['NaN', 'NaN'],
    ] as const) expect(parseNumber(text), text).toBe(want);
    // Other drivers hand numeric values over as text: decodeValue applies the same rule, and leaves non-numbers alone.
    expect(decodeValue('12345678901234567890.25', 'number')).toBe('12345678901234567890.25');
    expect(decodeValue('12.50', 'currency')).toBe(12.5);
    expect(decodeValue('1 day', 'number')).toBe('1 day');
  });
});
