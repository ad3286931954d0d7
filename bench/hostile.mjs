// The hostile-neighbour benchmark (`npm run bench:hostile`): the scenario of bench/hostile.ts
// (organization A's steady light mix; organization B's attacks at and beyond its budget) on
// embedded PGlite and on a throwaway PostgreSQL 15, with A's latencies idle and under attack side
// by side, the peak resident set, and the time from each B request to its 504. The figures
// replace the "A hostile neighbour" section of bench/RESULTS.md and are printed to stdout;
// progress goes to stderr. The heavier scenario (issue 35, item 7: B stores about 46 MB in 565
// rows of 50-99 KB, A sends open-loop at 6 requests a second over three users) writes the
// section "A heavier neighbour"; `before` as the fourth argument writes it to its own section,
// kept as the figures from before the change they were taken for.
// Run with `node --import tsx bench/hostile.mjs [pglite|postgres|both] [attack seconds] [light|heavy|both] [before]`;
// OQL_PREPARED_STATEMENTS sets the PostgreSQL server's named statements as it does for `oql serve`.
import { cpus, loadavg, totalmem } from 'node:os';
import { percentile, runHeavyScenario, runScenario, seed, seedHeavy, startScenarioServer } from './hostile.ts';
import { pgServerAvailable, startPgServer } from '../test/support/pg-server.ts';
import { writeSection } from './results-file.mjs';
import { EmbeddedDatabase } from '../src/run/drivers/pglite/supervisor.ts';
import { DEFAULT_PREPARED_STATEMENTS } from '../src/run/drivers/pool.ts';

const only = process.argv[2];
const attackMs = Number(process.argv[3] ?? 60) * 1000;
const scenarios = process.argv[4] ?? 'both';
const before = process.argv[5] === 'before';
/** A's open-loop rate in the heavier scenario, requests a second over its three users. */
const HEAVY_RATE = 6;
const TIMEOUT_MS = 2_000;
/** Named statements on PostgreSQL, as `oql serve` reads them: OQL_PREPARED_STATEMENTS, or the service's default. */
const PREPARED = process.env.OQL_PREPARED_STATEMENTS === undefined ? undefined : Number(process.env.OQL_PREPARED_STATEMENTS);
const preparedNote = `Named statements on PostgreSQL: ${PREPARED === undefined ? `the default, ${DEFAULT_PREPARED_STATEMENTS}` : `OQL_PREPARED_STATEMENTS=${PREPARED}`} a connection${(PREPARED ?? DEFAULT_PREPARED_STATEMENTS) === 0 ? ' (off)' : ''}.`;
const log = (...a) => console.error('[hostile]', ...a);

const ms = (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '-');
const stats = (samples) => {
  const t = samples.map((s) => s.ms);
  return { n: t.length, p50: percentile(t, 50), p99: percentile(t, 99), max: t.length ? Math.max(...t) : NaN };
};

