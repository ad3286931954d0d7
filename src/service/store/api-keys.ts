import { createHash, randomBytes } from 'node:crypto';
import { OqlError } from '../../diagnostics/diagnostic.js';
import { isRole, type Principal, type Role, type ServiceTx } from '../types.js';
import { SERVICE_SCHEMA } from '../migrations.js';
import { isOrgId, ORG_ID_RULE } from '../../rules.js';

/** Keys are `oql_` and 43 base64url characters (256 random bits): recognisable in a leaked log or repository. */
const KEY_PREFIX = 'oql_';

/** Keys given rather than made (OQL_API_KEYS) must be at least this long: short ones are guessed. */
export const MIN_KEY_LENGTH = 16;

export interface NewApiKey {
  readonly orgId: string;
  readonly role: Role;
  /** The user the key acts as (created_by/updated_by of its writes). Default `apikey_<key id>`. */
  readonly userId?: string | undefined;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}


function checkKeyFields(o: NewApiKey): void {
  if (typeof o.orgId !== 'string' || !isOrgId(o.orgId)) {
    throw OqlError.plain('INVALID_OPTIONS', `organization id '${String(o.orgId)}' must be ${ORG_ID_RULE}`);
  }
  if (!isRole(o.role)) throw OqlError.plain('INVALID_OPTIONS', `role '${String(o.role)}' must be member, admin or superadmin`);
  if (o.userId !== undefined && (typeof o.userId !== 'string' || !isOrgId(o.userId))) {
    throw OqlError.plain('INVALID_OPTIONS', `user id '${String(o.userId)}' must be ${ORG_ID_RULE}`);
  }
}

/** Creates a key for one organization, user and role; returns the key, which is stored only as a hash. */
export async function createApiKey(db: ServiceTx, o: NewApiKey): Promise<string> {
  return (await issueApiKey(db, o)).key;
}

/** Creates a key and returns it with its id (the id names it in listings and revocation; the key is shown once). */
export async function issueApiKey(db: ServiceTx, o: NewApiKey): Promise<{ readonly id: string; readonly key: string }> {
  checkKeyFields(o);
  const key = KEY_PREFIX + randomBytes(32).toString('base64url');
  return { id: await storeApiKey(db, key, o), key };
}

/** Stores a given key (OQL_API_KEYS bootstrap); storing the same key again updates its scope. Returns its id. */
export async function storeApiKey(db: ServiceTx, key: string, o: NewApiKey): Promise<string> {
  checkKeyFields(o);
  if (typeof key !== 'string' || key.length < MIN_KEY_LENGTH) throw OqlError.plain('INVALID_OPTIONS', `an API key must be at least ${MIN_KEY_LENGTH} characters long`);
  const id = `key_${randomBytes(9).toString('base64url')}`;
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO ${SERVICE_SCHEMA}.api_keys (id, key_hash, org_id, user_id, role, created_at)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (key_hash) DO UPDATE SET org_id = EXCLUDED.org_id, user_id = EXCLUDED.user_id, role = EXCLUDED.role, revoked_at = NULL
     RETURNING id`,
    [id, hashApiKey(key), o.orgId, o.userId ?? `apikey_${id.slice(4)}`, o.role, Date.now()],
  );
  return rows[0]?.id ?? id;
}

/** What a listing shows of a key: never the key, nor its hash. */
export interface ApiKeyInfo {
  readonly id: string;
  readonly orgId: string;
  readonly userId: string;
  readonly role: string;
  readonly createdAt: number;
  readonly revokedAt: number | null;
}

/** The keys of one organization (or all), oldest first; revoked ones only when asked for. */
export async function listApiKeys(db: ServiceTx, o: { readonly orgId?: string | undefined; readonly revoked?: boolean } = {}): Promise<ApiKeyInfo[]> {
  const { rows } = await db.query<{ id: string; org_id: string; user_id: string; role: string; created_at: string | number; revoked_at: string | number | null }>(
    `SELECT id, org_id, user_id, role, created_at, revoked_at FROM ${SERVICE_SCHEMA}.api_keys
      WHERE ($1::text IS NULL OR org_id = $1) AND ($2::boolean OR revoked_at IS NULL)
      ORDER BY created_at, id`,
    [o.orgId ?? null, o.revoked === true],
  );
  return rows.map((r) => ({ id: r.id, orgId: r.org_id, userId: r.user_id, role: r.role, createdAt: Number(r.created_at), revokedAt: r.revoked_at === null ? null : Number(r.revoked_at) }));
}

/**
 * Revokes a key by id: it stops authenticating (within a server's key-cache lifetime, see
 * `ApiKeyVerifier`), and the OAuth tokens approved with it die with it. Returns the key's
 * organization, or null when no live key has that id.
 */
export async function revokeApiKey(db: ServiceTx, id: string, now = Date.now()): Promise<string | null> {
  if (typeof id !== 'string' || id.length === 0 || id.length > 200) return null;
  const { rows } = await db.query<{ org_id: string }>(
    `UPDATE ${SERVICE_SCHEMA}.api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL RETURNING org_id`,
    [id, now],
  );
  return rows[0]?.org_id ?? null;
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

/**
 * Verified keys kept in memory for a short time, so a request does not pay a database round
 * trip to authenticate. Keyed by the key's SHA-256, never the key; bounded; only keys found
 * valid are kept (an unknown key is looked up every time). A key revoked elsewhere (`oql keys
 * revoke`, another server process) stops working here within `ttlMs`; `forget()` drops every
 * entry at once.
 */
export class ApiKeyVerifier {
  private readonly entries = new Map<string, { readonly principal: Principal; readonly until: number }>();

  constructor(
    private readonly db: ServiceTx,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 10_000,
  ) {}

  async verify(key: string): Promise<Principal | null> {
    if (this.ttlMs <= 0 || typeof key !== 'string' || key.length === 0 || key.length > 512) return verifyApiKey(this.db, key);
    const hash = hashApiKey(key);
    const hit = this.entries.get(hash);
    const t = this.now();
    if (hit && hit.until > t) return hit.principal;
    if (hit) this.entries.delete(hash);
    const principal = await verifyApiKey(this.db, key);
    if (principal) {
      // A Map iterates in insertion order: the first entry is the oldest.
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(hash, { principal, until: t + this.ttlMs });
    }
    return principal;
  }

  forget(): void {
    this.entries.clear();
  }
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
      throw OqlError.plain('INVALID_OPTIONS', `OQL_API_KEYS entry ${i + 1}: ${why}`,
        `write key=org:role[:user], entries separated by commas, each key at least ${MIN_KEY_LENGTH} characters: for example demo-key-0123456789=org_demo:superadmin`);
    };
    if (eq <= 0) bad('expected key=org:role[:user]');
    const key = entry.slice(0, eq);
    const [orgId, role, userId, ...rest] = entry.slice(eq + 1).split(':');
    if (rest.length > 0 || !orgId || !role) bad('expected key=org:role[:user]');
    // Named by its length, never its text: the message may reach a log.
    if (key.length < MIN_KEY_LENGTH) bad(`the key must be at least ${MIN_KEY_LENGTH} characters long, and this one has ${key.length}`);
    if (!isRole(role)) bad(`role '${role}' must be member, admin or superadmin`);
    if (!isOrgId(orgId!)) bad(`organization id '${orgId}' must be letters, digits, '_', '.' or '-'`);
    if (userId !== undefined && userId !== '' && !isOrgId(userId)) bad(`user id '${userId}' must be letters, digits, '_', '.' or '-'`);
    out.push({ key, orgId: orgId!, role: role as Role, userId: userId === '' ? undefined : userId });
  }
  return out;
}
