import { readFileSync, statSync } from 'node:fs';
import pg from 'pg';
import { startPgServer, startReplica, type PgServer, type PgServerOptions } from './pg-server.js';
import { startPgBouncer, type PgBouncer } from './pgbouncer.js';

/**
 * The databases of a fleet as docs/fleet.md deploys them: a PostgreSQL 15 primary, optionally a
 * streaming replica, PgBouncer in transaction mode in front of both, and a read role whose defaults
 * make a read one statement. Statements are logged (`log_statement = all`, each line prefixed with
 * its role and the backend's pid) so tests can read what actually reached each server.
 */

export const READER = 'oql_reader';

/** The read role, as docs/fleet.md creates it (run on the primary; a replica receives it). */
export function readRoleSetup(role: string, timeoutMs: number): string[] {
  return [
    `CREATE ROLE ${role} LOGIN`,
    `GRANT USAGE ON SCHEMA public TO ${role}`,
    `GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`,
    `ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO ${role}`,
    `ALTER ROLE ${role} SET default_transaction_read_only = on`,
    `ALTER ROLE ${role} SET statement_timeout = ${timeoutMs}`,
    `ALTER ROLE ${role} SET TimeZone = 'UTC'`,
    `ALTER ROLE ${role} SET DateStyle = 'ISO, YMD'`,
  ];
}

export interface FleetDatabases {
  readonly primary: PgServer;
  readonly replica: PgServer | undefined;
  readonly bouncer: PgBouncer;
  /** The primary through PgBouncer, as the superuser the service writes with. */
  readonly primaryUrl: string;
  /** The read role through PgBouncer: on the replica when there is one, else on the primary. */
  readonly readerUrl: string;
  /** Waits until the replica has replayed everything the primary has written so far. */
  caughtUp(): Promise<void>;
  stop(): Promise<void>;
}

export interface FleetDatabaseOptions {
  readonly replica?: boolean;
  /** The read role's statement_timeout; default 20000 (the service's default query timeout). */
  readonly readTimeoutMs?: number;
  /** More roles PgBouncer lets in (created by the test). */
  readonly users?: readonly string[];
  readonly poolSize?: number;
  readonly settings?: PgServerOptions['settings'];
}

export async function startFleetDatabases(options: FleetDatabaseOptions = {}): Promise<FleetDatabases> {
  const logging = { log_statement: 'all', log_line_prefix: "'%u %p '", max_connections: 100, ...options.settings };
  const primary = await startPgServer({ settings: logging });
  let replica: PgServer | undefined;
  let bouncer: PgBouncer | undefined;
  try {
    const admin = new pg.Client({ connectionString: primary.url });
    await admin.connect();
    try {
      for (const s of readRoleSetup(READER, options.readTimeoutMs ?? 20_000)) await admin.query(s);
    } finally {
      await admin.end();
    }
    if (options.replica) replica = await startReplica(primary, { settings: logging });
    bouncer = await startPgBouncer({
      fallback: { host: primary.host, port: primary.port },
      ...(replica ? { databases: { replica: { host: replica.host, port: replica.port, dbname: 'postgres' } } } : {}),
      users: ['postgres', READER, ...(options.users ?? [])],
      poolSize: options.poolSize ?? 20,
    });
    const b = bouncer;
    const r = replica;
    return {
      primary,
      replica,
      bouncer,
      primaryUrl: b.url('postgres', 'postgres'),
      readerUrl: b.url(r ? 'replica' : 'postgres', READER),
      caughtUp: () => (r ? waitForReplay(primary, r) : Promise.resolve()),
      stop: async () => {
        await b.stop().catch(() => {});
        await r?.stop().catch(() => {});
        await primary.stop();
      },
    };
  } catch (e) {
    await bouncer?.stop().catch(() => {});
    await replica?.stop().catch(() => {});
    await primary.stop();
    throw e;
  }
}

/** Polls the replica until its replay position reaches the primary's current WAL position. */
export async function waitForReplay(primary: PgServer, replica: PgServer, timeoutMs = 15_000): Promise<void> {
  const p = new pg.Client({ connectionString: primary.url });
  const r = new pg.Client({ connectionString: replica.url });
  await p.connect();
  await r.connect();
  try {
    const target = (await p.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0]!.lsn;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await r.query<{ done: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [target]);
      if (rows[0]!.done) return;
      if (Date.now() > deadline) throw new Error(`the replica did not replay up to ${target} within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await p.end();
    await r.end();
  }
}

export interface LoggedStatement {
  readonly role: string;
  readonly pid: number;
  /** `statement` (simple protocol) or `execute <name>` (extended protocol). */
  readonly kind: string;
  readonly text: string;
}

/**
 * A cursor over a server's statement log: `since()` returns the statements logged after the
 * previous call (or after the cursor was made), with their role and backend pid.
 */
export function statementLog(server: PgServer): { since(): LoggedStatement[] } {
  let offset = size(server.logFile);
  return {
    since() {
      const bytes = readFileSync(server.logFile);
      const fresh = bytes.subarray(offset).toString('utf8');
      offset = bytes.length;
      const out: LoggedStatement[] = [];
      for (const line of fresh.split('\n')) {
        const m = /^(\S+) (\d+) LOG:  (statement|execute [^:]+): (.*)$/.exec(line);
        if (m) out.push({ role: m[1]!, pid: Number(m[2]), kind: m[3]!, text: m[4]! });
      }
      return out;
    },
  };
}

function size(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