async function one(name, options, attackers, heavy) {
  const { server, url } = await startScenarioServer({ ...options, queryTimeoutMs: TIMEOUT_MS, ...(PREPARED === undefined ? {} : { preparedStatements: PREPARED }) });
  try {
    if (heavy) await seedHeavy(url);
    else await seed(url);
    const startLoad = loadavg()[0];
    log(`${name}${heavy ? ' (heavier)' : ''}: seeded; A alone for 10 s, then B's ${attackers} attackers for ${attackMs / 1000} s`);
    // Each restart of the embedded database as it happens: how long it took, and when.
    const restartsSeen = [];
    let seen = 0;
    const began = Date.now();
    const watch = setInterval(() => {
      for (const db of EmbeddedDatabase.opened?.() ?? []) {
        const st = db.stats();
        if (st.state === 'ready' && st.restarts > seen) {
          seen = st.restarts;
          restartsSeen.push(`${((Date.now() - began) / 1000).toFixed(1)} s: ${st.lastRestartMs} ms`);
        }
      }
    }, 50);
    const r = heavy
      ? await runHeavyScenario(url, { idleMs: 10_000, attackMs, attackers, rate: HEAVY_RATE })
      : await runScenario(url, { idleMs: 10_000, attackMs, attackers });
    clearInterval(watch);
    if (restartsSeen.length > 0) log(`${name}: restarts at (from the start of the scenario): ${restartsSeen.join('; ')}`);
    // Where the embedded database's calls spent their time, per organization (queue, connection).
    const embedded = (EmbeddedDatabase.opened?.() ?? []).map((db) => db.stats());
    for (const st of embedded) {
      log(`${name}: restarts ${st.restarts}, last restart ${st.lastRestartMs ?? '-'} ms`);
      for (const [tenant, t] of Object.entries(st.tenants ?? {})) {
        log(`  ${tenant || '(none)'}: ${t.calls} calls, waited mean ${Math.round(t.waitMs / t.calls)} / max ${Math.round(t.maxWaitMs)} ms, held mean ${Math.round(t.holdMs / t.calls)} / max ${Math.round(t.maxHoldMs)} ms`);
      }
    }
    const a = r.samples.filter((s) => s.who === 'A');
    // Which refusal A met: codes are shared (a budget's 429 and the cool-down's), messages are not.
    const messages = new Map();
    for (const s of a.filter((x) => x.status !== 200)) messages.set(`${s.status} ${s.code}: ${s.message}`, (messages.get(`${s.status} ${s.code}: ${s.message}`) ?? 0) + 1);
    for (const [m, n] of messages) log(`${name}: A got ${n} x ${m}`);
    // Which of A's requests make its tail: each kind's p50 / p99 / max under attack.
    for (const what of [...new Set(a.map((s) => s.what))]) {
      const st = stats(a.filter((s) => s.what === what));
      log(`${name}: A's ${what}: ${ms(st.p50)} / ${ms(st.p99)} / ${ms(st.max)} ms (${st.n})`);
    }
    const b = r.samples.filter((s) => s.who === 'B');
    const timeouts = b.filter((s) => s.status === 504);
    const byStatus = new Map();
    for (const s of b) byStatus.set(s.status, (byStatus.get(s.status) ?? 0) + 1);
    return {
      name, attackers, idle: stats(r.idle), attack: stats(a), aErrors: a.filter((s) => s.status !== 200).map((s) => `${s.what} ${s.status} ${s.code ?? ''}`.trim()),
      peakRss: r.peakRss, b: b.length, byStatus, timeouts: stats(timeouts),
      bad: b.filter((s) => ![200, 400, 413, 429, 503, 504].includes(s.status) || !s.envelope).length,
      load: [startLoad, loadavg()[0]],
    };
  } finally {
    await server.close();
  }
}

function table(results) {
  const lines = [
    '| database | A idle p50 / p99 / max ms (n) | A under attack p50 / p99 / max ms (n) | p99 ratio attack / idle | A errors | peak RSS | B requests: by status | B 504s: p50 / max ms from request | B answers outside the envelope | load at start / end |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of results) {
    const status = [...r.byStatus].sort((x, y) => x[0] - y[0]).map(([s, n]) => `${s}: ${n}`).join(', ');
    const errors = new Map();
    for (const e of r.aErrors) errors.set(e, (errors.get(e) ?? 0) + 1);
    const listed = [...errors].map(([e, n]) => `${n} x ${e}`).join('; ');
    lines.push(`| ${r.name} | ${ms(r.idle.p50)} / ${ms(r.idle.p99)} / ${ms(r.idle.max)} (${r.idle.n}) | ${ms(r.attack.p50)} / ${ms(r.attack.p99)} / ${ms(r.attack.max)} (${r.attack.n}) | ${(r.attack.p99 / r.idle.p99).toFixed(1)} | ${r.aErrors.length}${listed ? ` (${listed})` : ''} | ${Math.round(r.peakRss / 1e6)} MB | ${r.b}: ${status} | ${ms(r.timeouts.p50)} / ${ms(r.timeouts.max)} (${r.timeouts.n}) | ${r.bad} | ${r.load.map((l) => l.toFixed(1)).join(' / ')} |`);
  }
  return lines;
}

