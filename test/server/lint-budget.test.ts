import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseOf, type ServiceDb } from '../../src/server/index.js';
import { API_KEYS_ENV, KEYS, expectEnvelope, listen, type Running } from './support.js';

/**
 * One member's 80 KB report of 16,000 unknown functions (under the 100,000-character cap) held
 * the event loop for 19 to 34 s on lint, execute and count, and every organization's requests
 * with it. Now the select-list cap stops the checks at the 200th item, and past the compile
 * budget (OQL_MAX_COMPILE_MS) a text is refused whatever made it slow: both answers are
 * asserted here by what they say and how much, not by how long they took, with a second
 * organization served beside them.
 */

let pglite: PGlite;
let db: ServiceDb;
/** The default settings. */
let api: Running;
/** The same service with a compile budget of 1 ms, so that a large text runs out of it. */
let tight: Running;

beforeAll(async () => {
  pglite = await PGlite.create();
  db = databaseOf(pglite);
  api = await listen({ db, env: {}, apiKeys: API_KEYS_ENV });
  tight = await listen({ db, env: {}, apiKeys: API_KEYS_ENV, maxCompileMs: 1 });
}, 240_000);

afterAll(async () => {
  await tight?.close();
  await api?.close();
  await pglite?.close();
});

const PAYLOAD = `SELECT ${Array(16_000).fill('f(1)').join(', ')} FROM account LIMIT 10`;
/** 5,000 conditions in 90 KB: every check of every one has to run. */
const LARGE = `SELECT id FROM account WHERE ${Array.from({ length: 5_000 }, (_, i) => `name = 'a${i}'`).join(' OR ')} ORDER BY id LIMIT 10`;
const SMALL = 'SELECT id, name FROM account ORDER BY id LIMIT 5';

const codes = (answer: { json: any }): string[] => answer.json.data.diagnostics.map((d: { code: string }) => d.code);

describe('the 80 KB report of 16,000 unknown functions', () => {
  it('lint answers the cap once and the first 200 items, while another organization is served', async () => {
    expect(PAYLOAD.length).toBeGreaterThan(80_000);
    const [linted, health, report] = await Promise.all([
      api.call('POST', '/api/v1/reports/lint', { key: KEYS.acmeMember, body: { query: PAYLOAD } }),
      api.call('GET', '/health', { key: KEYS.globexAdmin }),
      api.call('POST', '/api/v1/reports/execute', { key: KEYS.globexAdmin, body: { query: SMALL, slug: 'account' } }),
    ]);
    expect(linted.status, linted.text.slice(0, 300)).toBe(200);
    const found = codes(linted);
    expect(found.filter((c) => c === 'TOO_MANY_SELECT_ITEMS')).toHaveLength(1);
    // Each of the first 200 items is an unknown function without an alias; nothing past them (it was 32,001).
    expect(found.filter((c) => c === 'UNKNOWN_FUNCTION')).toHaveLength(200);
    expect(found.filter((c) => c === 'MISSING_ALIAS')).toHaveLength(200);
    expect(found).toHaveLength(401);
    expect(health.status).toBe(200);
    expect(report.status, report.text).toBe(200);
    expect(report.json.data.records).toEqual([]);
  });

  it('execute and count refuse it with the same bounded diagnostics, for each organization alike', async () => {
    for (const key of [KEYS.acmeMember, KEYS.globexAdmin]) {
      for (const path of ['/api/v1/reports/execute', '/api/v1/reports/count']) {
        const answer = await api.call('POST', path, { key, body: { query: PAYLOAD, slug: 'account' } });
        // The first error in the text is the first item's unknown function; the cap is among them, once.
        expectEnvelope(answer, 400, 'UNKNOWN_FUNCTION');
        const found = codes(answer);
        expect(found.filter((c) => c === 'TOO_MANY_SELECT_ITEMS')).toHaveLength(1);
        expect(found).toHaveLength(401);
      }
    }
  });
});

describe('past the compile budget', () => {
  it('lint, execute and count stop with COMPILE_BUDGET_EXCEEDED, while another organization is served', async () => {
    const [linted, executed, counted, health, small] = await Promise.all([
      tight.call('POST', '/api/v1/reports/lint', { key: KEYS.acmeMember, body: { query: LARGE } }),
      tight.call('POST', '/api/v1/reports/execute', { key: KEYS.acmeMember, body: { query: LARGE, slug: 'account' } }),
      tight.call('POST', '/api/v1/reports/count', { key: KEYS.acmeMember, body: { query: LARGE, slug: 'account' } }),
      tight.call('GET', '/health', { key: KEYS.globexAdmin }),
      api.call('POST', '/api/v1/reports/lint', { key: KEYS.globexAdmin, body: { query: LARGE } }),
    ]);
    expect(linted.status).toBe(200);
    expect(codes(linted)[0]).toBe('COMPILE_BUDGET_EXCEEDED');
    expect(linted.json.data.error_count).toBeGreaterThanOrEqual(1);
    expectEnvelope(executed, 400, 'COMPILE_BUDGET_EXCEEDED');
    expectEnvelope(counted, 400, 'COMPILE_BUDGET_EXCEEDED');
    expect(executed.json.data.message).toContain('1 ms');
    expect(health.status).toBe(200);
    // Within the default budget the same text is checked to the end.
    expect(small.status).toBe(200);
    expect(codes(small)).not.toContain('COMPILE_BUDGET_EXCEEDED');
  });
});
