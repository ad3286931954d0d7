import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { buildBundles } from './built-bundles.js';
import type { PgClusterAddress } from './pg-cluster.js';
import { countClusterCpu, pgServerAvailable, startPgServer } from './pg-server.js';

/**
 * Vitest's global setup, run once before any test file: the bundles in dist/ built when stale
 * (built-bundles.ts), the empty PGlite cluster every test database is copied from
 * (pglite-template.ts) and the PostgreSQL cluster the files' databases are made on
 * (pg-cluster.ts), the three side by side.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = await Promise.allSettled([
    buildBundles(),
    setupPgliteTemplate((key, value) => project.provide(key, value)),
    setupPgCluster((key, value) => project.provide(key, value)),
  ]);
  const teardowns = started.flatMap((r) => (r.status === 'fulfilled' && typeof r.value === 'function' ? [r.value as () => void | Promise<void>] : []));
  const teardown = async (): Promise<void> => {
    for (const t of teardowns) await t();
  };
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    // What did start must not outlive the failed setup.
    await teardown();
    throw failed.reason;
  }
  return teardown;
}

/**
 * Starts the run's PostgreSQL cluster (pg-cluster.ts) and provides its address, or null where the
 * binaries are missing (the files that need them say so); returns a teardown that stops it. A
 * runner that dies without the teardown leaves it to pg-server.ts's watchdog, which stops the
 * cluster once this process is gone. Three files run at a time, each with its pools and services:
 * more connections than a cluster of one file's.
 */
export async function setupPgCluster(provide: (key: 'pgCluster', value: PgClusterAddress | null) => void): Promise<() => Promise<void>> {
  if (!pgServerAvailable()) {
    provide('pgCluster', null);
    return async () => {};
  }
  const server = await startPgServer({ settings: { max_connections: 300 } });
  provide('pgCluster', { host: server.host, port: server.port, socketDir: server.socketDir, logFile: server.logFile });
  return async () => {
    // Its CPU, for OQL_CPU_LOG (cpu-usage.ts): no file stops it, so no file counts it.
    const log = process.env.OQL_CPU_LOG;
    if (log) {
      const dataDir = join(server.socketDir, 'data');
      globalThis.oqlPostgresCpuSeconds = 0;
      countClusterCpu(dataDir);
      appendFileSync(log, `${JSON.stringify({ file: '(the shared PostgreSQL cluster)', boot: 0, collect: 0, self: 0, children: 0, postgres: globalThis.oqlPostgresCpuSeconds })}\n`);
    }
    await server.stop();
  };
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
