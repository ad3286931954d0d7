import { databaseError } from '../run/errors.js';
import { serialised, type Queryable } from '../run/transaction.js';

/**
 * Where records are written: a node-postgres Pool or Client, or a PGlite instance. Told apart
 * by shape, as `run/transaction.ts` does, so the library imports no driver.
 */
export type Writable = Queryable;

/** One statement inside a write transaction. */
export interface Tx {
  rows(text: string, params: readonly unknown[]): Promise<Record<string, unknown>[]>;
}

interface PgliteLike {
  transaction<T>(fn: (tx: { query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }> }) => Promise<T>): Promise<T>;
}
interface PoolLike {
  connect(): Promise<Queryable & { release(destroy?: boolean | Error): void }>;
}

function isPglite(db: object): db is PgliteLike {
  const d = db as { transaction?: unknown; exec?: unknown };
  return typeof d.transaction === 'function' && typeof d.exec === 'function' && 'waitReady' in d;
}

function isPool(db: object): db is PoolLike {
  const d = db as { connect?: unknown; release?: unknown; totalCount?: unknown; idleCount?: unknown };
  return typeof d.connect === 'function' && typeof d.release !== 'function' && (typeof d.totalCount === 'number' || typeof d.idleCount === 'number');
}

const RETRYABLE = new Set(['40P01', '40001']); // deadlock detected, serialization failure
const ATTEMPTS = 10;

/**
 * Runs `body` in one read-write transaction: committed when it resolves, rolled back when it
 * throws, so a failed write leaves nothing behind. A deadlock between two writers touching the
 * same rows in different orders aborts one of them; that one is run again from the start
 * (nothing of it was committed) after a short random pause, up to ten attempts. Errors come out as OqlError.
 */
export async function inWriteTransaction<T>(db: Writable, body: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await once(db, body);
    } catch (e) {
      const code = (e as { code?: unknown } | null)?.code;
      if (attempt < ATTEMPTS && typeof code === 'string' && RETRYABLE.has(code)) {
        // A random pause, longer each time, so the writers that collided do not collide again in step.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
        continue;
      }
      throw databaseError(e, 0);
    }
  }
}

async function once<T>(db: Writable, body: (tx: Tx) => Promise<T>): Promise<T> {
  if (isPglite(db)) {
    // PGlite's transaction() holds its lock from BEGIN to COMMIT; concurrent calls queue.
    return db.transaction((tx) => body({ rows: async (text, params) => (await tx.query(text, [...params])).rows as Record<string, unknown>[] }));
  }
  if (isPool(db)) {
    const client = await db.connect();
    let broken = false;
    try {
      return await onConnection(client, body, () => { broken = true; });
    } finally {
      client.release(broken ? true : undefined);
    }
  }
  // A single connection: calls must not interleave their BEGIN ... COMMIT.
  return serialised(db, () => onConnection(db, body, () => undefined));
}

async function onConnection<T>(conn: Queryable, body: (tx: Tx) => Promise<T>, markBroken: () => void): Promise<T> {
  const tx: Tx = {
    rows: async (text, params) => {
      const result = (await conn.query(text, [...params])) as { rows?: unknown } | undefined;
      return Array.isArray(result?.rows) ? (result.rows as Record<string, unknown>[]) : [];
    },
  };
  await conn.query('BEGIN');
  let result: T;
  try {
    result = await body(tx);
  } catch (e) {
    await conn.query('ROLLBACK').catch(() => markBroken());
    throw e;
  }
  try {
    await conn.query('COMMIT');
  } catch (e) {
    await conn.query('ROLLBACK').catch(() => markBroken());
    throw e;
  }
  return result;
}

/** Reads outside a write: one statement, no transaction needed. */
export async function readRows(db: Queryable, text: string, params: readonly unknown[]): Promise<Record<string, unknown>[]> {
  try {
    const result = (await db.query(text, [...params])) as { rows?: unknown } | undefined;
    return Array.isArray(result?.rows) ? (result.rows as Record<string, unknown>[]) : [];
  } catch (e) {
    throw databaseError(e, 0);
  }
}
