/**
 * The one database layer. Everything that runs SQL — analytics, filter and connector pages,
 * record writes, the service's own tables — goes through a `Database`; nothing else knows which
 * driver it holds. Two real drivers sit behind it (a node-postgres Pool; PGlite, in-thread for a
 * library caller or in a process of its own for the service), plus a serialised wrapper for a single
 * connection (a pg Client).
 *
 * `databaseOf` (./database-of.ts) is the one place that tells drivers apart, by their shape: the
 * library imports no driver. The drivers implement this interface, so it imports none of them.
 */

/** Anything with `query`: node-postgres (Pool, Client, PoolClient) or PGlite. */
export interface Queryable {
  query(text: string, params?: unknown[]): Promise<unknown>;
}

/** A statement's rows. */
export interface Rows<T = Record<string, unknown>> {
  readonly rows: T[];
}

/** A connection inside a transaction: statements run in order, inside it. */
export interface Tx {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Rows<T>>;
  /**
   * The transaction's last statement, and its COMMIT: on a pipelined pool both go out at once, one
   * round trip. Nothing may be sent in the transaction after it. When the statement fails, the
   * COMMIT that follows it ends the failed transaction, so nothing of it is kept, and the
   * statement's error is thrown. Drivers without it: the statement, then the usual COMMIT.
   */
  commitWith?<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Rows<T>>;
  /**
   * Statements whose texts and parameters wait on none of the others' answers, run in the order
   * given: on a pipelined pool all go out at once, one round trip. Answers each one's rows. The
   * first error is thrown, as if they had run one by one (those after it fail too: the transaction
   * is aborted). Drivers without it (and a pool's connection that is not pipelined): the caller
   * sends them one after the other, through `query`.
   */
  queries?(statements: readonly Statement[]): Promise<Rows[]>;
  /**
   * `queries` whose last statement is the transaction's last, followed by its COMMIT: on a
   * pipelined pool all go out at once, one round trip. Nothing may be sent after it. The first
   * error is thrown, and the COMMIT then ends the failed transaction, so nothing of it is kept.
   * Drivers without it: the caller sends the others, then the last with `commitWith`.
   */
  commitAll?(statements: readonly Statement[]): Promise<Rows[]>;
}

/** A statement and its parameters. */
export interface Statement {
  readonly sql: string;
  readonly params: readonly unknown[];
}

export interface ReadOptions {
  /** The statement's budget in milliseconds: statement_timeout, then cancel, then the connection is dropped. */
  readonly timeoutMs: number;
  /**
   * Whose share of the connections the statement counts against (the organization). Calls of one
   * tenant queue behind each other once it holds its share, so other tenants still get through.
   */
  readonly tenant?: string | undefined;
  /** Plan the statement instead of running it: EXPLAIN (FORMAT JSON), in the same read-only transaction. */
  readonly explain?: boolean | undefined;
}

export interface WriteOptions {
  readonly tenant?: string | undefined;
  /** Budget of the whole transaction; default: none beyond the driver's own. */
  readonly timeoutMs?: number | undefined;
}

export interface Database extends Tx {
  readonly kind: 'postgres' | 'pglite' | 'connection';
  /** For messages: "embedded PostgreSQL (PGlite) in ./.oql-data", or the URL without its password. */
  readonly label: string;
  /**
   * Round trips to a database server per read, when there is a network between them: 1 on a pool
   * in pipeline mode (what `--database` opens), 3 on one without. Absent for embedded PGlite.
   */
  readonly readTrips?: number;
  /**
   * One SELECT in a READ ONLY transaction (enforced by the database), UTC and ISO dates, decoded
   * with the library's parsers. The statement ends by its budget on every driver: a 504 arrives
   * within about a second of it even when the backend does not notice a cancel.
   */
  read(sql: string, params: readonly unknown[], options: ReadOptions): Promise<Rows>;
  /** A read-write transaction: committed when `fn` resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Tx) => Promise<T>, options?: WriteOptions): Promise<T>;
  /** Whether the database answers, outside any tenant's queue (for /health). */
  ping(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

const MARK = Symbol.for('oql.database');

export function isDatabase(value: unknown): value is Database {
  return typeof value === 'object' && value !== null && (value as { [MARK]?: unknown })[MARK] === true;
}

/** Marks a driver's object as a Database, so `databaseOf` hands it back as it is. */
export function asDatabase<D extends Omit<Database, typeof MARK>>(db: D): D & Database {
  Object.defineProperty(db, MARK, { value: true });
  return db as D & Database;
}
