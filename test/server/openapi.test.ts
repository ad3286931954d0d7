import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseOf } from '../../src/server/index.js';
import { DOCUMENT_FILE, documentText } from '../../scripts/openapi.js';
import { DocumentCheck, operationsOf, type OpenApiDocument } from '../support/openapi.js';
import { API_KEYS_ENV, listen, type Running } from './support.js';
import { emptyPglite } from '../support/pglite-template.js';

/**
 * The OpenAPI document a live server serves: clean under Redocly's recommended rules, the same as
 * the committed docs/openapi.json (and the generated client types the same as
 * test/support/openapi-types.ts), and complete for every operation.
 */

const repo = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const run = promisify(execFile);
// No update checks, no usage reports: tests reach only loopback.
const QUIET = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' };

let pglite: PGlite;
let api: Running;
let served: OpenApiDocument;
let dir: string;

beforeAll(async () => {
  pglite = await emptyPglite();
  api = await listen({ db: databaseOf(pglite), apiKeys: API_KEYS_ENV, env: {} });
  const res = await fetch(`${api.url}/openapi.json`);
  expect(res.status).toBe(200);
  served = (await res.json()) as OpenApiDocument;
  dir = await mkdtemp(join(tmpdir(), 'oql-openapi-'));
}, 300_000);

