import { createServer, type OqlServer } from '../src/server/app.js';
import { databaseOf } from '../src/run/database-of.js';
import type { Database } from '../src/run/database.js';
import { treeRss } from './lib.js';

/**
 * The hostile-neighbour scenario, shared by the load test (test/load/) and the benchmark
 * (bench/hostile.mjs, `npm run bench:hostile`): organization A runs a steady light mix while organization B, with
 * several users and keys, sends at and beyond its budget every attack the availability work
 * answers — reports that build huge strings, pages of large rows, slow correlated subqueries, long
 * LIKE patterns, floods of concurrent filters from many keys, deep JSON, NULL-typed expressions,
 * numbers beyond int8. Every request is bounded: the loops stop at the deadline (or, in the tests,
 * once A has had its count of answers).
 */

export interface Sample {
  readonly who: 'A' | 'B';
  readonly what: string;
  readonly status: number;
  /** 0 when the connection failed. */
  readonly ms: number;
  readonly envelope: boolean;
  readonly code: string | null;
  /** The error's message, to tell refusals that share a code apart (null on success). */
  readonly message: string | null;
}

export interface ScenarioResult {
  readonly samples: Sample[];
  /** Largest resident set seen, in bytes. */
  readonly peakRss: number;
  /** A's latencies with B idle, measured first. */
  readonly idle: Sample[];
}

export const A_KEY = 'oql_hostileNeighbourA_0123456789abcdefghijklmnopq';
export const B_KEYS = Array.from({ length: 6 }, (_, i) => `oql_hostileNeighbourB${i}_0123456789abcdefghijklmnop`);
/** The heavier scenario's organization A: three users, each with its own key. */
export const A_KEYS = Array.from({ length: 3 }, (_, i) => `oql_hostileNeighbourA${i}_0123456789abcdefghijklmnop`);
const KEYS_ENV = [`${A_KEY}=org_a:admin:u_a`, ...A_KEYS.map((k, i) => `${k}=org_a:admin:u_a${i}`), ...B_KEYS.map((k, i) => `${k}=org_b:admin:u_b${i % 3}`)].join(',');

const BIG = 'x'.repeat(99_000);

