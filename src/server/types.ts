/** Types shared by the service core, the OAuth server and the MCP host. */

export type Role = 'member' | 'admin' | 'superadmin';

export const ROLES: readonly Role[] = Object.freeze(['member', 'admin', 'superadmin'] as const);

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** Who is calling: everything they read or write belongs to `orgId`. */
export interface Principal {
  readonly orgId: string;
  readonly userId: string;
  readonly role: Role;
  /** How the bearer was recognised: an API key, or an OAuth access token. */
  readonly via: 'api_key' | 'oauth';
  /** The OAuth client, for tokens; the API key's id, for keys (the concurrency budget's owner). */
  readonly clientId?: string;
  readonly workspace?: string;
}

/** Turns a bearer token into a principal, or null when it does not recognise it. */
export type AuthResolver = (bearer: string) => Promise<Principal | null>;

/** A transaction's connection: statements on it run in order inside the transaction. */
export interface ServiceTx {
  query<T = any>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
}

/**
 * The service's database: one PGlite instance (embedded) or one node-postgres Pool. `raw` is that
 * handle itself, which the library functions (execute, filterRecords, bulkCreate, …) take.
 */
export interface ServiceDb extends ServiceTx {
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: ServiceTx) => Promise<T>): Promise<T>;
  readonly kind: 'pglite' | 'postgres';
  /** The PGlite instance or the pg Pool. */
  readonly raw: any;
  /** For messages: "embedded PostgreSQL (PGlite) in ./.oql-data" or the URL without its password. */
  readonly label: string;
  close(): Promise<void>;
}
