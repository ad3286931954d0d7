import { hash, randomBytes } from 'node:crypto';
import { OqlError } from '../../diagnostics/diagnostic.js';
import type { Database } from '../../run/database.js';
import { isRole, type Principal, type Role, type ServiceTx } from '../types.js';
import { SERVICE_SCHEMA } from '../migrations.js';
import { isOrgId, ORG_ID_RULE } from '../../rules.js';
import { ownUserOf } from '../../wire/api-key.js';

/** Keys are `oql_` and 43 base64url characters (256 random bits): recognisable in a leaked log or repository. */
const KEY_PREFIX = 'oql_';

/**
 * How much of a key a listing shows, so a person can tell keys apart and match one found in a
 * log: its first 8 characters (`oql_` and 4 random ones) and its last 4. The other 35 random
 * characters (210 bits) stay secret.
 */
const SHOWN_PREFIX = 8;
const SHOWN_SUFFIX = 4;

/** A rolled key keeps working this long beside its successor, so deployments can switch over. */
export const ROLL_GRACE_MS = 24 * 3600 * 1000;

/** `last_used_at` is written at most once a minute per key: a read path should not write on every request. */
const LAST_USED_EVERY_MS = 60_000;

/** Keys given rather than made (OQL_API_KEYS) must be at least this long: short ones are guessed. */
export const MIN_KEY_LENGTH = 16;

export interface NewApiKey {
  readonly orgId: string;
  readonly role: Role;
  /** The user the key acts as (created_by/updated_by of its writes). Default a user of its own (`ownUserOf`). */
  readonly userId?: string | undefined;
  /** What the key is for, as its owner names it ("CI export"). */
  readonly name?: string | undefined;
  /** Epoch milliseconds after which the key no longer authenticates; none by default. */
  readonly expiresAt?: number | null | undefined;
  /** The user who created it (the audit trail); none for keys made on the server's shell. */
  readonly createdBy?: string | undefined;
  /** The key this one replaces (rollApiKey). */
  readonly rolledFrom?: string | undefined;
}

export function hashApiKey(key: string): string {
  // One-shot: a third of createHash's time, on every request's key.
  return hash('sha256', key, 'hex');
}

const KEY_NAME = /^[^\u0000-\u001f\u007f]{1,100}$/u;

