import { databaseOf } from '../run/database-of.js';
import type { Database, Queryable } from '../run/database.js';
import { databaseError } from '../run/errors.js';
import { checkTimeout } from '../run/transaction.js';

/** Where records are written: a Database, or a node-postgres Pool or Client, or a PGlite instance. */
export type Writable = Queryable | Database;

/** One statement inside a write transaction. */
export interface Tx {
  rows(text: string, params: readonly unknown[]): Promise<Record<string, unknown>[]>;
  /** The transaction's last statement, committed with it (one round trip where the driver can); nothing may follow it. */
  lastRows(text: string, params: readonly unknown[]): Promise<Record<string, unknown>[]>;
}

const RETRYABLE = new Set(['40P01', '40001']); // deadlock detected, serialization failure
const ATTEMPTS = 10;

export interface WriteTransactionOptions {
  /** Whose share of the connections the transaction counts against (the organization). */
  readonly tenant?: string | undefined;
  /** Budget of each statement in the transaction, in milliseconds. */
  readonly timeoutMs?: number | undefined;
}

/**
 * Runs `body` in one read-write transaction: committed when it resolves, rolled back when it
 * throws, so a failed write leaves nothing behind. A deadlock between two writers touching the
 * same rows in different orders aborts one of them; that one is run again from the start
 * (nothing of it was committed) after a short random pause, up to ten attempts. Errors come out as OqlError.
 */
export async function inWriteTransaction<T>(db: Writable, options: WriteTransactionOptions, body: (tx: Tx) => Promise<T>): Promise<T> {
  const database = databaseOf(db);
  for (let attempt = 1; ; attempt++) {
    try {
      return await database.transaction((tx) => body({
        rows: async (text, params) => (await tx.query(text, params)).rows,
        lastRows: async (text, params) => (await (tx.commitWith ? tx.commitWith(text, params) : tx.query(text, params))).rows,
      }), options);
    } catch (e) {
      const code = (e as { code?: unknown } | null)?.code;
      if (attempt < ATTEMPTS && typeof code === 'string' && RETRYABLE.has(code)) {
        // A random pause, longer each time, so the writers that collided do not collide again in step.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
        continue;
      }
      throw databaseError(e, options.timeoutMs ?? 0);
    }
  }
}

/** Reads outside a write: one SELECT in a read-only transaction, with its budget. */
export async function readRows(db: Writable, text: string, params: readonly unknown[], options: WriteTransactionOptions = {}): Promise<Record<string, unknown>[]> {
  return (await databaseOf(db).read(text, params, { timeoutMs: checkTimeout(options.timeoutMs), tenant: options.tenant })).rows;
}
