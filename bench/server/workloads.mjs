// The four workloads of bench/server.mjs: each the HTTP request autocannon sends, and the bare
// query that reads or writes the same rows (the floor); and the rows they run on, which
// bench/server.mjs, bench/fleet.mjs and bench/statement-cost.mjs all load.
import { generateRows } from '../../fixtures/index.ts';
import { floorInsert } from './floor-insert.mjs';

/** The organization the workloads read and write as; `org_rival` holds as many rows beside it. */
export const BENCH_ORG = 'org_bench';
/** Rows of each object, per organization. */
export const BENCH_COUNTS = { user: 100, account: 2_000, contact: 8_000, opportunity: 20_000, lead: 4_000 };

/** The example CRM's rows for BENCH_ORG and a rival organization, the same in every run. */
export function benchRows(catalog) {
  return generateRows(catalog, { seed: 20261123, tenants: [BENCH_ORG, 'org_rival'], counts: BENCH_COUNTS });
}

const STAGES = ['prospecting', 'qualification', 'proposal', 'negotiation', 'won', 'lost'];
const THRESHOLDS = [0, 10_000, 50_000, 100_000];
const FIELDS = ['id', 'name', 'amount', 'stage', 'close_date'];

/** 100 new opportunities of request `n`: names unique across the run, relations to existing records. */
export function newOpportunities(data, n) {
  return Array.from({ length: 100 }, (_, i) => ({
    name: `Bench deal ${n}-${i}`,
    amount: 1_000 + ((n * 100 + i) % 90_000),
    stage: STAGES[(n + i) % STAGES.length],
    owner: data.ownerIds[(n + i) % data.ownerIds.length],
    account: data.accountIds[(n * 7 + i) % data.accountIds.length],
  }));
}

/** A filter request's body: the first page of 50 opportunities under `conditions`, largest amount first. */
function pageOf50(conditions) {
  return JSON.stringify({ query: { fields: FIELDS, filters: { and: conditions }, sort: [{ field: 'amount', direction: 'desc' }], pagination: { page: 1, page_size: 50 } } });
}

/**
 * name: shown in the results; floorLabel: what the floor runs; connections: the concurrency when
 * not the default; request(data, n): the n-th HTTP request; floor(data, n): the n-th bare query,
 * as { sql, params }, with insert: true for a write (run in a transaction).
 */
export const WORKLOADS = [
  {
    name: 'get one',
    floorLabel: 'SELECT * by (org_id, id)',
    request: (data, n) => ({ method: 'GET', path: `/api/v1/org/objects/opportunity/record/${encodeURIComponent(data.opportunityIds[n % data.opportunityIds.length])}` }),
    floor: (data, n) => ({
      sql: 'SELECT * FROM public.opportunity WHERE org_id = $1 AND id = $2 AND NOT is_deleted',
      params: [data.org, data.opportunityIds[n % data.opportunityIds.length]],
    }),
  },
  {
    name: 'filter',
    floorLabel: 'stage = and amount >=, ORDER BY amount DESC, id, LIMIT 50',
    request: (_data, n) => ({
      method: 'POST',
      path: '/api/v1/org/objects/opportunity/filter',
      body: pageOf50([{ field: 'stage', operator: 'eq', value: STAGES[n % STAGES.length] }, { field: 'amount', operator: 'gte', value: THRESHOLDS[n % THRESHOLDS.length] }]),
    }),
    floor: (data, n) => ({
      sql: `SELECT ${FIELDS.join(', ')} FROM public.opportunity WHERE org_id = $1 AND NOT is_deleted AND stage = $2 AND amount >= $3 ORDER BY amount DESC NULLS LAST, id LIMIT 50`,
      params: [data.org, STAGES[n % STAGES.length], THRESHOLDS[n % THRESHOLDS.length]],
    }),
  },
  {
    name: 'report',
    floorLabel: 'GROUP BY stage with COUNT and SUM',
    // One key may run two analytics queries at once (more are answered 429): both sides run two.
    connections: 2,
    request: (_data, n) => ({
      method: 'POST',
      path: '/api/v1/reports/execute',
      body: JSON.stringify({
        query: `SELECT stage, COUNT(id) AS deals, SUM(amount) AS total FROM opportunity WHERE amount >= ${THRESHOLDS[n % THRESHOLDS.length]} GROUP BY stage LIMIT 100`,
        slug: 'opportunity',
      }),
    }),
    floor: (data, n) => ({
      sql: 'SELECT stage, count(id) AS deals, sum(amount) AS total FROM public.opportunity WHERE org_id = $1 AND NOT is_deleted AND amount >= $2 GROUP BY stage LIMIT 100',
      params: [data.org, THRESHOLDS[n % THRESHOLDS.length]],
    }),
  },
  {
    name: 'bulk_create 100',
    floorLabel: 'one 100-row INSERT in a transaction',
    request: (data, n) => ({ method: 'POST', path: '/api/v1/org/objects/opportunity/record/bulk_create', body: JSON.stringify(newOpportunities(data, n)) }),
    floor: (data, n) => {
      const now = Date.now();
      return { insert: true, ...floorInsert(data.org, newOpportunities(data, n), (i) => `floor_${process.pid}_${n}_${i}_${now}`, now) };
    },
  },
];

