import pg from 'pg';
import { inject } from 'vitest';
import type { PgServer } from './pg-server.js';

/**
 * One PostgreSQL cluster per run, a database of its own for each file that asks.
 *
 * initdb and a server's start cost a file about two seconds of CPU, and most files that need a real
 * PostgreSQL only need a database: the global setup (global-setup.ts, `setupPgCluster`) starts one
 * cluster beside the bundles and the PGlite template, and `startPgDatabase` creates a fresh, empty
 * database on it for the caller. Nothing of one file reaches another's database: schemas, rows,
 * advisory locks and sessions are per database. What is per cluster stays with the files that
 * start a server of their own (`startPgServer`): settings, roles, replicas, a server stopped or
 * killed on purpose, and statements watched in pg_stat_activity across databases.
 *
 * The cluster stops at the run's end (the global setup's teardown), and when the runner dies
 * without it by pg-server.ts's watchdog, which watches the runner's process.
 */

export interface PgClusterAddress {
  readonly host: string;
  readonly port: number;
  readonly socketDir: string;
  readonly logFile: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's shared PostgreSQL cluster, or null where the binaries are missing. */
    pgCluster: PgClusterAddress | null;
  }
}

let created = 0;

/**
 * A new, empty database on the run's cluster, as a `PgServer` whose `url` names it; `stop()`
 * drops it once its sessions have ended. It does not end them itself (`WITH (FORCE)` would send
 * each a FATAL message, and a client still closing reports it as an error of the file): sessions
 * that outlive the file keep their database until the cluster stops at the run's end.
 */
export async function startPgDatabase(): Promise<PgServer> {
  const cluster = inject('pgCluster');
  if (!cluster) throw new Error('the run has no PostgreSQL cluster: the server binaries are missing (apt-get install postgresql-15)');
  // The worker's pid keeps the name apart from the files run beside this one.
  const name = `oql_${process.pid}_${++created}`;
  const base = `postgres://postgres@${cluster.host}:${cluster.port}`;
  // FILE_COPY copies template1's files (and checkpoints, cheap without fsync); PostgreSQL 15's
  // default writes every block of it to the WAL instead: 0.1 s of the cluster's CPU a database
  // against 0.03 s.
  await admin(`${base}/postgres`, `CREATE DATABASE ${name} STRATEGY FILE_COPY`);
  let dropped = false;
  return {
    url: `${base}/${name}`,
    host: cluster.host,
    port: cluster.port,
    socketDir: cluster.socketDir,
    logFile: cluster.logFile,
    async stop() {
      if (dropped) return;
      dropped = true;
      try {
        // PostgreSQL waits up to 5 s for the sessions still closing.
        await admin(`${base}/postgres`, `DROP DATABASE IF EXISTS ${name}`);
      } catch (e) {
        if ((e as { code?: string }).code !== OBJECT_IN_USE) throw e;
      }
    },
  };
}

/** SQLSTATE 55006: "database … is being accessed by other users". */
const OBJECT_IN_USE = '55006';

async function admin(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
