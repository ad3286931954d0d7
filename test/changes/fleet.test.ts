import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type OqlServer } from '../../src/server/app.js';
import { startFleetDatabases, type FleetDatabases } from '../support/fleet.js';
import { serve, type Served } from '../support/oql-serve.js';
import { call, type Answer } from '../server/support.js';
import { Receiver } from '../webhooks/support.js';

/**
 * The change log across a fleet (docs/fleet.md): PostgreSQL 15, PgBouncer in transaction mode, and
 * two `oql serve` processes. A reader waiting on one instance learns of a commit through the other
 * only by the watcher's poll of the log's heads (LISTEN/NOTIFY does not pass PgBouncer in
 * transaction mode), so these tests write through one instance and wait on the other. Last, a
 * webhook delivery cut by a SIGKILL of the instance making it is made again by another one.
 */

const KEYS = {
  acme1: 'fleet-changes-acme-admin-00001',
  acme2: 'fleet-changes-acme-admin-00002',
  acme3: 'fleet-changes-acme-admin-00003',
  globex: 'fleet-changes-globex-admin-0004',
} as const;
const API_KEYS = [
  `${KEYS.acme1}=org_acme:admin:u_acme_1`,
  `${KEYS.acme2}=org_acme:admin:u_acme_2`,
  `${KEYS.acme3}=org_acme:admin:u_acme_3`,
  `${KEYS.globex}=org_globex:admin:u_globex_1`,
].join(',');
// Behind PgBouncer in transaction mode, without named statements (docs/fleet.md).
const ENV = { OQL_API_KEYS: API_KEYS, OQL_PREPARED_STATEMENTS: '0' };
/** Long enough that only a commit, never the wait running out, can answer within a test's time. */
const WAIT_SECONDS = 25;

let fleet: FleetDatabases;
/** Webhooks to the loopback receivers of these tests (the development flag), nowhere else. */
const FLAGS = () => ['--database', fleet.primaryUrl, '--webhook-allow-private'];
let admin: pg.Pool;
let one: Served;
let two: Served;

beforeAll(async () => {
  fleet = await startFleetDatabases({ poolSize: 25 });
  admin = new pg.Pool({ connectionString: fleet.primary.url, max: 3 });
  [one, two] = await Promise.all([serve(FLAGS(), ENV), serve(FLAGS(), ENV)]);
}, 300_000);

afterAll(async () => {
  await Promise.allSettled([one?.stop(), two?.stop()]);
  await admin?.end();
  await fleet?.stop();
});

async function head(on: string, key: string): Promise<string> {
  const a = await call(on, 'GET', '/api/v1/changes/head', { key });
  expect(a.status, a.text).toBe(200);
  return a.json.data.cursor as string;
}

function longPoll(on: string, key: string, after: string): Promise<{ answer: Answer; at: number }> {
  return call(on, 'GET', `/api/v1/changes?after=${after}&wait=${WAIT_SECONDS}`, { key }).then((answer) => ({ answer, at: Date.now() }));
}

