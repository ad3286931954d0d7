#!/usr/bin/env node
// The webhook sender's costs, in one run: `npm run bench:webhooks` (`node --import tsx --expose-gc bench/webhooks.mjs`).
//
// A throwaway PostgreSQL 15 on 127.0.0.1, the service in this process (createServer, the
// development flag on so receivers may listen on loopback), receivers in this process too.
// Nothing leaves the machine. Measured:
//   1. commit to receiver: writes of one record at a steady rate (open loop, RATE a second), each
//      change's committed_at against the moment its delivery reached the receiver: p50, p99, max;
//   2. deliveries a second to a fast receiver: a backlog of BACKLOG changes of one organization to
//      one endpoint (in order, one at a time, as the sender promises), and to ten endpoints of ten
//      organizations at once;
//   3. memory with 1,000 endpoints (20 organizations of 50): heap and RSS after a full collection,
//      before the endpoints, with them idle, and while one change of each organization goes to
//      all of its endpoints.
// The figures replace the "webhooks" section of bench/RESULTS.md and go to stdout.
import http from 'node:http';
import { cpus, loadavg, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createServer } from '../src/server/app.ts';
import { pgServerAvailable, startPgServer } from '../test/support/pg-server.ts';
import { writeSection } from './results-file.mjs';

const RATE = Number(process.env.OQL_BENCH_RATE ?? 20);
const SECONDS = Number(process.env.OQL_BENCH_SECONDS ?? 20);
const BACKLOG = Number(process.env.OQL_BENCH_BACKLOG ?? 2000);
const ORGS = 20;
const PER_ORG = 50;
const log = (m) => process.stderr.write(`[bench:webhooks] ${m}\n`);
const pct = (s, p) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
const fmt = (n, d = 1) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
const mib = (b) => fmt(b / 2 ** 20, 1);

if (!pgServerAvailable()) {
  log('PostgreSQL 15 server binaries missing (scripts/ensure-postgres.sh installs them)');
  process.exit(1);
}
if (typeof globalThis.gc !== 'function') {
  log('run with --expose-gc (npm run bench:webhooks does)');
  process.exit(1);
}