afterAll(async () => {
  await api?.close();
  await pglite?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the served OpenAPI document', () => {
  it("has 0 errors and 0 warnings under Redocly's recommended rules", async () => {
    const file = join(dir, 'served.json');
    await writeFile(file, JSON.stringify(served));
    // In a directory without redocly.yaml: the recommended rules as Redocly ships them, none off.
    const { stdout } = await run(process.execPath, [repo('node_modules/@redocly/cli/bin/cli.js'), 'lint', '--extends', 'recommended', '--format', 'json', file], { cwd: dir, env: QUIET, timeout: 120_000 })
      .catch((e: { stdout?: string; stderr?: string }) => ({ stdout: e.stdout ?? '', stderr: e.stderr ?? '' }));
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number; ignored: number }; problems: { ruleId: string; message: string; location: { pointer: string }[] }[] };
    const problems = report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
  }, 150_000);

  it('names the server it was fetched from, and is committed as docs/openapi.json with the server /', async () => {
    expect(served['servers']).toEqual([{ url: api.url, description: 'this server' }]);
    const committed = await readFile(DOCUMENT_FILE, 'utf8');
    const relative = { ...served, servers: (JSON.parse(committed) as OpenApiDocument)['servers'] };
    expect(relative['servers']).toEqual([{ url: '/', description: expect.any(String) }]);
    // On failure: npm run openapi, and commit what it writes.
    expect(committed).toBe(documentText(relative));
  });

  it('gives test/support/openapi-types.ts when openapi-typescript reads it, as docs/rest.md says', async () => {
    await writeFile(join(dir, 'openapi.json'), await readFile(DOCUMENT_FILE, 'utf8'));
    await run(process.execPath, [repo('node_modules/openapi-typescript/bin/cli.js'), 'openapi.json', '-o', 'oql-api.ts'], { cwd: dir, env: QUIET, timeout: 120_000 });
    // On failure: npm run openapi, and commit what it writes.
    expect(await readFile(repo('test/support/openapi-types.ts'), 'utf8')).toBe(await readFile(join(dir, 'oql-api.ts'), 'utf8'));
  }, 150_000);

  it('gives every operation a unique operationId, a summary, declared tags and the API-key scheme (the tool-log listing OAuth as well)', () => {
    const tags = new Map((served['tags'] as { name: string; description: string }[]).map((t) => [t.name, t.description]));
    const ids = new Set<string>();
    for (const [method, path, op] of operationsOf(served)) {
      const name = `${method.toUpperCase()} ${path}`;
      expect(op.operationId, name).toMatch(/^[a-z][A-Za-z]+$/);
      expect(ids.has(op.operationId!), `${name}: operationId ${op.operationId} twice`).toBe(false);
      ids.add(op.operationId!);
      expect(op.summary, name).toBeTruthy();
      for (const tag of op.tags ?? []) expect(tags.get(tag), `${name}: tag ${tag}`).toBeTruthy();
      expect(op.tags?.length, name).toBe(1);
      expect(path, name).not.toMatch(/.\/$/);
    }
    // Records, filter, objects, reports, connectors and tool logs' 15, the API keys' 4, lint, the record lifecycle's 3, the change log's 3 and webhooks' 10.
    expect(ids.size).toBe(36);
    for (const id of ['listKeys', 'createKey', 'rollKey', 'revokeKey', 'lintReport', 'deleteRecord', 'bulkDeleteRecords', 'restoreRecord', 'listChanges', 'changesHead', 'streamChanges']) expect(ids.has(id), id).toBe(true);
    expect(served['security']).toEqual([{ apiKey: [] }]);
    expect(served.paths['/api/v1/org/tool/mcp/logs/list']!['post']!.security).toEqual([{ apiKey: [] }, { oauthToken: [] }, { consoleSession: [], consoleCsrf: [] }]);
    expect(served.paths['/api/v1/keys']!['get']!.security).toEqual([{ apiKey: [] }, { consoleSession: [] }]);
    expect((served['info'] as { license: unknown }).license).toEqual({ name: 'MIT', identifier: 'MIT' });
  });

  it('documents for every operation its success envelope, the errors of every route in the error envelope, and Retry-After on 429 and 503', () => {
    // Operations that make something answer 201 Created; every other success is 200.
    const creates = ['createKey', 'rollKey', 'createWebhook'];
    for (const [method, path, op] of operationsOf(served)) {
      const name = `${method.toUpperCase()} ${path}`;
      const statuses = Object.keys(op.responses);
      const success = creates.includes(op.operationId!) ? '201' : '200';
      expect(statuses.filter((s) => s.startsWith('2')), name).toEqual([success]);
      const stream = op.responses[success]!.content!['text/event-stream'];
      if (stream !== undefined) {
        // A stream of Server-Sent Events, whose events are changes; the test reading it holds them to the Change schema.
        expect(Object.keys(op.responses[success]!.content!), name).toEqual(['text/event-stream']);
        expect(stream.example, `${name}: example`).toMatch(/^id: .+\nevent: record\.\w+\ndata: \{/);
      } else {
        const ok = op.responses[success]!.content!['application/json']!;
        expect(ok.schema, name).toMatchObject({ required: ['success', 'data'], properties: { success: { const: true } } });
        expect(ok.example, `${name}: example`).toBeDefined();
      }
      // What any authenticated route can answer, whatever it does; one that reads the database
      // within the user's budget also times out and refuses beyond the budget.
      for (const s of ['401', '500', '503']) expect(statuses, name).toContain(s);
      if (statuses.includes('504')) expect(statuses, name).toContain('429');
      // A route that takes anything (path parameters, a body, or a POST whose body the parser reads) can be sent it wrong.
      if (op['parameters'] !== undefined || op.requestBody || method === 'post') expect(statuses, `${name} takes input`).toContain('400');
      if (op.requestBody) for (const s of ['413', '415']) expect(statuses, `${name} has a body`).toContain(s);
      for (const status of statuses.filter((s) => s !== success)) {
        const media = op.responses[status]!.content!['application/json']!;
        expect(media.schema, `${name} ${status}`).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
        expect(Object.keys(media.examples ?? {}).length, `${name} ${status}: examples`).toBeGreaterThan(0);
        const retryAfter = Object.keys(op.responses[status]!.headers ?? {});
        expect(retryAfter, `${name} ${status}`).toEqual(status === '429' || status === '503' ? ['Retry-After'] : []);
      }
    }
  });

  it('holds examples that match their own schemas, and an error example of the status it is listed under', () => {
    const check = new DocumentCheck(served);
    const examples = served.components!.examples!;
    for (const [method, path, op] of operationsOf(served)) {
      for (const [status, response] of Object.entries(op.responses)) {
        const media = response.content!['application/json'];
        // An event stream's example is its wire text, checked by the test of the success answers above.
        if (media === undefined && response.content!['text/event-stream'] !== undefined) continue;
        if (media === undefined) throw new Error(`${method} ${path} ${status}: no JSON answer`);
        const values = media.example !== undefined ? [media.example]
          : Object.values(media.examples ?? {}).map((e) => (e.$ref ? examples[e.$ref.replace('#/components/examples/', '')]!.value : e.value));
        for (const value of values) {
          expect(check.matches(method, path, status, value), `${method} ${path} ${status}: ${JSON.stringify(value).slice(0, 200)}`).toBeNull();
          if (!status.startsWith('2')) expect((value as { data: { status_code: number } }).data.status_code).toBe(Number(status));
        }
      }
    }
  });
});