function checkKeyFields(o: NewApiKey): void {
  if (typeof o.orgId !== 'string' || !isOrgId(o.orgId)) {
    throw OqlError.plain('INVALID_OPTIONS', `organization id '${String(o.orgId)}' must be ${ORG_ID_RULE}`);
  }
  if (!isRole(o.role)) throw OqlError.plain('INVALID_OPTIONS', `role '${String(o.role)}' must be member, admin or superadmin`);
  if (o.userId !== undefined && (typeof o.userId !== 'string' || !isOrgId(o.userId))) {
    throw OqlError.plain('INVALID_OPTIONS', `user id '${String(o.userId)}' must be ${ORG_ID_RULE}`);
  }
  if (o.name !== undefined && (typeof o.name !== 'string' || !KEY_NAME.test(o.name))) {
    throw OqlError.plain('INVALID_OPTIONS', 'a key name must be 1 to 100 characters, without control characters');
  }
  if (o.expiresAt !== undefined && o.expiresAt !== null && !Number.isSafeInteger(o.expiresAt)) {
    throw OqlError.plain('INVALID_OPTIONS', 'expiresAt must be epoch milliseconds');
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

/**
 * Stores a given key (OQL_API_KEYS bootstrap); storing the same key again updates its scope and
 * makes it live again: the variable is the truth for the keys it lists. Returns its id.
 */
export async function storeApiKey(db: ServiceTx, key: string, o: NewApiKey): Promise<string> {
  checkKeyFields(o);
  if (typeof key !== 'string' || key.length < MIN_KEY_LENGTH) throw OqlError.plain('INVALID_OPTIONS', `an API key must be at least ${MIN_KEY_LENGTH} characters long`);
  const id = `key_${randomBytes(9).toString('base64url')}`;
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO ${SERVICE_SCHEMA}.api_keys
       (id, key_hash, org_id, user_id, role, created_at, name, key_prefix, key_last4, expires_at, created_by, rolled_from)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     ON CONFLICT (key_hash) DO UPDATE SET org_id = EXCLUDED.org_id, user_id = EXCLUDED.user_id, role = EXCLUDED.role,
       key_prefix = EXCLUDED.key_prefix, key_last4 = EXCLUDED.key_last4, expires_at = EXCLUDED.expires_at, revoked_at = NULL, revoked_by = NULL
     RETURNING id`,
    [id, hashApiKey(key), o.orgId, o.userId ?? ownUserOf(id), o.role, Date.now(), o.name ?? null,
      key.slice(0, SHOWN_PREFIX), key.slice(-SHOWN_SUFFIX), o.expiresAt ?? null, o.createdBy ?? null, o.rolledFrom ?? null],
  );
  return rows[0]?.id ?? id;
}

/** Live keys (neither revoked nor expired) one user, and one organization, may hold. */
export interface KeyCaps {
  readonly perUser: number;
  readonly perOrg: number;
}

export const DEFAULT_KEY_CAPS: KeyCaps = Object.freeze({ perUser: 100, perOrg: 1000 });

export function tooManyKeys(whose: string, cap: number): OqlError {
  return OqlError.plain('TOO_MANY_KEYS', `${whose} already has ${cap} live API keys, the most it may have`,
    'revoke a key that is no longer used (POST /api/v1/keys/{id}/revoke), then try again');
}

/**
 * Refuses a new key of `userId` in `orgId` when the user or the organization holds its cap of live
 * keys (a rolled key in its grace period counts until it expires). Inside the creating
 * transaction, after a lock on the organization's keys, so creations sent at once cannot all
 * count the same number and pass together, on any instance.
 */
async function checkKeyCaps(tx: ServiceTx, orgId: string, userId: string, caps: KeyCaps, now: number): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('oql api keys|' || $1, 0))`, [orgId]);
  const { rows } = await tx.query<{ user_keys: number | string; org_keys: number | string }>(
    `SELECT count(*) FILTER (WHERE user_id = $2) AS user_keys, count(*) AS org_keys
       FROM ${SERVICE_SCHEMA}.api_keys k WHERE org_id = $1 AND ${keyIsLive('k', '$3')}`,
    [orgId, userId, now],
  );
  if (Number(rows[0]?.user_keys ?? 0) >= caps.perUser) throw tooManyKeys(`the user '${userId.slice(0, 80)}'`, caps.perUser);
  if (Number(rows[0]?.org_keys ?? 0) >= caps.perOrg) throw tooManyKeys('your organization', caps.perOrg);
}

/** Creates a key as issueApiKey does, within the user's and the organization's caps of live keys. */
export async function issueApiKeyWithinCaps(db: Database, o: NewApiKey & { readonly userId: string }, caps: KeyCaps, now = Date.now()): Promise<{ readonly id: string; readonly key: string }> {
  checkKeyFields(o);
  return db.transaction(async (tx) => {
    await checkKeyCaps(tx, o.orgId, o.userId, caps, now);
    return issueApiKey(tx, o);
  });
}

/**
 * The one statement of "this key still authenticates": not revoked, not expired. `alias` names
 * the api_keys row, `now` the parameter holding the epoch milliseconds to judge at. Sessions and
 * OAuth tokens, which live only as long as their key, use it too.
 */
export function keyIsLive(alias: string, now: string): string {
  return `(${alias}.revoked_at IS NULL AND (${alias}.expires_at IS NULL OR ${alias}.expires_at > ${now}))`;
}

/** What a listing shows of a key: never the key, nor its hash. */
export interface ApiKeyInfo {
  readonly id: string;
  readonly orgId: string;
  readonly userId: string;
  readonly role: string;
  readonly name: string | null;
  /** The key's first characters and last four, for telling keys apart; null for keys stored before they were kept. */
  readonly prefix: string | null;
  readonly last4: string | null;
  readonly createdAt: number;
  readonly createdBy: string | null;
  readonly expiresAt: number | null;
  /** To the minute: written at most once a minute. */
  readonly lastUsedAt: number | null;
  readonly revokedAt: number | null;
  readonly revokedBy: string | null;
  readonly rolledFrom: string | null;
  /** The key authenticates: decided by `keyIsLive` in the statement that read it, never again in JS. */
  readonly live: boolean;
}

/** The columns of ApiKeyInfo from the row `k`, its liveness judged at the parameter `now`. */
const infoColumns = (now: string): string =>
  `k.id, k.org_id, k.user_id, k.role, k.name, k.key_prefix, k.key_last4, k.created_at, k.created_by, k.expires_at, k.last_used_at, k.revoked_at, k.revoked_by, k.rolled_from, ${keyIsLive('k', now)} AS live`;

interface InfoRow {
  id: string; org_id: string; user_id: string; role: string; name: string | null; key_prefix: string | null; key_last4: string | null;
  created_at: string | number; created_by: string | null; expires_at: string | number | null; last_used_at: string | number | null;
  revoked_at: string | number | null; revoked_by: string | null; rolled_from: string | null; live: boolean;
}

const ms = (v: string | number | null): number | null => (v === null ? null : Number(v));

function infoOf(r: InfoRow): ApiKeyInfo {
  return {
    id: r.id, orgId: r.org_id, userId: r.user_id, role: r.role, name: r.name, prefix: r.key_prefix, last4: r.key_last4,
    createdAt: Number(r.created_at), createdBy: r.created_by, expiresAt: ms(r.expires_at), lastUsedAt: ms(r.last_used_at),
    revokedAt: ms(r.revoked_at), revokedBy: r.revoked_by, rolledFrom: r.rolled_from, live: r.live === true,
  };
}

export interface ListApiKeysOptions {
  /** One organization's keys; all organizations' when absent (the server's shell). */
  readonly orgId?: string | undefined;
  /** Only the keys acting as this user. */
  readonly userId?: string | undefined;
  /** Revoked keys too. Default false. */
  readonly revoked?: boolean;
  /** Newest first (the console) instead of oldest first (the shell). */
  readonly newestFirst?: boolean;
  /** At most this many. Default 1000. */
  readonly limit?: number;
  /** Only keys after this one in the listing's order (a page's last key: its creation time and id). */
  readonly after?: { readonly createdAt: number; readonly id: string } | undefined;
  /** The time the keys' liveness is judged at (epoch ms). Default now. */
  readonly now?: number;
}

/** The keys of one organization (or all), oldest first unless asked otherwise; revoked ones only when asked for. */
export async function listApiKeys(db: ServiceTx, o: ListApiKeysOptions = {}): Promise<ApiKeyInfo[]> {
  const order = o.newestFirst ? 'created_at DESC, id DESC' : 'created_at, id';
  const after = o.after === undefined ? '' : ` AND (created_at, id) ${o.newestFirst ? '<' : '>'} ($6::bigint, $7::text)`;
  const { rows } = await db.query<InfoRow>(
    `SELECT ${infoColumns('$5')} FROM ${SERVICE_SCHEMA}.api_keys k
      WHERE ($1::text IS NULL OR org_id = $1) AND ($2::text IS NULL OR user_id = $2) AND ($3::boolean OR revoked_at IS NULL)${after}
      ORDER BY ${order}
      LIMIT $4`,
    [o.orgId ?? null, o.userId ?? null, o.revoked === true, Math.max(1, Math.min(o.limit ?? 1000, 10_000)), o.now ?? Date.now(),
      ...(o.after === undefined ? [] : [o.after.createdAt, o.after.id])],
  );
  return rows.map(infoOf);
}

/** One key by id, within an organization; null when it has no such key. */
export async function getApiKey(db: ServiceTx, orgId: string, id: string, now = Date.now()): Promise<ApiKeyInfo | null> {
  if (typeof id !== 'string' || id.length === 0 || id.length > 200) return null;
  const { rows } = await db.query<InfoRow>(`SELECT ${infoColumns('$3')} FROM ${SERVICE_SCHEMA}.api_keys k WHERE id = $1 AND org_id = $2`, [id, orgId, now]);
  return rows[0] ? infoOf(rows[0]) : null;
}

export interface RevokeOptions {
  /** Who revoked it, for the audit trail. */
  readonly by?: string | undefined;
  /** Only a key of this organization. */
  readonly orgId?: string | undefined;
}

/**
 * Revokes a key by id: it stops authenticating (within a server's key-cache lifetime, see
 * `ApiKeyVerifier`), and the OAuth tokens approved with it and the console sessions signed in
 * with it die with it. Returns the key's organization, or null when no live key has that id.
 */
export async function revokeApiKey(db: ServiceTx, id: string, now = Date.now(), o: RevokeOptions = {}): Promise<string | null> {
  if (typeof id !== 'string' || id.length === 0 || id.length > 200) return null;
  const { rows } = await db.query<{ org_id: string }>(
    `UPDATE ${SERVICE_SCHEMA}.api_keys SET revoked_at = $2, revoked_by = $3
      WHERE id = $1 AND revoked_at IS NULL AND ($4::text IS NULL OR org_id = $4) RETURNING org_id`,
    [id, now, o.by ?? null, o.orgId ?? null],
  );
  return rows[0]?.org_id ?? null;
}

export interface RollOptions {
  readonly orgId: string;
  /** Who rolled it: the new key's creator. */
  readonly by: string;
  readonly now?: number;
  /** How long the old key keeps working. Default ROLL_GRACE_MS. */
  readonly graceMs?: number;
  /** The caps of live keys: the new key counts, and so does the old one until its grace ends. Default none. */
  readonly caps?: KeyCaps | undefined;
}

/**
 * Rolls a live key: a new key with the same owner, role, name and expiry, and the old one
 * expiring after the grace period (or sooner, if it was to expire sooner). One transaction, the
 * old row locked, so two rolls of one key cannot both read it live and leave it unbounded.
 * Returns the new key and id, or null when no live key of the organization has that id.
 */
export async function rollApiKey(db: Database, id: string, o: RollOptions): Promise<{ readonly id: string; readonly key: string } | null> {
  if (typeof id !== 'string' || id.length === 0 || id.length > 200) return null;
  const now = o.now ?? Date.now();
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<InfoRow>(
      `SELECT ${infoColumns('$3')} FROM ${SERVICE_SCHEMA}.api_keys k WHERE id = $1 AND org_id = $2 AND ${keyIsLive('k', '$3')} FOR UPDATE`,
      [id, o.orgId, now],
    );
    const old = rows[0] ? infoOf(rows[0]) : null;
    if (!old || !isRole(old.role)) return null;
    if (o.caps !== undefined) await checkKeyCaps(tx, old.orgId, old.userId, o.caps, now);
    const until = now + (o.graceMs ?? ROLL_GRACE_MS);
    await tx.query(`UPDATE ${SERVICE_SCHEMA}.api_keys SET expires_at = $2 WHERE id = $1`, [id, Math.min(old.expiresAt ?? until, until)]);
    return issueApiKey(tx, {
      orgId: old.orgId, role: old.role, userId: old.userId, name: old.name ?? undefined, expiresAt: old.expiresAt, createdBy: o.by, rolledFrom: old.id,
    });
  });
}

