import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import { dataDirOwner, lockDataDir, LOCK_FILE } from '../../src/run/data-dir-lock.js';
import { EmbeddedDatabase } from '../../src/run/drivers/pglite/supervisor.js';
import { failure } from '../support/failure.js';
import { NODE_FLAGS } from '../support/node-flags.js';

/** The lock on an embedded database's directory, held and contested by real processes. */

const MODULE = resolve(import.meta.dirname, '../../src/run/data-dir-lock.ts');
const dirs: string[] = [];
const children: ChildProcess[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'oql-lock-'));
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * Another process that tries to lock `dir` and says 'locked' or the error code, then stays alive
 * (holding what it got) until it is killed.
 */
function locker(dir: string): { child: ChildProcess; said: Promise<string> } {
  const script = `import(${JSON.stringify(MODULE)}).then((m) => {
    try { m.lockDataDir(${JSON.stringify(dir)}); process.stdout.write('locked\\n'); }
    catch (e) { process.stdout.write((e.code ?? e.message) + '\\n'); }
    setInterval(() => {}, 1000);
  });`;
  const child = spawn(process.execPath, [...NODE_FLAGS, '--import', 'tsx', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const said = new Promise<string>((done, fail) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) done(out.trim());
    });
    child.on('exit', (code) => fail(new Error(`the locking process exited (${code}) before answering`)));
  });
  return { child, said };
}

async function killed(child: ChildProcess): Promise<void> {
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}

describe('the data directory lock', () => {
  it('another live process holding the directory makes open fail with a hint; its death frees it', async () => {
    const dir = tempDir();
    const other = locker(dir);
    expect(await other.said).toBe('locked');
    expect(dataDirOwner(dir)).toEqual({ pid: other.child.pid, host: hostname() });

    const e = await failure(EmbeddedDatabase.open({ dataDir: dir }));
    expect(e.code).toBe('DATABASE_ERROR');
    expect(e.message).toBe(`the embedded database in '${dir}' is in use by process ${other.child.pid}`);
    expect(e.hint).toContain('--data-dir');
    expect(e.hint).toContain('--memory');
    expect(e.hint).toContain(`delete ${join(dir, LOCK_FILE)}`);
    expect(() => lockDataDir(dir)).toThrow(OqlError);

    // Killed, it leaves its lock behind: stale, since its pid is gone.
    await killed(other.child);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
    expect(dataDirOwner(dir)).toBeNull();
    const release = lockDataDir(dir);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    expect(dataDirOwner(dir)).toEqual({ pid: process.pid, host: hostname() });
    release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    expect(dataDirOwner(dir)).toBeNull();
  });

  it('a directory this process holds cannot be locked twice, under a relative path either', () => {
    const dir = tempDir();
    const release = lockDataDir(dir);
    try {
      expect(() => lockDataDir(relative(process.cwd(), dir))).toThrow(`is in use by process ${process.pid}`);
    } finally {
      release();
    }
  });

  it('our own pid in a lock we do not hold is a previous process that had it (a restarted container), so stale', () => {
    const dir = tempDir();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: process.pid, host: hostname(), startedAt: '2020-01-01T00:00:00.000Z' }));
    expect(dataDirOwner(dir)).toBeNull();
    lockDataDir(dir)();
  });

  it('a lock that is not JSON is stale; one from another host is respected', () => {
    const dir = tempDir();
    writeFileSync(join(dir, LOCK_FILE), '{"pid": 12');
    expect(dataDirOwner(dir)).toBeNull();
    lockDataDir(dir)();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: 1, host: 'elsewhere.example', startedAt: '' }));
    expect(dataDirOwner(dir)).toEqual({ pid: 1, host: 'elsewhere.example' });
    expect(() => lockDataDir(dir)).toThrow('is in use by process 1 on host elsewhere.example');
  });

  it('releasing leaves a lock that is no longer ours alone', () => {
    const dir = tempDir();
    const release = lockDataDir(dir);
    const theirs = JSON.stringify({ pid: 1, host: hostname(), startedAt: 'x' });
    writeFileSync(join(dir, LOCK_FILE), theirs);
    release();
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe(theirs);
  });

  it('of two processes taking over a stale lock at once, exactly one gets it', async () => {
    for (let round = 0; round < 3; round++) {
      const dir = tempDir();
      // A stale lock: a pid that cannot be running (beyond the kernel's pid_max).
      writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: 2 ** 30, host: hostname(), startedAt: '' }));
      const a = locker(dir);
      const b = locker(dir);
      const answers = (await Promise.all([a.said, b.said])).sort();
      expect(answers).toEqual(['DATABASE_ERROR', 'locked']);
      const winner = (await a.said) === 'locked' ? a.child : b.child;
      expect(dataDirOwner(dir)?.pid).toBe(winner.pid);
      await Promise.all([killed(a.child), killed(b.child)]);
    }
  });
});

describe('the directories of in-memory databases whose service was killed', () => {
  it('are removed by the next in-memory start when their process is gone; live, lockless and foreign ones stay', async () => {
    const memoryDir = (): string => {
      const dir = mkdtempSync(join(tmpdir(), 'oql-pglite-'));
      dirs.push(dir);
      writeFileSync(join(dir, 'PG_VERSION'), '17\n');
      return dir;
    };
    // A service killed with SIGKILL: its lock stays, naming a process that is gone.
    const abandoned = memoryDir();
    const dead = locker(abandoned);
    expect(await dead.said).toBe('locked');
    await killed(dead.child);
    // A service still running; a directory whose lock is not written yet; another host's.
    const live = memoryDir();
    const running = locker(live);
    expect(await running.said).toBe('locked');
    const lockless = memoryDir();
    const foreign = memoryDir();
    writeFileSync(join(foreign, LOCK_FILE), JSON.stringify({ pid: 2 ** 30, host: 'elsewhere.example', startedAt: '' }));
    // Not an in-memory database's name, though its lock is stale.
    const other = mkdtempSync(join(tmpdir(), 'oql-pglite-other-'));
    dirs.push(other);
    writeFileSync(join(other, LOCK_FILE), JSON.stringify({ pid: 2 ** 30, host: hostname(), startedAt: '' }));

    const db = await EmbeddedDatabase.open({ memory: true });
    try {
      expect(existsSync(abandoned)).toBe(false);
      for (const kept of [live, lockless, foreign, other]) expect(existsSync(join(kept, 'PG_VERSION')) || existsSync(join(kept, LOCK_FILE))).toBe(true);
      expect(dataDirOwner(live)).toEqual({ pid: running.child.pid, host: hostname() });
    } finally {
      await db.close();
    }
  });
});
