import type { Database } from '../../run/database.js';
import { MemoryAttemptStore, type AttemptStore } from './attempts.js';
import { PostgresAttemptStore } from './attempts-pg.js';
import { MemoryLeaseStore, type LeaseStore } from './leases.js';
import { PostgresLeaseStore, type PostgresLeaseStoreOptions } from './leases-pg.js';

/**
 * Where the state instances must agree on lives (docs/fleet.md): in PostgreSQL when the service
 * runs on it, since any number of instances may share it; in the process on embedded PGlite, whose
 * data directory one process owns. A single-connection driver (a pg Client handed to the library)
 * is one process's too.
 */
function shared(db: Database): boolean {
  return db.kind === 'postgres';
}

/** Attempt counters and lockouts (OAuth limits, the consent form's key-guessing budget). */
export function attemptStoreFor(db: Database, now: () => number = Date.now): AttemptStore {
  return shared(db) ? new PostgresAttemptStore(db, now) : new MemoryAttemptStore(now);
}

/** Per-principal concurrency leases. */
export function leaseStoreFor(db: Database, options: PostgresLeaseStoreOptions = {}): LeaseStore {
  return shared(db) ? new PostgresLeaseStore(db, options) : new MemoryLeaseStore();
}
