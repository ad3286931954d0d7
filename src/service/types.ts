/** Types shared by the service core, the OAuth server and the MCP host. */

export type Role = 'member' | 'admin' | 'superadmin';

export const ROLES: readonly Role[] = Object.freeze(['member', 'admin', 'superadmin'] as const);

/** "a member", "an admin", "a superadmin": the article a role's name takes in a sentence. */
export function aRole(role: string): string {
  return `${/^[aeiou]/i.test(role) ? 'an' : 'a'} ${role}`;
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** Who is calling: everything they read or write belongs to `orgId`. */
export interface Principal {
  readonly orgId: string;
  readonly userId: string;
  readonly role: Role;
  /**
   * How the caller was recognised: an API key, an OAuth access token, or a console session (a
   * cookie signed in with an API key, which acts as that key: same organization, user and role).
   */
  readonly via: 'api_key' | 'oauth' | 'session';
  /** The OAuth client, for tokens; the API key's id, for keys and sessions (the concurrency budget's owner). */
  readonly clientId?: string;
  readonly workspace?: string;
  /** The scopes an OAuth access token was granted (src/oauth/scopes.ts); API keys have none. */
  readonly scopes?: readonly string[];
}

/** Turns a bearer token into a principal, or null when it does not recognise it. */
export type AuthResolver = (bearer: string) => Promise<Principal | null>;

/** The service's database and a transaction's connection: the database layer's own types (src/run/database.ts). */
export type { Database as ServiceDb, Tx as ServiceTx } from '../run/database.js';