function heavySection(results) {
  return [
    before ? '### A heavier neighbour: before (`npm run bench:hostile -- both 60 heavy before`)' : '## A heavier neighbour (`npm run bench:hostile`)',
    '',
    `Ran ${new Date().toISOString()} on ${cpus().length} cores (${cpus()[0]?.model.split(' ').slice(0, 2).join(' ')}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, on a machine shared with other work (the load average is in the table). Scenario: runHeavyScenario in bench/hostile.ts (issue 35, item 7). Organization B stores about 46 MB in 565 accounts whose city is 50-99 KB of text that does not compress, then its attackers (six keys of three users) loop without pause over the attacks of the table above, at and beyond its budget. Organization A sends its light mix (get one, a GROUP BY report, a 20-row filter page, a one-record write, /health) OPEN-LOOP at ${HEAVY_RATE} requests a second over three users, each with its own key: a request leaves at its time whether or not the earlier ones were answered. A alone for 10 s, then ${attackMs / 1000} s beside B. Statement budget ${TIMEOUT_MS / 1000} s. Targets: A's p99 <= 2 s, max <= 5 s, no refusal or error of A (no 429, no 503), /health 200. ${preparedNote}`,
    '',
    ...table(results),
    '',
  ].join('\n');
}

function section(results) {
  const lines = [
    '## A hostile neighbour (`npm run bench:hostile`)',
    '',
    `Ran ${new Date().toISOString()} on ${cpus().length} cores (${cpus()[0]?.model.split(' ').slice(0, 2).join(' ')}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}. Scenario: bench/hostile.ts. Organization A runs a steady light mix (get one, a GROUP BY report, a 20-row filter page, a one-record write, /health; 50 ms between requests) alone for 10 s, then for ${attackMs / 1000} s beside organization B, whose attackers (six keys of three users) loop without pause over every attack of issue 19: reports that build huge strings, 1000-row pages of 99 KB texts, slow correlated subqueries, 9,000-character contains patterns, floods and bursts of concurrent filters beyond the budget, connector pages, deep JSON, NULL-typed expressions, numbers beyond int8. Statement budget ${TIMEOUT_MS / 1000} s (the option every deployment sets; the defaults are 20 s on PostgreSQL and 5 s embedded). Targets: A's p99 <= 2 s and max <= 5 s under attack, peak RSS <= 1.5 GB, every 504 within 21 s of its request. ${preparedNote}`,
    '',
    ...table(results),
  ];
  lines.push('', 'Peak RSS is the service\'s process (the service and the scenario\'s clients) and, embedded, the database processes it started (the running one and its spare), summed. On embedded PGlite one statement runs at a time, so A waits for the B statement ahead of it; a statement past its budget ends its database process (a spare, already loaded, opens the directory), and the organization that sent it waits 10 s before its next report or page (429 with Retry-After; 30 s, 90 s and up to 5 minutes when it does it again within 10 minutes), checked again when the connection is granted, so that a batch of runaway queries costs one restart. Most of B\'s requests are therefore 429s there. On PostgreSQL B holds at most its share of the pool and its users\' budgets; its runaway statements are cancelled at the budget.', '');
  return lines.join('\n');
}

const light = [];
const heavy = [];
/** Each scenario on a database of its own: a fresh in-memory PGlite, or a fresh PostgreSQL cluster. */
const onPg = async (name, attackers, heavyOne) => {
  const pg = await startPgServer();
  try {
    return await one(name, { database: pg.url }, attackers, heavyOne);
  } finally {
    await pg.stop();
  }
};
for (const heavyOne of [false, true]) {
  if (scenarios === (heavyOne ? 'light' : 'heavy')) continue;
  const out = heavyOne ? heavy : light;
  if (only !== 'postgres') out.push(await one('embedded PGlite', { memory: true }, 4, heavyOne));
  if (only !== 'pglite') {
    if (!pgServerAvailable()) log('PostgreSQL 15 binaries missing: skipped');
    else out.push(await onPg('PostgreSQL 15', 6, heavyOne));
  }
}
if (light.length > 0) {
  const text = section(light);
  process.stdout.write(text);
  writeSection('hostile-bench', text);
}
if (heavy.length > 0) {
  const text = heavySection(heavy);
  process.stdout.write(text);
  writeSection(before ? 'hostile-heavy-before' : 'hostile-heavy', text);
}
log('wrote the hostile-neighbour sections of bench/RESULTS.md');
