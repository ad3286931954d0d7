// Sides of a comparison measured in turns, shared by bench:server and bench:fleet.
//
// A side is `{ warm(), round() }`: `warm()` runs its warm-up and resolves null, or the reason the
// side is skipped; `round()` is one measured run and resolves `{ requests, ok, seconds, rps, p50,
// p99, cpu? }`. Each side warms up once, then every round runs each side once, the first side of a
// round moving one place each round, so that whatever else the machine does (and the rows a write
// adds) falls on every side alike. A ratio is the median of the rounds' ratios, each round's pair
// measured back to back.

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export const fmt = (n, digits = 2) => (n === undefined || Number.isNaN(n) ? '–' : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));

/**
 * Measures `sides` in turns, `rounds` rounds after one warm-up each, saying its progress through
 * `log` under `label`. Resolves with each side's rounds pooled (`combined`), or `{ skipped }`.
 */
export async function inTurns(label, sides, { rounds: count, log }) {
  const skipped = new Map();
  for (const [name, side] of Object.entries(sides)) {
    log(`${label}: ${name}: warm-up`);
    const reason = await side.warm();
    if (reason !== null) skipped.set(name, reason);
  }
  const names = Object.keys(sides).filter((name) => !skipped.has(name));
  const rounds = new Map(names.map((name) => [name, []]));
  for (let round = 0; round < count; round++) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(round + j) % names.length];
      rounds.get(name).push(await sides[name].round());
    }
    log(`${label}: round ${round + 1} of ${count}: ${names.map((name) => `${name} ${fmt(rounds.get(name).at(-1).rps, 0)} req/s`).join(', ')}`);
  }
  return Object.fromEntries(Object.keys(sides).map((name) => [name, skipped.has(name) ? { skipped: skipped.get(name) } : combined(rounds.get(name))]));
}

/**
 * A side's rounds as one: throughput over all of them, CPU per request over all of them (when the
 * rounds measure it), the median of the rounds' p50 and p99, and the rounds themselves for the
 * ratios (`ratio`).
 */
export function combined(rounds) {
  const requests = rounds.reduce((a, r) => a + r.requests, 0);
  const seconds = rounds.reduce((a, r) => a + r.seconds, 0);
  const ok = rounds.reduce((a, r) => a + r.ok, 0);
  const side = { rounds, requests, seconds, rps: ok / seconds, p50: median(rounds.map((r) => r.p50)), p99: median(rounds.map((r) => r.p99)) };
  if (rounds.every((r) => r.cpu === undefined)) return side;
  const cpuOf = (key) => rounds.reduce((a, r) => a + (r.cpu[key] ?? 0) * r.requests, 0) / requests;
  return { ...side, cpu: { own: cpuOf('own'), db: cpuOf('db'), client: cpuOf('client') } };
}

/**
 * A round from the latencies of its answers (ms, every one a success) over `seconds`: the
 * requests, their rate, and the p50 and p99.
 */
export function roundOf(latencies, seconds, cpu) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const pct = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  return { requests: sorted.length, ok: sorted.length, seconds, rps: sorted.length / seconds, p50: pct(50), p99: pct(99), ...(cpu === undefined ? {} : { cpu }) };
}

/** The ratios of two rounds that the tables give: of p50, of p99, of throughput. */
export const p50Of = (x, y) => x.p50 / y.p50;
export const p99Of = (x, y) => x.p99 / y.p99;
export const rpsOf = (x, y) => x.rps / y.rps;

/** `of(a's round, b's round)` for each round. */
export const roundRatios = (a, b, of) => a.rounds.map((r, i) => of(r, b.rounds[i]));

/** The median over rounds of `of(a's round, b's round)`. */
export const ratio = (a, b, of) => median(roundRatios(a, b, of));

export const throughputRatio = (a, b) => ratio(a, b, rpsOf);

/** "1.21 / 1.30 / 1.25": a ratio in each round, to show its spread. */
export const perRound = (a, b, of) => roundRatios(a, b, of).map((x) => fmt(x)).join(' / ');
