import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OqlError } from '../diagnostics/diagnostic.js';
import { readCookie, sameOriginPost } from '../oauth/consent.js';
import { workspaceUrls } from '../oauth/context.js';
import type { SignInGuard } from '../oauth/sign-in.js';
import { roleAtMost } from '../service/api-key-access.js';
import type { AttemptStore } from '../service/shared-state/attempts.js';
import {
  CSRF_HEADER, SAFE_METHODS, SECURE_SESSION_COOKIE, SESSION_COOKIE, changeFromAnotherSite, csrfTokenMissing, sessionEnded,
} from '../service/console-session.js';
import type { Operations, SessionLifetimes } from '../service/operations.js';
import { ROLES, type Principal } from '../service/types.js';
import { loadAssets, securityHeaders, sendAsset } from './assets.js';
import { csrfTokenMatches, csrfTokenOf } from './csrf.js';

/**
 * The workspace console on the main host: its pages and files, and its session endpoints (sign
 * in with an API key, who am I, sign out). Everything else the console does goes through the
 * public API, with the session as its credential (`sessionResolver` below, which the auth hook
 * of the API routes calls for a request without an Authorization header).
 *
 * Cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it), Secure
 * and `__Host-` prefixed when the console is served over HTTPS. Every change (any method but GET
 * and HEAD) needs the session's CSRF token in the X-CSRF-Token header, and an Origin, when the
 * browser sends one, of this host.
 */

/** What the console reaches of the service: its sessions and the organization's workspaces. */
export type ConsoleOperations = Pick<Operations, 'principalOfKey' | 'startConsoleSession' | 'consoleSession' | 'endConsoleSession' | 'workspacesOf'>;

export interface ConsoleContext {
  readonly ops: ConsoleOperations;
  /** Public URL of the main host (secure cookies when https; the origin changes must come from). */
  baseUrl(): string;
  /** Public URL of the MCP host (the Connect page's URLs). */
  mcpUrl(): string;
  now(): number;
  readonly lifetimes: SessionLifetimes;
  /** The consent form's key-guessing budget (src/oauth/sign-in.ts), counted under the workspace name `console`. */
  readonly signIn: SignInGuard;
  /** The attempt counters the guard counts in, where each key's sign-ins per minute are counted too. */
  readonly attempts: AttemptStore;
  /** Sign-ins with one key per minute (429 beyond): a key cannot open sessions as fast as it can send requests. */
  readonly maxSignInsPerKeyPerMinute: number;
  /** Live sessions of one key: a sign-in past it ends the key's oldest. */
  readonly maxSessionsPerKey: number;
  /** Signs CSRF tokens; the same on every instance sharing the database. */
  csrfSecret(): Promise<string>;
  /** The directory of the built front end. */
  readonly assetsDir: string;
}

/** The pages of the console: each path serves the same document, whose script shows the page. */
export const CONSOLE_PAGES = ['/', '/keys', '/playground', '/webhooks', '/logs', '/connect'] as const;

function secureCookie(ctx: ConsoleContext, request: FastifyRequest): boolean {
  return request.protocol === 'https' || new URL(ctx.baseUrl()).protocol === 'https:';
}

/** `__Host-` makes the browser refuse the cookie unless it is Secure, for this host only, on every path. */
function cookieName(secure: boolean): string {
  return secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
}

function sessionCookie(ctx: ConsoleContext, request: FastifyRequest): string | undefined {
  return readCookie(request, cookieName(secureCookie(ctx, request)));
}

function setCookie(ctx: ConsoleContext, request: FastifyRequest, reply: FastifyReply, value: string, maxAgeSeconds?: number): void {
  const secure = secureCookie(ctx, request);
  const age = maxAgeSeconds === undefined ? '' : `; Max-Age=${maxAgeSeconds}`;
  reply.header('set-cookie', `${cookieName(secure)}=${value}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}${age}`);
}

/** Refuses a change that is not the console's own: from another site, or without the session's CSRF token. */
async function checkChange(ctx: ConsoleContext, request: FastifyRequest, token: string): Promise<void> {
  if (!sameOriginPost(request, ctx.baseUrl())) {
    throw changeFromAnotherSite();
  }
  if (!csrfTokenMatches(await ctx.csrfSecret(), token, request.headers[CSRF_HEADER])) {
    throw csrfTokenMissing();
  }
}

/**
 * The credential of a console session, for the API routes' auth hook (a `RequestResolver` of
 * src/server/plugins/auth.ts, which the composition root hands it to: the console, a sibling of
 * the REST routes, imports nothing of theirs).
 */
export function sessionResolver(ctx: ConsoleContext): (request: FastifyRequest) => Promise<Principal | null> {
  return async (request) => {
    const token = sessionCookie(ctx, request);
    if (token === undefined) return null;
    const session = await ctx.ops.consoleSession(token, ctx.now(), ctx.lifetimes);
    if (!session) throw sessionEnded();
    if (!SAFE_METHODS.has(request.method)) await checkChange(ctx, request, token);
    return session.principal;
  };
}

/** The MCP host's public URL, or null when this process neither serves it nor was told it (`--only api`). */
function knownMcpUrl(ctx: ConsoleContext): string | null {
  try {
    return ctx.mcpUrl();
  } catch {
    return null;
  }
}

