import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { Catalog } from '../catalog/types.js';
import { VERSION } from '../version.js';
import type { ServerConfig, ServerOptions } from '../service/config.js';
import { openService } from '../service/open.js';
import type { ApiKeyVerifier } from '../service/store/api-keys.js';
import type { ServiceContext } from '../service/context.js';
import { installAuth } from './plugins/auth.js';
import { clientErrorHandler, frameworkErrors, installEnvelope } from './plugins/envelope.js';
import { installRequestLog } from './plugins/request-log.js';
import { connectorRoutes } from './routes/connectors.js';
import { filterRoutes } from './routes/filter.js';
import { healthRoutes } from './routes/health.js';
import { objectRoutes } from './routes/objects.js';
import { recordRoutes } from './routes/records.js';
import { reportRoutes } from './routes/reports.js';
import { toolLogRoutes } from './routes/tool-logs.js';
import type { AuthResolver, ServiceDb } from '../service/types.js';
import { listeningUrl, mcpRoutes } from '../mcp/http.js';
import { OqlError } from '../diagnostics/diagnostic.js';
import { oauthPlugin, type OAuthServerOptions } from '../oauth/plugin.js';
import { oauthAuthResolver } from '../oauth/store.js';
import { fastifyTrustProxy } from '../service/trust-proxy.js';
import type { ReadRole } from '../run/drivers/read-role.js';

/** Public URLs written into OAuth and MCP metadata (deployments behind a proxy set them). */
export interface PublicUrlOptions {
  /** Public URL of the main host. Default: the address it listens on. */
  readonly baseUrl?: string | undefined;
  /** Public URL of the MCP host. Default: the address it listens on. */
  readonly mcpUrl?: string | undefined;
}

export type CreateServerOptions = ServerOptions & PublicUrlOptions & OAuthServerOptions;

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
  /** The key created for org_demo on an empty embedded database (`createFirstKey`), shown once. */
  readonly firstKey: string | undefined;
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
        'reads from --read-database take three round trips instead of one: its role lacks defaults that make a read one statement (docs/fleet.md)');
    }
    let closed: Promise<void> | undefined;
    return {
      app, mcpApp, db, catalog: service.catalog, config: service.config, service, authResolvers, keys: ctx.keys, reads: service.reads,
      firstKey: service.firstKey, demoRows: service.demoRows, ...urls,
      close() {
        closed ??= (async () => {
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
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** A socket with no traffic at all for this long is closed (a request never finished, a stalled reader). */
const CONNECTION_TIMEOUT_MS = 60_000;

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

/** An http(s) URL without a trailing slash, or a clear error. */
function publicUrl(name: string, value: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(value);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.search || parsed.hash) {
    throw OqlError.plain('INVALID_OPTIONS', `${name} must be an http or https URL without query or fragment, not '${value}'`, 'for example https://mcp.example.com');
  }
  return value.replace(/\/+$/, '');
}

interface HostUrls {
  baseUrl(): string;
  mcpUrl(): string;
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
    // Slow clients cannot hold sockets open: the whole request (headers and body) must arrive
    // within these, and an idle keep-alive connection is closed soon.
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    http: { headersTimeout: HEADERS_TIMEOUT_MS },
    // request.ip is the client's address only behind the proxies named here (per-address limits).
    trustProxy: fastifyTrustProxy(ctx.config.trustProxy),
  });
  capConnectionsPerAddress(app, ctx.config.maxConnectionsPerAddress);
  app.decorate('oql', ctx);
  installEnvelope(app);
  installRequestLog(app);
  installJsonParser(app);
  if (host === 'mcp') {
    await app.register(healthRoutes);
    await app.register(mcpRoutes, urls);
    return app;
  }
  // Registered before any route, so it sees them all.
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'oql CRM data service', version: VERSION, description: 'Records, filter, analytics, connectors and tool logs of one organization per key.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'an API key' } } },
      security: [{ bearer: [] }],
    },
  });
  await app.register(healthRoutes);
  // The authorization server of every workspace, outside the API-key scope below.
  await app.register(oauthPlugin, { db: ctx.db, baseUrl: urls.baseUrl, mcpUrl: urls.mcpUrl, ...options.oauth });
  app.get('/openapi.json', { config: { auth: false }, schema: { hide: true } }, async () => app.swagger());
  // Everything under this scope needs a bearer token; routes other parts of the service add at
  // the root (OAuth) are outside it.
  await app.register(async (api) => {
    installAuth(api, resolvers);
    await api.register(reportRoutes);
    await api.register(toolLogRoutes);
    await api.register(filterRoutes);
    await api.register(connectorRoutes);
    await api.register(recordRoutes);
    await api.register(objectRoutes);
  });
  return app;
}

/**
 * JSON bodies through Fastify's own parser (which refuses __proto__ and constructor keys), except
 * that an empty body reads as no body: endpoints without a body accept the content type clients
 * send anyway. Other content types are refused (415).
 */
function installJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '' || (typeof body === 'string' && body.trim() === '')) {
      done(null, undefined);
      return;
    }
    parse(request, body as string, done);
  });
}
