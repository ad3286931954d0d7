/**
 * Compile time of filter and connector bodies against their size, up to and past the caps
 * (issue 26): the built package's compileFilter / compileConnectorPage on bodies that grow in
 * one direction at a time: a number value's digits, list items, nesting depth, conditions,
 * unknown keys, a presence value's depth. For each size: the median and p99 CPU time per
 * compile and the time per byte of the body's JSON; the last column divides the per-byte cost
 * at each size by the per-byte cost at the smallest, so a linear cost stays near 1 (or falls, as
 * fixed costs spread) and a quadratic one grows with the size.
 *
 * Run by bench/run.mjs (`node bench/run.mjs bodies`); alone: `node --import tsx bench/bodies.ts [fragment.md]`
 * after `npm run build`. OQL_BENCH_BODIES_ROUNDS sets the rounds (default 51).
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { BENCH_DIR, fixtureCatalog, fmt, loadDist, median, progress, table, type OqlModule } from './lib.js';

const ROUNDS = Number(process.env.OQL_BENCH_BODIES_ROUNDS ?? 31);
/** A sample is a batch of compiles lasting at least this long, so the clock's resolution does not matter. */
const SAMPLE_MS = 2;
const ORG = 'org_bench';

const out: string[] = [];
const emit = (s = ''): void => void out.push(s);

interface Size {
  readonly label: string;
  readonly body: unknown;
}

interface Family {
  readonly title: string;
  readonly front: 'filter' | 'connector';
  readonly sizes: readonly Size[];
  /** Index of the largest size within the caps; the sizes after it are past a cap. */
  readonly cap: number;
}

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

function nest(n: number, inner: unknown, wrap: (v: unknown) => unknown): unknown {
  let v = inner;
  for (let i = 0; i < n; i++) v = wrap(v);
  return v;
}

/** The body's JSON text, written with a stack of its own (JSON.stringify recurses, and the deepest bodies overflow it). */
function jsonText(root: unknown): string {
  const parts: string[] = [];
  const stack: ({ text: string } | { value: unknown })[] = [{ value: root }];
  while (stack.length) {
    const piece = stack.pop()!;
    if ('text' in piece) {
      parts.push(piece.text);
      continue;
    }
    const v = piece.value;
    if (Array.isArray(v)) {
      stack.push({ text: ']' });
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i] }, ...(i > 0 ? [{ text: ',' }] : []));
      stack.push({ text: '[' });
    } else if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      stack.push({ text: '}' });
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ value: (v as Record<string, unknown>)[keys[i]!] }, { text: `${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:` });
      stack.push({ text: '{' });
    } else parts.push(JSON.stringify(v) ?? 'null');
  }
  return parts.join('');
}

