import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * How `oql keys` and `oql workspaces` reach the server that holds an embedded data directory.
 *
 * Embedded PostgreSQL is one process's database: a second process that opened the directory would
 * keep its own copy and lose its writes to the server's (or the server's to its own). So the
 * server answers key and workspace commands itself, on an admin host that listens on 127.0.0.1
 * only, at a port of the system's choosing, and writes where it is into the data directory:
 * `oql-admin.json`, readable by its own user alone (0600), with its pid, host, URL and a random
 * secret (256 bits) that every admin request must present. Whoever can read that file can already
 * read the database files beside it; nobody else can reach or authenticate to the admin host.
 */

export const ADMIN_FILE = 'oql-admin.json';

export interface AdminAddress {
  readonly pid: number;
  readonly host: string;
  readonly url: string;
  readonly secret: string;
}

/** A new secret for one run of a server. */
export function newAdminSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Writes the address into `dir`, readable by this user only, in one step (a reader never sees half
 * a file). Returns the function that removes it, while it is still the one written here.
 */
export function writeAdminAddress(dir: string, address: Omit<AdminAddress, 'pid' | 'host'>): () => void {
  const file = join(resolve(dir), ADMIN_FILE);
  const text = `${JSON.stringify({ pid: process.pid, host: hostname(), url: address.url, secret: address.secret } satisfies AdminAddress)}\n`;
  const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  // 'wx' with mode 0600: created for this user alone (umask can only take bits away), never an
  // existing file someone prepared with other permissions.
  writeFileSync(draft, text, { flag: 'wx', mode: 0o600 });
  try {
    renameSync(draft, file);
  } catch (e) {
    rmSync(draft, { force: true });
    throw e;
  }
  return () => {
    try {
      if (readFileSync(file, 'utf8') === text) rmSync(file, { force: true });
    } catch {
      // Gone already.
    }
  };
}

/** Why an address could not be read, for the message of a command that needs it. */
export type AdminAddressProblem = 'missing' | 'unreadable' | 'readable by others';

/** The address written into `dir`, or why there is none to use. */
export function readAdminAddress(dir: string): AdminAddress | AdminAddressProblem {
  const file = join(resolve(dir), ADMIN_FILE);
  let text: string;
  try {
    // A secret others could read may have been read: it is not presented anywhere.
    if ((statSync(file).mode & 0o077) !== 0) return 'readable by others';
    text = readFileSync(file, 'utf8');
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'unreadable';
  }
  try {
    const v = JSON.parse(text) as Partial<AdminAddress>;
    if (Number.isSafeInteger(v.pid) && typeof v.host === 'string' && typeof v.url === 'string' && typeof v.secret === 'string' && /^http:\/\/127\.0\.0\.1:\d+$/.test(v.url)) {
      return { pid: v.pid!, host: v.host, url: v.url, secret: v.secret };
    }
  } catch {
    // Not JSON: treated as unreadable below.
  }
  return 'unreadable';
}

/** Compares a presented secret with the expected one in constant time (over their hashes, so lengths may differ). */
export function adminSecretMatches(expected: string, presented: string): boolean {
  const a = createHash('sha256').update(expected, 'utf8').digest();
  const b = createHash('sha256').update(presented, 'utf8').digest();
  return timingSafeEqual(a, b);
}
