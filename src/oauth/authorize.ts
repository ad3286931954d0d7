import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { verifyApiKey } from '../service/store/api-keys.js';
import type { Workspace } from '../service/store/workspaces.js';
import {
  csrfTokenValid, issueCsrfToken, renderConsentPage, renderErrorPage, sameOriginPost, type ConsentRequest,
} from './consent.js';
import {
  addressKey, clientKey, oauthError, param, present, withinLimit, workspaceOr404, workspaceUrls, type OAuthContext,
} from './context.js';
import { isMetadataDocumentId, resolveClient, type ClientLookup } from './client-metadata.js';
import { requestedScopes } from './scopes.js';
import { issueCode, type RegisteredClient } from './store.js';

/**
 * The authorization endpoint: GET renders the consent page, POST (the page's form, or automation
 * using the same fields) approves or denies.
 *
 * The checks run in a fixed order. The first two decide where an error may go: until the client is
 * known and the redirect URI is exactly one it registered, an error is shown on the page, never
 * redirected (an open redirector would otherwise deliver errors, or worse, anywhere). After them,
 * errors go back to the client's redirect URI as RFC 6749 section 4.1.2.1 describes.
 */

type Outcome =
  | { readonly ok: true; readonly client: RegisteredClient; readonly request: ConsentRequest }
  | { readonly ok: false; readonly to: 'page'; readonly status: number; readonly error: string; readonly description: string }
  | { readonly ok: false; readonly to: 'client'; readonly redirectUri: string; readonly state: string | undefined; readonly issuer: string; readonly error: string; readonly description: string };

type Problem = { readonly error: string; readonly description: string } | null;

/** An unknown client (or another workspace's, or one whose metadata document fails) cannot be redirected to. */
async function knownClient(ctx: OAuthContext, workspace: Workspace, clientId: string | undefined): Promise<ClientLookup> {
  if (clientId === undefined) return { client: null, problem: 'client_id is required (once)' };
  return resolveClient(ctx.db, ctx.clientMetadata, workspace.subdomain, clientId);
}

/** Exact string comparison with a registered URI (docs/oauth.md#rules): no prefix, no normalisation. */
export function redirectUriMatchesExactly(client: RegisteredClient, redirectUri: string | undefined): redirectUri is string {
  return redirectUri !== undefined && client.redirect_uris.includes(redirectUri);
}

function responseTypeIsCode(p: unknown): Problem {
  const value = param(p, 'response_type');
  if (value === 'code') return null;
  return value === undefined
    ? { error: 'invalid_request', description: 'response_type is required and must be code' }
    : { error: 'unsupported_response_type', description: `response_type '${value}' is not supported: use code` };
}

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** PKCE with S256 only (RFC 7636): the challenge is a base64url SHA-256, 43 characters. */
function pkceS256(p: unknown): Problem {
  const challenge = param(p, 'code_challenge');
  const method = param(p, 'code_challenge_method');
  if (challenge === undefined) return { error: 'invalid_request', description: 'code_challenge is required (PKCE with S256)' };
  if (method !== 'S256') return { error: 'invalid_request', description: `code_challenge_method must be S256${method === undefined ? '' : `, not '${method}'`}` };
  if (!CHALLENGE.test(challenge)) return { error: 'invalid_request', description: 'code_challenge must be the 43-character base64url SHA-256 of the verifier' };
  return null;
}

/** RFC 8707: the token is for this workspace's MCP endpoint and nothing else. */
function resourceIsWorkspaceMcp(p: unknown, expected: string): Problem {
  const resource = param(p, 'resource');
  if (resource === undefined) return { error: 'invalid_target', description: `resource is required: ${expected}` };
  if (resource !== expected) return { error: 'invalid_target', description: `resource must be this workspace's MCP URL, ${expected}` };
  return null;
}


function stateOf(p: unknown): string | undefined {
  return param(p, 'state');
}

