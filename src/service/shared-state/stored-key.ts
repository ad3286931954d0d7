import { createHash } from 'node:crypto';

/**
 * A key of the shared-state tables (leases, attempts) as stored: its SHA-256. Keys are composed by
 * callers from request text (a client id, an address, a user id joined with NUL, which PostgreSQL
 * text cannot hold) and may be long; the digest is short, fixed and the same on every instance.
 */
export function storedKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('base64url');
}
