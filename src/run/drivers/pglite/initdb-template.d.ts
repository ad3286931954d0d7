/** Types of ./initdb-template.js (plain JavaScript: the database process imports it too). */

/** Whether a data directory holds nothing yet but its lock. */
export function isFresh(dataDir: string): boolean;

/** Opens a fresh data directory as a copy of the kept initdb; `create` opens PGlite on it. */
export function createFromTemplate<T extends { close(): Promise<void> }>(dataDir: string, create: () => Promise<T>): Promise<T>;

/** A PGlite held in memory, started from the kept initdb's tar file; `create` opens PGlite with the options given. */
export function createInMemory<T extends { dumpDataDir(compression: 'none'): Promise<Blob | File> }>(
  create: (options: { loadDataDir?: Blob }) => Promise<T>,
): Promise<T>;