function families(): Family[] {
  const deepPath = 'contacts.account.opportunities.primary_contact.account.owner.manager.name';
  const filters = (f: unknown) => ({ query: { fields: ['id'], filters: f } });
  const range = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));
  const keys = (n: number) => Object.fromEntries(range(n, (i) => [`key${i}`, i]));
  return [
    {
      title: "A number value: digits, then a character that ends them (the issue's payload; 10,000 is the cap)",
      front: 'filter',
      cap: 3,
      sizes: [1_000, 2_000, 5_000, 10_000, 20_000].map((n) => ({ label: `${n.toLocaleString('en-US')} characters`, body: filters({ field: 'annual_revenue', operator: 'eq', value: `${'0'.repeat(n - 1)}Z` }) })),
    },
    {
      title: 'An in-list of digit runs ending in Z, 1,000 characters each (200 fill the 200,000 characters of a body)',
      front: 'filter',
      cap: 3,
      sizes: [25, 50, 100, 200, 1_000].map((k) => ({ label: `${k} items`, body: filters({ field: 'annual_revenue', operator: 'in', value: range(k, () => `${'0'.repeat(999)}Z`) }) })),
    },
    {
      title: 'An in-list of valid 100-digit decimals (1,000 items is the cap of a list)',
      front: 'filter',
      cap: 3,
      sizes: [100, 250, 500, 1_000].map((k) => ({ label: `${k} items`, body: filters({ field: 'annual_revenue', operator: 'in', value: range(k, (i) => `${i}.${'5'.repeat(99 - String(i).length)}`) }) })),
    },
    {
      title: 'Values across a body: in-lists of names (5,000 values is the cap of a body)',
      front: 'filter',
      cap: 3,
      sizes: [500, 1_000, 2_500, 5_000].map((v) => ({ label: `${v.toLocaleString('en-US')} values`, body: filters({ and: range(Math.ceil(v / 1_000), (k) => ({ field: 'name', operator: 'in', value: range(Math.min(1_000, v - k * 1_000), (i) => `n${k}_${i}`) })) }) })),
    },
    {
      title: 'Conditions on a 7-hop path through one-to-many relations (200 conditions is the cap)',
      front: 'filter',
      cap: 3,
      sizes: [25, 50, 100, 199].map((c) => ({ label: `${c} conditions`, body: filters({ and: range(c, (i) => ({ field: deepPath, operator: 'eq', value: `x${i}` })) }) })),
    },
    {
      title: 'Nesting: or-groups of two conditions, each holding the next (10 levels is the cap; deeper is refused unread)',
      front: 'filter',
      cap: 4,
      sizes: [2, 4, 6, 8, 10, 1_000, 100_000].map((d) => ({
        label: `${d.toLocaleString('en-US')} levels`,
        body: filters(nest(d, { field: 'name', operator: 'eq', value: 'x' }, (v) => ({ or: [v, { field: 'city', operator: 'eq', value: 'c' }] }))),
      })),
    },
    {
      title: 'Unknown keys of the query object (100 are reported; 350,000 is about the 5 MB body limit)',
      front: 'filter',
      cap: 3,
      sizes: [1_000, 10_000, 100_000, 350_000].map((k) => ({ label: `${k.toLocaleString('en-US')} keys`, body: { query: keys(k) } })),
    },
    {
      title: "A connector presence condition with a value nested deep (the issue's payload; refused unread)",
      front: 'connector',
      cap: 2,
      sizes: [1_000, 5_000, 100_000].map((d) => ({ label: `${d.toLocaleString('en-US')} levels`, body: { query: { fields: ['name'], filter: { and: [{ field: 'city', operator: 'exists', value: nest(d, [1], (v) => [v]) }] } } } })),
    },
  ];
}

interface Measured {
  readonly label: string;
  readonly bytes: number;
  readonly median: number;
  readonly p99: number;
  /** Median µs of JSON.parse of the body's text: what its receiver spends before compiling it. */
  readonly parse: number;
  readonly outcome: string;
}

function measure(lib: OqlModule, catalog: ReturnType<typeof fixtureCatalog>, family: Family): Measured[] {
  const options = { catalog, slug: 'account', orgId: ORG, tokenSecret: 'bench-bodies-secret-0123456789', now: Date.UTC(2030, 0, 1) };
  const compile = family.front === 'filter' ? (b: unknown) => lib.compileFilter(b, options) : (b: unknown) => lib.compileConnectorPage(b, options);
  const outcomes: string[] = [];
  const run = (body: unknown): string => {
    try {
      const c = compile(body);
      return `SQL, ${c.params.length} parameters`;
    } catch (e) {
      const err = e as { code?: string; validationErrors?: { error_code: string }[] };
      const first = err.validationErrors?.[0]?.error_code;
      return `${err.code ?? 'error'}${first ? ` (${first}${err.validationErrors!.length > 1 ? ` +${err.validationErrors!.length - 1}` : ''})` : ''}`;
    }
  };
  const texts = family.sizes.map((s) => jsonText(s.body));
  const tasks = family.sizes.flatMap((s, i) => [() => run(s.body), () => JSON.parse(texts[i]!)]);
  // Warm up, and size each sample's batch from one timed call.
  const batches = tasks.map((task, i) => {
    for (let k = 0; k < 3; k++) task();
    const t = cpuMs();
    const result = task();
    if (i % 2 === 0) outcomes.push(result as string);
    return Math.max(1, Math.ceil(SAMPLE_MS / Math.max(cpuMs() - t, 0.001)));
  });
  const samples = tasks.map(() => [] as number[]);
  // Sizes (and their parses) interleaved round by round, so a change in the machine's load falls on all of them.
  for (let r = 0; r < ROUNDS; r++) {
    tasks.forEach((task, i) => {
      const t = cpuMs();
      for (let b = 0; b < batches[i]!; b++) task();
      samples[i]!.push(((cpuMs() - t) / batches[i]!) * 1000);
    });
  }
  return family.sizes.map((s, i) => {
    const sorted = [...samples[2 * i]!].sort((a, b) => a - b);
    return {
      label: s.label, bytes: texts[i]!.length, median: median(sorted), p99: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!,
      parse: median(samples[2 * i + 1]!), outcome: outcomes[i]!,
    };
  });
}

