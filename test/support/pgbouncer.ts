import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { chownToUser, shellQuote } from './pg-server.js';
import { freePort } from './ports.js';

/**
 * Debian's PgBouncer in front of throwaway clusters (./pg-server.ts), for tests and benchmarks of
 * the service as a fleet deploys it. Transaction pooling by default: a server connection belongs to
 * a client for one transaction only, so anything that leaned on session state (a session SET, a
 * session advisory lock, a named prepared statement) would break or leak between clients.
 *
 * Listens on 127.0.0.1 at a free port, trusts every user it lists, and stops by `stop()`, at
 * process exit, or, should the test process die without running either, by a detached watchdog.
 */

export const PGBOUNCER_BIN = process.env.OQL_PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';

export interface Upstream {
  readonly host: string;
  readonly port: number;
  /** The database on the server; default the alias's own name. */
  readonly dbname?: string;
}

export interface PgBouncerOptions {
  /** `* = …` upstream: every database name not listed in `databases` goes here. */
  readonly fallback: Upstream;
  /** Named aliases, e.g. `{ replica: { host, port, dbname: 'postgres' } }`. */
  readonly databases?: Readonly<Record<string, Upstream>>;
  /** Roles clients connect as (each must exist on the servers). Default ['postgres']. */
  readonly users?: readonly string[];
  /** Default transaction. */
  readonly poolMode?: 'transaction' | 'session' | 'statement';
  /** Server connections per (database, user). Default 20. */
  readonly poolSize?: number;
  /** More `[pgbouncer]` settings. */
  readonly settings?: Readonly<Record<string, string | number>>;
}

export interface PgBouncer {
  readonly host: string;
  readonly port: number;
  /** `postgres://<user>@127.0.0.1:<port>/<database>` */
  url(database?: string, user?: string): string;
  /** PgBouncer's log (connections, errors). */
  log(): string;
  stop(): Promise<void>;
}

export function pgBouncerAvailable(): boolean {
  return existsSync(PGBOUNCER_BIN);
}

const started = new Set<{ child: ChildProcess; dir: string }>();
let exitHook = false;

export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  if (!pgBouncerAvailable()) {
    throw new Error(`PgBouncer not found at ${PGBOUNCER_BIN}: install it with \`apt-get install -y pgbouncer\` (scripts/ensure-postgres.sh does) or set OQL_PGBOUNCER_BIN`);
  }
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const b of started) stopSync(b);
    });
  }
  const dir = mkdtempSync(join(tmpdir(), 'oql-pgbouncer-'));
  const asRoot = userInfo().uid === 0;
  // PgBouncer will not run as root: it drops to the postgres user, which must read its files.
  if (asRoot) chownToUser(dir, 'postgres');
  const users = options.users ?? ['postgres'];
  writeFileSync(join(dir, 'userlist.txt'), users.map((u) => `"${u}" ""\n`).join(''));
  let lastError: unknown;
  for (let attempt = 0; attempt < 4; attempt++) {
    const port = await freePort();
    writeFileSync(join(dir, 'pgbouncer.ini'), config(dir, port, options));
    if (asRoot) chownToUser(join(dir, 'pgbouncer.ini'), 'postgres');
    const child = spawn(PGBOUNCER_BIN, [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => void (stderr += c.toString('utf8')));
    const entry = { child, dir };
    started.add(entry);
    try {
      await listening(port, child);
      watchdog(child.pid!, dir);
      return {
        host: '127.0.0.1',
        port,
        url: (database = 'postgres', user = 'postgres') => `postgres://${user}@127.0.0.1:${port}/${database}`,
        log: () => readLog(dir),
        stop: async () => {
          if (!started.delete(entry)) return;
          const exited = new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
          child.kill('SIGTERM');
          await exited;
          rmSync(dir, { recursive: true, force: true });
        },
      };
    } catch (e) {
      started.delete(entry);
      child.kill('SIGKILL');
      lastError = new Error(`pgbouncer did not start on port ${port}: ${(e as Error).message}\n${stderr}${readLog(dir).slice(-2000)}`);
    }
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError;
}

function config(dir: string, port: number, o: PgBouncerOptions): string {
  const upstream = (u: Upstream, name?: string): string => `host=${u.host} port=${u.port}${u.dbname ?? name ? ` dbname=${u.dbname ?? name}` : ''}`;
  const settings: Record<string, string | number> = {
    listen_addr: '127.0.0.1',
    listen_port: port,
    unix_socket_dir: '',
    auth_type: 'trust',
    auth_file: join(dir, 'userlist.txt'),
    pool_mode: o.poolMode ?? 'transaction',
    default_pool_size: o.poolSize ?? 20,
    max_client_conn: 500,
    // node-postgres sends none of these; other drivers send extra_float_digits.
    ignore_startup_parameters: 'extra_float_digits',
    logfile: join(dir, 'pgbouncer.log'),
    pidfile: join(dir, 'pgbouncer.pid'),
    admin_users: 'postgres',
    ...o.settings,
  };
  return [
    '[databases]',
    ...Object.entries(o.databases ?? {}).map(([name, u]) => `${name} = ${upstream(u, name)}`),
    `* = ${upstream(o.fallback)}`,
    '',
    '[pgbouncer]',
    ...Object.entries(settings).map(([k, v]) => `${k} = ${String(v)}`),
    '',
  ].join('\n');
}

/** Resolves once the port accepts a connection; rejects when the process exits first or after 15 s. */
async function listening(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited with ${child.exitCode ?? child.signalCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('not listening after 15 s');
}

/** A detached shell that ends PgBouncer once the test process is gone (SIGKILL, OOM). */
function watchdog(pid: number, dir: string): void {
  const script = `while kill -0 ${process.pid} 2>/dev/null && kill -0 ${pid} 2>/dev/null; do sleep 1; done; ` +
    `kill -TERM ${pid} 2>/dev/null; sleep 1; rm -rf ${shellQuote(dir)}`;
  spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore' }).unref();
}

function stopSync(b: { child: ChildProcess; dir: string }): void {
  started.delete(b);
  try {
    b.child.kill('SIGTERM');
  } catch {
    // Already gone.
  }
  rmSync(b.dir, { recursive: true, force: true });
}

function readLog(dir: string): string {
  try {
    return readFileSync(join(dir, 'pgbouncer.log'), 'utf8');
  } catch {
    return '';
  }
}
