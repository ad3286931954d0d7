import { randomBytes, randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { Catalog } from '../catalog/types.js';
import type { ServerConfig, ServerOptions } from '../service/config.js';
import { openService } from '../service/open.js';
import type { ApiKeyVerifier } from '../service/store/api-keys.js';
import type { ServiceContext, SurfaceContext } from '../service/context.js';
import { installAuth } from './plugins/auth.js';
import { clientErrorHandler, frameworkErrors, installEnvelope } from './plugins/envelope.js';
import { closeConnectionsWhenAnswered } from './plugins/close-connections.js';
import { installLingeringClose, lingerLimits } from './plugins/lingering-close.js';
import { jsonErrorAt } from './plugins/json-position.js';
import { installRequestLog } from './plugins/request-log.js';
import { documentFor, swaggerOptions } from './openapi/document.js';
import { addResponseSchemas } from './openapi/response-schemas.js';
import { connectorRoutes } from './routes/connectors.js';
import { filterRoutes } from './routes/filter.js';
import { healthRoutes } from './routes/health.js';
import { objectRoutes } from './routes/objects.js';
import { recordRoutes } from './routes/records.js';
import { changeRoutes } from './routes/changes.js';
import { webhookRoutes } from './routes/webhooks.js';
import type { Maintenance } from '../service/changes/maintenance.js';
import { reportRoutes } from './routes/reports.js';
import { toolLogRoutes } from './routes/tool-logs.js';
import type { AuthResolver, ServiceDb } from '../service/types.js';
import { listeningUrl, mcpRoutes } from '../mcp/http.js';
import { publicUrl } from '../rules.js';
import { OqlError } from '../diagnostics/diagnostic.js';
import { oauthPlugin, type OAuthServerOptions } from '../oauth/plugin.js';
import { oauthAuthResolver, verifyAccessToken } from '../oauth/store.js';
import { settingOrCreate } from '../service/store/settings.js';
import { DEFAULT_SESSION_LIFETIMES } from '../service/operations.js';
import { mergeLimits } from '../oauth/limits.js';
import { SignInGuard } from '../oauth/sign-in.js';
import type { AttemptStore } from '../service/shared-state/attempts.js';
import { attemptStoreFor } from '../service/shared-state/stores.js';
import { consolePlugin, sessionResolver, type ConsoleContext } from '../console/plugin.js';
import { defaultAssetsDir } from '../console/assets.js';
import { keyRoutes } from './routes/keys.js';
import { lintRoutes } from './routes/lint.js';
import { isSubdomain } from '../service/store/workspaces.js';
import { fastifyTrustProxy } from '../service/trust-proxy.js';
import type { ReadRole } from '../run/drivers/read-role.js';
import type { ReadSessions } from '../run/open.js';

/** Public URLs written into OAuth and MCP metadata (deployments behind a proxy set them). */
export interface PublicUrlOptions {
  /** Public URL of the main host. Default: the address it listens on. */
  readonly baseUrl?: string | undefined;
  /** Public URL of the MCP host. Default: the address it listens on. */
  readonly mcpUrl?: string | undefined;
}

/** The workspace console served at `/` of the main host (src/console). */
export interface ConsoleOptions {
  /** Directory of the built front end. Default: dist/console beside the bundle. */
  readonly assetsDir?: string | undefined;
  /** Minutes a console session lasts without a request. Default 60. */
  readonly idleMinutes?: number | undefined;
  /** Hours a console session lasts at most. Default 12. */
  readonly maxHours?: number | undefined;
}

export type CreateServerOptions = ServerOptions & PublicUrlOptions & OAuthServerOptions & {
  /** The console; false serves none (the API alone). */
  readonly console?: ConsoleOptions | false | undefined;
};

export interface OqlServer {
  /** The main host: REST endpoints, /health, /openapi.json. Not listening yet. */
  readonly app: FastifyInstance;
  /** The MCP host: the same envelope, logs and /health; the MCP endpoint is mounted on it. */
  readonly mcpApp: FastifyInstance;
  readonly db: ServiceDb;
  readonly catalog: Catalog;
  readonly config: ServerConfig;
  /** What every surface shares: the database, the policy point and the operations. */
  readonly service: ServiceContext;
  /** Recognise bearer tokens in this order (API keys first); push more before the apps are ready. */
  readonly authResolvers: AuthResolver[];
  /** Verified API keys held for `apiKeyCacheMs`; `keys.forget()` after revoking a key makes it fail at once here. */
  readonly keys: ApiKeyVerifier;
  /**
   * The --read-database pool: its URL without the password, and what its role carries (whether
   * its reads are one statement, and the ALTER ROLE that would make them so).
   */
  readonly reads: { readonly label: string; readonly role: ReadRole } | undefined;
  /** Without --read-database: the read-only sessions reads take, or why there are none (OpenedService.readSessions). */
  readonly readSessions: ReadSessions | undefined;
  /** The key created for org_demo on an empty embedded database (`createFirstKey`), shown once. */
  readonly firstKey: string | undefined;
  /** The purge of deleted records and the pruning of old changes; `run()` does a round now. */
  readonly maintenance: Maintenance;
  /** Rows of demo data loaded at this start (0 when the tables already held data). */
  readonly demoRows: number;
  /** Public URL of the main host: `baseUrl` as given, else the address `app` listens on. */
  baseUrl(): string;
  /** Public URL of the MCP host: `mcpUrl` as given, else the address `mcpApp` listens on. */
  mcpUrl(): string;
  /** Closes both apps (in-flight requests finish first), then the database when it was opened here. */
  close(): Promise<void>;
}

/**
 * Builds the service: opens the database, creates the service schema and any missing catalog
 * table (refusing a table that does not match the catalog), bootstraps keys and demo data, and
 * builds both Fastify apps. It does not listen: `oql serve` and the tests do.
 */
export async function createServer(options: CreateServerOptions = {}): Promise<OqlServer> {
  const service = await openService(options);
  try {
    const ctx: ServiceContext = service;
    const { db } = service;
    // OAuth access tokens reach only routes that accept any principal (the tool-log listing).
    const authResolvers: AuthResolver[] = [(bearer) => ctx.keys.verify(bearer), oauthAuthResolver(db), ...(options.authResolvers ?? [])];
    // Known only once the apps listen, unless given: read on each request, never cached.
    const fixedBase = options.baseUrl === undefined ? undefined : publicUrl('baseUrl', options.baseUrl);
    const fixedMcp = options.mcpUrl === undefined ? undefined : publicUrl('mcpUrl', options.mcpUrl);
    const urls = { baseUrl: () => fixedBase ?? listeningUrl(app), mcpUrl: () => fixedMcp ?? listeningUrl(mcpApp) };
    const app: FastifyInstance = await buildApp(ctx, options, authResolvers, 'api', urls);
    const mcpApp: FastifyInstance = await buildApp(ctx, options, authResolvers, 'mcp', urls);
    for (const column of service.auditColumns) app.log.info(`added the audit column ${column} (rows written before read back null there)`);
    for (const warning of service.warnings) app.log.warn(warning);
    if (service.reads && service.reads.role.missing.length > 0) {
      app.log.warn({ missing: service.reads.role.missing, fix: service.reads.role.fix },
        'reads from --read-database run BEGIN READ ONLY, SET LOCAL and ROLLBACK around each statement: its role lacks defaults that make a read one statement (docs/fleet.md)');
    }
    let closed: Promise<void> | undefined;
    return {
      app, mcpApp, db, catalog: service.catalog, config: service.config, service, authResolvers, keys: ctx.keys, reads: service.reads, readSessions: service.readSessions,
      firstKey: service.firstKey, demoRows: service.demoRows, maintenance: service.maintenance, ...urls,
      close() {
        closed ??= (async () => {
          // Long-polls and change streams end first: the apps' close waits for what they answer.
          service.ops.feed.watcher.close();
          await Promise.allSettled([app.close(), mcpApp.close()]);
          await service.close();
        })();
        return closed;
      },
    };
  } catch (e) {
    await service.close().catch(() => {});
    throw e;
  }
}

const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * One client address may hold at most `max` open connections to a host; more are closed at once,
 * so one client cannot use up the process's sockets (behind a proxy, set the cap above the
 * proxy's own connection pool).
 */
function capConnectionsPerAddress(app: FastifyInstance, max: number): void {
  const open = new Map<string, number>();
  app.server.on('connection', (socket: import('node:net').Socket) => {
    const address = socket.remoteAddress ?? '';
    const n = (open.get(address) ?? 0) + 1;
    if (n > max) {
      socket.destroy();
      return;
    }
    open.set(address, n);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

interface HostUrls {
  baseUrl(): string;
  mcpUrl(): string;
}

/** The console's context, or null when it is turned off; its attempt counters are the consent form's. */
function consoleContext(ctx: ServiceContext, options: CreateServerOptions, urls: HostUrls, attempts: AttemptStore): ConsoleContext | null {
  if (options.console === false) return null;
  const o = options.console ?? {};
  const whole = (name: string, value: number | undefined, fallback: number): number => {
    if (value === undefined) return fallback;
    if (!Number.isSafeInteger(value) || value < 1) throw OqlError.plain('INVALID_OPTIONS', `console.${name} must be a whole number of at least 1, not ${String(value)}`);
    return value;
  };
  let secret: Promise<string> | undefined;
  const { db, config } = ctx;
  return {
    ops: ctx.ops,
    ...urls,
    now: options.oauth?.now ?? Date.now,
    lifetimes: { idleMs: whole('idleMinutes', o.idleMinutes, DEFAULT_SESSION_LIFETIMES.idleMs / 60_000) * 60_000, maxMs: whole('maxHours', o.maxHours, DEFAULT_SESSION_LIFETIMES.maxMs / 3_600_000) * 3_600_000 },
    signIn: new SignInGuard(attempts, mergeLimits(options.oauth?.limits).signIn),
    attempts,
    maxSignInsPerKeyPerMinute: config.maxConsoleSignInsPerMinute,
    maxSessionsPerKey: config.maxConsoleSessionsPerKey,
    // Kept in the database: every instance sharing it accepts the tokens of the others.
    csrfSecret: () => (secret ??= settingOrCreate(db, 'console_csrf_secret', () => randomBytes(32).toString('base64url'))),
    assetsDir: o.assetsDir ?? defaultAssetsDir(),
  };
}

async function buildApp(ctx: ServiceContext, options: CreateServerOptions, resolvers: readonly AuthResolver[], host: 'api' | 'mcp', urls: HostUrls): Promise<FastifyInstance> {
  const log = options.log;
  const app = Fastify({
    logger: log ? { level: log.level ?? 'info', ...(log.stream ? { stream: log.stream } : {}), base: { host } } : false,
    // Fastify's two lines per request give way to the one of request-log.ts.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    bodyLimit: ctx.config.bodyLimit,
    // Paths as the contract writes them, with or without their trailing slash.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    // Values are checked as sent: coercion would turn "12" into 12 before record validation sees it.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: true } },
    return503OnClosing: true,
    // What the router and Node's HTTP parser refuse leaves in the envelope too, not in Fastify's shape.
    frameworkErrors,
    clientErrorHandler,
    forceCloseConnections: 'idle',
    // Slow clients cannot hold a request open: its headers, then the whole request, must arrive
    // within these (Fastify's keep-alive timeout stays its default, above clients' own).
    requestTimeout: REQUEST_TIMEOUT_MS,
    http: { headersTimeout: HEADERS_TIMEOUT_MS },
    // request.ip is the client's address only behind the proxies named here (per-address limits).
    trustProxy: fastifyTrustProxy(ctx.config.trustProxy),
  });
  capConnectionsPerAddress(app, ctx.config.maxConnectionsPerAddress);
  installLingeringClose(app, lingerLimits(ctx.config.bodyLimit));
  closeConnectionsWhenAnswered(app);
  const surface: SurfaceContext = { ops: ctx.ops, catalog: ctx.catalog, config: ctx.config };
  app.decorate('oql', surface);
  installEnvelope(app, { notFoundHint: host === 'mcp' ? (path) => mcpEndpointHint(path, urls) : (path) => apiNotFoundHint(path, urls) });
  installRequestLog(app);
  installJsonParser(app);
  if (host === 'mcp') {
    await app.register(healthRoutes);
    await app.register(mcpRoutes, {
      ...urls,
      verifyAccessToken: (token, audience) => verifyAccessToken(ctx.db, token, audience),
      verifyApiKey: (key) => ctx.keys.verify(key),
    });
    return app;
  }
  // Registered before any route, so it sees them all.
  await app.register(swagger, swaggerOptions());
  addResponseSchemas(app);
  // Response schemas document the answers (and the tests hold real answers to them); serialising
  // with them would drop any field they do not name, so answers are written as they are.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  await app.register(healthRoutes);
  // One set of attempt counters for the two forms that take an API key: the consent page and the console.
  const attempts = attemptStoreFor(ctx.db, options.oauth?.now ?? Date.now);
  // The authorization server of every workspace, outside the API-key scope below.
  await app.register(oauthPlugin, { db: ctx.db, baseUrl: urls.baseUrl, mcpUrl: urls.mcpUrl, ...options.oauth, attempts });
  const consoleCtx = consoleContext(ctx, options, urls, attempts);
  if (consoleCtx) await app.register(consolePlugin, consoleCtx);
  app.get('/openapi.json', { config: { auth: false }, schema: { hide: true } }, async () => (
    // Under inject() nothing listens: the document then names its server relatively.
    documentFor(app.swagger(), options.baseUrl !== undefined || app.server.listening ? urls.baseUrl() : '/')
  ));
  // Everything under this scope needs a bearer token; routes other parts of the service add at
  // the root (OAuth) are outside it.
  await app.register(async (api) => {
    installAuth(api, resolvers, consoleCtx ? sessionResolver(consoleCtx) : undefined);
    await api.register(reportRoutes);
    await api.register(lintRoutes);
    await api.register(keyRoutes);
    await api.register(toolLogRoutes);
    await api.register(filterRoutes);
    await api.register(connectorRoutes);
    await api.register(recordRoutes);
    await api.register(changeRoutes);
    await api.register(webhookRoutes);
    await api.register(objectRoutes);
  });
  return app;
}

/** The URL `read` gives, or undefined while that host does not listen (an --only of the other host). */
function urlOr(read: () => string): string | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** `<x>` of a path `/<x>/mcp` when it could be a workspace, else the placeholder. */
function workspaceIn(path: string): string {
  const m = /^\/([^/]+)\/mcp\/?$/.exec(path);
  return m && isSubdomain(m[1]) ? m[1] : '<workspace>';
}

/**
 * A path the MCP host does not have: whatever it was, the caller wants the MCP endpoint, which is
 * per workspace.
 */
function mcpEndpointHint(path: string, urls: HostUrls): string {
  const mcp = urlOr(urls.mcpUrl) ?? '';
  return `the MCP endpoint is ${mcp}/${workspaceIn(path)}/mcp: a workspace maps to an organization (oql workspaces list; the demo's is demo)`;
}

/** A path the main host does not have: an MCP path was meant for the MCP host; anything else is in the OpenAPI document. */
function apiNotFoundHint(path: string, urls: HostUrls): string {
  if (/(^|\/)mcp\/?$/.test(path)) {
    const mcp = urlOr(urls.mcpUrl);
    return mcp === undefined
      ? `MCP is served by the MCP host (oql serve --mcp-port, 8081 by default) at /${workspaceIn(path)}/mcp`
      : `MCP is served by the MCP host: ${mcp}/${workspaceIn(path)}/mcp`;
  }
  return `see ${urlOr(urls.baseUrl) ?? ''}/openapi.json for the endpoints`;
}

/**
 * JSON bodies through Fastify's own parser (which refuses __proto__ and constructor keys), except
 * that an empty body reads as no body: endpoints without a body accept the content type clients
 * send anyway. Other content types are refused (415).
 */
function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function installJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '' || (typeof body === 'string' && body.trim() === '')) {
      done(null, undefined);
      return;
    }
    parse(request, body as string, (err, value) => {
      // A syntax error says where it is; a __proto__ or constructor key (valid JSON) keeps its message.
      if (err !== null && !isJson(body as string)) {
        const at = jsonErrorAt(body as string);
        done(at === undefined
          ? OqlError.plain('MALFORMED_JSON', 'the request body is not valid JSON (and nested too deep to say where)')
          : OqlError.plain('MALFORMED_JSON', `the request body is not valid JSON: it breaks at line ${at.line}, column ${at.column}`,
            'check the character there (a missing comma, quote or bracket, or a trailing comma)'), undefined);
        return;
      }
      done(err, value);
    });
  });
}
