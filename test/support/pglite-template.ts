import { readFileSync } from 'node:fs';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { inject } from 'vitest';

/**
 * One empty PGlite cluster per run, copied into every PGlite a test file starts.
 *
 * `PGlite.create()` on an empty directory runs initdb inside WebAssembly, most of the time a
 * PGlite takes to start: with both cores busy with other work, 15-22 s, where a start from a copy
 * of an initialized directory took 3-6 s. The global setup (global-setup.ts,
 * `setupPgliteTemplate`) runs it once and writes the cluster's directory as a tar file;
 * `emptyPglite` starts each database from a copy of that file instead. Each database is still
 * its own: nothing a test writes reaches the file or another database.
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** The tar file of an empty, freshly initialized PGlite data directory. */
    pgliteTemplate: string;
  }
}

let template: Blob | undefined;

/** A new PGlite on a copy of the run's empty cluster (options as `PGlite.create` takes them). */
export async function emptyPglite(options: Omit<PGliteOptions, 'loadDataDir' | 'dataDir'> = {}): Promise<PGlite> {
  template ??= new Blob([readFileSync(inject('pgliteTemplate'))]);
  return PGlite.create({ ...options, loadDataDir: template });
}
