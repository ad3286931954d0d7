import { readFileSync } from 'node:fs';
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

/** A deterministic random source in [0, 1) (mulberry32), so runs and generated inputs are comparable. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
