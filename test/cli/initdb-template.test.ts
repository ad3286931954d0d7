import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../support/node-flags.js';

/**
 * `oql run` holds its database in memory, started from the first initdb this user ran on the
 * machine, kept as a tar file in the temporary directory. Each run here has a temporary directory
 * of its own (TMPDIR), so the file is this test's alone.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');
const exec = promisify(execFile);
const pgliteVersion = (JSON.parse(readFileSync(join(ROOT, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')) as { version: string }).version;

const temp = mkdtempSync(join(tmpdir(), 'oql-initdb-test-'));
const tar = join(temp, `oql-initdb-${pgliteVersion}-${userInfo().uid}.tar`);
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** The accounts of the demo data's default organization, counted by the database the run starts. */
async function run(): Promise<number> {
  const { stdout } = await exec(process.execPath, [...NODE_FLAGS, CLI, 'run', 'SELECT COUNT(id) AS n FROM account LIMIT 1', '--json'], {
    env: { ...process.env, TMPDIR: temp, NO_COLOR: '1' },
  });
  return JSON.parse(stdout).records[0].n as number;
}

describe('the initdb an in-memory run starts from', { timeout: 120_000 }, () => {
  it('is written by the first run, private, and read unchanged by the next; a damaged one is replaced', async () => {
    const first = await run();
    expect(first).toBeGreaterThan(0);
    expect(readdirSync(temp)).toContain(tar.slice(temp.length + 1));
    const made = statSync(tar);
    expect(made.mode & 0o777).toBe(0o600);
    // A tar file: the first header's magic at offset 257.
    expect(readFileSync(tar).subarray(257, 262).toString('latin1')).toBe('ustar');

    expect(await run()).toBe(first);
    expect(statSync(tar).mtimeMs).toBe(made.mtimeMs);
    expect(statSync(tar).size).toBe(made.size);

    // Cut short, as a cleaner of the temporary directory might leave it: the run still answers,
    // from an initdb of its own, and a whole file takes the damaged one's place.
    truncateSync(tar, 4096);
    expect(await run()).toBe(first);
    expect(statSync(tar).size).toBeGreaterThan(1_000_000);
    expect(statSync(tar).mtimeMs).toBeGreaterThan(made.mtimeMs);
    // Nothing else was left in the directory: no staging file.
    expect(readdirSync(temp).filter((n) => n.startsWith('oql-initdb-'))).toEqual([tar.slice(temp.length + 1)]);
  });
});
