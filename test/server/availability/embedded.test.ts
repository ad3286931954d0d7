import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedDatabase } from '../../../src/run/drivers/pglite/supervisor.js';
import { expectEnvelope } from '../support.js';
import {
  A_KEY, A_NAMES, B_KEYS, WORKSPACE_A, WORKSPACE_B, expectNeighbourRows, neighbourReport, records, seedA, startService, toolText, type Service,
} from './support.js';

/**
 * Issue 19 on the default database, embedded PGlite (`memory: true`, in its own process): F4
 * (a three-level correlated subquery that ran 164 s while every tenant waited) and F8 (JSON nested
 * 5000 deep sent to the MCP endpoint and to REST). Organization A is served while B attacks. The
 * statement that runs out its whole budget, with nobody waiting, is test/run/pglite-worker-recovery.test.ts's.
 */

let svc: Service;

/**
 * B's accounts and contacts: every contact's name is in every city, and no city has it followed by
 * an x, so neither EXISTS ends early: each account, each of its matching contacts, each account
 * again — 27 million ILIKEs.
 */
const B_ACCOUNTS = Array.from({ length: 300 }, (_, i) => ({ name: `Beta ${String(i).padStart(3, '0')}`, city: `zed and quinn street ${i}` }));
const B_CONTACTS = Array.from({ length: 300 }, (_, i) => ({ name: i % 2 === 0 ? 'zed' : 'quinn' }));
const RUNAWAY = {
  slug: 'account',
  query: "SELECT COUNT(*) AS n FROM account WHERE EXISTS (SELECT 1 FROM contact WHERE account.city ILIKE concat('%', contact.name, '%') AND EXISTS (SELECT 1 FROM account a2 WHERE a2.city ILIKE concat('%', contact.name, 'x%'))) LIMIT 1",
};

beforeAll(async () => {
  svc = await startService({ memory: true, queryTimeoutMs: 2_000 });
  await seedA(svc);
  for (const [slug, rows] of [['account', B_ACCOUNTS], ['contact', B_CONTACTS]] as const) {
    const answer = await svc.call(B_KEYS[0], 'POST', `/api/v1/org/objects/${slug}/record/bulk_create`, rows);
    expect(answer.status, answer.text.slice(0, 300)).toBe(200);
  }
}, 600_000);

afterAll(async () => {
  await svc?.close();
});

/**
 * Resolves once organization B's runaway statement holds the embedded database's connection: B's
 * call has held it for 300 ms (the plan's cost estimate before it takes a few).
 */
async function bHoldsTheConnection(): Promise<void> {
  const db = EmbeddedDatabase.opened()[0]!;
  const holding = (): boolean => {
    const holder = db.stats().holder;
    return holder?.tenant === 'org_b' && holder.forMs >= 300;
  };
  while (!holding()) await new Promise((r) => setTimeout(r, 10));
}

describe('F4: a three-level correlated subquery on the embedded database', () => {
  it('is stopped at the slice (504) once A\'s report waits for the connection, and A\'s report is answered with A\'s rows', async () => {
    const [beta] = records(await svc.call(B_KEYS[2], 'POST', '/api/v1/org/objects/account/filter', { query: { fields: ['id', 'name'], pagination: { page: 1, page_size: 1 } } }));
    const order: string[] = [];
    const attack = svc.call(B_KEYS[1], 'POST', '/api/v1/reports/execute', RUNAWAY).finally(() => order.push('B answered'));
    await bHoldsTheConnection();
    order.push('A sent');
    const neighbour = neighbourReport(svc).finally(() => order.push('A answered'));
    const timedOut = await attack;
    expectEnvelope(timedOut, 504, 'QUERY_TIMEOUT');
    expect(timedOut.json.data.message).toBe(
      'the query was stopped after 0.5 seconds: other organizations were waiting for the embedded PostgreSQL (PGlite) in memory, which runs one statement at a time');
    expect(timedOut.json.data.hint).toMatch(/make the query cheaper or narrow its WHERE clause; on PostgreSQL \(--database\)/);
    expectNeighbourRows(await neighbour);
    expect(order.indexOf('A sent')).toBeLessThan(order.indexOf('B answered'));

    // After it: A's reports run; B's organization waits out its cool-down (429 with Retry-After), whichever user asks.
    expectNeighbourRows(await neighbourReport(svc));
    const cooling = await svc.call(B_KEYS[2], 'POST', '/api/v1/reports/execute', { slug: 'account', query: 'SELECT name FROM account LIMIT 5' });
    expectEnvelope(cooling, 429, 'TOO_MANY_REQUESTS');
    expect(Number(cooling.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(cooling.json.data.hint).toBe('make the query cheaper before running it again: narrow the WHERE clause or lower the LIMIT');
    // Its record reads are not held back, and nothing it wrote was lost when the database's thread was replaced.
    const one = await svc.call(B_KEYS[2], 'GET', `/api/v1/org/objects/account/record/${String(beta!.id)}`);
    expect(one.status).toBe(200);
    expect(one.json.data).toMatchObject({ id: beta!.id, name: beta!.name });
  }, 300_000);
});

describe('F8: JSON nested 5000 deep', () => {
  const deep = (n: number) => `${'['.repeat(n)}1${']'.repeat(n)}`;

  it('gets a JSON-RPC error that is not -32603 from the MCP endpoint, a 400 from REST, and A\'s agent is served', async () => {
    const neighbour = await svc.mcp(WORKSPACE_A, A_KEY);
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_query","arguments":{"slug":"account","query":${deep(5000)}}}}`;
    const [mcp, rest, mine] = await Promise.all([
      fetch(`${svc.mcpUrl}/${WORKSPACE_B}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${B_KEYS[3]}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body,
      }),
      svc.call(B_KEYS[3], 'POST', '/api/v1/org/objects/account/filter', `{"query":{"filters":{"and":${deep(5000)}}}}`),
      neighbour.callTool({ name: 'execute_query', arguments: { slug: 'account', query: 'SELECT name FROM account ORDER BY name LIMIT 100' } }),
    ]);
    expect(mcp.status).toBe(400);
    const answer = (await mcp.json()) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
    expect(answer).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: the JSON nests deeper than 64 levels' } });
    expectEnvelope(rest, 400, 'VALIDATION_FAILED');
    expect((JSON.parse(toolText(mine).text).records as { name: string }[]).map((r) => r.name)).toEqual(A_NAMES);
  }, 120_000);
});
