import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The embedded database's directory holds every organization's records, so it and everything in
 * it belong to the service's user alone: directories 0700, files 0600. The database process
 * creates its files that way (its umask, src/run/drivers/pglite/pglite-process.js); this pass, at every
 * open, takes away what a directory written before (or copied in) still grants others.
 */

const OTHERS = 0o077;

/** Clears the group and other bits of `dir` and of everything under it; symbolic links are left alone, never followed. */
export function makePrivate(dir: string): void {
  const pending = [dir];
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) continue;
    if ((stat.mode & OTHERS) !== 0) chmodSync(path, stat.mode & 0o7777 & ~OTHERS);
    if (stat.isDirectory()) for (const name of readdirSync(path)) pending.push(join(path, name));
  }
}
