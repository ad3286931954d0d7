import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHeavyScenario, runScenario, seed, seedHeavy, startScenarioServer, type Sample } from '../../bench/hostile.js';
import { pgServerAvailable, startPgServer, type PgServer } from '../support/pg-server.js';

/**
 * Organization B attacks at and beyond its budget while organization A runs a steady light mix
 * (bench/hostile.ts). Bounded: a few seconds idle, then an attack that lasts until A has had
 * ANSWERS_OF_A answers under it (a count, not a clock: however busy the machine, the attack is
 * sampled as often), every request with its own timeout. Timings are the benchmark's business (bench/RESULTS.md); this asserts
 * what must hold whatever the machine's load: the process stays up, A gets no error, and every
 * B request gets an answer in the envelope with an expected status — never a 500 or a dropped
 * connection. Then, on the same server, the heavier neighbour of issue 35 (item 7): B stores
 * large texts that do not compress and attacks again while A sends open-loop over three users.
 * On PostgreSQL A must get no refusal (no 429, no 503) and no error. On the embedded database A
 * must get no error and no answer outside the envelope, and /health must answer 200; a 429 of
 * A is still possible there (its heavy requests take turns per organization, each behind one
 * of B's statements: bench/RESULTS.md, "A heavier neighbour"). The data is smaller than the
 * benchmark's 46 MB (bench/hostile.mjs) to keep the suite fast; the scheduling is the same.
 */

/** A's answers under B's attack, in the first scenario: about 7 s of it on a quiet machine. */
const ANSWERS_OF_A = 100;
/** B's rows in the suite's heavier scenario (the benchmark stores 565). */
const HEAVY_ROWS_IN_SUITE = 80;
/** A's open-loop rate, requests a second over its three users. */
const HEAVY_RATE = 4;

const ALLOWED_B = new Set([200, 400, 413, 429, 503, 504]);

/**
 * What the heavier scenario must show whatever the load: B always in the envelope; A never
 * refused (`refusals: false`), or refused only with a 429 or 503 in the envelope and never an error.
 */
function checkHeavy(samples: Sample[], { refusals }: { refusals: boolean }): void {
  const a = samples.filter((s) => s.who === 'A');
  const b = samples.filter((s) => s.who === 'B');
  expect(a.length).toBeGreaterThan(10);
  expect(b.length).toBeGreaterThan(10);
  const allowedA = new Set(refusals ? [200, 429, 503] : [200]);
  expect(a.filter((s) => !allowedA.has(s.status) || !s.envelope).map((s) => `${s.what} ${s.status} ${s.code}`)).toEqual([]);
  // Whatever was refused, the health probe was not: it answers 200 while the service serves.
  expect(a.filter((s) => s.what === 'health' && s.status !== 200).map((s) => `${s.status} ${s.code}`)).toEqual([]);
  expect(a.filter((s) => s.what === 'health').length).toBeGreaterThan(0);
  const wrong = b.filter((s) => !ALLOWED_B.has(s.status) || !s.envelope);
  expect(wrong.map((s) => `${s.what} ${s.status} ${s.code}`)).toEqual([]);
  // B was held to its budget, not let through: some of its attacks were refused with a 429.
  expect(b.some((s) => s.code === 'TOO_MANY_REQUESTS')).toBe(true);
}

function check(samples: Sample[]): void {
  const a = samples.filter((s) => s.who === 'A');
  const b = samples.filter((s) => s.who === 'B');
  expect(a.length).toBe(ANSWERS_OF_A);
  expect(b.length).toBeGreaterThan(10);
  expect(a.filter((s) => s.status !== 200).map((s) => `${s.what} ${s.status} ${s.code}`)).toEqual([]);
  const wrong = b.filter((s) => !ALLOWED_B.has(s.status) || !s.envelope);
  expect(wrong.map((s) => `${s.what} ${s.status} ${s.code}`)).toEqual([]);
  // The attacks were refused for the reasons they should be, not merely answered: runaway work
  // by a ceiling (bytes, planner cost or time), and work beyond the budget by a 429.
  const codes = new Set(b.map((s) => s.code));
  expect([...codes].filter((c) => c === 'RESPONSE_TOO_LARGE' || c === 'QUERY_TOO_COSTLY' || c === 'QUERY_TIMEOUT')).not.toEqual([]);
  expect(codes.has('TOO_MANY_REQUESTS')).toBe(true);
}

describe('a hostile neighbour on embedded PGlite', () => {
  let server: Awaited<ReturnType<typeof startScenarioServer>> | undefined;
  beforeAll(async () => {
    server = await startScenarioServer({ memory: true, queryTimeoutMs: 2_000 });
  }, 120_000);
  afterAll(async () => server?.server.close());

  it('never takes the service down for the other organization', async () => {
    const { url } = server!;
    await seed(url);
    const result = await runScenario(url, { idleMs: 2_000, answersOfA: ANSWERS_OF_A, attackers: 4 });
    check(result.samples);
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
  }, 180_000);

  it('gives the other organization no error and its health probe 200 under the heavier neighbour', async () => {
    const { url } = server!;
    await seedHeavy(url, HEAVY_ROWS_IN_SUITE);
    const result = await runHeavyScenario(url, { idleMs: 1_000, attackMs: 10_000, attackers: 4, rate: HEAVY_RATE });
    checkHeavy(result.samples, { refusals: true });
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
  }, 180_000);
});

describe.skipIf(!pgServerAvailable())('a hostile neighbour on PostgreSQL 15', () => {
  let pg: PgServer | undefined;
  let server: Awaited<ReturnType<typeof startScenarioServer>> | undefined;
  beforeAll(async () => {
    pg = await startPgServer();
    // The statement budget of the embedded default, not the benchmark's 2 s: in the suite, A's
    // statements share two cores with B's attack and with the other test files, and one of A's
    // filters ran past 2 s there (504) although nothing refused it. Its time is the benchmark's
    // business; what this file asserts is that A is never refused.
    server = await startScenarioServer({ database: pg.url, queryTimeoutMs: 5_000 });
  }, 120_000);
  afterAll(async () => {
    await server?.server.close();
    await pg?.stop();
  });

  it('never takes the service down for the other organization', async () => {
    const { url } = server!;
    await seed(url);
    const result = await runScenario(url, { idleMs: 2_000, answersOfA: ANSWERS_OF_A, attackers: 6 });
    check(result.samples);
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
  }, 180_000);

  it('never refuses the other organization under the heavier neighbour', async () => {
    const { url } = server!;
    await seedHeavy(url, HEAVY_ROWS_IN_SUITE);
    const result = await runHeavyScenario(url, { idleMs: 1_000, attackMs: 10_000, attackers: 6, rate: HEAVY_RATE });
    checkHeavy(result.samples, { refusals: false });
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
  }, 180_000);
});
