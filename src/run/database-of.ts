import { runtimeError } from './errors.js';
import { isDatabase, type Database, type Queryable } from './database.js';
import { poolDatabase, type PgPoolLike } from './drivers/pool.js';
import { connectionDatabase } from './drivers/connection.js';
import { pgliteDatabase, type PgliteLike } from './drivers/pglite/in-thread.js';

/**
 * Driver detection, the one place that tells drivers apart by their shape (the library imports no
 * driver package). Apart from ./database.ts, which the drivers implement: an interface that
 * imported its drivers would make each of them a cycle.
 */

const wrapped = new WeakMap<object, Database>();

/**
 * The Database for whatever a caller handed the library: a Database as it is; a pg Pool, a pg
 * Client (or PoolClient) or a PGlite instance wrapped once (the wrapper is kept per handle, so
 * calls on one single connection share one queue).
 */
export function databaseOf(db: Queryable | Database): Database {
  if (isDatabase(db)) return db;
  if (typeof db !== 'object' || db === null || typeof (db as Queryable).query !== 'function') {
    throw runtimeError('INVALID_OPTIONS', 'db must be a pg Pool, a pg Client or a PGlite instance');
  }
  let out = wrapped.get(db);
  if (!out) {
    out = isPglite(db) ? pgliteDatabase(db, 'PGlite') : isPgPool(db) ? poolDatabase(db, 'PostgreSQL', { ownsPool: false }) : connectionDatabase(db);
    wrapped.set(db, out);
  }
  return out;
}

function isPglite(db: object): db is PgliteLike {
  const d = db as { transaction?: unknown; exec?: unknown };
  return typeof d.transaction === 'function' && typeof d.exec === 'function' && 'waitReady' in d;
}

/** A pg Pool checks clients out; a pg Client has `connect` too, but no pool counters. */
function isPgPool(db: object): db is PgPoolLike {
  const d = db as { connect?: unknown; release?: unknown; totalCount?: unknown; idleCount?: unknown };
  return typeof d.connect === 'function' && typeof d.release !== 'function' && (typeof d.totalCount === 'number' || typeof d.idleCount === 'number');
}
