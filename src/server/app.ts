import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { withAuditFields } from '../catalog/audit-fields.js';
import type { Catalog } from '../catalog/types.js';
import { addMissingAuditColumns } from '../records/audit-columns.js';
import { ConcurrencyLimiter } from '../run/limiter.js';
import { VERSION } from '../version.js';
import { checkRoleAccess, resolveConfig, type ServerConfig, type ServerOptions } from '../service/config.js';
import type { ServiceContext } from './context.js';
import { openDatabase } from '../run/open.js';
import { ensureCatalogTables } from '../service/catalog-tables.js';
import { DEMO_ORG, loadDemoData } from '../demo/seed.js';
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
import { ApiKeyVerifier, countApiKeys, createApiKey, parseApiKeysEnv, storeApiKey } from '../service/store/api-keys.js';
import { migrate } from '../service/migrations.js';
import { tokenSecret } from '../service/store/settings.js';
import type { AuthResolver, ServiceDb } from '../service/types.js';
import { listeningUrl, mcpRoutes } from '../mcp/http.js';
import { OqlError } from '../diagnostics/diagnostic.js';
import { prepareSyntaxErrors } from '../syntax/parse.js';
import { oauthPlugin, type OAuthServerOptions } from '../oauth/plugin.js';
import { oauthAuthResolver } from '../oauth/store.js';
import { bootstrapWorkspaces, parseWorkspacesEnv } from '../service/store/workspaces.js';

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
  /** Recognise bearer tokens in this order (API keys first); push more before the apps are ready. */
  readonly authResolvers: AuthResolver[];
  /** Verified API keys held for `apiKeyCacheMs`; `keys.forget()` after revoking a key makes it fail at once here. */
  readonly keys: ApiKeyVerifier;
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
  const config = resolveConfig(options);
  const bootstrapKeys = config.apiKeys === undefined ? [] : parseApiKeysEnv(config.apiKeys);
  const workspaces = parseWorkspacesEnv(options.workspaces ?? (options.env ?? process.env)['OQL_WORKSPACES'] ?? '');
  const ownsDb = options.db === undefined;
  const db = options.db ?? (await openDatabase(options));
  try {
    prepareSyntaxErrors();
    // Every object carries the audit fields the contract shows on every record, declared or not.
    const catalog = withAuditFields(options.catalog ?? (await import('../demo/index.js')).loadFixtureCatalog('crm'));
    checkRoleAccess(config.roleAccess, catalog);
    await migrate(db);
    const auditColumns = await addMissingAuditColumns(db, catalog);
    const { warnings } = await ensureCatalogTables(db, catalog, { searchIndexes: options.searchIndexes === true });
    for (const k of bootstrapKeys) await storeApiKey(db, k.key, k);
    // The demo's data belongs to org_demo, reached through the workspace `demo`.
    await bootstrapWorkspaces(db, options.demo ? [...workspaces, { subdomain: 'demo', orgId: DEMO_ORG }] : workspaces);
    const demoRows = options.demo ? await loadDemoData(db, catalog, options.catalog === undefined) : 0;
    const firstKey = options.createFirstKey && (await countApiKeys(db)) === 0
      ? await createApiKey(db, { orgId: DEMO_ORG, role: 'superadmin', userId: 'u_demo_admin' })
      : undefined;
    const ctx: ServiceContext = {
      db,
      catalog,
      config,
      limiter: new ConcurrencyLimiter(config.maxConcurrentReports),
      tokenSecret: await tokenSecret(db, config.tokenSecret),
      keys: new ApiKeyVerifier(db, config.apiKeyCacheMs),
    };
    // OAuth access tokens reach only routes that accept any principal (the tool-log listing).
    const authResolvers: AuthResolver[] = [(bearer) => ctx.keys.verify(bearer), oauthAuthResolver(db), ...(options.authResolvers ?? [])];
    // Known only once the apps listen, unless given: read on each request, never cached.
    const fixedBase = options.baseUrl === undefined ? undefined : publicUrl('baseUrl', options.baseUrl);
    const fixedMcp = options.mcpUrl === undefined ? undefined : publicUrl('mcpUrl', options.mcpUrl);
    const urls = { baseUrl: () => fixedBase ?? listeningUrl(app), mcpUrl: () => fixedMcp ?? listeningUrl(mcpApp) };
    const app: FastifyInstance = await buildApp(ctx, options, authResolvers, 'api', urls);
    const mcpApp: FastifyInstance = await buildApp(ctx, options, authResolvers, 'mcp', urls);
    for (const column of auditColumns) app.log.info(`added the audit column ${column} (rows written before read back null there)`);
    for (const warning of warnings) app.log.warn(warning);
    let closed: Promise<void> | undefined;
    return {
      app, mcpApp, db, catalog, config, authResolvers, keys: ctx.keys, firstKey, demoRows, ...urls,
      close() {
        closed ??= (async () => {
          await Promise.allSettled([app.close(), mcpApp.close()]);
          if (ownsDb) await db.close();
        })();
        return closed;
      },
    };
  } catch (e) {
    if (ownsDb) await db.close().catch(() => {});
    throw e;
  }
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
  });
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
