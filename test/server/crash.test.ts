import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, describe, expect, it } from 'vitest';
import { call, type Answer } from './support.js';
import { BUILT_CLI } from '../support/built-bundles.js';
import { NODE_FLAGS } from '../support/node-flags.js';

/**
 * Crash safety of bulk_create: `oql serve` runs as a child process on an embedded data directory;
 * a large bulk_create is sent and the process is killed with SIGKILL at several delays after the
 * server has received the request; on restart over the same directory the server starts cleanly
 * and the batch is either wholly there or wholly absent (read back through the filter endpoint).
 * A batch whose 200 answer arrived before the kill must be there.
 *
 * The server is the built CLI (dist/cli.js), as `npm start` runs it; the global setup builds it.
 */

const KEY = 'crash-test-key-org-acme-superadmin';
const OTHER_KEY = 'crash-test-key-org-globex-superadm';
const BATCH = 3000;
/**
 * When to kill, as fractions of the time a whole batch takes on this machine from the moment the
 * server logs its arrival (measured on a first batch), so the kills land while the body is read,
 * while records are checked and while they are written, however fast the machine is.
 */
const KILL_AT = [0, 0.4, 0.7, 0.9];
const dir = mkdtempSync(join(tmpdir(), 'oql-crash-'));
const children = new Set<ChildProcess>();

afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface Served {
  readonly child: ChildProcess;
  readonly url: string;
  readonly exited: Promise<void>;
  /** Resolves when the server logs that a request to this route arrived. */
  received(route: string): Promise<void>;
}

async function serve(): Promise<Served> {
  const child = spawn(process.execPath, [...NODE_FLAGS, BUILT_CLI, 'serve', '--data-dir', dir, '--port', '0'], {
    cwd: process.cwd(),
    env: {
      ...process.env,
      OQL_LOG_LEVEL: 'debug',
      OQL_API_KEYS: `${KEY}=org_acme:superadmin:u_acme,${OTHER_KEY}=org_globex:superadmin:u_globex`,
      OQL_MAX_BULK_RECORDS: String(BATCH),
      OQL_BODY_LIMIT: String(20 * 1024 * 1024),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  let partial = '';
  const watchers: { route: string; resolve: () => void }[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      out += text;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
      // Whole lines only: a log line of a request that arrived after the watcher was set.
      const lines = (partial + text).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (!line.includes('"msg":"request received"')) continue;
        for (const w of [...watchers]) {
          if (line.includes(`"route":"${w.route}"`)) {
            watchers.splice(watchers.indexOf(w), 1);
            w.resolve();
          }
        }
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => void (out += chunk.toString('utf8')));
    child.once('exit', (code, signal) => reject(new Error(`oql serve exited (${code ?? signal}) before listening:\n${out.slice(-3000)}`)));
  });
  return {
    child,
    url: await within(180_000, 'oql serve start-up', url),
    exited,
    received: (route) => new Promise<void>((resolve) => watchers.push({ route, resolve })),
  };
}

/** Fails with the step's name instead of hanging until the test's own timeout. */
function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: no result after ${ms} ms`)), ms); });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

const step = (m: string) => process.stderr.write(`[crash ${new Date().toISOString().slice(11, 19)}] ${m}\n`);

async function kill(s: Served): Promise<void> {
  if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
  await s.exited;
}

/** The external ids of org_acme's accounts whose external_id starts with the prefix, through the filter endpoint. */
async function externalIds(url: string, prefix: string, key = KEY): Promise<string[]> {
  const found: string[] = [];
  for (let page = 1; ; page++) {
    const a = await call(url, 'POST', '/api/v1/org/objects/account/filter', {
      key,
      body: { query: { fields: ['id', 'name', 'external_id'], filters: { and: [{ field: 'external_id', operator: 'starts_with', value: prefix }] }, sort: [{ field: 'external_id', direction: 'asc' }], pagination: { page, page_size: 1000 } } },
    });
    expect(a.status, a.text.slice(0, 300)).toBe(200);
    const records = a.json.data.records as { name: string; external_id: string }[];
    for (const r of records) {
      // Each record whole: the name written with it.
      expect(r.name).toBe(`Crash ${r.external_id}`);
      found.push(r.external_id);
    }
    if (records.length < 1000) return found;
  }
}

const batch = (tag: string) => Array.from({ length: BATCH }, (_, i) => {
  const externalId = `${tag}-${String(i).padStart(5, '0')}`;
  return { name: `Crash ${externalId}`, external_id: externalId, city: `City ${i % 97}`, annual_revenue: 1000 + i };
});

describe('SIGKILL during a bulk_create', () => {
  it('leaves the batch wholly there or wholly absent, at every kill delay, and the server starts again cleanly', async () => {
    const outcomes: { delay: number; answered: boolean; count: number }[] = [];
    let s = await serve();
    step('started');
    // A batch that completes: proves the write path and the read-back before any kill, and times it.
    const doneArrived = s.received('/api/v1/org/objects/:slug/record/bulk_create').then(() => performance.now());
    const done = await within(180_000, 'the first bulk_create', call(s.url, 'POST', '/api/v1/org/objects/account/record/bulk_create', { key: KEY, body: batch('done') }));
    const batchMs = performance.now() - (await doneArrived);
    step(`first batch: ${done.status} in ${Math.round(batchMs)} ms after it arrived`);
    expect(done.status, done.text.slice(0, 300)).toBe(200);
    const expectedDone = batch('done').map((r) => r.external_id).sort();
    expect(await externalIds(s.url, 'done-')).toEqual(expectedDone);

    for (const fraction of KILL_AT) {
      const delay = Math.round(fraction * batchMs);
      const tag = `k${Math.round(fraction * 100)}`;
      const arrived = s.received('/api/v1/org/objects/:slug/record/bulk_create');
      let answer: Answer | undefined;
      const request = call(s.url, 'POST', '/api/v1/org/objects/account/record/bulk_create', { key: KEY, body: batch(tag) })
        .then((a) => { answer = a; }, () => { answer = undefined; });
      await within(60_000, 'the request log line of bulk_create', arrived);
      await new Promise((r) => setTimeout(r, delay));
      await kill(s);
      await request;
      step(`killed ${delay} ms after the request arrived; answered: ${answer?.status ?? 'no'}`);

      s = await serve();
      step('restarted');
      const health = await call(s.url, 'GET', '/health');
      expect(health.status).toBe(200);
      const ids = await externalIds(s.url, `${tag}-`);
      const answered = answer?.status === 200;
      outcomes.push({ delay, answered, count: ids.length });
      step(`after the restart: ${ids.length} of ${BATCH} records of the batch`);
      if (answered || ids.length > 0) expect(ids).toEqual(batch(tag).map((r) => r.external_id).sort());
      else expect(ids).toEqual([]);
      // What was committed before any kill survives every restart.
      expect(await externalIds(s.url, 'done-')).toEqual(expectedDone);
      // The other organization sees none of it.
      expect(await externalIds(s.url, `${tag}-`, OTHER_KEY)).toEqual([]);
      expect(await externalIds(s.url, 'done-', OTHER_KEY)).toEqual([]);
    }
    await kill(s);
    // At least one kill landed while the request was in flight (no answer came back).
    expect(outcomes.some((o) => !o.answered), JSON.stringify(outcomes)).toBe(true);
  }, 900_000);
});