/** Runs the checks in order over the query (GET) or the form (POST). */
export async function checkAuthorizationRequest(ctx: OAuthContext, workspace: Workspace, p: unknown): Promise<Outcome> {
  const { client, problem } = await knownClient(ctx, workspace, param(p, 'client_id'));
  if (!client) return { ok: false, to: 'page', status: 400, error: 'invalid_client', description: problem };
  const redirectUri = param(p, 'redirect_uri');
  if (!redirectUriMatchesExactly(client, redirectUri)) {
    return { ok: false, to: 'page', status: 400, error: 'invalid_redirect_uri', description: 'redirect_uri does not exactly match a URI registered for this client' };
  }
  const state = stateOf(p);
  const { issuer, resource: expected } = workspaceUrls(ctx.baseUrl(), ctx.mcpUrl(), workspace.subdomain);
  if (present(p, 'state') && state === undefined) {
    return { ok: false, to: 'client', redirectUri, state: undefined, issuer, error: 'invalid_request', description: 'state must be sent at most once' };
  }
  const scope = present(p, 'scope') && param(p, 'scope') === undefined
    ? { ok: false as const, description: 'scope must be sent at most once' }
    : requestedScopes(param(p, 'scope'));
  const scopeProblem: Problem = scope.ok ? null : { error: 'invalid_scope', description: scope.description };
  for (const problem of [responseTypeIsCode(p), pkceS256(p), resourceIsWorkspaceMcp(p, expected), scopeProblem]) {
    if (problem) return { ok: false, to: 'client', redirectUri, state, issuer, ...problem };
  }
  return {
    ok: true,
    client,
    request: {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirectUri,
      code_challenge: param(p, 'code_challenge')!,
      code_challenge_method: 'S256',
      resource: expected,
      scope: scope.ok ? scope.scopes.join(' ') : '',
      ...(state !== undefined ? { state } : {}),
    },
  };
}

/**
 * 302 to the registered redirect URI with the given parameters, the state unchanged, and the
 * issuer (RFC 9207: a client talking to several authorization servers can tell which one
 * answered, on success and on error alike).
 */
function redirectToClient(reply: FastifyReply, redirectUri: string, params: Record<string, string>, state: string | undefined, issuer: string): FastifyReply {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) url.searchParams.append(k, v);
  if (state !== undefined) url.searchParams.append('state', state);
  url.searchParams.append('iss', issuer);
  return reply.code(302).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(url.href, 302);
}

function failure(reply: FastifyReply, outcome: Exclude<Outcome, { ok: true }>): FastifyReply {
  if (outcome.to === 'page') return renderErrorPage(reply, outcome.status, outcome.error, outcome.description);
  return redirectToClient(reply, outcome.redirectUri, { error: outcome.error, error_description: outcome.description }, outcome.state, outcome.issuer);
}

function cookiePath(subdomain: string): string {
  return `/api/v1/${subdomain}/oauth`;
}

async function consentPage(ctx: OAuthContext, request: FastifyRequest, reply: FastifyReply, workspace: Workspace,
  ok: Extract<Outcome, { ok: true }>, status: number, error?: string): Promise<FastifyReply> {
  const secure = new URL(ctx.baseUrl()).protocol === 'https:';
  const csrfToken = issueCsrfToken(request, reply,
    { secret: await ctx.csrfSecret(), workspace: workspace.subdomain, request: ok.request, now: ctx.now() },
    cookiePath(workspace.subdomain), secure);
  return renderConsentPage(reply, status, {
    clientName: ok.client.client_name,
    clientUri: ok.client.client_uri,
    metadataDocument: isMetadataDocumentId(ok.client.client_id) ? ok.client.client_id : undefined,
    workspace: workspace.subdomain,
    request: ok.request,
    csrfToken,
    error,
  });
}

function limitKeys(request: FastifyRequest, workspace: string, p: unknown): string[] {
  const clientId = param(p, 'client_id');
  return clientId === undefined ? [addressKey('authorize', request)] : [addressKey('authorize', request), clientKey('authorize', workspace, clientId)];
}

