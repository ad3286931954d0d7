import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type OqlServer } from '../../src/server/index.js';
import { startPgDatabase } from '../support/pg-cluster.js';
import { pgServerAvailable, type PgServer } from '../support/pg-server.js';
import { API_KEYS_ENV, KEYS, call } from './support.js';

/**
 * Text is stored and read back byte for byte on both databases: a value that starts with U+FEFF
 * (a byte-order mark) keeps it through a write and every read path, for two organizations. The
 * embedded database used to drop it on the way out (PGlite's TextDecoder), PostgreSQL never did.
 */

const BOM = '\uFEFF';
const ORGS = [[KEYS.acmeAdmin, 'org_acme'], [KEYS.globexAdmin, 'org_globex']] as const;

interface Host {
  readonly server: OqlServer;
  readonly url: string;
  close(): Promise<void>;
}

async function start(options: Parameters<typeof createServer>[0]): Promise<Host> {
  const server = await createServer({ apiKeys: API_KEYS_ENV, env: {}, log: false, ...options });
  await server.app.listen({ port: 0, host: '127.0.0.1' });
  return { server, url: `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`, close: () => server.close() };
}

const DATABASES: readonly (readonly [string, () => Promise<Host>])[] = [
  ['the embedded database', () => start({ memory: true })],
  ['PostgreSQL 15', async () => {
    expect(pgServerAvailable(), 'PostgreSQL 15 server binaries are required (apt-get install postgresql-15)').toBe(true);
    const pg: PgServer = await startPgDatabase();
    try {
      const host = await start({ database: pg.url });
      return { ...host, close: async () => { try { await host.close(); } finally { await pg.stop(); } } };
    } catch (e) {
      await pg.stop();
      throw e;
    }
  }],
];

describe.each(DATABASES)('on %s', (_name, open) => {
  let host: Host;
  beforeAll(async () => {
    host = await open();
  }, 240_000);
  afterAll(async () => {
    await host?.close();
  });

  it('reads back a text that starts with U+FEFF exactly as written, each organization its own', async () => {
    const written = new Map<string, { id: string; name: string; company: string }>();
    for (const [key, org] of ORGS) {
      const name = `${BOM}Bom ${org}`;
      const company = `${BOM}${BOM}Twice${BOM}`;
      const created = await call(host.url, 'POST', '/api/v1/org/objects/lead/record/bulk_create', { key, body: [{ name, company }] });
      expect(created.status, created.text).toBe(200);
      // Found by its first character, the mark itself: the filter reads it back as well.
      const filtered = await call(host.url, 'POST', '/api/v1/org/objects/lead/filter', {
        key, body: { query: { fields: ['id', 'name', 'company'], filters: { and: [{ field: 'name', operator: 'starts_with', value: `${BOM}Bom` }] } } },
      });
      expect(filtered.status, filtered.text).toBe(200);
      expect(filtered.json.data.records.map((r: { name: string; company: string }) => [r.name, r.company])).toEqual([[name, company]]);
      written.set(org, { id: filtered.json.data.records[0].id as string, name, company });
    }
    for (const [key, org] of ORGS) {
      const mine = written.get(org)!;
      const one = await call(host.url, 'GET', `/api/v1/org/objects/lead/record/${mine.id}`, { key });
      expect(one.status, one.text).toBe(200);
      expect([one.json.data.name, one.json.data.company]).toEqual([mine.name, mine.company]);
      const other = ORGS.find(([, o]) => o !== org)![0];
      expect((await call(host.url, 'GET', `/api/v1/org/objects/lead/record/${mine.id}`, { key: other })).status).toBe(400);

      const report = await call(host.url, 'POST', '/api/v1/reports/execute', {
        key, body: { slug: 'lead', query: `SELECT name, left(name, 1) AS first FROM lead WHERE id = '${mine.id}' LIMIT 1` },
      });
      expect(report.status, report.text).toBe(200);
      expect(report.json.data.records).toEqual([{ name: mine.name, first: BOM }]);

      // The bytes of the answer carry the mark: EF BB BF right after the opening quote.
      const raw = Buffer.from(one.text, 'utf8');
      expect(raw.includes(Buffer.from(`"name":"${BOM}Bom ${org}"`, 'utf8'))).toBe(true);
    }
  });
});
