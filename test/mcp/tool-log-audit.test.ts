import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { createServer, type OqlServer } from '../../src/server/app.js';
import { databaseOf } from '../../src/run/database-of.js';
import type { ServiceDb } from '../../src/service/types.js';
import { call } from '../server/support.js';
import { startPgDatabase } from '../support/pg-cluster.js';
import { type PgServer } from '../support/pg-server.js';
import { API_KEYS, KEYS, connect, seedAndListen, textOf } from './support.js';

/**
 * Every MCP tool call that runs is in the tool log, whatever its arguments: a NUL or a lone
 * surrogate (which jsonb refuses) is written as its escape, and arguments past the entry cap are
 * cut and marked; a listing page stops at its byte cap and the pointer goes on from there. On
 * embedded PGlite and on PostgreSQL, for two organizations, each seeing its own calls only.
 */

/** A surrogate without its other half. */
const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const ENTRY_BYTES = 2048;
const PAGE_BYTES = 8192;

interface Backend {
  readonly server: OqlServer;
  readonly baseUrl: string;
  readonly acme: Client;
  readonly globex: Client;
  close(): Promise<void>;
}

async function start(db: ServiceDb, closeDb: () => Promise<void>): Promise<Backend> {
  const server = await createServer({ db, apiKeys: API_KEYS, env: {}, maxToolLogEntryBytes: ENTRY_BYTES, maxToolLogPageBytes: PAGE_BYTES });
  const { baseUrl, mcpUrl } = await seedAndListen(server);
  const acme = await connect(`${mcpUrl}/acme/mcp`, KEYS.acmeAdmin);
  const globex = await connect(`${mcpUrl}/globex/mcp`, KEYS.globexAdmin);
  return {
    server, baseUrl, acme, globex,
    async close() {
      await acme.close();
      await globex.close();
      await server.close();
      await closeDb();
    },
  };
}

let pgServer: PgServer | undefined;
const backends: Record<string, Backend> = {};

beforeAll(async () => {
  const pglite = new PGlite();
  backends['PGlite'] = await start(databaseOf(pglite), () => pglite.close());
  pgServer = await startPgDatabase();
  const pool = new pg.Pool({ connectionString: pgServer.url, max: 6 });
  backends['PostgreSQL'] = await start(databaseOf(pool), () => pool.end());
}, 180_000);

afterAll(async () => {
  for (const b of Object.values(backends)) await b.close().catch(() => {});
  await pgServer?.stop();
});

/** Every entry of the organization's log, walking the pointers; and each page's bytes of input_params and responses. */
async function allLogs(b: Backend, key: string): Promise<{ logs: any[]; pageBytes: number[] }> {
  const logs: any[] = [];
  const pageBytes: number[] = [];
  let pointer: string | null = null;
  do {
    const answer = await call(b.baseUrl, 'POST', '/api/v1/org/tool/mcp/logs/list/', { key, body: { pointer } });
    expect(answer.status, answer.text.slice(0, 300)).toBe(200);
    const page = answer.json.data.logs as any[];
    expect(page.length).toBeGreaterThan(0);
    logs.push(...page);
    pageBytes.push(page.reduce((n, l) => n + Buffer.byteLength(JSON.stringify(l.input_params)) + Buffer.byteLength(l.response ?? ''), 0));
    pointer = answer.json.data.next;
  } while (pointer !== null);
  return { logs, pageBytes };
}

/** What jsonb refuses, written as its escape: the rule the log states, applied by hand. */
function escapedByHand(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const high = c >= 0xd800 && c <= 0xdbff;
    const low = c >= 0xdc00 && c <= 0xdfff;
    const next = s.charCodeAt(i + 1);
    const pairs = high && next >= 0xdc00 && next <= 0xdfff;
    if (pairs) {
      out += s[i]! + s[i + 1]!;
      i++;
    } else if (c === 0 || high || low) {
      out += `\\u${c.toString(16).padStart(4, '0')}`;
    } else {
      out += s[i]!;
    }
  }
  return out;
}

