import { chmodSync, mkdirSync, statfsSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The suite's temporary directory, on a memory file system where the machine has one with room.
 *
 * A run makes and removes tens of thousands of files in it: every embedded database an `oql
 * serve --memory` or a test opens is a copy of the kept initdb (about 1,000 files, 39 MB), and
 * every PostgreSQL cluster a file starts is an initdb of its own. On ext4, making a file after
 * many were deleted costs the kernel a search for an inode it may reuse, and a run's churn makes
 * that search long: the same copy of the kept initdb took 0.05 s of system CPU on a quiet disk and
 * 0.6 s after a run. On tmpfs it takes 0.04 to 0.1 s whatever came before. Measured over whole
 * runs of `npm test` on the same clone: 79 to 80 s of system CPU with it, 84 to 100 s without.
 *
 * Used only when nothing chose a directory already (TMPDIR unset), when /dev/shm is a tmpfs
 * with at least MIN_FREE_BYTES available (a container's default /dev/shm of 64 MB is not used),
 * and never by anything but the suite: vitest.config.ts sets TMPDIR for the runner, which its
 * workers and every process they start inherit. Its own directory, `oql-test-<uid>`, is
 * traversable by others (0711) because the suite's PostgreSQL clusters run as the `postgres`
 * user inside it, in directories of their own (0700).
 */
const MIN_FREE_BYTES = 4 * 1024 ** 3;
const SHM = '/dev/shm';
const TMPFS_MAGIC = 0x01021994;

export function useMemoryTempDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env['TMPDIR']) return undefined;
  try {
    const fs = statfsSync(SHM);
    if (fs.type !== TMPFS_MAGIC || fs.bavail * fs.bsize < MIN_FREE_BYTES) return undefined;
    const uid = process.getuid?.() ?? 0;
    const dir = join(SHM, `oql-test-${uid}`);
    mkdirSync(dir, { recursive: true, mode: 0o711 });
    // Another user's directory of that name is not ours to write in.
    if (statSync(dir).uid !== uid) return undefined;
    // Whatever the umask made of it.
    chmodSync(dir, 0o711);
    env['TMPDIR'] = dir;
    return dir;
  } catch {
    return undefined;
  }
}
