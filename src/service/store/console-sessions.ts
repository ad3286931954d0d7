import { createHash, randomBytes } from 'node:crypto';
import { SERVICE_SCHEMA } from '../migrations.js';
import { keyIsLive } from './api-keys.js';
import { isRole, type Principal, type ServiceTx } from '../types.js';

/**
 * Console sessions, kept in PostgreSQL so that every instance of a fleet knows every session and
 * none holds one in memory. A session is a random token (256 bits) the browser holds in an
 * HttpOnly cookie; the table holds its SHA-256 only, so a leaked table signs no one in.
 *
 * A session acts as the API key it was signed in with: the key's organization, user and role,
 * read with the key on every request, so a key revoked, expired or given another role changes its
 * sessions at once, on every instance. It ends after `idleMs` without a request, after `maxMs` in
 * any case, and at sign-out.
 */

const TOKEN_PREFIX = 'oqls_';
const TOKEN = /^oqls_[A-Za-z0-9_-]{43}$/;

export interface SessionLifetimes {
  /** A session unused this long ends. */
  readonly idleMs: number;
  /** A session ends this long after sign-in, used or not. */
  readonly maxMs: number;
}

export const DEFAULT_SESSION_LIFETIMES: SessionLifetimes = Object.freeze({ idleMs: 60 * 60 * 1000, maxMs: 12 * 3600 * 1000 });

/** The idle deadline moves at most once a minute: a request should not write on every call. */
const TOUCH_EVERY_MS = 60_000;

function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export interface NewSession {
  readonly token: string;
  readonly expiresAt: number;
  readonly endsAt: number;
}

/**
 * Starts a session for the principal of an API key (its `clientId` is the key's id). When the key
 * then has more than `maxPerKey` sessions, its oldest end: one key cannot fill the table.
 */
export async function createSession(db: ServiceTx, key: Principal, now: number, lifetimes: SessionLifetimes, maxPerKey = Number.MAX_SAFE_INTEGER): Promise<NewSession> {
  if (key.via !== 'api_key' || key.clientId === undefined) throw new TypeError('a console session is signed in with an API key');
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const endsAt = now + lifetimes.maxMs;
  const expiresAt = Math.min(endsAt, now + lifetimes.idleMs);
  await db.query(
    `INSERT INTO ${SERVICE_SCHEMA}.console_sessions (token_hash, api_key_id, org_id, user_id, created_at, last_seen_at, expires_at, ends_at)
     VALUES ($1, $2, $3, $4, $5, $5, $6, $7)`,
    [hashToken(token), key.clientId, key.orgId, key.userId, now, expiresAt, endsAt],
  );
  if (maxPerKey < Number.MAX_SAFE_INTEGER) {
    await db.query(
      `DELETE FROM ${SERVICE_SCHEMA}.console_sessions WHERE token_hash IN (
         SELECT token_hash FROM ${SERVICE_SCHEMA}.console_sessions WHERE api_key_id = $1
          ORDER BY token_hash = $3 DESC, created_at DESC, token_hash DESC OFFSET $2)`,
      [key.clientId, maxPerKey, hashToken(token)],
    );
  }
  return { token, expiresAt, endsAt };
}

export interface Session {
  readonly principal: Principal;
  readonly expiresAt: number;
  readonly endsAt: number;
}

/**
 * The live session of a token, as the principal of its key; null for an unknown, ended or expired
 * one, or one whose key no longer authenticates or now belongs to another organization or user.
 */
export async function resolveSession(db: ServiceTx, token: string, now: number, lifetimes: SessionLifetimes): Promise<Session | null> {
  if (typeof token !== 'string' || !TOKEN.test(token)) return null;
  const hash = hashToken(token);
  const { rows } = await db.query<{
    key_id: string; org_id: string; user_id: string; role: string; last_seen_at: string | number; expires_at: string | number; ends_at: string | number;
  }>(
    `SELECT k.id AS key_id, k.org_id, k.user_id, k.role, s.last_seen_at, s.expires_at, s.ends_at
       FROM ${SERVICE_SCHEMA}.console_sessions s
       JOIN ${SERVICE_SCHEMA}.api_keys k ON k.id = s.api_key_id AND k.org_id = s.org_id AND k.user_id = s.user_id
      WHERE s.token_hash = $1 AND s.expires_at > $2 AND ${keyIsLive('k', '$2')}`,
    [hash, now],
  );
  const row = rows[0];
  if (!row || !isRole(row.role)) return null;
  const endsAt = Number(row.ends_at);
  let expiresAt = Number(row.expires_at);
  if (Number(row.last_seen_at) <= now - TOUCH_EVERY_MS) {
    expiresAt = Math.min(endsAt, now + lifetimes.idleMs);
    await db.query(`UPDATE ${SERVICE_SCHEMA}.console_sessions SET last_seen_at = $2, expires_at = $3 WHERE token_hash = $1`, [hash, now, expiresAt]);
  }
  return {
    principal: { orgId: row.org_id, userId: row.user_id, role: row.role, via: 'session', clientId: row.key_id },
    expiresAt,
    endsAt,
  };
}

/** Ends a session (sign-out). Returns whether there was one. */
export async function endSession(db: ServiceTx, token: string): Promise<boolean> {
  if (typeof token !== 'string' || !TOKEN.test(token)) return false;
  const { rows } = await db.query(`DELETE FROM ${SERVICE_SCHEMA}.console_sessions WHERE token_hash = $1 RETURNING 1 AS gone`, [hashToken(token)]);
  return rows.length > 0;
}

/** Deletes sessions that have expired: nothing can use them, and the table would otherwise only grow. */
export async function pruneSessions(db: ServiceTx, now: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `WITH gone AS (DELETE FROM ${SERVICE_SCHEMA}.console_sessions WHERE expires_at <= $1 RETURNING 1) SELECT count(*)::int AS n FROM gone`,
    [now],
  );
  return Number(rows[0]?.n ?? 0);
}