describe.each(['PGlite', 'PostgreSQL'])('the tool log on %s', (name) => {
  it('logs calls whose arguments hold a NUL or a lone surrogate, escaped, in the caller\'s organization only', async () => {
    const b = backends[name]!;
    const payloads = [
      { client: b.acme, key: KEYS.acmeAdmin, org: 'acme', query: "SELECT id, name FROM account WHERE name <> 'x\u0000y' ORDER BY id LIMIT 10" },
      { client: b.acme, key: KEYS.acmeAdmin, org: 'acme', query: "SELECT id, name FROM account WHERE name <> 'x\ud800y' ORDER BY id LIMIT 10" },
      { client: b.globex, key: KEYS.globexAdmin, org: 'globex', query: "SELECT id, name FROM account WHERE name <> '\udc00\ud83d\ude00' ORDER BY id LIMIT 10" },
      { client: b.globex, key: KEYS.globexAdmin, org: 'globex', query: 'SELECT id, name FROM account ORDER BY id LIMIT 10 \u0000' },
    ];
    for (const p of payloads) {
      const result = await p.client.callTool({ name: 'execute_query', arguments: { slug: 'account', query: p.query } });
      expect(textOf(result).length).toBeGreaterThan(0);
    }
    // A filter body with them in a key and a value.
    await b.acme.callTool({ name: 'filter_records', arguments: { slug: 'account', query: { 'na\u0000me': 'a\udfffb' } } });

    const acme = (await allLogs(b, KEYS.acmeAdmin)).logs;
    const globex = (await allLogs(b, KEYS.globexAdmin)).logs;
    for (const p of payloads) {
      const mine = p.org === 'acme' ? acme : globex;
      const other = p.org === 'acme' ? globex : acme;
      const want = escapedByHand(p.query);
      expect(mine.filter((l) => l.input_params.query === want)).toHaveLength(1);
      expect(other.filter((l) => l.input_params.query === want)).toHaveLength(0);
      expect(mine.some((l) => typeof l.input_params.query === 'string' && LONE.test(l.input_params.query))).toBe(false);
      expect(mine.some((l) => typeof l.input_params.query === 'string' && l.input_params.query.includes('\u0000'))).toBe(false);
    }
    const filter = acme.find((l) => l.tool_name === 'filter_records');
    expect(filter?.input_params.query).toEqual({ [escapedByHand('na\u0000me')]: escapedByHand('a\udfffb') });
    expect(filter?.truncated).toBe(false);
  });

  it('logs what each call answered, as its client received it, cut and marked past the entry cap', async () => {
    const b = backends[name]!;
    const short = 'SELECT id, name FROM account ORDER BY id LIMIT 2';
    const wrong = 'SELECT id, nme FROM account LIMIT 2';
    const answers = new Map<string, string>();
    answers.set(short, textOf(await b.acme.callTool({ name: 'execute_query', arguments: { slug: 'account', query: short } })));
    // A long answer: an object's every field, described.
    const long = 'describe_object';
    answers.set(long, textOf(await b.acme.callTool({ name: 'describe_object', arguments: { slug: 'opportunity' } })));
    const refused = await b.acme.callTool({ name: 'execute_query', arguments: { slug: 'account', query: wrong } });
    expect(refused.isError).toBe(true);
    answers.set(wrong, textOf(refused));
    expect(Buffer.byteLength(answers.get(long)!)).toBeGreaterThan(ENTRY_BYTES);

    const acme = (await allLogs(b, KEYS.acmeAdmin)).logs;
    const entry = (query: string) => {
      const found = acme.filter((l) => (query === long ? l.tool_name === long : l.input_params.query === query));
      expect(found, query).toHaveLength(1);
      return found[0]!;
    };
    expect([entry(short).response, entry(short).response_truncated]).toEqual([answers.get(short), false]);
    expect([entry(wrong).response, entry(wrong).response_truncated, entry(wrong).response_code]).toEqual([answers.get(wrong), false, 400]);
    const cut = entry(long);
    expect(cut.response_truncated).toBe(true);
    expect(answers.get(long)!.startsWith(cut.response)).toBe(true);
    expect(Buffer.byteLength(cut.response)).toBeLessThanOrEqual(ENTRY_BYTES);
    // Cut at the cap, not far before it: at most one character's bytes are left over.
    expect(Buffer.byteLength(cut.response)).toBeGreaterThan(ENTRY_BYTES - 4);
    // The other organization's log holds none of these answers.
    const globex = (await allLogs(b, KEYS.globexAdmin)).logs;
    for (const text of answers.values()) expect(globex.some((l) => l.response === text)).toBe(false);
    expect(globex.some((l) => typeof l.input_params.query === 'string' && [short, wrong].includes(l.input_params.query))).toBe(false);
  });

  it('cuts arguments past the entry cap, marks the entry, and pages the listing by its bytes', async () => {
    const b = backends[name]!;
    const long = `SELECT id FROM account WHERE name <> '${'é'.repeat(4000)}' LIMIT 5`;
    for (let i = 0; i < 6; i++) await b.globex.callTool({ name: 'execute_query', arguments: { slug: 'account', query: `${long} -- ${i}` } });
    await b.globex.callTool({ name: 'list_objects', arguments: {} });
    const { logs, pageBytes } = await allLogs(b, KEYS.globexAdmin);
    const cut = logs.filter((l) => l.truncated);
    expect(cut).toHaveLength(6);
    for (const l of cut) {
      expect(Buffer.byteLength(JSON.stringify(l.input_params))).toBeLessThanOrEqual(ENTRY_BYTES);
      // The slug is kept whole; the query is the beginning of what was sent.
      expect(l.input_params.slug).toBe('account');
      expect(long.startsWith(l.input_params.query)).toBe(true);
      expect(l.input_params.query.length).toBeGreaterThan(ENTRY_BYTES / 4);
    }
    expect(logs.find((l) => l.tool_name === 'list_objects')?.truncated).toBe(false);
    // Pages end at the page's bytes (a page's first entry always goes), and none is lost or repeated.
    expect(pageBytes.length).toBeGreaterThan(1);
    for (const bytes of pageBytes) expect(bytes).toBeLessThanOrEqual(PAGE_BYTES);
    expect(new Set(logs.map((l) => l.id)).size).toBe(logs.length);
    const timestamps = logs.map((l) => l.tool_call_timestamp);
    expect(timestamps).toEqual([...timestamps].sort((x, y) => y - x));
    // Acme's listing holds none of them.
    expect((await allLogs(b, KEYS.acmeAdmin)).logs.some((l) => JSON.stringify(l.input_params).includes('é'))).toBe(false);
  });
});