/** The floor of one workload on one database: a function running its i-th query, answering its rows. */
export function floorRunner({ kind, db }, workload, data) {
  return async (i) => {
    const q = workload.floor(data, i);
    if (!q.insert) return (await db.query(q.sql, q.params)).rows;
    if (kind === 'pglite') return (await db.transaction((tx) => tx.query(q.sql, q.params))).rows;
    const client = await db.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query(q.sql, q.params);
      await client.query('COMMIT');
      return rows;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {});
      throw e;
    } finally {
      client.release();
    }
  };
}

/** What PostGraphile answers for a record: every column of the table but the search text. */
const GRAPHQL_RECORD = 'rowId orgId isDeleted name amount stage closeDate account primaryContact probability owner createdAt updatedAt createdBy updatedBy';

/**
 * The reads run side by side with PostGraphile (bench/server/peer.mjs): as WORKLOADS, plus
 * graphql(data, n), the same read as a GraphQL request. The page filters on equality only, which
 * is what PostGraphile's conditions offer without plugins.
 */
export const PEER_WORKLOADS = [
  {
    ...WORKLOADS[0],
    graphql: (data, n) => ({
      query: `query($o: String!, $i: String!) { opportunityByOrgIdAndRowId(orgId: $o, rowId: $i) { ${GRAPHQL_RECORD} } }`,
      variables: { o: data.org, i: data.opportunityIds[n % data.opportunityIds.length] },
    }),
  },
  {
    name: 'page of 50',
    floorLabel: 'stage =, ORDER BY amount DESC, id, LIMIT 50',
    request: (_data, n) => ({
      method: 'POST',
      path: '/api/v1/org/objects/opportunity/filter',
      body: pageOf50([{ field: 'stage', operator: 'eq', value: STAGES[n % STAGES.length] }]),
    }),
    graphql: (data, n) => ({
      query: 'query($o: String!, $s: String!) { allOpportunities(condition: {orgId: $o, stage: $s, isDeleted: false}, orderBy: [AMOUNT_DESC, ROW_ID_ASC], first: 50) { nodes { rowId name amount stage closeDate } } }',
      variables: { o: data.org, s: STAGES[n % STAGES.length] },
    }),
    floor: (data, n) => ({
      sql: `SELECT ${FIELDS.join(', ')} FROM public.opportunity WHERE org_id = $1 AND NOT is_deleted AND stage = $2 ORDER BY amount DESC NULLS LAST, id LIMIT 50`,
      params: [data.org, STAGES[n % STAGES.length]],
    }),
  },
];