/** A receiver that answers 204 at once and calls `on` with each delivery's parsed body. */
async function receiver(on) {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      res.statusCode = 204;
      res.end();
      on(JSON.parse(Buffer.concat(chunks).toString('utf8')), performance.timeOrigin + performance.now());
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}/hook`, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}

async function memory() {
  for (let i = 0; i < 3; i++) { globalThis.gc(); await new Promise((r) => setImmediate(r)); }
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
}

const orgs = Array.from({ length: ORGS }, (_, i) => `org_w${String(i).padStart(2, '0')}`);
const keyOf = (org) => `bench-webhooks-key-${org}-admin-000`;
const pg = await startPgServer({ settings: { log_statement: 'none', jit: 'off' } });
const service = await createServer({
  database: pg.url, env: {}, log: false, webhookAllowPrivate: true, maxWebhooksPerOrg: PER_ORG,
  apiKeys: orgs.map((o) => `${keyOf(o)}=${o}:admin:u_${o}`).join(','),
  maxConcurrentRequests: 1000,
});
await service.app.listen({ host: '127.0.0.1', port: 0 });
const base = `http://127.0.0.1:${service.app.server.address().port}`;
async function call(method, path, key, body) {
  const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json.data;
}
const hook = (org, url) => call('POST', '/api/v1/webhooks', keyOf(org), { url, objects: ['account'] });
const write = (org, n, tag) => call('POST', '/api/v1/org/objects/account/record/bulk_create', keyOf(org), Array.from({ length: n }, (_, i) => ({ name: `${tag} ${i}` })));
const until = async (what, check, ms = 600_000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

const results = {};
const receivers = [];
try {
  const startLoad = loadavg();
  const before = await memory();

  // 1. Commit to receiver at a steady rate.
  log(`commit to receiver: ${RATE} writes a second for ${SECONDS} s`);
  const lags = [];
  const steady = await receiver((body, at) => lags.push(at - body.data.committed_at));
  receivers.push(steady);
  await hook(orgs[0], steady.url);
  const writes = [];
  const t0 = performance.now();
  for (let i = 0; i < RATE * SECONDS; i++) {
    const due = t0 + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    writes.push(write(orgs[0], 1, `steady ${i}`));
  }
  await Promise.all(writes);
  await until('every steady delivery', () => lags.length >= RATE * SECONDS);
  const sorted = [...lags].sort((a, b) => a - b);
  results.steady = { n: sorted.length, p50: pct(sorted, 50), p99: pct(sorted, 99), max: sorted[sorted.length - 1] };

  // 2. Deliveries a second: a backlog to one endpoint, then to ten endpoints of ten organizations.
  for (const count of [1, 10]) {
    log(`a backlog of ${BACKLOG} changes to ${count} endpoint(s)`);
    let got = 0;
    const fast = await receiver(() => { got++; });
    receivers.push(fast);
    const these = orgs.slice(1, 1 + count);
    for (const org of these) await hook(org, fast.url);
    // The endpoints start at their organization's head: the backlog is what is written now.
    const per = Math.ceil(BACKLOG / count);
    const started = performance.now();
    await Promise.all(these.map(async (org) => { for (let left = per; left > 0; left -= 1000) await write(org, Math.min(1000, left), `backlog ${count}`); }));
    await until(`the backlog to ${count} endpoint(s)`, () => got >= per * count);
    const s = (performance.now() - started) / 1000;
    results[`backlog${count}`] = { n: per * count, seconds: s, perSecond: (per * count) / s };
  }

  // 3. Memory with 1,000 endpoints.
  log(`${ORGS * PER_ORG} endpoints (${ORGS} organizations of ${PER_ORG})`);
  let delivered = 0;
  const many = await receiver(() => { delivered++; });
  receivers.push(many);
  const withNone = await memory();
  // The endpoints of the parts above go first: each organization then gets its cap of 50.
  for (const org of orgs) {
    const { webhooks } = await call('GET', '/api/v1/webhooks', keyOf(org));
    for (const w of webhooks) await call('DELETE', `/api/v1/webhooks/${w.id}`, keyOf(org));
    for (let i = 0; i < PER_ORG; i++) await hook(org, many.url);
  }
  const idle = await memory();
  let peak = idle;
  const watch = setInterval(() => { const m = process.memoryUsage(); if (m.rss > peak.rss) peak = { heap: m.heapUsed, rss: m.rss }; }, 50);
  const target = ORGS * PER_ORG;
  const started = performance.now();
  await Promise.all(orgs.map((org) => write(org, 1, 'fan-out')));
  await until('one change to every endpoint', () => delivered >= target);
  clearInterval(watch);
  results.memory = { before, withNone, idle, peak, fanOutSeconds: (performance.now() - started) / 1000, target };
  results.load = [startLoad, loadavg()];
} finally {
  await Promise.allSettled(receivers.map((r) => r.close()));
  await service.close().catch(() => {});
  await pg.stop().catch(() => {});
}

const m = results.memory;
const text = [
  '## Webhooks (`npm run bench:webhooks`)',
  '',
  `Ran ${new Date().toISOString()} on ${cpus().length} cores (${cpus()[0]?.model.split(' ').slice(0, 2).join(' ')}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; load average ${results.load[0].map((x) => fmt(x, 1)).join(' / ')} at the start, ${results.load[1].map((x) => fmt(x, 1)).join(' / ')} at the end. PostgreSQL 15 on 127.0.0.1; the service (bench/webhooks.mjs), the writer and the receivers share this one process, so figures include the writer's and the receivers' own work. Receivers answer 204 at once, on loopback (the development flag).`,
  '',
  `**Commit to receiver** at a steady ${RATE} writes a second (one record each, open loop, ${SECONDS} s, one endpoint): from the change's \`committed_at\` to the receiver holding the delivery, ms.`,
  '',
  '| deliveries | p50 | p99 | max |',
  '| --- | --- | --- | --- |',
  `| ${results.steady.n} | ${fmt(results.steady.p50)} | ${fmt(results.steady.p99)} | ${fmt(results.steady.max)} |`,
  '',
  '**Deliveries a second** to a fast receiver, a backlog written at once (bulk_create of up to 1,000), until the last arrives. One endpoint delivers in log order, one at a time; ten endpoints of ten organizations go side by side.',
  '',
  '| endpoints | changes | seconds | deliveries a second |',
  '| --- | --- | --- | --- |',
  ...[1, 10].map((c) => { const r = results[`backlog${c}`]; return `| ${c} | ${r.n.toLocaleString('en-US')} | ${fmt(r.seconds)} | ${fmt(r.perSecond, 0)} |`; }),
  '',
  `**Memory with ${m.target.toLocaleString('en-US')} endpoints** (${ORGS} organizations of ${PER_ORG}), after a full collection: heap ${mib(m.withNone.heap)} MiB and RSS ${mib(m.withNone.rss)} MiB before they were made, heap ${mib(m.idle.heap)} MiB and RSS ${mib(m.idle.rss)} MiB with them idle (${fmt((m.idle.heap - m.withNone.heap) / m.target / 1024, 2)} KiB of heap an endpoint: an idle endpoint lives in PostgreSQL, not in the process); while one change of each organization went to all ${m.target.toLocaleString('en-US')} endpoints (${fmt(m.fanOutSeconds)} s), RSS peaked at ${mib(m.peak.rss)} MiB.`,
  '',
].join('\n');
writeSection('webhooks-bench', text);
process.stdout.write(text);