function create(on: string, key: string, records: object[]): Promise<Answer> {
  return call(on, 'POST', '/api/v1/org/objects/account/record/bulk_create', { key, body: records });
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Where the primary's statement log ends now. */
function logEnd(): number {
  return statSync(fleet.primary.logFile).size;
}

/**
 * Resolves once the primary's log shows, after `from`, a poll of the log's heads naming every one of
 * `orgs`. An instance polls only while readers wait on it, and only the organizations they wait
 * for, so from then on a reader of each of them is waiting.
 */
async function headsPolled(from: number, orgs: readonly string[]): Promise<void> {
  await until(`a poll of the heads of ${orgs.join(', ')}`, () => {
    const lines = readFileSync(fleet.primary.logFile).subarray(from).toString('utf8').split('\n');
    return lines.some((line, i) => line.includes('FROM unnest($1::text[]) AS o')
      && orgs.every((org) => new RegExp(`DETAIL: {2}parameters: \\$1 = '\\{[^}]*\\b${org}\\b`).test(lines[i + 1] ?? '')));
  });
}

const measured: number[] = [];

describe('a long-poll across two instances behind PgBouncer in transaction mode', () => {
  it('wakes on instance 1 with a change written through instance 2, long before its wait runs out', async () => {
    for (let round = 0; round < 5; round++) {
      const after = await head(one.url, KEYS.acme1);
      const from = logEnd();
      const started = Date.now();
      const polled = longPoll(one.url, KEYS.acme1, after);
      await headsPolled(from, ['org_acme']);
      const written = await create(two.url, KEYS.acme1, [{ name: `Fleet Wake ${round}`, external_id: `wake-${round}` }]);
      expect(written.status, written.text).toBe(200);
      const { answer, at } = await polled;
      expect(answer.status, answer.text).toBe(200);
      const changes = answer.json.data.changes;
      expect(changes.map((c: any) => [c.record_id, c.operation, c.record.name])).toEqual([[written.json.data.ids[0], 'created', `Fleet Wake ${round}`]]);
      expect(answer.json.data.next_cursor).toBe(changes[0].cursor);
      // Answered by the commit, not by the wait running out.
      expect(at - started).toBeLessThan((WAIT_SECONDS - 10) * 1000);
      measured.push(at - changes[0].committed_at);
    }
    const sorted = [...measured].sort((x, y) => x - y);
    console.info(`[changes/fleet] commit to answer across instances, ms (committed_at to the reader having it): ${measured.join(', ')}; median ${sorted[Math.floor(sorted.length / 2)]}`);
  }, 120_000);

  it("wakes one organization's reader with its own change only; the other's waits on and never sees it", async () => {
    const acmeAfter = await head(one.url, KEYS.acme1);
    const globexAfter = await head(one.url, KEYS.globex);
    const from = logEnd();
    const acmePoll = longPoll(one.url, KEYS.acme1, acmeAfter);
    let globexAnswered = false;
    const globexPoll = longPoll(one.url, KEYS.globex, globexAfter).finally(() => void (globexAnswered = true));
    await headsPolled(from, ['org_acme', 'org_globex']);

    const acmeWrite = await create(two.url, KEYS.acme1, [{ name: 'Only Acme', external_id: 'two-orgs-acme' }]);
    expect(acmeWrite.status, acmeWrite.text).toBe(200);
    const acme = await acmePoll;
    expect(acme.answer.json.data.changes.map((c: any) => c.record.name)).toEqual(['Only Acme']);
    expect(globexAnswered).toBe(false);

    const globexWrite = await create(two.url, KEYS.globex, [{ name: 'Only Globex', external_id: 'two-orgs-globex' }]);
    expect(globexWrite.status, globexWrite.text).toBe(200);
    const globex = await globexPoll;
    expect(globex.answer.json.data.changes.map((c: any) => [c.record_id, c.record.name, c.record.org_id])).toEqual([[globexWrite.json.data.ids[0], 'Only Globex', 'org_globex']]);
    // Neither feed, read on either instance, holds the other's change.
    for (const on of [one.url, two.url]) {
      const g = await call(on, 'GET', `/api/v1/changes?after=${globexAfter}&limit=1000`, { key: KEYS.globex });
      expect(g.json.data.changes.map((c: any) => c.record_id)).toEqual([globexWrite.json.data.ids[0]]);
      const a = await call(on, 'GET', `/api/v1/changes?after=${acmeAfter}&limit=1000`, { key: KEYS.acme1 });
      expect(a.json.data.changes.map((c: any) => c.record_id)).toEqual([acmeWrite.json.data.ids[0]]);
    }
  }, 120_000);
});

describe('the caps on waiting readers, on one instance', () => {
  let server: OqlServer;
  let url: string;

  beforeAll(async () => {
    // The per-user cap from the environment, the per-organization one from the options.
    server = await createServer({ database: fleet.primaryUrl, apiKeys: API_KEYS, env: { OQL_MAX_WAITING_PER_USER: '2' }, maxWaitingPerOrg: 3, preparedStatements: 0 });
    await server.app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  const waiting = (n: number) => until(`${n} readers waiting`, () => server.service.ops.feed.watcher.waiting === n);

  function expectRefused(answer: Answer, says: RegExp): void {
    expect(answer.status, answer.text).toBe(429);
    expect(answer.json).toMatchObject({ success: false, data: { error_code: 'TOO_MANY_WAITING' } });
    expect(answer.json.data.message).toMatch(says);
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
  }

  it('refuses a user its third long-poll and an organization its fourth with 429 TOO_MANY_WAITING and Retry-After, and no one else', async () => {
    expect(server.config.maxWaitingPerUser).toBe(2);
    const acmeAfter = await head(url, KEYS.acme1);
    const globexAfter = await head(url, KEYS.globex);
    const first = [longPoll(url, KEYS.acme1, acmeAfter), longPoll(url, KEYS.acme1, acmeAfter)];
    await waiting(2);
    expectRefused((await longPoll(url, KEYS.acme1, acmeAfter)).answer, /you already have 2 /);
    // A read that does not wait is not capped.
    expect((await call(url, 'GET', `/api/v1/changes?after=${acmeAfter}`, { key: KEYS.acme1 })).status).toBe(200);
    const second = longPoll(url, KEYS.acme2, acmeAfter);
    await waiting(3);
    expectRefused((await longPoll(url, KEYS.acme3, acmeAfter)).answer, /your organization already has 3 /);
    // Another organization has its own count.
    const globex = longPoll(url, KEYS.globex, globexAfter);
    await waiting(4);

    // A write of acme (here through the other instance of the fleet) answers acme's three readers and frees their slots.
    const written = await create(two.url, KEYS.acme1, [{ name: 'Capped Acme', external_id: 'caps-acme' }]);
    expect(written.status, written.text).toBe(200);
    for (const p of [...first, second]) {
      const { answer } = await p;
      expect(answer.status, answer.text).toBe(200);
      expect(answer.json.data.changes.map((c: any) => c.record_id)).toEqual([written.json.data.ids[0]]);
    }
    // The slots are free again: the user waits twice more, from the new cursor.
    await waiting(1);
    const next = (await first[0]!).answer.json.data.next_cursor as string;
    const again = [longPoll(url, KEYS.acme1, next), longPoll(url, KEYS.acme1, next)];
    await waiting(3);
    const later = await create(two.url, KEYS.acme1, [{ name: 'Capped Acme Again', external_id: 'caps-acme-2' }]);
    for (const p of again) expect((await p).answer.json.data.changes.map((c: any) => c.record_id)).toEqual([later.json.data.ids[0]]);
    const globexWrite = await create(one.url, KEYS.globex, [{ name: 'Capped Globex', external_id: 'caps-globex' }]);
    expect((await globex).answer.json.data.changes.map((c: any) => c.record_id)).toEqual([globexWrite.json.data.ids[0]]);
  }, 120_000);
});

describe('an instance killed with SIGKILL in the middle of writes', () => {
  it('loses no committed change: every record there has exactly one created change, and every change names a record there', async () => {
    const after = await head(one.url, KEYS.acme1);
    const batch = (tag: string, n: number) => Array.from({ length: n }, (_, i) => ({ name: `Kill ${tag} ${i}`, external_id: `kill-${tag}-${String(i).padStart(4, '0')}` }));
    const acknowledged = ['k1', 'k2'];
    for (const tag of acknowledged) expect((await create(two.url, KEYS.acme1, batch(tag, 500))).status).toBe(200);
    const inFlight = ['k3', 'k4', 'k5'];
    const arrived = two.received('/api/v1/org/objects/:slug/record/bulk_create');
    const pending = inFlight.map((tag) => create(two.url, KEYS.acme1, batch(tag, 1000)).then((r) => r.status, () => 0));
    await arrived;
    await two.stop('SIGKILL');
    const statuses = await Promise.all(pending);
    // PostgreSQL rolls back what the killed instance left open once PgBouncer drops its server
    // connection: wait until no other session holds a transaction that wrote.
    await until('the killed instance\'s transactions to end', async () => Number((await admin.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()')).rows[0]!.n) === 0);

    // The reader's view: every change after the cursor, through the surviving instance.
    const changes: any[] = [];
    let cursor = after;
    for (;;) {
      const a = await call(one.url, 'GET', `/api/v1/changes?after=${cursor}&limit=1000&objects=account`, { key: KEYS.acme1 });
      expect(a.status, a.text).toBe(200);
      changes.push(...a.json.data.changes);
      cursor = a.json.data.next_cursor;
      if (!a.json.data.has_more) break;
    }
    const { rows } = await admin.query<{ id: string; external_id: string }>(
      "SELECT id, external_id FROM public.account WHERE org_id = 'org_acme' AND external_id LIKE 'kill-%'");
    const present = new Map(rows.map((r) => [r.id, r.external_id]));
    const created = new Map<string, number>();
    for (const c of changes) {
      expect(c.operation).toBe('created');
      expect(present.has(c.record_id), `a change names ${c.record_id}, which is not there`).toBe(true);
      expect(c.record.external_id).toBe(present.get(c.record_id));
      created.set(c.record_id, (created.get(c.record_id) ?? 0) + 1);
    }
    for (const id of present.keys()) expect(created.get(id), `changes of ${id}`).toBe(1);
    expect(changes).toHaveLength(present.size);

    // And what was acknowledged is there, what was in flight is whole or absent.
    const count = (tag: string) => rows.filter((r) => r.external_id.startsWith(`kill-${tag}-`)).length;
    for (const tag of acknowledged) expect(count(tag)).toBe(500);
    for (const [i, tag] of inFlight.entries()) {
      expect([0, 1000]).toContain(count(tag));
      if (statuses[i] === 200) expect(count(tag)).toBe(1000);
    }
    console.info(`[changes/fleet] batches in flight at the kill: ${inFlight.map((t, i) => `${t} ${statuses[i] === 200 ? 'acknowledged' : 'cut off'}, ${count(t)} records`).join('; ')}`);
  }, 180_000);
});

/** The process, of `pids`, that holds the TCP connection whose local port is `port` (from /proc). */
function ownerOfPort(port: number, pids: readonly number[]): number | undefined {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && parseInt(f[1]!.split(':').pop()!, 16) === port) inodes.add(f[9]!);
    }
  }
  for (const pid of pids) {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
        const m = /^socket:\[(\d+)\]$/.exec(link);
        if (m && inodes.has(m[1]!)) return pid;
      } catch {
        // Closed while listed.
      }
    }
  }
  return undefined;
}

describe('a webhook delivery cut by a SIGKILL', () => {
  it('is made by the other instance once the claim runs out, with the same webhook-id and everything after it in order; the other organization gets its own change only', async () => {
    // `two` ended in the test above: `one` and a new instance share the work.
    const three = await serve(FLAGS(), ENV);
    const acme = new Receiver();
    const globex = new Receiver();
    let held = false;
    acme.answer = () => (held ? 204 : ((held = true), 'hang'));
    await acme.start();
    await globex.start();
    try {
      const after = await head(one.url, KEYS.acme1);
      const globexAfter = await head(one.url, KEYS.globex);
      for (const [key, receiver] of [[KEYS.acme1, acme], [KEYS.globex, globex]] as const) {
        const made = await call(one.url, 'POST', '/api/v1/webhooks', { key, body: { url: receiver.url, objects: ['account'] } });
        expect(made.status, made.text).toBe(201);
      }
      expect((await create(three.url, KEYS.acme1, [{ name: 'Hook One' }, { name: 'Hook Two' }, { name: 'Hook Three' }])).status).toBe(200);
      expect((await create(one.url, KEYS.globex, [{ name: 'Hook Globex' }])).status).toBe(200);

      await acme.untilHung(1);
      // Every instance still running may deliver (`two` too, when this test runs alone).
      const live = [one, two, three].filter((s) => s.child.exitCode === null && s.child.signalCode === null);
      const holder = ownerOfPort(acme.hungRequests[0]!.port, live.map((s) => s.pid));
      expect(holder, 'the instance making the held delivery').toBeDefined();
      const killed = live.find((s) => s.pid === holder)!;
      const survivor = live.find((s) => s !== killed)!;
      await killed.stop('SIGKILL');

      // The claim of the killed instance runs out (30 s) and the survivor takes the endpoint up.
      await until('the survivor delivering the three changes', () => acme.received.length >= 3, 90_000);
      const changes = (await call(survivor.url, 'GET', `/api/v1/changes?after=${after}&objects=account`, { key: KEYS.acme1 })).json.data.changes as { event_id: string; record_id: string }[];
      expect(changes).toHaveLength(3);
      const ids = acme.received.map((r) => r.headers['webhook-id']);
      // The cut delivery again, with its webhook-id, first; then the rest, in log order, none lost.
      expect(acme.hungRequests[0]!.headers['webhook-id']).toBe(changes[0]!.event_id);
      expect(ids).toEqual(changes.map((c) => c.event_id));
      expect(JSON.parse(acme.received[0]!.body).data.event_id).toBe(changes[0]!.event_id);

      await until('the other organization\'s change', () => globex.received.length >= 1, 90_000);
      const theirs = (await call(survivor.url, 'GET', `/api/v1/changes?after=${globexAfter}&objects=account`, { key: KEYS.globex })).json.data.changes as { event_id: string }[];
      // At least once: the killed instance may have sent it just before the kill, unrecorded, and
      // the survivor then sends it again, under the same webhook-id.
      expect([...new Set(globex.received.map((r) => r.headers['webhook-id']))]).toEqual(theirs.map((c) => c.event_id));
      expect(ids.some((id) => theirs.some((c) => c.event_id === id))).toBe(false);
    } finally {
      await Promise.allSettled([three.stop(), acme.stop(), globex.stop()]);
    }
  }, 180_000);
});
