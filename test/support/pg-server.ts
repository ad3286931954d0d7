import { execFile, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports.js';

/**
 * A throwaway PostgreSQL 15 cluster (and, with `startReplica`, a streaming replica of it) for tests and benchmarks that need a real server
 * (statement timeouts, concurrent connections, big datasets). Each call makes its own data
 * directory in the system temp dir, listens on 127.0.0.1 at a free port (and on a Unix socket in
 * the same directory), trusts every local connection and runs without fsync.
 *
 * The server is stopped by `stop()`, at process exit, on SIGINT/SIGTERM/SIGHUP, and, should the
 * test process die without running any of those (SIGKILL, OOM), by a detached watchdog that
 * notices the parent is gone.
 */

const run = promisify(execFile);

/** Where the binaries are; OQL_PG_BIN overrides (for a different major version or layout). */
export const PG_BIN = process.env.OQL_PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface PgServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Directory holding the Unix socket (`host` for a socket connection). */
  readonly socketDir: string;
  /** The server's log file (statements appear in it with `log_statement: 'all'`). */
  readonly logFile: string;
  /** Stops the server at once and deletes its files; safe to call twice. */
  stop(): Promise<void>;
}

export interface PgServerOptions {
  /** Extra `postgres -c name=value` settings, e.g. `{ max_connections: 50, shared_buffers: '256MB' }`. */
  readonly settings?: Readonly<Record<string, string | number | boolean>>;
  /** Seconds to wait for start-up. Default 60. */
  readonly startTimeoutSeconds?: number;
}

/** Whether the PostgreSQL binaries are installed (CI installs `postgresql-15` with apt-get). */
export function pgServerAvailable(): boolean {
  return ['initdb', 'pg_ctl', 'postgres'].every((b) => existsSync(join(PG_BIN, b)));
}

interface Running {
  readonly dir: string;
  readonly dataDir: string;
  readonly asPostgres: boolean;
  watchdog: number | undefined;
}

const running = new Set<Running>();
let handlersInstalled = false;

export async function startPgServer(options: PgServerOptions = {}): Promise<PgServer> {
  if (!pgServerAvailable()) {
    throw new Error(
      `PostgreSQL server binaries not found in ${PG_BIN} (initdb, pg_ctl, postgres). ` +
        'Install them with `apt-get install -y postgresql-15` or set OQL_PG_BIN.',
    );
  }
  installExitHandlers();
  // initdb refuses to run as root, so as root everything runs as the `postgres` user.
  const asPostgres = userInfo().uid === 0;
  const dir = mkdtempSync(join(tmpdir(), 'oql-pg-'));
  const dataDir = join(dir, 'data');
  const entry: Running = { dir, dataDir, asPostgres, watchdog: undefined };
  running.add(entry);
  try {
    if (asPostgres) chownToUser(dir, 'postgres');
    await pgExec(asPostgres, 'initdb', ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    entry.watchdog = startWatchdog(entry);
    const port = await startOnFreePort(entry, options);
    return handle(entry, port);
  } catch (e) {
    await stopServer(entry);
    throw e;
  }
}

function handle(entry: Running, port: number): PgServer {
  const host = '127.0.0.1';
  return {
    url: `postgres://postgres@${host}:${port}/postgres`,
    host,
    port,
    socketDir: entry.dir,
    logFile: join(entry.dir, 'server.log'),
    stop: () => stopServer(entry),
  };
}

/**
 * A streaming replica of `primary` (hot standby): `pg_basebackup -R` of the running cluster,
 * started as a second cluster on its own free port, read-only, replaying the primary's WAL.
 * `primary` must keep running while the replica does; stop the replica first.
 */
export async function startReplica(primary: PgServer, options: PgServerOptions = {}): Promise<PgServer> {
  installExitHandlers();
  const asPostgres = userInfo().uid === 0;
  const dir = mkdtempSync(join(tmpdir(), 'oql-pg-replica-'));
  const dataDir = join(dir, 'data');
  const entry: Running = { dir, dataDir, asPostgres, watchdog: undefined };
  running.add(entry);
  try {
    if (asPostgres) chownToUser(dir, 'postgres');
    // -R writes standby.signal and primary_conninfo; -X stream copies the WAL the backup needs.
    await pgExec(asPostgres, 'pg_basebackup', ['-D', dataDir, '-h', primary.host, '-p', String(primary.port), '-U', 'postgres', '-R', '-X', 'stream', '--no-sync']);
    entry.watchdog = startWatchdog(entry);
    const port = await startOnFreePort(entry, options);
    return handle(entry, port);
  } catch (e) {
    await stopServer(entry);
    throw e;
  }
}

/** A port taken between probing and binding makes start-up fail: try a few ports. */
async function startOnFreePort(entry: Running, options: PgServerOptions): Promise<number> {
  const settings: Record<string, string | number | boolean> = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: entry.dir,
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    max_connections: 40,
    ...options.settings,
  };
  const logFile = join(entry.dir, 'server.log');
  let lastError: unknown;
  for (let attempt = 0; attempt < 4; attempt++) {
    const port = await freePort();
    const flags = [`-p ${port}`, ...Object.entries(settings).map(([k, v]) => `-c ${k}=${String(v)}`)].join(' ');
    try {
      await pgExec(entry.asPostgres, 'pg_ctl', [
        '-D', entry.dataDir, '-l', logFile, '-w', '-t', String(options.startTimeoutSeconds ?? 60), '-o', flags, 'start',
      ]);
      return port;
    } catch (e) {
      lastError = new Error(`pg_ctl start failed on port ${port}: ${(e as Error).message}\n${tail(logFile)}`);
    }
  }
  throw lastError;
}

