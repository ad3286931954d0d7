#!/usr/bin/env node
// Where a read on the embedded database spends its time: `node --import tsx bench/pglite-read-path.mjs`.
//
// One database process (src/run/drivers/pglite/supervisor.ts) and PGlite on this thread with the
// same rows, the same decoders. Each variant runs OQL_BENCH_QUERIES (default 2000) times one after
// the other, the variants in alternating blocks of 250 so that the machine's load falls on all of
// them alike:
//
//   round trip      SELECT 1 through the process: one message there and back, nothing to copy
//   statement       the same SELECT 1 on this thread: what Postgres itself costs
//   read, 4 msgs    a read as it was sent before: BEGIN, the settings, the query, ROLLBACK, each a
//                   message of its own (EmbeddedDatabase.transaction)
//   read, 1 msg     the same read as one message (EmbeddedDatabase.read), as the service reads:
//                   in the process one exchange with PGlite, the query a named statement of the
//                   organization's, parsed once (pglite-process.js, namedRead)
//   read, 1 msg, unnamed  the same message read unnamed (`named: false`, as an EXPLAIN is): in the
//                   process, BEGIN and the settings, the query, and ROLLBACK, three calls to PGlite
//   read, floor     the same four statements on PGlite in this thread
//
// The read is the service's get-one: one row of five columns by primary key. The figures replace
// the "Embedded database: the read path" section of bench/RESULTS.md and are printed to stdout.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { TEXT_PARSERS } from '../src/run/decode.ts';
import { readSettings } from '../src/run/drivers/session.ts';
import { EmbeddedDatabase } from '../src/run/drivers/pglite/supervisor.ts';
import { writeSection } from './results-file.mjs';

const QUERIES = Number(process.env.OQL_BENCH_QUERIES ?? 2000);
const BLOCK = 250;
const log = (m) => process.stderr.write(`[bench:pglite-read-path] ${m}\n`);
const fmt = (n, digits = 3) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const quantile = (values, q) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];
const work = mkdtempSync(join(tmpdir(), 'oql-bench-read-path-'));
const loadBefore = loadavg();
const started = new Date();

const ROW_SQL = 'SELECT id, name, amount, created_at, tags FROM item WHERE id = $1';
const SETUP = `
  CREATE TABLE item (id int PRIMARY KEY, name text, amount numeric, created_at timestamptz, tags text[]);
  INSERT INTO item SELECT g, 'item ' || g, g * 1.5, timestamptz '2024-01-01' + g * interval '1 hour', ARRAY['a', 'b']
    FROM generate_series(1, 1000) g;`;
const TIMEOUT_MS = 5000;
// As service-database.ts sends them.
const SETTINGS = readSettings(TIMEOUT_MS).replace(/^BEGIN READ ONLY/, 'SET TRANSACTION READ ONLY');

const db = await EmbeddedDatabase.open({ dataDir: join(work, 'db') });
const local = await PGlite.create({ extensions: { pg_trgm } });
const parsers = { ...TEXT_PARSERS };
try {
  await db.exec(SETUP);
  await local.exec(SETUP);
  const variants = {
    'round trip (SELECT 1 through the process)': () => db.query('SELECT 1'),
    'statement (SELECT 1 on this thread)': () => local.query('SELECT 1'),
    'read, 4 messages (BEGIN, settings, query, ROLLBACK)': (id) => db.transaction(async (tx) => {
      await tx.exec(SETTINGS);
      const r = await tx.query(ROW_SQL, [id]);
      await tx.rollback();
      return r;
    }, { tenant: 'org_a', timeoutMs: TIMEOUT_MS }),
    'read, 1 message': (id) => db.read(SETTINGS, ROW_SQL, [id], { tenant: 'org_a', timeoutMs: TIMEOUT_MS }),
    'read, 1 message, unnamed (three calls to PGlite in the process)': (id) => db.read(SETTINGS, ROW_SQL, [id], { tenant: 'org_a', timeoutMs: TIMEOUT_MS, named: false }),
    'read, floor (the same statements on this thread)': async (id) => {
      await local.exec(`BEGIN; ${SETTINGS}`);
      const r = await local.query(ROW_SQL, [id], { parsers });
      await local.exec('ROLLBACK');
      return r;
    },
  };
  const times = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  for (const run of Object.values(variants)) for (let i = 0; i < 200; i++) await run(1 + (i % 1000));
  for (let done = 0; done < QUERIES; done += BLOCK) {
    for (const [name, run] of Object.entries(variants)) {
      for (let i = 0; i < BLOCK; i++) {
        const t = performance.now();
        const { rows } = await run(1 + ((done + i) % 1000));
        times[name].push(performance.now() - t);
        if (rows.length !== 1) throw new Error(`${name}: ${rows.length} rows`);
      }
    }
    log(`${done + BLOCK}/${QUERIES}`);
  }
  const p50 = (name) => quantile(times[name], 0.5);
  const floor = p50('read, floor (the same statements on this thread)');
  const load = loadavg();
  const lines = [
    '## Embedded database: the read path (`node --import tsx bench/pglite-read-path.mjs`)',
    '',
    `Ran ${started.toISOString()} on ${cpus().length} cores, Node ${process.version}. Load average ${loadBefore.map((x) => x.toFixed(1)).join(' / ')} at the start, ` +
      `${load.map((x) => x.toFixed(1)).join(' / ')} at the end` +
      // The one-minute load before the bench began: above one core's worth, something else was running.
      (loadBefore[0] > 1 ? ': **the machine was shared with other work**, so absolute times are inflated' : '; nothing else ran on the machine') +
      `. The variants ran in alternating blocks of ${BLOCK}, so their ratios are comparable.`,
    '',
    `| variant (${QUERIES} each, one after the other) | p50 ms | p99 ms | p50 / read floor |`,
    '| --- | --- | --- | --- |',
    ...Object.keys(variants).map((name) => `| ${name} | ${fmt(p50(name))} | ${fmt(quantile(times[name], 0.99))} | ${fmt(p50(name) / floor, 2)}x |`),
    '',
    `One crossing to the process and back costs about ${fmt(p50('round trip (SELECT 1 through the process)') - p50('statement (SELECT 1 on this thread)'))} ms (round trip minus statement, medians). ` +
      'A read sent as four messages paid it four times, plus a timer per statement and the transaction\'s idle timer; as one message it pays it once. ' +
      `In the process, the read as one exchange with PGlite on a named statement took ${fmt(p50('read, 1 message'))} ms at the median against ${fmt(p50('read, 1 message, unnamed (three calls to PGlite in the process)'))} ms for the same message read unnamed in three calls. ` +
      'The read is one row of five columns (int, text, numeric, timestamptz, text[]) by primary key, decoded with TEXT_PARSERS on both sides.',
  ];
  const text = `${lines.join('\n')}\n`;
  process.stdout.write(text);
  writeSection('pglite-read-path', text);
} finally {
  await db.close();
  await local.close();
  rmSync(work, { recursive: true, force: true });
}
