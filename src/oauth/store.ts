import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { isRole, type Principal, type Role, type ServiceDb, type ServiceTx } from '../service/types.js';
import { SERVICE_SCHEMA } from '../service/migrations.js';
import { storedScopes } from './scopes.js';
import { keyIsLive } from '../service/store/api-keys.js';

/**
 * The authorization server's state: registered clients, authorization codes and tokens.
 *
 * Codes and tokens are opaque random strings (256 bits) stored only as SHA-256 hashes, so a leaked
 * table yields nothing usable; being random, they need no salt, and a lookup goes through the
 * primary key. Every code and token is bound to the workspace, organization, user, role, client and
 * resource it was issued for, and belongs to a family: everything issued from one authorization
 * (the code, its access and refresh tokens, and their rotations). A replayed code or a reused
 * rotated refresh token revokes its whole family, since one of the two parties holding it is an
 * attacker and the server cannot tell which.
 */

const CODE_PREFIX = 'oqlac_';
const ACCESS_PREFIX = 'oqlat_';
const REFRESH_PREFIX = 'oqlrt_';

export function hashSecret(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

function opaque(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

// ---- Clients ----

export interface ClientMetadata {
  readonly client_name: string;
  readonly redirect_uris: readonly string[];
  readonly grant_types: readonly string[];
  readonly response_types: readonly string[];
  readonly token_endpoint_auth_method: 'none';
  readonly client_uri?: string | undefined;
  /** OpenID Connect Registration: `native` (loopback or private-scheme redirects) or `web` (https). */
  readonly application_type?: 'web' | 'native' | undefined;
}

export interface RegisteredClient extends ClientMetadata {
  readonly client_id: string;
  readonly workspace: string;
  readonly created_at: number;
}

export async function insertClient(db: ServiceTx, workspace: string, meta: ClientMetadata, now: number): Promise<RegisteredClient> {
  const clientId = `oqlc_${randomBytes(16).toString('base64url')}`;
  await db.query(
    `INSERT INTO ${SERVICE_SCHEMA}.oauth_clients
       (client_id, workspace, client_name, redirect_uris, grant_types, response_types, token_endpoint_auth_method, client_uri, created_at, application_type)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [clientId, workspace, meta.client_name, JSON.stringify(meta.redirect_uris), JSON.stringify(meta.grant_types),
      JSON.stringify(meta.response_types), meta.token_endpoint_auth_method, meta.client_uri ?? null, now, meta.application_type ?? null],
  );
  return { ...meta, client_id: clientId, workspace, created_at: now };
}

interface ClientRow {
  client_id: string; workspace: string; client_name: string; redirect_uris: unknown; grant_types: unknown;
  response_types: unknown; token_endpoint_auth_method: string; client_uri: string | null; created_at: string | number;
  application_type: string | null;
}

function jsonArray(value: unknown): string[] {
  const parsed = typeof value === 'string' ? JSON.parse(value) : value;
  return Array.isArray(parsed) ? parsed.map(String) : [];
}

/** The client registered under this id in this workspace, or null (also for another workspace's client). */
export async function findClient(db: ServiceTx, workspace: string, clientId: string): Promise<RegisteredClient | null> {
  if (typeof clientId !== 'string' || clientId.length === 0 || clientId.length > 200) return null;
  const { rows } = await db.query<ClientRow>(
    `SELECT client_id, workspace, client_name, redirect_uris, grant_types, response_types, token_endpoint_auth_method, client_uri, created_at,
            application_type
       FROM ${SERVICE_SCHEMA}.oauth_clients WHERE client_id = $1 AND workspace = $2`,
    [clientId, workspace],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    client_id: r.client_id,
    workspace: r.workspace,
    client_name: r.client_name,
    redirect_uris: jsonArray(r.redirect_uris),
    grant_types: jsonArray(r.grant_types),
    response_types: jsonArray(r.response_types),
    token_endpoint_auth_method: 'none',
    client_uri: r.client_uri ?? undefined,
    application_type: r.application_type === 'web' || r.application_type === 'native' ? r.application_type : undefined,
    created_at: Number(r.created_at),
  };
}

// ---- Codes ----

/** Who approved, for what: copied into every code and token of the family. */
export interface Grant {
  readonly workspace: string;
  readonly orgId: string;
  readonly userId: string;
  readonly role: Role;
  /** The API key the user signed in with: its revocation ends the tokens too. */
  readonly apiKeyId: string | null;
  readonly clientId: string;
  readonly resource: string;
  /** The granted scopes, space-separated (src/oauth/scopes.ts); null for grants from before scopes. */
  readonly scope: string | null;
}

export interface NewCode extends Grant {
  readonly redirectUri: string;
  readonly codeChallenge: string;
}

export async function issueCode(db: ServiceTx, c: NewCode, now: number, ttlSeconds: number): Promise<string> {
  const code = opaque(CODE_PREFIX);
  await db.query(
    `INSERT INTO ${SERVICE_SCHEMA}.oauth_codes
       (code_hash, family_id, workspace, org_id, user_id, role, api_key_id, client_id, redirect_uri, code_challenge, resource, expires_at, scope)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [hashSecret(code), randomUUID(), c.workspace, c.orgId, c.userId, c.role, c.apiKeyId, c.clientId, c.redirectUri, c.codeChallenge, c.resource,
      now + ttlSeconds * 1000, c.scope],
  );
  return code;
}

export interface StoredCode extends NewCode {
  readonly familyId: string;
  readonly expiresAt: number;
}

interface CodeRow {
  family_id: string; workspace: string; org_id: string; user_id: string; role: string; api_key_id: string | null; client_id: string;
  redirect_uri: string; code_challenge: string; resource: string; expires_at: string | number; used_at: string | number | null;
  scope: string | null;
}

function codeOf(r: CodeRow): StoredCode {
  return {
    familyId: r.family_id, workspace: r.workspace, orgId: r.org_id, userId: r.user_id, role: r.role as Role, apiKeyId: r.api_key_id,
    clientId: r.client_id, redirectUri: r.redirect_uri, codeChallenge: r.code_challenge, resource: r.resource, scope: r.scope,
    expiresAt: Number(r.expires_at),
  };
}

export type CodeRedemption =
  | { readonly kind: 'fresh'; readonly code: StoredCode }
  | { readonly kind: 'replayed'; readonly code: StoredCode }
  | { readonly kind: 'unknown' };

/**
 * Marks a code used and returns it. A code is consumed by its first presentation, valid or not:
 * the single-use guarantee must not depend on the checks that follow. The UPDATE … WHERE used_at
 * IS NULL makes two concurrent redemptions see one winner. Runs inside the caller's transaction.
 */
export async function redeemCode(db: ServiceTx, workspace: string, code: string, now: number): Promise<CodeRedemption> {
  if (typeof code !== 'string' || !code.startsWith(CODE_PREFIX) || code.length > 200) return { kind: 'unknown' };
  const hash = hashSecret(code);
  await serialize(db, `oauth-code:${hash}`);
  const fresh = await db.query<CodeRow>(
    `UPDATE ${SERVICE_SCHEMA}.oauth_codes SET used_at = $3 WHERE code_hash = $1 AND workspace = $2 AND used_at IS NULL
     RETURNING family_id, workspace, org_id, user_id, role, api_key_id, client_id, redirect_uri, code_challenge, resource, expires_at, used_at, scope`,
    [hash, workspace, now],
  );
  if (fresh.rows[0]) return { kind: 'fresh', code: codeOf(fresh.rows[0]) };
  const used = await db.query<CodeRow>(
    `SELECT family_id, workspace, org_id, user_id, role, api_key_id, client_id, redirect_uri, code_challenge, resource, expires_at, used_at, scope
       FROM ${SERVICE_SCHEMA}.oauth_codes WHERE code_hash = $1 AND workspace = $2`,
    [hash, workspace],
  );
  return used.rows[0] ? { kind: 'replayed', code: codeOf(used.rows[0]) } : { kind: 'unknown' };
}

// ---- Tokens ----

export interface TokenLifetimes {
  readonly accessSeconds: number;
  readonly refreshSeconds: number;
}

export interface IssuedTokens {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly expiresIn: number;
  /** The scopes granted, space-separated, for the token response's `scope`. */
  readonly scope: string;
}

/** An access token and a refresh token of one family. */
export async function issueTokens(db: ServiceTx, grant: Grant, familyId: string, now: number, life: TokenLifetimes): Promise<IssuedTokens> {
  const accessToken = opaque(ACCESS_PREFIX);
  const refreshToken = opaque(REFRESH_PREFIX);
  const insert = `INSERT INTO ${SERVICE_SCHEMA}.oauth_tokens
       (token_hash, kind, family_id, workspace, org_id, user_id, role, api_key_id, client_id, resource, created_at, expires_at, scope)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`;
  const common = [familyId, grant.workspace, grant.orgId, grant.userId, grant.role, grant.apiKeyId, grant.clientId, grant.resource, now];
  await db.query(insert, [hashSecret(accessToken), 'access', ...common, now + life.accessSeconds * 1000, grant.scope]);
  await db.query(insert, [hashSecret(refreshToken), 'refresh', ...common, now + life.refreshSeconds * 1000, grant.scope]);
  return { accessToken, refreshToken, expiresIn: life.accessSeconds, scope: storedScopes(grant.scope).join(' ') };
}

/**
 * Holds a transaction-scoped advisory lock on a name. Replays arrive together (ten copies of a
 * stolen code or refresh token at once), and row locks alone let their transactions queue on
 * tuples in a cycle (PostgreSQL reports a deadlock); serialising by the code, token or family first
 * makes them wait in line instead. Taken in the order token → family, never the reverse.
 */
async function serialize(db: ServiceTx, name: string): Promise<void> {
  await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [name]);
}

/** Revokes every token of a family (and thereby anything later rotated from it). */
export async function revokeFamily(db: ServiceTx, familyId: string, now: number): Promise<number> {
  await serialize(db, `oauth-family:${familyId}`);
  const { rows } = await db.query<{ n: number }>(
    `WITH revoked AS (
       UPDATE ${SERVICE_SCHEMA}.oauth_tokens SET revoked_at = $2 WHERE family_id = $1 AND revoked_at IS NULL RETURNING 1
     ) SELECT count(*)::int AS n FROM revoked`,
    [familyId, now],
  );
  return Number(rows[0]?.n ?? 0);
}

interface TokenRow {
  kind: string; family_id: string; workspace: string; org_id: string; user_id: string; role: string; api_key_id: string | null; client_id: string;
  resource: string; expires_at: string | number; rotated_at: string | number | null; revoked_at: string | number | null; scope: string | null;
}

const TOKEN_COLUMNS = 'kind, family_id, workspace, org_id, user_id, role, api_key_id, client_id, resource, expires_at, rotated_at, revoked_at, scope';

/** A token lives only as long as the API key it was approved with (when there was one); `now` names the clock's parameter. */
function keyAlive(now: string): string {
  return `(t.api_key_id IS NULL OR EXISTS (SELECT 1 FROM ${SERVICE_SCHEMA}.api_keys k WHERE k.id = t.api_key_id AND ${keyIsLive('k', now)}))`;
}

function grantOf(r: TokenRow): Grant {
  return { workspace: r.workspace, orgId: r.org_id, userId: r.user_id, role: r.role as Role, apiKeyId: r.api_key_id, clientId: r.client_id, resource: r.resource, scope: r.scope };
}

export type RefreshRedemption =
  | { readonly kind: 'fresh'; readonly grant: Grant; readonly familyId: string }
  | { readonly kind: 'reused'; readonly grant: Grant; readonly familyId: string }
  | { readonly kind: 'invalid' };

/**
 * Rotates a refresh token: marks it rotated (one winner among concurrent uses) and returns its
 * grant. Runs inside the caller's transaction, which the advisory lock lasts for. A token that was already rotated is a reuse; a revoked or expired one is simply invalid.
 */
export async function redeemRefreshToken(db: ServiceTx, workspace: string, token: string, now: number): Promise<RefreshRedemption> {
  if (typeof token !== 'string' || !token.startsWith(REFRESH_PREFIX) || token.length > 200) return { kind: 'invalid' };
  const hash = hashSecret(token);
  await serialize(db, `oauth-refresh:${hash}`);
  const fresh = await db.query<TokenRow>(
    `UPDATE ${SERVICE_SCHEMA}.oauth_tokens t SET rotated_at = $3
      WHERE token_hash = $1 AND workspace = $2 AND kind = 'refresh' AND rotated_at IS NULL AND revoked_at IS NULL AND expires_at > $3
        AND ${keyAlive('$3')}
      RETURNING ${TOKEN_COLUMNS}`,
    [hash, workspace, now],
  );
  if (fresh.rows[0]) return { kind: 'fresh', grant: grantOf(fresh.rows[0]), familyId: fresh.rows[0].family_id };
  const old = await db.query<TokenRow>(
    `SELECT ${TOKEN_COLUMNS} FROM ${SERVICE_SCHEMA}.oauth_tokens WHERE token_hash = $1 AND workspace = $2 AND kind = 'refresh'`,
    [hash, workspace],
  );
  const r = old.rows[0];
  if (r && r.rotated_at !== null) return { kind: 'reused', grant: grantOf(r), familyId: r.family_id };
  return { kind: 'invalid' };
}

export interface VerifyOptions {
  /** The resource the token must have been issued for (the MCP URL of a workspace). */
  readonly resource?: string | undefined;
  /** The workspace the token must belong to. */
  readonly workspace?: string | undefined;
  /** The clock, in epoch milliseconds (tests). */
  readonly now?: number | undefined;
}

/**
 * The principal of a live access token, or null: unknown, expired, revoked, a refresh token,
 * approved with an API key since revoked, or issued for another resource or workspace. A token whose role is no longer a known role is refused
 * rather than guessed at.
 */
export async function verifyAccessToken(db: ServiceTx, token: string, options: VerifyOptions = {}): Promise<Principal | null> {
  if (typeof token !== 'string' || !token.startsWith(ACCESS_PREFIX) || token.length > 200) return null;
  const now = options.now ?? Date.now();
  const { rows } = await db.query<TokenRow>(
    `SELECT ${TOKEN_COLUMNS} FROM ${SERVICE_SCHEMA}.oauth_tokens t WHERE token_hash = $1 AND kind = 'access' AND ${keyAlive('$2')}`,
    [hashSecret(token), now],
  );
  const r = rows[0];
  if (!r || r.revoked_at !== null || Number(r.expires_at) <= now || !isRole(r.role)) return null;
  if (options.resource !== undefined && r.resource !== options.resource) return null;
  if (options.workspace !== undefined && r.workspace !== options.workspace) return null;
  return { orgId: r.org_id, userId: r.user_id, role: r.role, via: 'oauth', clientId: r.client_id, workspace: r.workspace, scopes: storedScopes(r.scope) };
}

/**
 * Revokes an access or refresh token together with its family (a user signing a client out, an
 * operator reacting to a leak). Returns how many tokens were revoked; 0 for an unknown token.
 */
export async function revokeToken(db: ServiceTx, token: string, now = Date.now()): Promise<number> {
  if (typeof token !== 'string' || token.length > 200) return 0;
  const { rows } = await db.query<{ family_id: string }>(
    `SELECT family_id FROM ${SERVICE_SCHEMA}.oauth_tokens WHERE token_hash = $1`,
    [hashSecret(token)],
  );
  return rows[0] ? revokeFamily(db, rows[0].family_id, now) : 0;
}

/** How long spent codes and dead tokens are kept: a replay within it still revokes its family. */
export const RETENTION_MS = 24 * 3600 * 1000;

/**
 * Deletes codes and tokens that expired more than a day ago: nothing can use them any more, and
 * without this both tables would only grow. Returns how many rows went.
 */
export async function pruneExpired(db: ServiceTx, now: number): Promise<number> {
  const cutoff = now - RETENTION_MS;
  const codes = await db.query<{ n: number }>(
    `WITH gone AS (DELETE FROM ${SERVICE_SCHEMA}.oauth_codes WHERE expires_at < $1 RETURNING 1) SELECT count(*)::int AS n FROM gone`, [cutoff]);
  const tokens = await db.query<{ n: number }>(
    `WITH gone AS (DELETE FROM ${SERVICE_SCHEMA}.oauth_tokens WHERE expires_at < $1 RETURNING 1) SELECT count(*)::int AS n FROM gone`, [cutoff]);
  return Number(codes.rows[0]?.n ?? 0) + Number(tokens.rows[0]?.n ?? 0);
}

/**
 * The resolver the service core puts on the tool-log endpoint: an access token of any workspace
 * resolves to its organization's principal; the endpoint's own Superadmin check then applies to it
 * exactly as to an API key.
 */
export function oauthAuthResolver(db: ServiceDb | ServiceTx): (bearer: string) => Promise<Principal | null> {
  return (bearer) => verifyAccessToken(db, bearer);
}
