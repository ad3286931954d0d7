import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { runtimeError } from './errors.js';

/**
 * Who holds an embedded database's directory. Two Postgres instances writing one directory
 * destroy it, and PGlite checks nothing (its postmaster.pid is left behind by every process that
 * dies, and ignored), so the process that opens a directory writes `oql.lock` into it: its pid
 * and host, as JSON. A lock whose process is gone is stale and taken over.
 *
 * Commands that must not run beside a server on the same directory ask `dataDirOwner`.
 */

export const LOCK_FILE = 'oql.lock';

interface LockContent {
  readonly pid: number;
  readonly host: string;
  readonly startedAt: string;
}

/** Directories this process holds, by resolved path: a pid equal to ours is only ours if listed here. */
const held = new Set<string>();

/** The process holding `dir`, or null when nobody does (no lock, or a stale one). */
export function dataDirOwner(dir: string): { pid: number; host: string } | null {
  const path = resolve(dir);
  const current = readLock(path);
  return current !== undefined && isLive(path, current.lock) ? { pid: current.lock.pid, host: current.lock.host } : null;
}

/**
 * Takes the lock on `dir` (created when missing) or throws DATABASE_ERROR naming the holder.
 * Returns the release function, which removes the lock only while it is still this process's.
 */
export function lockDataDir(dir: string): () => void {
  const path = resolve(dir);
  const file = join(path, LOCK_FILE);
  const mine = `${JSON.stringify({ pid: process.pid, host: hostname(), startedAt: new Date().toISOString() } satisfies LockContent)}\n`;
  // Written aside, then linked into place: link fails when the lock exists, so of two processes
  // starting at once exactly one gets it, and nobody ever reads a half-written lock.
  const draft = join(path, `${LOCK_FILE}.${process.pid}.${Math.random().toString(36).slice(2)}`);
  try {
    // Private to the service's user, like everything the database writes in it (./data-dir-mode.ts).
    mkdirSync(path, { recursive: true, mode: 0o700 });
    writeFileSync(draft, mine, { mode: 0o600 });
  } catch (e) {
    throw cannotLock(path, e);
  }
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        createExclusive(draft, file, mine);
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw cannotLock(path, e);
      }
      // Another process is taking the directory at this very moment: after a few rounds, it has it.
      const current = readLock(path);
      if (current !== undefined && (isLive(path, current.lock) || attempt >= 2)) throw heldBy(path, current.lock);
      if (attempt >= 5) throw heldBy(path, { pid: 0, host: '', startedAt: '' });
      if (current !== undefined) removeStale(file, current.text);
    }
  } finally {
    rmSync(draft, { force: true });
  }
  held.add(path);
  return () => {
    if (!held.delete(path)) return;
    if (readLock(path)?.text === mine) rmSync(file, { force: true });
  };
}

/** Puts the draft in place as `file`; EEXIST when there is one. */
function createExclusive(draft: string, file: string, content: string): void {
  try {
    linkSync(draft, file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // File systems without hard links: O_EXCL is just as exclusive, only not written in one step.
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw e;
    writeFileSync(file, content, { flag: 'wx', mode: 0o600 });
  }
}

/** The lock of a directory, parsed, with its text; undefined when there is none. */
function readLock(path: string): { lock: LockContent; text: string } | undefined {
  let text: string;
  try {
    text = readFileSync(join(path, LOCK_FILE), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const value = JSON.parse(text) as Partial<LockContent>;
    if (Number.isSafeInteger(value.pid) && (value.pid as number) > 0) {
      return { lock: { pid: value.pid as number, host: String(value.host ?? ''), startedAt: String(value.startedAt ?? '') }, text };
    }
  } catch {
    // Not JSON: cut short by a crash while it was written (only drafts are written in place, so
    // this is a file someone else put there). Stale.
  }
  return { lock: { pid: 0, host: '', startedAt: '' }, text };
}

function isLive(path: string, lock: LockContent): boolean {
  if (lock.pid === 0) return false;
  // Another host's pid says nothing here: only its owner can tell it is stale.
  if (lock.host !== '' && lock.host !== hostname()) return true;
  // Our own pid on a directory we do not hold is a previous life of a process that was given the
  // same pid (pid 1 in a container restarted after a crash).
  if (lock.pid === process.pid) return held.has(path);
  try {
    process.kill(lock.pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to another user.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Moves a stale lock aside and deletes it. The rename is one step: if another process replaced
 * the stale lock with its own since we read it, what was moved is that live lock, and it is put
 * back (by link, which overwrites nothing) for the next attempt to find.
 */
function removeStale(file: string, staleText: string): void {
  const aside = `${file}.stale.${process.pid}`;
  try {
    renameSync(file, aside);
  } catch {
    return; // gone already: the next attempt sees what is there now
  }
  try {
    if (readFileSync(aside, 'utf8') !== staleText) linkSync(aside, file);
  } catch {
    // Unreadable, or someone took the place meanwhile: their lock stands.
  }
  rmSync(aside, { force: true });
}

function heldBy(path: string, lock: LockContent): Error {
  const who = lock.pid === 0 ? 'another process' : `process ${lock.pid}${lock.host && lock.host !== hostname() ? ` on host ${lock.host}` : ''}`;
  return runtimeError('DATABASE_ERROR', `the embedded database in '${path}' is in use by ${who}`, {
    hint: `stop that process, or use another directory (--data-dir) or --memory; if that process is not running, delete ${join(path, LOCK_FILE)}`,
  });
}

function cannotLock(path: string, cause: unknown): Error {
  return runtimeError('DATABASE_ERROR', `cannot open the embedded database in '${path}': ${(cause as Error).message}`, {
    hint: 'check that the directory can be created and written, or use another directory (--data-dir) or --memory',
    cause,
  });
}
