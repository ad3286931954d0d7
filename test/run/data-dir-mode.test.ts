import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makePrivate } from '../../src/run/data-dir-mode.js';
import { EmbeddedDatabase } from '../../src/run/drivers/pglite/supervisor.js';

/**
 * The embedded database's directory and every file in it belong to the service's user alone
 * (0700 and 0600), whether the database wrote them or they were there before it started; and
 * text comes back from it byte for byte, a leading U+FEFF included.
 */

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'oql-mode-'));
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Every path under `dir` (itself included) whose mode grants anything to group or others, with that mode. */
function open(dir: string): string[] {
  const found: string[] = [];
  const walk = (path: string): void => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    if ((stat.mode & 0o077) !== 0) found.push(`${path} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
  return found;
}

function count(dir: string): { files: number; dirs: number } {
  let files = 0;
  let directories = 0;
  const walk = (path: string): void => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        directories++;
        walk(join(path, entry.name));
      } else files++;
    }
  };
  walk(dir);
  return { files, dirs: directories };
}

describe('makePrivate', () => {
  it('takes group and other bits from a directory, its files and its subdirectories, keeping the owner bits', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'base/1'), { recursive: true });
    writeFileSync(join(dir, 'base/1/1259'), 'x');
    writeFileSync(join(dir, 'PG_VERSION'), '17');
    writeFileSync(join(dir, 'run.sh'), '#!/bin/sh');
    chmodSync(join(dir, 'base/1/1259'), 0o666);
    chmodSync(join(dir, 'PG_VERSION'), 0o644);
    chmodSync(join(dir, 'run.sh'), 0o775);
    chmodSync(join(dir, 'base'), 0o777);
    chmodSync(join(dir, 'base/1'), 0o755);
    chmodSync(dir, 0o755);
    makePrivate(dir);
    expect((lstatSync(join(dir, 'base/1/1259')).mode & 0o777).toString(8)).toBe('600');
    expect((lstatSync(join(dir, 'PG_VERSION')).mode & 0o777).toString(8)).toBe('600');
    expect((lstatSync(join(dir, 'run.sh')).mode & 0o777).toString(8)).toBe('700');
    expect((lstatSync(join(dir, 'base')).mode & 0o777).toString(8)).toBe('700');
    expect((lstatSync(join(dir, 'base/1')).mode & 0o777).toString(8)).toBe('700');
    expect((lstatSync(dir).mode & 0o777).toString(8)).toBe('700');
  });

  it('never follows a symbolic link out of the directory', () => {
    const outside = tempDir();
    writeFileSync(join(outside, 'shared'), 'x');
    chmodSync(join(outside, 'shared'), 0o644);
    const dir = tempDir();
    symlinkSync(join(outside, 'shared'), join(dir, 'link'));
    symlinkSync(outside, join(dir, 'dir-link'));
    makePrivate(dir);
    expect((lstatSync(join(outside, 'shared')).mode & 0o777).toString(8)).toBe('644');
    expect((lstatSync(outside).mode & 0o777).toString(8)).toBe('700');
  });
});

describe('the embedded database directory', () => {
  it('is private after an open, for files the database writes and for files that were there before', async () => {
    const parent = tempDir();
    const dir = join(parent, 'data');
    // A directory from before: world-readable and world-writable, as PGlite used to leave it.
    mkdirSync(join(dir, 'old'), { recursive: true, mode: 0o777 });
    writeFileSync(join(dir, 'old/leftover'), 'x', { mode: 0o666 });
    chmodSync(dir, 0o777);
    chmodSync(join(dir, 'old'), 0o777);
    chmodSync(join(dir, 'old/leftover'), 0o666);
    expect(open(dir)).toHaveLength(3);

    const db = await EmbeddedDatabase.open({ dataDir: dir });
    try {
      await db.exec('CREATE TABLE t (id int PRIMARY KEY, v text); CREATE INDEX ON t (v)');
      await db.query('INSERT INTO t SELECT g, repeat($1, 10) FROM generate_series(1, 1000) g', ['x']);
      await db.exec('CHECKPOINT');
      // What the database wrote is there and is private, files and directories alike.
      const written = count(dir);
      expect(written.files).toBeGreaterThan(100);
      expect(written.dirs).toBeGreaterThan(5);
      expect(open(dir)).toEqual([]);
    } finally {
      await db.close();
    }
    expect(open(dir)).toEqual([]);
  }, 300_000);

  it('answers a text that starts with U+FEFF with its U+FEFF, as PostgreSQL does', async () => {
    const db = await EmbeddedDatabase.open({ memory: true });
    try {
      const bom = '\uFEFF';
      const sent = [`${bom}starts`, `${bom}${bom}twice`, `mid${bom}dle`, bom, `end${bom}`];
      const got = await db.query<{ v: string }>('SELECT unnest($1::text[]) AS v', [sent]);
      expect(got.rows.map((r) => r.v)).toEqual(sent);
      const literal = await db.query<{ v: string; n: number }>("SELECT U&'\\FEFFx' AS v, octet_length(U&'\\FEFFx') AS n");
      expect(literal.rows[0]).toEqual({ v: `${bom}x`, n: 4 });
    } finally {
      await db.close();
    }
  }, 300_000);
});
