import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import type { Catalog } from '../src/catalog/types.js';
import type { FixtureName } from './corpus.js';

/** The public API, typed from the source but loaded from the built package. */
export type OqlModule = typeof import('../src/index.js');

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const REPO_DIR = resolve(BENCH_DIR, '..');

/**
 * The built package that is benchmarked. run.mjs snapshots dist/ into bench/.data so a
 * concurrent `npm run build` (which cleans dist/) cannot pull it away mid-run.
 */
export function distPath(): string {
  return process.env.OQL_BENCH_DIST ?? join(REPO_DIR, 'dist', 'index.js');
}

export async function loadDist(): Promise<OqlModule> {
  return (await import(pathToFileURL(distPath()).href)) as OqlModule;
}

export function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** A fixture catalog built by the package's own loader from the fixture files. */
export function fixtureCatalog(lib: OqlModule, name: FixtureName): Catalog {
  if (name === 'crm') {
    const codes = readJson(join(REPO_DIR, 'fixtures/crm/type-codes.json')) as Record<string, string>;
    return lib.loadCatalog(readJson(join(REPO_DIR, 'fixtures/crm/objects-list.json')), { typeCodes: codes });
  }
  return lib.loadCatalog(readJson(join(REPO_DIR, 'fixtures/helpdesk/schema.json')));
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * The median of whole-µs samples, interpolated inside its 1 µs bin (the grouped median), so
 * figures of a few tens of µs are not rounded to the clock's step.
 */
export function groupedMedian(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s[s.length >> 1]!;
  const below = s.filter((x) => x < m).length;
  const within = s.filter((x) => x === m).length;
  return m - 0.5 + (s.length / 2 - below) / within;
}

/** The p-th percentile (nearest rank) of `xs`. */
export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

export function progress(msg: string): void {
  process.stderr.write(`[bench] ${msg}\n`);
}

export function fmt(x: number, digits = 1): string {
  if (!Number.isFinite(x)) return 'n/a';
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A GitHub-flavoured Markdown table. */
export function table(head: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const line = (cells: readonly (string | number)[]) => `| ${cells.map((c) => String(c).replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/** A deterministic random source in [0, 1), so runs and generated inputs are comparable: the demo data's. */
export { mulberry32 as rng } from '../src/demo/generate.js';

/** A child `node` run: wall time from spawn to exit, and the JSON it printed (its own phases and CPU time). */
export interface ChildRun {
  readonly ms: number;
  readonly out: Record<string, number>;
}

export function timedNode(argv: readonly string[]): ChildRun {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, argv, { encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`child node ${argv.join(' ')} failed: ${r.stderr}`);
  return { ms, out: JSON.parse(r.stdout) as Record<string, number> };
}

/** Bare `node -e` that prints its own CPU time: the cold start's baseline, measured the same way. */
export const BARE_NODE: readonly string[] = ['-e', 'const u = process.cpuUsage(); process.stdout.write(JSON.stringify({ cpuMs: (u.user + u.system) / 1000 }))'];

/** bench/cold-start.mjs on the ES module build at `dist`: import, load the example catalog, compile one query. */
export function coldStartArgs(dist: string): string[] {
  return [join(BENCH_DIR, 'cold-start.mjs'), dist, join(REPO_DIR, 'fixtures/crm/objects-list.json'), join(REPO_DIR, 'fixtures/crm/type-codes.json')];
}

/**
 * Resident memory of this process and every process it started, in bytes (Linux's /proc): the
 * embedded database runs in processes of its own, which a bench that reads only its own RSS would
 * leave out. Elsewhere, this process's RSS alone.
 */
export function treeRss(): number {
  let stats: string[];
  try {
    stats = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return process.memoryUsage().rss;
  }
  const children = new Map<number, number[]>();
  for (const pid of stats) {
    try {
      // The command name (2nd field) is in parentheses and may hold spaces: the parent pid is the 2nd field after it.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(pid)]);
    } catch {
      // The process ended while the list was read.
    }
  }
  let total = 0;
  const pending = [process.pid];
  while (pending.length > 0) {
    const pid = pending.pop()!;
    try {
      // statm counts pages; x86-64 Linux pages are 4 KiB.
      total += Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * 4096;
    } catch {
      // Ended meanwhile.
    }
    pending.push(...(children.get(pid) ?? []));
  }
  return total;
}
