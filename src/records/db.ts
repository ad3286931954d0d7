import { databaseOf } from '../run/database-of.js';
import type { Database, Queryable, Statement } from '../run/database.js';
import { databaseError } from '../run/errors.js';
import { checkTimeout } from '../run/transaction.js';

/** Where records are written: a Database, or a node-postgres Pool or Client, or a PGlite instance. */
export type Writable = Queryable | Database;

/** One statement inside a write transaction. */
export interface Tx {
  rows(text: string, params: readonly unknown[]): Promise<Record<string, unknown>[]>;
  /** The transaction's last statement, committed with it (one round trip where the driver can); nothing may follow it. */
  lastRows(text: string, params: readonly unknown[]): Promise<Record<string, unknown>[]>;
  /** Statements that wait on none of the others' answers, in order: one round trip where the driver can (Database's `Tx.queries`). Absent: one by one. */
  rowsAll?(statements: readonly Statement[]): Promise<Record<string, unknown>[][]>;
  /** `rowsAll` whose last statement is the transaction's last, committed with them: one round trip where the driver can (Database's `Tx.commitAll`). Absent: the others, then `lastRows`. */
  lastRowsAll?(statements: readonly Statement[]): Promise<Record<string, unknown>[][]>;
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
        ...(tx.queries ? { rowsAll: async (statements: readonly Statement[]) => (await tx.queries!(statements)).map((r) => r.rows) } : {}),
        ...(tx.commitAll ? { lastRowsAll: async (statements: readonly Statement[]) => (await tx.commitAll!(statements)).map((r) => r.rows) } : {}),
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

/**
 * The statements `steps` send before awaiting any answer, sent together (`Tx.rowsAll`: one round
 * trip on a pipelined pool), for steps whose statements wait on none of the others' answers. Each
 * step is an async function of the Tx it is given: what it sends before its first `await` is
 * queued, in the order of the steps; what it sends after an answer goes on its own. A step may
 * queue the transaction's last statement (`lastRows`), which then goes out after the others with
 * the COMMIT (`Tx.lastRowsAll`), and nothing may be queued after it. Answers each step's result;
 * the first step to fail throws its error, as when the steps ran one by one.
 */
export async function together<T extends readonly unknown[]>(tx: Tx, steps: (queued: Tx) => { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  type Queued = { statement: Statement; resolve(rows: Record<string, unknown>[]): void; reject(e: unknown): void };
  const queue: Queued[] = [];
  let last: Queued | undefined;
  let sent = false;
  const enqueue = (sql: string, params: readonly unknown[], isLast: boolean): Promise<Record<string, unknown>[]> => {
    if (last) return Promise.reject(new Error('a statement was queued after the transaction\'s last'));
    return new Promise((resolve, reject) => {
      const entry = { statement: { sql, params }, resolve, reject };
      if (isLast) last = entry;
      else queue.push(entry);
    });
  };
  const queued: Tx = {
    rows: (text, params) => (sent ? tx.rows(text, params) : enqueue(text, params, false)),
    lastRows: (text, params) => (sent ? tx.lastRows(text, params) : enqueue(text, params, true)),
    // Queued one by one, and all at once: a step may itself send statements together.
    rowsAll: (statements) => Promise.all(statements.map((s) => queued.rows(s.sql, s.params))),
    lastRowsAll: (statements) => Promise.all(statements.map((s, i) => (i < statements.length - 1 ? queued.rows : queued.lastRows)(s.sql, s.params))),
  };
  // Settled from the start: a step that fails before the queue is answered is not left unheard meanwhile.
  const settling = Promise.allSettled(steps(queued));
  sent = true;
  const waiting = last ? [...queue, last] : queue;
  if (waiting.length > 0) {
    try {
      const statements = waiting.map((q) => q.statement);
      const answers = last ? await lastRowsAll(tx, statements) : await rowsAll(tx, statements);
      waiting.forEach((q, i) => q.resolve(answers[i]!));
    } catch (e) {
      for (const q of waiting) q.reject(e);
    }
  }
  const settled = await settling;
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/** The statements' rows: together where the Tx can, else one after the other. */
async function rowsAll(tx: Tx, statements: readonly Statement[]): Promise<Record<string, unknown>[][]> {
  if (tx.rowsAll) return tx.rowsAll(statements);
  const out: Record<string, unknown>[][] = [];
  for (const s of statements) out.push(await tx.rows(s.sql, s.params));
  return out;
}

/** The same, the last of them the transaction's last: with the COMMIT where the Tx can, else after the others. */
async function lastRowsAll(tx: Tx, statements: readonly Statement[]): Promise<Record<string, unknown>[][]> {
  if (tx.lastRowsAll) return tx.lastRowsAll(statements);
  const final = statements[statements.length - 1]!;
  const before = await rowsAll(tx, statements.slice(0, -1));
  return [...before, await tx.lastRows(final.sql, final.params)];
}

/** Reads outside a write: one SELECT in a read-only transaction, with its budget. */
export async function readRows(db: Writable, text: string, params: readonly unknown[], options: WriteTransactionOptions = {}): Promise<Record<string, unknown>[]> {
  return (await databaseOf(db).read(text, params, { timeoutMs: checkTimeout(options.timeoutMs), tenant: options.tenant })).rows;
}
