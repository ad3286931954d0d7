// The hostile-neighbour benchmark (`npm run bench:hostile`): the scenario of bench/hostile.ts
// (organization A's steady light mix; organization B's attacks at and beyond its budget) on
// embedded PGlite and on a throwaway PostgreSQL 15, with A's latencies idle and under attack side
// by side, the peak resident set, and the time from each B request to its 504. The figures
// replace the "A hostile neighbour" section of bench/RESULTS.md and are printed to stdout;
// progress goes to stderr. Run with `node --import tsx bench/hostile.mjs [pglite|postgres] [attack seconds]`.
import { cpus, loadavg, totalmem } from 'node:os';
import { percentile, runScenario, seed, startScenarioServer } from './hostile.ts';
import { pgServerAvailable, startPgServer } from '../test/support/pg-server.ts';
import { writeSection } from './results-file.mjs';

const only = process.argv[2];
const attackMs = Number(process.argv[3] ?? 60) * 1000;
const TIMEOUT_MS = 2_000;
const log = (...a) => console.error('[hostile]', ...a);

const ms = (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '-');
const stats = (samples) => {
  const t = samples.map((s) => s.ms);
  return { n: t.length, p50: percentile(t, 50), p99: percentile(t, 99), max: t.length ? Math.max(...t) : NaN };
};

async function one(name, options, attackers) {
  const startLoad = loadavg()[0];
  const { server, url } = await startScenarioServer({ ...options, queryTimeoutMs: TIMEOUT_MS });
  try {
    await seed(url);
    log(`${name}: seeded; A alone for 10 s, then B's ${attackers} attackers for ${attackMs / 1000} s`);
    const r = await runScenario(url, { idleMs: 10_000, attackMs, attackers });
    const a = r.samples.filter((s) => s.who === 'A');
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

function section(results) {
  const lines = [
    '## A hostile neighbour (`npm run bench:hostile`)',
    '',
    `Ran ${new Date().toISOString()} on ${cpus().length} cores (${cpus()[0]?.model.split(' ').slice(0, 2).join(' ')}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}. Scenario: bench/hostile.ts. Organization A runs a steady light mix (get one, a GROUP BY report, a 20-row filter page, a one-record write, /health; 50 ms between requests) alone for 10 s, then for ${attackMs / 1000} s beside organization B, whose attackers (six keys of three users) loop without pause over every attack of issue 19: reports that build huge strings, 1000-row pages of 99 KB texts, slow correlated subqueries, 9,000-character contains patterns, floods and bursts of concurrent filters beyond the budget, connector pages, deep JSON, NULL-typed expressions, numbers beyond int8. Statement budget ${TIMEOUT_MS / 1000} s (the option every deployment sets; the defaults are 20 s on PostgreSQL and 5 s embedded). Targets: A's p99 <= 2 s and max <= 5 s under attack, peak RSS <= 1.5 GB, every 504 within 21 s of its request.`,
    '',
    '| database | A idle p50 / p99 / max ms (n) | A under attack p50 / p99 / max ms (n) | p99 ratio attack / idle | A errors | peak RSS | B requests: by status | B 504s: p50 / max ms from request | B answers outside the envelope | load at start / end |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of results) {
    const status = [...r.byStatus].sort((x, y) => x[0] - y[0]).map(([s, n]) => `${s}: ${n}`).join(', ');
    lines.push(`| ${r.name} | ${ms(r.idle.p50)} / ${ms(r.idle.p99)} / ${ms(r.idle.max)} (${r.idle.n}) | ${ms(r.attack.p50)} / ${ms(r.attack.p99)} / ${ms(r.attack.max)} (${r.attack.n}) | ${(r.attack.p99 / r.idle.p99).toFixed(1)} | ${r.aErrors.length}${r.aErrors.length ? ` (${r.aErrors.join('; ')})` : ''} | ${Math.round(r.peakRss / 1e6)} MB | ${r.b}: ${status} | ${ms(r.timeouts.p50)} / ${ms(r.timeouts.max)} (${r.timeouts.n}) | ${r.bad} | ${r.load.map((l) => l.toFixed(1)).join(' / ')} |`);
  }
  lines.push('', 'Peak RSS is the service\'s process (the service and the scenario\'s clients) and, embedded, the database processes it started (the running one and its spare), summed. On embedded PGlite one statement runs at a time, so A waits for the B statement ahead of it; a statement past its budget ends its database process (a spare, already loaded, opens the directory), and the organization that sent it waits 10 s before its next report or page (429 with Retry-After; 30 s, 90 s and up to 5 minutes when it does it again within 10 minutes), its heavy requests taking turns so that a batch of runaway queries costs one restart. Most of B\'s requests are therefore 429s there. On PostgreSQL B holds at most its share of the pool and its users\' budgets; its runaway statements are cancelled at the budget.', '');
  return lines.join('\n');
}

const results = [];
if (only !== 'postgres') results.push(await one('embedded PGlite', { memory: true }, 4));
if (only !== 'pglite') {
  if (!pgServerAvailable()) log('PostgreSQL 15 binaries missing: skipped');
  else {
    const pg = await startPgServer();
    try {
      results.push(await one('PostgreSQL 15', { database: pg.url }, 6));
    } finally {
      await pg.stop();
    }
  }
}
const text = section(results);
process.stdout.write(text);
writeSection('hostile-bench', text);
log('wrote the hostile-neighbour section of bench/RESULTS.md');
