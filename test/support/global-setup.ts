import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { buildBundles } from './built-bundles.js';

/**
 * Vitest's global setup, run once before any test file: the bundles in dist/ built when stale
 * (built-bundles.ts) and the empty PGlite cluster every test database is copied from
 * (pglite-template.ts), the two side by side.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const [, teardown] = await Promise.all([buildBundles(), setupPgliteTemplate((key, value) => project.provide(key, value))]);
  return teardown;
}

/**
 * Makes the template test files read with `emptyPglite` (pglite-template.ts, which imports vitest
 * and so cannot be imported here); returns a teardown that removes it.
 */
export async function setupPgliteTemplate(provide: (key: 'pgliteTemplate', value: string) => void): Promise<() => void> {
  const dir = mkdtempSync(join(tmpdir(), 'oql-pglite-template-'));
  const file = join(dir, 'empty.tar');
  const db = await PGlite.create();
  try {
    writeFileSync(file, Buffer.from(await (await db.dumpDataDir('none')).arrayBuffer()));
  } finally {
    await db.close();
  }
  provide('pgliteTemplate', file);
  return () => rmSync(dir, { recursive: true, force: true });
}