async function stopServer(entry: Running): Promise<void> {
  if (!running.delete(entry)) return;
  try {
    if (existsSync(join(entry.dataDir, 'postmaster.pid'))) {
      if (process.env.OQL_CPU_LOG) countClusterCpu(entry.dataDir);
      await pgExec(entry.asPostgres, 'pg_ctl', ['-D', entry.dataDir, '-m', 'immediate', '-w', 'stop']);
    }
  } finally {
    killWatchdog(entry);
    rmSync(entry.dir, { recursive: true, force: true });
  }
}

/**
 * Adds the CPU a cluster has spent to `globalThis.oqlPostgresCpuSeconds` (test/support/cpu-usage.ts):
 * the postmaster's own, its exited backends' and its live ones'.
 */
export function countClusterCpu(dataDir: string): void {
  try {
    const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    let seconds = 0;
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const ppid = Number(fields[1]);
        if (Number(pid) !== postmaster && ppid !== postmaster) continue;
        const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(fields[i]) / 100);
        seconds += utime! + stime! + (Number(pid) === postmaster ? cutime! + cstime! : 0);
      } catch {
        // The process ended meanwhile.
      }
    }
    globalThis.oqlPostgresCpuSeconds = (globalThis.oqlPostgresCpuSeconds ?? 0) + seconds;
  } catch {
    // No pid file: nothing ran.
  }
}

/** Synchronous, for `exit` and signal handlers, which cannot wait for promises. */
function stopServerSync(entry: Running): void {
  if (!running.delete(entry)) return;
  try {
    if (existsSync(join(entry.dataDir, 'postmaster.pid'))) {
      const [file, args] = command(entry.asPostgres, 'pg_ctl', ['-D', entry.dataDir, '-m', 'immediate', '-w', 'stop']);
      execFileSync(file, args, { stdio: 'ignore', timeout: 30_000 });
    }
  } catch {
    // Best effort: the process is going away.
  } finally {
    killWatchdog(entry);
    rmSync(entry.dir, { recursive: true, force: true });
  }
}

function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.once('exit', () => {
    for (const entry of [...running]) stopServerSync(entry);
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      for (const entry of [...running]) stopServerSync(entry);
      // Restore the default behaviour and die of the same signal.
      process.removeListener(signal, onSignal);
      process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

/**
 * A detached shell that outlives a killed test process: once the parent pid is gone it stops the
 * server and removes the directory. It polls once a second and exits when the directory is gone.
 */
function startWatchdog(entry: Running): number | undefined {
  const [pgCtl, pgCtlArgs] = command(entry.asPostgres, 'pg_ctl', ['-D', entry.dataDir, '-m', 'immediate', 'stop']);
  const stopCmd = [pgCtl, ...pgCtlArgs].map(shellQuote).join(' ');
  const script =
    `while kill -0 ${process.pid} 2>/dev/null && [ -d ${shellQuote(entry.dir)} ]; do sleep 1; done; ` +
    `if [ -d ${shellQuote(entry.dir)} ]; then ${stopCmd} >/dev/null 2>&1; rm -rf ${shellQuote(entry.dir)}; fi`;
  const child = spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore' });
  child.unref();
  return child.pid;
}

function killWatchdog(entry: Running): void {
  if (entry.watchdog === undefined) return;
  try {
    process.kill(entry.watchdog, 'SIGTERM');
  } catch {
    // Already gone.
  }
  entry.watchdog = undefined;
}

function command(asPostgres: boolean, binary: string, args: readonly string[]): [string, string[]] {
  const path = join(PG_BIN, binary);
  return asPostgres ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, [...args]];
}

async function pgExec(asPostgres: boolean, binary: string, args: readonly string[]): Promise<void> {
  const [file, argv] = command(asPostgres, binary, args);
  try {
    await run(file, argv, { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 });
  } catch (e) {
    const err = e as Error & { stderr?: string; stdout?: string };
    throw new Error(`${binary} failed: ${err.message}\n${err.stderr ?? ''}${err.stdout ?? ''}`);
  }
}

export function chownToUser(path: string, user: string): void {
  const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
  // mkdtemp made an empty directory: chowning it is the whole tree.
  chownSync(path, uid, gid);
}

export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '';
  }
}