interface Verified {
  readonly principal: Principal;
  readonly expiresAt: number | null;
}

async function lookUpApiKey(db: ServiceTx, key: string, now: number): Promise<Verified | null> {
  if (typeof key !== 'string' || key.length === 0 || key.length > 512) return null;
  const { rows } = await db.query<{ id: string; org_id: string; user_id: string; role: string; expires_at: string | number | null; last_used_at: string | number | null }>(
    `SELECT id, org_id, user_id, role, expires_at, last_used_at FROM ${SERVICE_SCHEMA}.api_keys k WHERE key_hash = $1 AND ${keyIsLive('k', '$2')}`,
    [hashApiKey(key), now],
  );
  const row = rows[0];
  if (!row || !isRole(row.role)) return null;
  if (row.last_used_at === null || Number(row.last_used_at) <= now - LAST_USED_EVERY_MS) {
    try {
      await db.query(`UPDATE ${SERVICE_SCHEMA}.api_keys SET last_used_at = $2 WHERE id = $1`, [row.id, now]);
    } catch {
      // Last use is advice for people; failing to note it must not refuse a valid key.
    }
  }
  return {
    principal: { orgId: row.org_id, userId: row.user_id, role: row.role, via: 'api_key', clientId: row.id },
    expiresAt: ms(row.expires_at),
  };
}