async function sessionInfo(ctx: ConsoleContext, principal: Principal, token: string, expiresAt: number, endsAt: number) {
  const workspaces = await ctx.ops.workspacesOf(principal.orgId);
  const mcpUrl = knownMcpUrl(ctx);
  return {
    success: true,
    data: {
      org_id: principal.orgId,
      user_id: principal.userId,
      role: principal.role,
      key_id: principal.clientId ?? null,
      expires_at: expiresAt,
      ends_at: endsAt,
      csrf_token: csrfTokenOf(await ctx.csrfSecret(), token),
      assignable_roles: ROLES.filter((r) => roleAtMost(r, principal.role)),
      base_url: ctx.baseUrl(),
      workspaces: workspaces.map((w) => ({ subdomain: w.subdomain, mcp_url: mcpUrl === null ? null : workspaceUrls(ctx.baseUrl(), mcpUrl, w.subdomain).resource })),
    },
  };
}

const SIGN_IN_BODY = {
  type: 'object',
  required: ['api_key'],
  additionalProperties: false,
  properties: { api_key: { type: 'string', minLength: 1, maxLength: 512 } },
} as const;

export async function consolePlugin(app: FastifyInstance, ctx: ConsoleContext): Promise<void> {
  const assets = loadAssets(ctx.assetsDir);
  if (assets.files === null) app.log.warn({ dir: assets.dir }, 'the console is not built there: run npm run build');
  // Console endpoints are not part of the public API: they take a browser session, not a key.
  const route = { config: { auth: false as const }, schema: { hide: true } };

  for (const path of CONSOLE_PAGES) {
    app.get(path, route, async (request, reply) => {
      const page = assets.files?.get('index.html');
      if (!page) {
        return securityHeaders(reply).code(503).type('text/plain; charset=utf-8')
          .send('The console is not built: run npm run build (it writes dist/console).\n');
      }
      return sendAsset(request, reply, page, 'no-store');
    });
  }
  for (const name of ['app.js', 'app.css', 'icon.svg']) {
    app.get(`/console/${name}`, route, async (request, reply) => {
      const file = assets.files?.get(name);
      if (!file) return securityHeaders(reply).code(404).type('text/plain; charset=utf-8').send('not built\n');
      // Revalidated on each load (cheap: 304), so a new version is picked up at once.
      return sendAsset(request, reply, file, 'no-cache');
    });
  }

  app.post<{ Body: { api_key: string } }>('/console/session', { ...route, schema: { hide: true, body: SIGN_IN_BODY } }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    if (!sameOriginPost(request, ctx.baseUrl())) {
      throw OqlError.plain('PERMISSION_DENIED', 'sign-in was sent from another site', 'sign in on the console of this host');
    }
    // The consent form's rule and budget: failures per address, and per key beginning.
    const attempt = await ctx.signIn.begin('console', request.ip, request.body.api_key);
    if (!attempt.ok) {
      throw OqlError.retryLater('TOO_MANY_REQUESTS', `too many API keys refused from this address; retry in ${attempt.retryAfter} seconds`, attempt.retryAfter);
    }
    const now = ctx.now();
    const principal = await ctx.ops.principalOfKey(request.body.api_key, now);
    if (!principal) {
      // The reservation stays: it counts as a refused key.
      throw OqlError.plain('UNAUTHENTICATED', 'this API key is not valid: it is unknown, revoked or expired', 'paste a key of your organization, as created on the API access page or with oql keys create');
    }
    await attempt.release();
    const perKey = await ctx.attempts.hit([`console-sign-in|key|${principal.clientId ?? ''}`], { max: ctx.maxSignInsPerKeyPerMinute, windowSeconds: 60 });
    if (!perKey.ok) {
      throw OqlError.retryLater('TOO_MANY_REQUESTS', `this API key signed in to the console ${ctx.maxSignInsPerKeyPerMinute} times within a minute; retry in ${perKey.retryAfter} seconds`, perKey.retryAfter,
        'keep the session the console already has: it lasts while it is used');
    }
    const session = await ctx.ops.startConsoleSession(principal, { previous: sessionCookie(ctx, request), now, lifetimes: ctx.lifetimes, maxPerKey: ctx.maxSessionsPerKey });
    setCookie(ctx, request, reply, session.token);
    return sessionInfo(ctx, { ...principal, via: 'session' }, session.token, session.expiresAt, session.endsAt);
  });

  app.get('/console/session', route, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const token = sessionCookie(ctx, request);
    const session = token === undefined ? null : await ctx.ops.consoleSession(token, ctx.now(), ctx.lifetimes);
    if (!session || token === undefined) throw OqlError.plain('UNAUTHENTICATED', 'not signed in to the console', 'sign in with an API key');
    return sessionInfo(ctx, session.principal, token, session.expiresAt, session.endsAt);
  });

  app.delete('/console/session', route, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const token = sessionCookie(ctx, request);
    if (token !== undefined) {
      // A live session is ended only by its own page; a dead one's cookie is simply cleared.
      if (await ctx.ops.consoleSession(token, ctx.now(), ctx.lifetimes)) await checkChange(ctx, request, token);
      await ctx.ops.endConsoleSession(token);
    }
    setCookie(ctx, request, reply, '', 0);
    return { success: true, data: { signed_out: true } };
  });
}