async function main(): Promise<void> {
  const fragment = process.argv[2] ?? join(BENCH_DIR, '.data', 'results-bodies.md');
  const lib = await loadDist();
  const catalog = fixtureCatalog(lib, 'crm');
  const startLoad = loadavg()[0]!;
  emit('## Filter and connector bodies against their size (issue 26)');
  emit();
  emit(`compileFilter and compileConnectorPage of the built package on bodies over the example CRM's \`account\`, each family growing in one direction up to its cap and past it. Per size: the median and p99 of ${ROUNDS} samples (each a batch of compiles lasting ≥ ${SAMPLE_MS} ms, the sizes of a family interleaved round by round), in CPU time of the process (\`process.cpuUsage\`), because the machine is shared (load average ${fmt(startLoad, 1)} on ${cpus().length} cores at the start, ${fmt(loadavg()[0]!, 1)} at the end). "per byte vs smallest" divides the cost per byte of the body's JSON by that of the family's smallest size: near or below 1 is linear, a quadratic cost would grow like the size. Rows past a cap are refused before the work that grows with them, so their cost per byte falls. "JSON.parse µs" is the time to parse the same body's text, timed in the same rounds: the least a service spends on receiving it, and a yardstick that the machine's load moves as it moves the compile.`);
  emit();
  emit("Before the fix (figures from the issue): the 10,000-character number value took 320 ms (5,000: 74 ms, 20,000: 1.2 s, 50,000: 6.8 s), an in-list of 1,000 of them minutes, 100,000 unknown keys 205–229 ms, and a presence value nested 4,000 deep overflowed the stack.");
  emit();
  const details: string[] = [];
  const summary: (string | number)[][] = [];
  for (const family of families()) {
    progress(`bodies: ${family.title}`);
    const rows = measure(lib, catalog, family);
    const base = rows[0]!.median / rows[0]!.bytes;
    const perByte = rows.map((r) => r.median / r.bytes / base);
    const at = rows[family.cap]!;
    summary.push([family.title, at.label, at.bytes.toLocaleString('en-US'), fmt(at.median, 1), fmt(at.p99, 1), fmt(Math.max(...perByte.slice(0, family.cap + 1)), 2), fmt(at.median / at.parse, 2)]);
    details.push(`**${family.title}** (${family.front === 'filter' ? 'compileFilter' : 'compileConnectorPage'})`, '');
    details.push(table(['size', 'body bytes', 'median µs', 'p99 µs', 'ns per byte', 'per byte vs smallest', 'JSON.parse µs', 'compile / parse', 'outcome'], rows.map((r, i) => [
      `${r.label}${i > family.cap ? ' (past the cap)' : ''}`, r.bytes.toLocaleString('en-US'), fmt(r.median, 1), fmt(r.p99, 1), fmt((r.median * 1000) / r.bytes, 2), fmt(perByte[i]!, 2), fmt(r.parse, 1), fmt(r.median / r.parse, 2), r.outcome,
    ])), '');
  }
  emit('The largest size of each family within the caps ("worst per byte": the largest "per byte vs smallest" up to it):');
  emit();
  emit(table(['body', 'size', 'body bytes', 'median µs', 'p99 µs', 'worst per byte', 'compile / parse'], summary));
  emit();
  emit('<details><summary>Every size, and past the caps</summary>');
  emit();
  for (const line of details) emit(line);
  emit('</details>');
  emit();
  writeFileSync(fragment, `${out.join('\n')}\n`);
}

await main();
