import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { addressKey, clientKey, oauthError, param, withinLimit, workspaceOr404, type OAuthContext } from './context.js';
import { resolveClient, type ClientLookup } from './client-metadata.js';
import { requestedScopes, storedScopes } from './scopes.js';
import {
  issueTokens, pruneExpired, redeemCode, redeemRefreshToken, revokeFamily, type IssuedTokens, type RegisteredClient,
} from './store.js';
import type { ServiceTx } from '../service/types.js';

/**
 * The token endpoint (form-encoded): the authorization_code grant with PKCE, and the refresh_token
 * grant with rotation. Every failure answers 400 in the OAuth shape and issues nothing.
 */

class GrantError extends Error {
  constructor(readonly error: string, message: string, readonly status = 400) {
    super(message);
  }
}

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** RFC 7636 section 4.6: BASE64URL(SHA256(verifier)) equals the challenge. */
export function pkceVerifies(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

function required(body: unknown, name: string): string {
  const value = param(body, name);
  if (value === undefined || value === '') throw new GrantError('invalid_request', `${name} is required (once)`);
  return value;
}

function tokenResponse(reply: FastifyReply, t: IssuedTokens): FastifyReply {
  return reply.code(200).header('cache-control', 'no-store').header('pragma', 'no-cache').send({
    access_token: t.accessToken,
    token_type: 'Bearer',
    expires_in: t.expiresIn,
    refresh_token: t.refreshToken,
    scope: t.scope,
  });
}

/**
 * Outcome of a grant: tokens to answer with, or an error to answer with after the transaction has
 * committed (a replay's revocation must be kept even though the request fails).
 */
type Result = { readonly tokens: IssuedTokens } | { readonly error: GrantError };

/** The client of the request, looked up before the transaction (a metadata document may need fetching). */
function knownClient(lookup: ClientLookup | null): RegisteredClient {
  if (!lookup?.client) throw new GrantError('invalid_client', lookup?.problem ?? 'client_id is required (once)');
  return lookup.client;
}

async function authorizationCodeGrant(ctx: OAuthContext, tx: ServiceTx, workspace: string, body: unknown, lookup: ClientLookup | null): Promise<Result> {
  const clientId = required(body, 'client_id');
  const code = required(body, 'code');
  const redirectUri = required(body, 'redirect_uri');
  const verifier = required(body, 'code_verifier');
  const resource = param(body, 'resource');
  if (resource === undefined) throw new GrantError('invalid_target', 'resource is required: the MCP URL the code was issued for');
  knownClient(lookup);
  const now = ctx.now();
  const redemption = await redeemCode(tx, workspace, code, now);
  if (redemption.kind === 'unknown') return { error: new GrantError('invalid_grant', 'the authorization code is not valid') };
  if (redemption.kind === 'replayed') {
    // Someone has the code besides the client that used it first: whatever that first use got is void.
    await revokeFamily(tx, redemption.code.familyId, now);
    return { error: new GrantError('invalid_grant', 'the authorization code was already used; the tokens it gave were revoked') };
  }
  const c = redemption.code;
  if (c.expiresAt <= now) return { error: new GrantError('invalid_grant', 'the authorization code has expired') };
  if (c.clientId !== clientId) return { error: new GrantError('invalid_grant', 'the authorization code was issued to another client') };
  if (c.redirectUri !== redirectUri) return { error: new GrantError('invalid_grant', 'redirect_uri differs from the authorization request') };
  if (c.resource !== resource) return { error: new GrantError('invalid_target', 'resource differs from the authorization request') };
  if (!pkceVerifies(verifier, c.codeChallenge)) return { error: new GrantError('invalid_grant', 'code_verifier does not match the code_challenge') };
  return { tokens: await issueTokens(tx, c, c.familyId, now, ctx.lifetimes) };
}

async function refreshTokenGrant(ctx: OAuthContext, tx: ServiceTx, workspace: string, body: unknown, lookup: ClientLookup | null): Promise<Result> {
  const clientId = required(body, 'client_id');
  const refreshToken = required(body, 'refresh_token');
  const resource = param(body, 'resource');
  const narrowed = param(body, 'scope') === undefined ? undefined : requestedScopes(param(body, 'scope'));
  if (narrowed && !narrowed.ok) throw new GrantError('invalid_scope', narrowed.description);
  const client = knownClient(lookup);
  if (!client.grant_types.includes('refresh_token')) throw new GrantError('unauthorized_client', 'this client did not register the refresh_token grant');
  const now = ctx.now();
  const redemption = await redeemRefreshToken(tx, workspace, refreshToken, now);
  if (redemption.kind === 'invalid') return { error: new GrantError('invalid_grant', 'the refresh token is not valid, expired or revoked') };
  if (redemption.kind === 'reused') {
    await revokeFamily(tx, redemption.familyId, now);
    return { error: new GrantError('invalid_grant', 'the refresh token was already used; every token of this authorization was revoked') };
  }
  const g = redemption.grant;
  if (g.clientId !== clientId) {
    // A refresh token in another client's hands is stolen: end its family.
    await revokeFamily(tx, redemption.familyId, now);
    return { error: new GrantError('invalid_grant', 'the refresh token was issued to another client') };
  }
  if (resource !== undefined && resource !== g.resource) {
    // Not consumed: a mistaken resource must not log a legitimate client out.
    throw new GrantError('invalid_target', 'resource differs from the one the refresh token was issued for');
  }
  // RFC 6749 section 6: a refresh may narrow the scope, never widen it.
  const granted = storedScopes(g.scope);
  if (narrowed?.ok) {
    const extra = narrowed.scopes.filter((s) => !granted.includes(s));
    if (extra.length > 0) throw new GrantError('invalid_scope', `scope ${extra.join(' ')} was not granted to this refresh token: ask for ${granted.join(' ')} or fewer`);
  }
  const scope = narrowed?.ok ? narrowed.scopes.join(' ') : g.scope;
  return { tokens: await issueTokens(tx, { ...g, scope }, redemption.familyId, now, ctx.lifetimes) };
}

/** Pruning runs from the token endpoint at most this often per process. */
const PRUNE_EVERY_MS = 3600 * 1000;

export function tokenRoutes(app: FastifyInstance, ctx: OAuthContext): void {
  let prunedAt = -Infinity;
  app.post<{ Params: { subdomain: string } }>('/api/v1/:subdomain/oauth/token', async (request, reply) => {
    const body = request.body;
    const clientId = param(body, 'client_id');
    const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const keys = [addressKey('token', request), ...(clientId ? [clientKey('token', request.params.subdomain, clientId)] : [])];
    if (!await withinLimit(ctx, reply, keys, ctx.limits.token, 'token')) return reply;
    const workspace = await workspaceOr404(ctx, request.params.subdomain, reply);
    if (!workspace) return reply;
    // RFC 6749 section 3.2: form-encoded only; a JSON body is a client bug better named than half-read.
    if (type !== 'application/x-www-form-urlencoded') {
      return oauthError(reply, 400, 'invalid_request', 'the token endpoint takes application/x-www-form-urlencoded parameters');
    }
    const grantType = param(body, 'grant_type');
    const now = ctx.now();
    if (now - prunedAt >= PRUNE_EVERY_MS) {
      prunedAt = now;
      await pruneExpired(ctx.db, now);
    }
    try {
      let result: Result;
      const lookup = clientId === undefined || clientId === '' ? null : await resolveClient(ctx.db, ctx.clientMetadata, workspace.subdomain, clientId);
      if (grantType === 'authorization_code') {
        result = await ctx.db.transaction((tx) => authorizationCodeGrant(ctx, tx, workspace.subdomain, body, lookup));
      } else if (grantType === 'refresh_token') {
        result = await ctx.db.transaction((tx) => refreshTokenGrant(ctx, tx, workspace.subdomain, body, lookup));
      } else if (grantType === undefined) {
        throw new GrantError('invalid_request', 'grant_type is required');
      } else {
        throw new GrantError('unsupported_grant_type', `grant_type '${grantType}' is not supported: authorization_code or refresh_token`);
      }
      if ('error' in result) return oauthError(reply, result.error.status, result.error.error, result.error.message);
      return tokenResponse(reply, result.tokens);
    } catch (e) {
      if (e instanceof GrantError) return oauthError(reply, e.status, e.error, e.message);
      throw e;
    }
  });
}
