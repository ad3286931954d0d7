import type { Catalog } from '../catalog/types.js';
import type { ServerConfig } from './config.js';
import type { LeaseStore } from './shared-state/leases.js';
import type { Operations } from './operations.js';
import type { Policy } from './policy.js';
import type { ApiKeyVerifier } from './store/api-keys.js';
import type { ServiceDb } from './types.js';

/** What every surface (REST, MCP, console) shares: built once per server. */
export interface ServiceContext {
  /** The primary: writes, the service's tables, and reads that must see the latest write (get-one, connector pages). */
  readonly db: ServiceDb;
  /**
   * Reads that may lag the primary by a replica's replay (reports, filters, the MCP query tools):
   * the --read-database pool when there is one, else `db`. Anything but a read goes to the primary.
   */
  readonly readDb: ServiceDb;
  readonly catalog: Catalog;
  readonly config: ServerConfig;
  /** The one policy point: admission, limits, restricted objects. */
  readonly policy: Policy;
  /** The operations every surface calls, each through the policy point. */
  readonly ops: Operations;
  /** Where the principals' concurrency leases are kept (this process, or PostgreSQL for a fleet). */
  readonly leases: LeaseStore;
  readonly tokenSecret: string;
  /** API keys verified recently, so a request does not wait on the database to authenticate. */
  readonly keys: ApiKeyVerifier;
}

/**
 * What a surface (the REST routes, the MCP endpoint) is handed: the operations, through which it
 * reaches data and the policy point, and what it needs to describe itself. Nothing to reach
 * around them with: no database, no key store, no policy of its own.
 */
export type SurfaceContext = Pick<ServiceContext, 'ops' | 'catalog' | 'config'>;