/** The principal of a key, or null for an unknown, revoked or expired one. Notes the key's use. */
export async function verifyApiKey(db: ServiceTx, key: string, now = Date.now()): Promise<Principal | null> {
  return (await lookUpApiKey(db, key, now))?.principal ?? null;
}

/**
 * Verified keys kept in memory for a short time, so a request does not pay a database round
 * trip to authenticate. Keyed by the key's SHA-256, never the key; bounded; only keys found
 * valid are kept (an unknown key is looked up every time), and never past their expiry. A key
 * revoked elsewhere (`oql keys revoke`, another server process) stops working here within
 * `ttlMs`; one revoked through this server is dropped at once (`forgetKey`); `forget()` drops
 * every entry.
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
    const t = this.now();
    if (this.ttlMs <= 0 || typeof key !== 'string' || key.length === 0 || key.length > 512) return verifyApiKey(this.db, key, t);
    const hash = hashApiKey(key);
    const hit = this.entries.get(hash);
    if (hit && hit.until > t) return hit.principal;
    if (hit) this.entries.delete(hash);
    const found = await lookUpApiKey(this.db, key, t);
    if (found) {
      // A Map iterates in insertion order: the first entry is the oldest.
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(hash, { principal: found.principal, until: Math.min(t + this.ttlMs, found.expiresAt ?? Infinity) });
    }
    return found?.principal ?? null;
  }

  /** Drops the entry of one key, by its id: a key revoked through this server fails here on its next request. */
  forgetKey(id: string): void {
    for (const [hash, entry] of this.entries) if (entry.principal.clientId === id) this.entries.delete(hash);
  }

  forget(): void {
    this.entries.clear();
  }

  /**
   * Revokes a key, then drops it from this server's cache: "revoke" as every caller means it, the
   * key failing here from its next request (on other servers within `ttlMs`). Returns the key's
   * organization, or null when no live key has that id (nothing changed).
   */
  async revoke(id: string, o: RevokeOptions = {}): Promise<string | null> {
    const orgId = await revokeApiKey(this.db, id, this.now(), o);
    if (orgId !== null) this.forgetKey(id);
    return orgId;
  }
}

export async function countApiKeys(db: ServiceTx): Promise<number> {
  const { rows } = await db.query<{ n: string | number }>(`SELECT count(*)::int AS n FROM ${SERVICE_SCHEMA}.api_keys k WHERE ${keyIsLive('k', '$1')}`, [Date.now()]);
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
