import { createHash, randomBytes } from 'node:crypto';
import { OqlError } from '../../diagnostics/diagnostic.js';
import { isRole, type Principal, type Role, type ServiceTx } from '../types.js';
import { SERVICE_SCHEMA } from './schema.js';

/** Keys are `oql_` and 43 base64url characters (256 random bits): recognisable in a leaked log or repository. */
const KEY_PREFIX = 'oql_';

export interface NewApiKey {
  readonly orgId: string;
  readonly role: Role;
  /** The user the key acts as (created_by/updated_by of its writes). Default `apikey_<key id>`. */
  readonly userId?: string | undefined;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

const ORG_ID = /^[A-Za-z0-9_.-]{1,128}$/;

function checkKeyFields(o: NewApiKey): void {
  if (typeof o.orgId !== 'string' || !ORG_ID.test(o.orgId)) {
    throw OqlError.plain('INVALID_OPTIONS', `organization id '${String(o.orgId)}' must be 1 to 128 letters, digits, '_', '.' or '-'`);
  }
  if (!isRole(o.role)) throw OqlError.plain('INVALID_OPTIONS', `role '${String(o.role)}' must be member, admin or superadmin`);
  if (o.userId !== undefined && (typeof o.userId !== 'string' || !ORG_ID.test(o.userId))) {
    throw OqlError.plain('INVALID_OPTIONS', `user id '${String(o.userId)}' must be 1 to 128 letters, digits, '_', '.' or '-'`);
  }
}

/** Creates a key for one organization, user and role; returns the key, which is stored only as a hash. */
export async function createApiKey(db: ServiceTx, o: NewApiKey): Promise<string> {
  checkKeyFields(o);
  const key = KEY_PREFIX + randomBytes(32).toString('base64url');
  await storeApiKey(db, key, o);
  return key;
}

/** Stores a given key (OQL_API_KEYS bootstrap); storing the same key again updates its scope. */
export async function storeApiKey(db: ServiceTx, key: string, o: NewApiKey): Promise<void> {
  checkKeyFields(o);
  if (typeof key !== 'string' || key.length < 16) throw OqlError.plain('INVALID_OPTIONS', 'an API key must be at least 16 characters long');
  const id = `key_${randomBytes(9).toString('base64url')}`;
  await db.query(
    `INSERT INTO ${SERVICE_SCHEMA}.api_keys (id, key_hash, org_id, user_id, role, created_at)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (key_hash) DO UPDATE SET org_id = EXCLUDED.org_id, user_id = EXCLUDED.user_id, role = EXCLUDED.role, revoked_at = NULL`,
    [id, hashApiKey(key), o.orgId, o.userId ?? `apikey_${id.slice(4)}`, o.role, Date.now()],
  );
}

/** The principal of a key, or null for an unknown or revoked one. */
export async function verifyApiKey(db: ServiceTx, key: string): Promise<Principal | null> {
  if (typeof key !== 'string' || key.length === 0 || key.length > 512) return null;
  const { rows } = await db.query<{ id: string; org_id: string; user_id: string; role: string }>(
    `SELECT id, org_id, user_id, role FROM ${SERVICE_SCHEMA}.api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
    [hashApiKey(key)],
  );
  const row = rows[0];
  if (!row || !isRole(row.role)) return null;
  return { orgId: row.org_id, userId: row.user_id, role: row.role, via: 'api_key', clientId: row.id };
}

export async function countApiKeys(db: ServiceTx): Promise<number> {
  const { rows } = await db.query<{ n: string | number }>(`SELECT count(*)::int AS n FROM ${SERVICE_SCHEMA}.api_keys WHERE revoked_at IS NULL`);
  return Number(rows[0]?.n ?? 0);
}

export interface BootstrapKey extends NewApiKey {
  readonly key: string;
}

/**
 * `OQL_API_KEYS`: `key1=org_a:superadmin:u_1,key2=org_b:member:u_2` (the user part optional).
 * Every entry is checked before any is stored, and a bad one names its position, never its key.
 */
export function parseApiKeysEnv(text: string): BootstrapKey[] {
  const out: BootstrapKey[] = [];
  const entries = text.split(',').map((e) => e.trim()).filter((e) => e.length > 0);
  for (const [i, entry] of entries.entries()) {
    const eq = entry.lastIndexOf('=');
    const bad = (why: string): never => {
      throw OqlError.plain('INVALID_OPTIONS', `OQL_API_KEYS entry ${i + 1}: ${why}`, 'write key=org:role[:user], entries separated by commas, for example k1=org_a:superadmin:u_1');
    };
    if (eq <= 0) bad('expected key=org:role[:user]');
    const key = entry.slice(0, eq);
    const [orgId, role, userId, ...rest] = entry.slice(eq + 1).split(':');
    if (rest.length > 0 || !orgId || !role) bad('expected key=org:role[:user]');
    if (key.length < 16) bad('the key must be at least 16 characters long');
    if (!isRole(role)) bad(`role '${role}' must be member, admin or superadmin`);
    if (!ORG_ID.test(orgId!)) bad(`organization id '${orgId}' must be letters, digits, '_', '.' or '-'`);
    if (userId !== undefined && userId !== '' && !ORG_ID.test(userId)) bad(`user id '${userId}' must be letters, digits, '_', '.' or '-'`);
    out.push({ key, orgId: orgId!, role: role as Role, userId: userId === '' ? undefined : userId });
  }
  return out;
}