export async function startScenarioServer(options: { database?: string; memory?: boolean; queryTimeoutMs: number; preparedStatements?: number }): Promise<{ server: OqlServer; url: string; db: Database }> {
  const server = await createServer({
    ...(options.database ? { database: options.database } : { memory: true }),
    ...(options.preparedStatements === undefined ? {} : { preparedStatements: options.preparedStatements }),
    apiKeys: KEYS_ENV, env: {}, queryTimeoutMs: options.queryTimeoutMs, log: false,
  });
  await server.app.listen({ port: 0, host: '127.0.0.1' });
  const address = server.app.server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${address.port}`, db: databaseOf(server.db) };
}

async function call(url: string, who: 'A' | 'B', what: string, key: string, method: string, path: string, body?: unknown): Promise<Sample> {
  const started = performance.now();
  try {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const envelope = typeof json?.success === 'boolean' && (json.success || (typeof json.data?.error_code === 'string' && json.data.status_code === res.status));
    return { who, what, status: res.status, ms: performance.now() - started, envelope, code: json?.data?.error_code ?? null, message: json?.success === false ? String(json?.data?.message ?? '') : null };
  } catch {
    return { who, what, status: 0, ms: performance.now() - started, envelope: false, code: null, message: null };
  }
}

/** Seeds both organizations through the API: A small, B with large texts. */
export async function seed(url: string): Promise<void> {
  const a = Array.from({ length: 40 }, (_, i) => ({ name: `Alpha ${i}`, city: `City ${i % 7}` }));
  const okA = await call(url, 'A', 'seed', A_KEY, 'POST', '/api/v1/org/objects/account/record/bulk_create', a);
  if (okA.status !== 200) throw new Error(`seeding A failed: ${okA.status}`);
  for (let batch = 0; batch < 4; batch++) {
    const b = Array.from({ length: 50 }, (_, i) => ({ name: `Beta ${batch}-${i}`, city: BIG }));
    const ok = await call(url, 'B', 'seed', B_KEYS[0]!, 'POST', '/api/v1/org/objects/account/record/bulk_create', b);
    if (ok.status !== 200) throw new Error(`seeding B failed: ${ok.status}`);
  }
  const contacts = Array.from({ length: 200 }, (_, i) => ({ name: `Person ${i}` }));
  await call(url, 'B', 'seed', B_KEYS[0]!, 'POST', '/api/v1/org/objects/contact/record/bulk_create', contacts);
}

/** Rows and sizes of the heavier attacker's data: 565 rows of 50-99 KB, about 46 MB. */
export const HEAVY_ROWS = 565;
const HEAVY_BATCH = 40;

/**
 * Text of `length` characters that compression cannot shrink much (TOAST compresses a repeated
 * character to almost nothing, so 'x'.repeat() would store a few bytes, not the bytes sent):
 * letters and digits from a small deterministic generator, so runs are comparable.
 */
function incompressible(length: number, seed: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  let x = (seed * 2654435761) >>> 0 || 1;
  let out = '';
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out += alphabet[x % alphabet.length];
  }
  return out;
}

/**
 * The heavier attacker's data (issue 35, item 7): A as in seed(), B with `rows` accounts whose
 * city is 50-99 KB of text that does not compress (each under the text cap), about 46 MB for
 * the 565 rows of the issue, sent in batches that stay under the request body limit.
 */
export async function seedHeavy(url: string, rows = HEAVY_ROWS): Promise<{ bytes: number }> {
  const a = Array.from({ length: 40 }, (_, i) => ({ name: `Alpha ${i}`, city: `City ${i % 7}` }));
  const okA = await call(url, 'A', 'seed', A_KEYS[0]!, 'POST', '/api/v1/org/objects/account/record/bulk_create', a);
  if (okA.status !== 200) throw new Error(`seeding A failed: ${okA.status}`);
  let bytes = 0;
  for (let start = 0; start < rows; start += HEAVY_BATCH) {
    const b = Array.from({ length: Math.min(HEAVY_BATCH, rows - start) }, (_, i) => {
      const n = start + i;
      const city = incompressible(50_000 + ((n * 7919) % 49_000), n + 1);
      bytes += city.length;
      return { name: `Beta ${n}`, city };
    });
    const ok = await call(url, 'B', 'seed', B_KEYS[0]!, 'POST', '/api/v1/org/objects/account/record/bulk_create', b);
    if (ok.status !== 200) throw new Error(`seeding B failed: ${ok.status} ${ok.code ?? ''}`);
  }
  const contacts = Array.from({ length: 200 }, (_, i) => ({ name: `Person ${i}` }));
  await call(url, 'B', 'seed', B_KEYS[0]!, 'POST', '/api/v1/org/objects/contact/record/bulk_create', contacts);
  return { bytes };
}

const nest = (depth: number): string => (depth === 0 ? 'city' : `concat(${nest(depth - 1)}, ${nest(depth - 1)})`);
const deepJson = (depth: number): string => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

/** B's attacks: each one request, but for the burst, several at once from one key (beyond its budget). */
function attacks(url: string): Array<(key: string) => Promise<Sample | Sample[]>> {
  const report = (what: string, query: string, slug = 'account') => (key: string) =>
    call(url, 'B', what, key, 'POST', '/api/v1/reports/execute', { slug, query });
  const filter = (what: string, body: unknown, slug = 'account') => (key: string) =>
    call(url, 'B', what, key, 'POST', `/api/v1/org/objects/${slug}/filter`, body);
  return [
    report('huge string', `SELECT ${nest(7)} AS s FROM account LIMIT 1000`),
    report('large rows', 'SELECT id, city, concat(city, city) AS twice FROM account LIMIT 1000'),
    report('slow subquery', "SELECT COUNT(*) AS n FROM account WHERE EXISTS (SELECT 1 FROM contact WHERE contact.name ILIKE concat('%', account.city, '%') AND EXISTS (SELECT 1 FROM account a2 WHERE a2.city ILIKE concat('%', contact.name, '%'))) LIMIT 1"),
    filter('big page', { query: { fields: ['name', 'city'], pagination: { page: 1, page_size: 1000 } } }),
    filter('long pattern', { query: { fields: ['name'], filters: { and: [{ field: 'city', operator: 'contains', value: 'y'.repeat(9_000) }] } } }),
    filter('flood', { query: { fields: ['name'], filters: { and: [{ field: 'city', operator: 'contains', value: 'zz' }] }, pagination: { page: 1, page_size: 1000 } } }),
    (key) => Promise.all(Array.from({ length: 4 }, () => filter('burst', { query: { fields: ['name', 'city'], pagination: { page: 1, page_size: 200 } } })(key))),
    (key) => call(url, 'B', 'connector page', key, 'POST', '/api/v1/flowconnector/objects/account/records', { query: { fields: ['name', 'city'] }, next_token: null }),
    report('null typed', 'SELECT sum(NULL) AS s, - NULL AS m FROM account LIMIT 1'),
    report('beyond int8', 'SELECT 99999999999999999999999 AS big, 1e400 AS huge FROM account LIMIT 1'),
    (key) => call(url, 'B', 'deep json', key, 'POST', '/api/v1/org/objects/account/filter', `{"query":{"filters":{"and":${deepJson(5000)}}}}`),
  ];
}

/** A's steady light mix, one request per step, sent with `key`. */
function steady(url: string, ids: string[], key = A_KEY): Array<() => Promise<Sample>> {
  return [
    () => call(url, 'A', 'get one', key, 'GET', `/api/v1/org/objects/account/record/${ids[Math.floor(Math.random() * ids.length)]}`),
    () => call(url, 'A', 'report', key, 'POST', '/api/v1/reports/execute', { slug: 'account', query: 'SELECT city, COUNT(*) AS n FROM account GROUP BY city ORDER BY n DESC LIMIT 10' }),
    () => call(url, 'A', 'filter', key, 'POST', '/api/v1/org/objects/account/filter', { query: { fields: ['name', 'city'], pagination: { page: 1, page_size: 20 } } }),
    () => call(url, 'A', 'write', key, 'POST', '/api/v1/org/objects/contact/record/bulk_create', [{ name: 'Steady writer' }]),
    () => call(url, 'A', 'health', key, 'GET', '/health'),
  ];
}

async function idsOfA(url: string, key = A_KEY): Promise<string[]> {
  const res = await fetch(`${url}/api/v1/org/objects/account/filter`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: { fields: ['id'], pagination: { page: 1, page_size: 100 } } }),
  });
  return ((await res.json()) as { data: { records: Array<{ id: string }> } }).data.records.map((r) => r.id);
}

/**
 * A alone for `idleMs`, then A beside B's attackers: for `attackMs`, or, given `answersOfA`, until
 * A has had that many answers under attack. The count is for tests: what the window samples then
 * does not depend on how busy the machine is.
 */
export async function runScenario(
  url: string,
  options: { idleMs: number; attackers: number } & ({ attackMs: number } | { answersOfA: number }),
): Promise<ScenarioResult> {
  const ids = await idsOfA(url);
  let peakRss = treeRss();
  const rss = setInterval(() => {
    peakRss = Math.max(peakRss, treeRss());
  }, 100);
  try {
    const mixA = steady(url, ids);
    const loopA = async (over: () => boolean, out: Sample[]) => {
      for (let i = 0; !over(); i++) {
        out.push(await mixA[i % mixA.length]!());
        await new Promise((r) => setTimeout(r, 50));
      }
      return out;
    };
    const idle: Sample[] = [];
    const idleUntil = Date.now() + options.idleMs;
    await loopA(() => Date.now() >= idleUntil, idle);
    const ofA: Sample[] = [];
    const ofB: Sample[] = [];
    const until = 'attackMs' in options ? Date.now() + options.attackMs : Infinity;
    const over = () => Date.now() >= until || ('answersOfA' in options && ofA.length >= options.answersOfA);
    const all = attacks(url);
    const attacker = async (n: number) => {
      for (let i = n; !over(); i++) ofB.push(...[await all[i % all.length]!(B_KEYS[n % B_KEYS.length]!)].flat());
    };
    await Promise.all([loopA(over, ofA), ...Array.from({ length: options.attackers }, (_, n) => attacker(n))]);
    return { samples: [...ofA, ...ofB], idle, peakRss };
  } finally {
    clearInterval(rss);
  }
}

/**
 * The heavier scenario (issue 35, item 7), after seedHeavy(): A sends its light mix OPEN-LOOP,
 * `rate` requests a second spread over its three users (each its own key), for `idleMs` alone and
 * then for `attackMs` beside B's `attackers`. Open loop: each request leaves at its time whether
 * or not the earlier ones were answered, so a slow answer does not slow A's sending, and A's
 * requests pile up (against its own budget of concurrent requests) exactly when they are held.
 */
export async function runHeavyScenario(url: string, options: { idleMs: number; attackMs: number; attackers: number; rate: number }): Promise<ScenarioResult> {
  const ids = await idsOfA(url, A_KEYS[0]);
  let peakRss = treeRss();
  const rss = setInterval(() => {
    peakRss = Math.max(peakRss, treeRss());
  }, 100);
  try {
    const mixes = A_KEYS.map((key) => steady(url, ids, key));
    const openLoop = async (until: number, out: Sample[]) => {
      const every = 1000 / options.rate;
      const started = Date.now();
      const inFlight: Promise<void>[] = [];
      for (let i = 0; ; i++) {
        const at = started + i * every;
        if (at >= until) break;
        const wait = at - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const user = i % mixes.length;
        const mix = mixes[user]!;
        inFlight.push(mix[Math.floor(i / mixes.length) % mix.length]!().then((s) => void out.push(s)));
      }
      await Promise.all(inFlight);
    };
    const idle: Sample[] = [];
    await openLoop(Date.now() + options.idleMs, idle);
    const samples: Sample[] = [];
    const until = Date.now() + options.attackMs;
    const all = attacks(url);
    const attacker = async (n: number) => {
      for (let i = n; Date.now() < until; i++) samples.push(...[await all[i % all.length]!(B_KEYS[n % B_KEYS.length]!)].flat());
    };
    await Promise.all([openLoop(until, samples), ...Array.from({ length: options.attackers }, (_, n) => attacker(n))]);
    return { samples, idle, peakRss };
  } finally {
    clearInterval(rss);
  }
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
