import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { serve, type Served } from '../support/oql-serve.js';

/**
 * A clean stop, as a terminal (Ctrl+C: SIGINT to the whole process group) and a supervisor
 * (SIGTERM to every process of the service) give it: `oql serve` closes its embedded database
 * itself and exits 0, saying nothing failed, and no database process outlives it.
 */

const started: Served[] = [];

afterAll(async () => {
  for (const s of started) if (s.child.exitCode === null && s.child.signalCode === null) await s.stop('SIGKILL');
});

/** The processes whose parent is `pid`, read from /proc. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // Gone while listed.
    }
  }
  return out;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

function databaseProcesses(pid: number): number[] {
  return childrenOf(pid).filter((p) => {
    try {
      return readFileSync(`/proc/${p}/environ`, 'utf8').includes('OQL_PGLITE_PROCESS=');
    } catch {
      return false;
    }
  });
}

describe('oql serve stops cleanly on a signal to its process group', () => {
  // The signal goes as soon as the server says it listens: its handlers are installed before that
  // line (a busy run once saw the default action end the process when they came after it).
  it.each(['SIGINT', 'SIGTERM'] as const)('%s: exit 0, no failure reported, no database process left', async (signal) => {
    const s = await serve(['--memory', '--demo'], { OQL_LOG_LEVEL: 'warn' }, { ownGroup: true });
    started.push(s);
    const pid = s.child.pid!;
    const database = databaseProcesses(pid);
    expect(database.length, 'the embedded database runs in a process of the server').toBeGreaterThan(0);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => s.child.once('exit', (code, sig) => done({ code, signal: sig })));
    process.kill(-pid, signal);
    expect(await exited, s.stderr()).toEqual({ code: 0, signal: null });
    expect(s.stderr()).toContain(`oql serve: ${signal}, finishing requests in flight`);
    expect(s.stderr()).not.toMatch(/fail/i);
    // The server closed its database before it exited: the process was ended, not orphaned.
    expect(database.filter(isAlive)).toEqual([]);
  }, 180_000);
});