export function authorizeRoutes(app: FastifyInstance, ctx: OAuthContext): void {
  const path = '/api/v1/:subdomain/oauth/authorize';

  app.get<{ Params: { subdomain: string } }>(path, async (request, reply) => {
    const workspace = await workspaceOr404(ctx, request.params.subdomain, reply);
    if (!workspace) return reply;
    if (!await withinLimit(ctx, reply, limitKeys(request, workspace.subdomain, request.query), ctx.limits.authorize, 'authorization')) return reply;
    const outcome = await checkAuthorizationRequest(ctx, workspace, request.query);
    if (!outcome.ok) return failure(reply, outcome);
    return consentPage(ctx, request, reply, workspace, outcome, 200);
  });

  app.post<{ Params: { subdomain: string } }>(path, async (request, reply) => {
    const workspace = await workspaceOr404(ctx, request.params.subdomain, reply);
    if (!workspace) return reply;
    const form = request.body;
    if (!await withinLimit(ctx, reply, limitKeys(request, workspace.subdomain, form), ctx.limits.authorize, 'authorization')) return reply;
    const outcome = await checkAuthorizationRequest(ctx, workspace, form);
    if (!outcome.ok) return failure(reply, outcome);

    // Only our own page, rendered for exactly this request in this browser, may decide it.
    const secret = await ctx.csrfSecret();
    if (!sameOriginPost(request, ctx.baseUrl())
      || !csrfTokenValid(request, param(form, 'csrf_token'), { secret, workspace: workspace.subdomain, request: outcome.request, now: ctx.now() })) {
      return renderErrorPage(reply, 403, 'access_denied',
        'this form was posted from another site, has expired, or was not rendered for this request: reload the authorization page');
    }

    const issuer = workspaceUrls(ctx.baseUrl(), ctx.mcpUrl(), workspace.subdomain).issuer;
    const decision = param(form, 'decision');
    if (decision === 'deny') {
      return redirectToClient(reply, outcome.request.redirect_uri, { error: 'access_denied', error_description: 'the user denied the request' }, outcome.request.state, issuer);
    }
    if (decision !== 'approve') return renderErrorPage(reply, 400, 'invalid_request', "decision must be 'approve' or 'deny'");

    // Guessing keys through this form is bounded per workspace and address, and per key beginning,
    // counted on failures only (./sign-in.ts).
    const apiKey = param(form, 'api_key');
    const attempt = await ctx.signIn.begin(workspace.subdomain, request.ip, apiKey);
    if (!attempt.ok) {
      reply.header('retry-after', String(attempt.retryAfter));
      return oauthError(reply, 429, 'too_many_requests',
        `too many API keys refused for this workspace from this address, or beginning like this one; retry in ${attempt.retryAfter} seconds`);
    }
    const principal = apiKey === undefined || apiKey === '' ? null : await verifyApiKey(ctx.db, apiKey);
    if (!principal || principal.orgId !== workspace.orgId) {
      // The reservation stays: it counts as a refused key.
      // One message for both: an attacker learns nothing about keys of other workspaces.
      return consentPage(ctx, request, reply, workspace, outcome, 401, `This API key is not a valid key of the workspace ${workspace.subdomain}.`);
    }

    await attempt.release();
    const code = await issueCode(ctx.db, {
      workspace: workspace.subdomain,
      orgId: workspace.orgId,
      userId: principal.userId,
      role: principal.role,
      // For an API key, the principal's clientId is the key's id.
      apiKeyId: principal.via === 'api_key' ? principal.clientId ?? null : null,
      clientId: outcome.client.client_id,
      resource: outcome.request.resource,
      redirectUri: outcome.request.redirect_uri,
      codeChallenge: outcome.request.code_challenge,
      scope: outcome.request.scope,
    }, ctx.now(), ctx.codeTtlSeconds);
    return redirectToClient(reply, outcome.request.redirect_uri, { code }, outcome.request.state, issuer);
  });
}
