import type { Catalog } from '../catalog/types.js';
import { DEFAULT_MAX_COMPILE_MS, OqlError } from '../diagnostics/diagnostic.js';
import { didYouMean } from '../diagnostics/suggest.js';
import type { DatabaseOptions } from '../run/open.js';
import { DEFAULT_PREPARED_STATEMENTS } from '../run/drivers/pool.js';
import type { LeaseStore } from './shared-state/leases.js';
import { isRole, type AuthResolver, type Role, type ServiceDb } from './types.js';
import { isObjectSlug } from '../rules.js';
import { parseTrustProxy, type TrustProxy } from './trust-proxy.js';
import { DEFAULT_MAX_ENTRY_BYTES, DEFAULT_MAX_PAGE_BYTES } from './store/tool-logs.js';
import { DEFAULT_KEY_CAPS } from './store/api-keys.js';
import type { Resolver } from './outbound.js';

export interface LogOptions {
  /** pino level. Default 'info'. */
  readonly level?: string;
  /** Where the JSON lines go. Default stdout. */
  readonly stream?: { write(line: string): unknown };
}

export interface ServerOptions extends DatabaseOptions {
  /** An open database to use instead of opening one; `close()` leaves it open. */
  readonly db?: ServiceDb;
  /** The catalog served, completed with the audit fields (`withAuditFields`). Default: the example CRM of fixtures/crm. */
  readonly catalog?: Catalog;
  /** Loads generated demo data for org_demo when the catalog's tables are empty. */
  readonly demo?: boolean;
  /** Creates one superadmin key for org_demo when the database has no key (`firstKey` of the result). */
  readonly createFirstKey?: boolean;
  /** Keys to bootstrap, in the OQL_API_KEYS form `key=org:role[:user],…`. Default: the environment's. */
  readonly apiKeys?: string;
  /** Signs pagination tokens and pointers. Default: OQL_TOKEN_SECRET, else generated once and stored. */
  readonly tokenSecret?: string;
  /** Largest request body in bytes. Default OQL_BODY_LIMIT or 5 MiB. */
  readonly bodyLimit?: number;
  /** Most records in one bulk_create or bulk_upsert. Default OQL_MAX_BULK_RECORDS or 1000. */
  readonly maxBulkRecords?: number;
  /**
   * Heavy requests (reports, filter and connector pages, the MCP query tools) one principal — the
   * user behind a key, an OAuth grant or a console session — may have running at once, across
   * every key, client and instance (429 beyond). Default OQL_MAX_CONCURRENT_REPORTS or 2.
   */
  readonly maxConcurrentReports?: number;
  /** Light requests (records, object and entity reads) one principal may have running at once. Default OQL_MAX_CONCURRENT_REQUESTS or 8. */
  readonly maxConcurrentRequests?: number;
  /**
   * Budget of every statement (504 beyond). Default OQL_QUERY_TIMEOUT_MS, else 20000 on
   * PostgreSQL and 5000 on embedded PGlite, whose one connection every tenant shares.
   */
  readonly queryTimeoutMs?: number;
  /**
   * Embedded PGlite: how long one organization's report, filter or connector read may hold the
   * one connection while another organization's request waits (504 beyond). Default
   * OQL_EMBEDDED_SLICE_MS or 500.
   */
  readonly embeddedSliceMs?: number;
  /** The most bytes of rows one response may carry (RESPONSE_TOO_LARGE beyond). Default OQL_MAX_RESPONSE_BYTES or 16 MiB. */
  readonly maxResponseBytes?: number;
  /** The planner cost above which a report or filter is refused unrun (QUERY_TOO_COSTLY); 0 turns the check off. Default OQL_MAX_QUERY_COST or 50,000,000. */
  readonly maxQueryCost?: number;
  /**
   * Milliseconds the checks of one query text (compile of a report or count, lint) may hold the
   * thread; COMPILE_BUDGET_EXCEEDED beyond. Default OQL_MAX_COMPILE_MS or 1000.
   */
  readonly maxCompileMs?: number;
  /** Rows and bytes of one MCP tool result; more is cut and said so. Default 200 rows and 256 KiB (OQL_MCP_MAX_ROWS, OQL_MCP_MAX_BYTES). */
  readonly mcpMaxRows?: number;
  readonly mcpMaxBytes?: number;
  /** Bytes of one tool-log entry's arguments; more is cut and the entry marked `truncated`. Default OQL_MAX_TOOL_LOG_ENTRY_BYTES or 64 KiB. */
  readonly maxToolLogEntryBytes?: number;
  /** Bytes of the entries' arguments in one tool-log listing page; the page ends before more. Default OQL_MAX_TOOL_LOG_PAGE_BYTES or 4 MiB. */
  readonly maxToolLogPageBytes?: number;
  /** Live API keys one user may hold (creating or rolling one more: TOO_MANY_KEYS). Default OQL_MAX_KEYS_PER_USER or 100. */
  readonly maxKeysPerUser?: number;
  /** Live API keys one organization may hold. Default OQL_MAX_KEYS_PER_ORG or 1000. */
  readonly maxKeysPerOrg?: number;
  /** Live console sessions of one key; signing in once more ends its oldest. Default OQL_MAX_CONSOLE_SESSIONS_PER_KEY or 20. */
  readonly maxConsoleSessionsPerKey?: number;
  /** Console sign-ins with one key per minute (429 beyond). Default OQL_MAX_CONSOLE_SIGN_INS_PER_MINUTE or 30. */
  readonly maxConsoleSignInsPerMinute?: number;
  /** Share of the heap in use above which new database work is refused with 503. Default OQL_MAX_HEAP_RATIO or 0.85. */
  readonly maxHeapRatio?: number;
  /** Open connections one client address may hold on each host (beyond: closed at once). Default OQL_MAX_CONNECTIONS_PER_ADDRESS or 256. */
  readonly maxConnectionsPerAddress?: number;
  /**
   * Objects each role may read; a role not listed reads every object. Default OQL_ROLE_ACCESS,
   * written `member=account,contact;admin=account,contact,lead`.
   */
  readonly roleAccess?: Partial<Record<Role, readonly string[]>>;
  /** Where the principals' concurrency leases are kept. Default: in the database on PostgreSQL (shared by every instance on it), else in this process. */
  readonly leases?: LeaseStore;
  /** More ways to recognise a bearer token (OAuth access tokens), tried after API keys. */
  readonly authResolvers?: readonly AuthResolver[];
  /**
   * How long a verified API key is trusted without asking the database again, in ms; 0 checks
   * every request. A key revoked from another process stops working within it. Default
   * OQL_API_KEY_CACHE_MS or 5000.
   */
  readonly apiKeyCacheMs?: number;
  /**
   * Proxies trusted to name the client's address (X-Forwarded-For): a hop count, or their
   * addresses and CIDR ranges. Default OQL_TRUST_PROXY, else none (src/service/trust-proxy.ts).
   */
  readonly trustProxy?: string | number | readonly string[];
  /** Deleted records are purged this many days after their deletion (fractions allowed). Default OQL_PURGE_AFTER_DAYS or 30. */
  readonly purgeAfterDays?: number;
  /** Changes are kept this many days (fractions allowed). Default OQL_CHANGES_RETENTION_DAYS or 7. */
  readonly changesRetentionDays?: number;
  /** Long-polls and change streams one user may have open on an instance. Default OQL_MAX_WAITING_PER_USER or 10. */
  readonly maxWaitingPerUser?: number;
  /** Long-polls and change streams one organization may have open on an instance. Default OQL_MAX_WAITING_PER_ORG or 200. */
  readonly maxWaitingPerOrg?: number;
  /** Seconds after which the server ends a change stream (the client reconnects with Last-Event-ID). Default OQL_STREAM_MAX_SECONDS or 300. */
  readonly streamMaxSeconds?: number;
  /** Seconds between the comment lines that keep an idle change stream open. Default OQL_STREAM_HEARTBEAT_SECONDS or 15. */
  readonly streamHeartbeatSeconds?: number;
  /**
   * Lets webhooks go to http URLs and to loopback and private addresses, for development and tests
   * (never link-local, so never the cloud metadata address). Default OQL_WEBHOOK_ALLOW_PRIVATE=1, else off.
   */
  readonly webhookAllowPrivate?: boolean;
  /**
   * On PostgreSQL without --read-database: reads take a pool of sessions that start read-only with
   * the statement timeout, each read its statement alone. Default OQL_READ_SESSIONS, else on.
   */
  readonly readSessions?: boolean;
  /** Webhook endpoints one organization may have. Default OQL_MAX_WEBHOOKS_PER_ORG or 50. */
  readonly maxWebhooksPerOrg?: number;
  /** Deliveries one organization may have in flight on an instance. Default OQL_WEBHOOK_SLOTS_PER_ORG or 4. */
  readonly webhookSlotsPerOrg?: number;
  /** Multiplies the retry schedule (5 s, 30 s, 2 min, … for 24 h); tests run it in milliseconds. Default OQL_WEBHOOK_RETRY_SCALE or 1. */
  readonly webhookRetryScale?: number;
  /** A receiver's time to answer, in ms. Default OQL_WEBHOOK_TIMEOUT_MS or 10000. */
  readonly webhookTimeoutMs?: number;
  /** How webhook deliveries resolve host names (default: the system's); a test passes its own. */
  readonly webhookResolver?: Resolver;
  /** Request logs (one JSON line per request); false or absent: none. */
  readonly log?: LogOptions | false;
  /** The environment read for OQL_* settings. Default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface ServerConfig {
  readonly bodyLimit: number;
  readonly maxBulkRecords: number;
  readonly maxConcurrentReports: number;
  readonly maxConcurrentRequests: number;
  /** Unset: the driver's default (20 s on PostgreSQL, 5 s embedded), chosen when the database is known. */
  readonly queryTimeoutMs: number | undefined;
  /** Unset: the embedded database's default (500 ms). */
  readonly embeddedSliceMs: number | undefined;
  readonly preparedStatements: number;
  readonly readSessions: boolean;
  readonly maxResponseBytes: number;
  readonly maxQueryCost: number;
  readonly maxCompileMs: number;
  readonly mcpMaxRows: number;
  readonly mcpMaxBytes: number;
  readonly maxToolLogEntryBytes: number;
  readonly maxToolLogPageBytes: number;
  readonly maxKeysPerUser: number;
  readonly maxKeysPerOrg: number;
  readonly maxConsoleSessionsPerKey: number;
  readonly maxConsoleSignInsPerMinute: number;
  readonly maxHeapRatio: number;
  readonly maxConnectionsPerAddress: number;
  readonly apiKeys: string | undefined;
  readonly tokenSecret: string | undefined;
  readonly roleAccess: Partial<Record<Role, readonly string[]>>;
  readonly apiKeyCacheMs: number;
  readonly trustProxy: TrustProxy;
  readonly purgeAfterDays: number;
  readonly changesRetentionDays: number;
  readonly maxWaitingPerUser: number;
  readonly maxWaitingPerOrg: number;
  readonly streamMaxSeconds: number;
  readonly streamHeartbeatSeconds: number;
  readonly webhookAllowPrivate: boolean;
  readonly maxWebhooksPerOrg: number;
  readonly webhookSlotsPerOrg: number;
  readonly webhookRetryScale: number;
  readonly webhookTimeoutMs: number;
}

export const DEFAULT_BODY_LIMIT = 5 * 1024 * 1024;
export const DEFAULT_MAX_BULK_RECORDS = 1000;
export const DEFAULT_QUERY_TIMEOUT_MS = 20_000;
export const DEFAULT_EMBEDDED_TIMEOUT_MS = 5_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
export const DEFAULT_MAX_QUERY_COST = 50_000_000;
export const DEFAULT_API_KEY_CACHE_MS = 5_000;

function positive(name: string, value: number | string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw OqlError.plain('INVALID_OPTIONS', `${name} must be a whole number of at least 1, not '${String(value)}'`);
  return n;
}

function nonNegative(name: string, value: number | string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw OqlError.plain('INVALID_OPTIONS', `${name} must be a whole number of at least 0, not '${String(value)}'`);
  return n;
}

function atLeast(min: number, name: string, value: number | string | undefined, fallback: number): number {
  const n = positive(name, value, fallback);
  if (n < min) throw OqlError.plain('INVALID_OPTIONS', `${name} must be at least ${min}, not '${String(value)}'`);
  return n;
}

function optionalPositive(name: string, value: number | string | undefined): number | undefined {
  return value === undefined || value === '' ? undefined : positive(name, value, 0);
}

function days(name: string, value: number | string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = typeof value === 'number' ? value : Number(value);
  if (!(Number.isFinite(n) && n > 0 && n <= 36_500)) throw OqlError.plain('INVALID_OPTIONS', `${name} must be a number of days above 0, not '${String(value)}'`);
  return n;
}

function flag(name: string, value: string | undefined): boolean {
  if (value === undefined || value === '' || value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  throw OqlError.plain('INVALID_OPTIONS', `${name} must be 1 or 0, not '${value}'`);
}

function scale(name: string, value: number | string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = typeof value === 'number' ? value : Number(value);
  if (!(Number.isFinite(n) && n > 0 && n <= 1)) throw OqlError.plain('INVALID_OPTIONS', `${name} must be a number above 0 and at most 1, not '${String(value)}'`);
  return n;
}

function ratio(name: string, value: number | string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = typeof value === 'number' ? value : Number(value);
  if (!(n > 0 && n <= 1)) throw OqlError.plain('INVALID_OPTIONS', `${name} must be a number above 0 and at most 1, not '${String(value)}'`);
  return n;
}

/** Options over environment over defaults, each checked. */
export function resolveConfig(options: ServerOptions): ServerConfig {
  const env = options.env ?? process.env;
  const secret = options.tokenSecret ?? env['OQL_TOKEN_SECRET'];
  if (secret !== undefined && secret !== '' && secret.length < 16) {
    throw OqlError.plain('INVALID_OPTIONS', 'OQL_TOKEN_SECRET must be at least 16 characters long', 'leave it unset to have one generated and kept in the database');
  }
  return {
    bodyLimit: positive('bodyLimit (OQL_BODY_LIMIT)', options.bodyLimit ?? env['OQL_BODY_LIMIT'], DEFAULT_BODY_LIMIT),
    maxBulkRecords: positive('maxBulkRecords (OQL_MAX_BULK_RECORDS)', options.maxBulkRecords ?? env['OQL_MAX_BULK_RECORDS'], DEFAULT_MAX_BULK_RECORDS),
    maxConcurrentReports: positive('maxConcurrentReports (OQL_MAX_CONCURRENT_REPORTS)', options.maxConcurrentReports ?? env['OQL_MAX_CONCURRENT_REPORTS'], 2),
    maxConcurrentRequests: positive('maxConcurrentRequests (OQL_MAX_CONCURRENT_REQUESTS)', options.maxConcurrentRequests ?? env['OQL_MAX_CONCURRENT_REQUESTS'], 8),
    queryTimeoutMs: optionalPositive('queryTimeoutMs (OQL_QUERY_TIMEOUT_MS)', options.queryTimeoutMs ?? env['OQL_QUERY_TIMEOUT_MS']),
    embeddedSliceMs: optionalPositive('embeddedSliceMs (OQL_EMBEDDED_SLICE_MS)', options.embeddedSliceMs ?? env['OQL_EMBEDDED_SLICE_MS']),
    preparedStatements: nonNegative('preparedStatements (OQL_PREPARED_STATEMENTS)', options.preparedStatements ?? env['OQL_PREPARED_STATEMENTS'], DEFAULT_PREPARED_STATEMENTS),
    // On unless set: empty is unset, as for every other variable.
    readSessions: options.readSessions ?? (env['OQL_READ_SESSIONS'] ? flag('OQL_READ_SESSIONS', env['OQL_READ_SESSIONS']) : true),
    maxResponseBytes: positive('maxResponseBytes (OQL_MAX_RESPONSE_BYTES)', options.maxResponseBytes ?? env['OQL_MAX_RESPONSE_BYTES'], DEFAULT_MAX_RESPONSE_BYTES),
    maxQueryCost: nonNegative('maxQueryCost (OQL_MAX_QUERY_COST)', options.maxQueryCost ?? env['OQL_MAX_QUERY_COST'], DEFAULT_MAX_QUERY_COST),
    maxCompileMs: positive('maxCompileMs (OQL_MAX_COMPILE_MS)', options.maxCompileMs ?? env['OQL_MAX_COMPILE_MS'], DEFAULT_MAX_COMPILE_MS),
    mcpMaxRows: positive('mcpMaxRows (OQL_MCP_MAX_ROWS)', options.mcpMaxRows ?? env['OQL_MCP_MAX_ROWS'], 200),
    mcpMaxBytes: positive('mcpMaxBytes (OQL_MCP_MAX_BYTES)', options.mcpMaxBytes ?? env['OQL_MCP_MAX_BYTES'], 256 * 1024),
    maxToolLogEntryBytes: atLeast(1024, 'maxToolLogEntryBytes (OQL_MAX_TOOL_LOG_ENTRY_BYTES)', options.maxToolLogEntryBytes ?? env['OQL_MAX_TOOL_LOG_ENTRY_BYTES'], DEFAULT_MAX_ENTRY_BYTES),
    maxToolLogPageBytes: atLeast(1024, 'maxToolLogPageBytes (OQL_MAX_TOOL_LOG_PAGE_BYTES)', options.maxToolLogPageBytes ?? env['OQL_MAX_TOOL_LOG_PAGE_BYTES'], DEFAULT_MAX_PAGE_BYTES),
    maxKeysPerUser: positive('maxKeysPerUser (OQL_MAX_KEYS_PER_USER)', options.maxKeysPerUser ?? env['OQL_MAX_KEYS_PER_USER'], DEFAULT_KEY_CAPS.perUser),
    maxKeysPerOrg: positive('maxKeysPerOrg (OQL_MAX_KEYS_PER_ORG)', options.maxKeysPerOrg ?? env['OQL_MAX_KEYS_PER_ORG'], DEFAULT_KEY_CAPS.perOrg),
    maxConsoleSessionsPerKey: positive('maxConsoleSessionsPerKey (OQL_MAX_CONSOLE_SESSIONS_PER_KEY)', options.maxConsoleSessionsPerKey ?? env['OQL_MAX_CONSOLE_SESSIONS_PER_KEY'], 20),
    maxConsoleSignInsPerMinute: positive('maxConsoleSignInsPerMinute (OQL_MAX_CONSOLE_SIGN_INS_PER_MINUTE)', options.maxConsoleSignInsPerMinute ?? env['OQL_MAX_CONSOLE_SIGN_INS_PER_MINUTE'], 30),
    maxHeapRatio: ratio('maxHeapRatio (OQL_MAX_HEAP_RATIO)', options.maxHeapRatio ?? env['OQL_MAX_HEAP_RATIO'], 0.85),
    maxConnectionsPerAddress: positive('maxConnectionsPerAddress (OQL_MAX_CONNECTIONS_PER_ADDRESS)', options.maxConnectionsPerAddress ?? env['OQL_MAX_CONNECTIONS_PER_ADDRESS'], 256),
    apiKeys: options.apiKeys ?? env['OQL_API_KEYS'],
    tokenSecret: secret === '' ? undefined : secret,
    roleAccess: options.roleAccess ?? parseRoleAccess(env['OQL_ROLE_ACCESS'] ?? ''),
    apiKeyCacheMs: nonNegative('apiKeyCacheMs (OQL_API_KEY_CACHE_MS)', options.apiKeyCacheMs ?? env['OQL_API_KEY_CACHE_MS'], DEFAULT_API_KEY_CACHE_MS),
    trustProxy: parseTrustProxy(options.trustProxy ?? env['OQL_TRUST_PROXY']),
    purgeAfterDays: days('purgeAfterDays (OQL_PURGE_AFTER_DAYS)', options.purgeAfterDays ?? env['OQL_PURGE_AFTER_DAYS'], 30),
    changesRetentionDays: days('changesRetentionDays (OQL_CHANGES_RETENTION_DAYS)', options.changesRetentionDays ?? env['OQL_CHANGES_RETENTION_DAYS'], 7),
    maxWaitingPerUser: positive('maxWaitingPerUser (OQL_MAX_WAITING_PER_USER)', options.maxWaitingPerUser ?? env['OQL_MAX_WAITING_PER_USER'], 10),
    maxWaitingPerOrg: positive('maxWaitingPerOrg (OQL_MAX_WAITING_PER_ORG)', options.maxWaitingPerOrg ?? env['OQL_MAX_WAITING_PER_ORG'], 200),
    streamMaxSeconds: positive('streamMaxSeconds (OQL_STREAM_MAX_SECONDS)', options.streamMaxSeconds ?? env['OQL_STREAM_MAX_SECONDS'], 300),
    webhookAllowPrivate: options.webhookAllowPrivate ?? flag('OQL_WEBHOOK_ALLOW_PRIVATE', env['OQL_WEBHOOK_ALLOW_PRIVATE']),
    maxWebhooksPerOrg: positive('maxWebhooksPerOrg (OQL_MAX_WEBHOOKS_PER_ORG)', options.maxWebhooksPerOrg ?? env['OQL_MAX_WEBHOOKS_PER_ORG'], 50),
    webhookSlotsPerOrg: positive('webhookSlotsPerOrg (OQL_WEBHOOK_SLOTS_PER_ORG)', options.webhookSlotsPerOrg ?? env['OQL_WEBHOOK_SLOTS_PER_ORG'], 4),
    webhookRetryScale: scale('webhookRetryScale (OQL_WEBHOOK_RETRY_SCALE)', options.webhookRetryScale ?? env['OQL_WEBHOOK_RETRY_SCALE'], 1),
    webhookTimeoutMs: positive('webhookTimeoutMs (OQL_WEBHOOK_TIMEOUT_MS)', options.webhookTimeoutMs ?? env['OQL_WEBHOOK_TIMEOUT_MS'], 10_000),
    streamHeartbeatSeconds: positive('streamHeartbeatSeconds (OQL_STREAM_HEARTBEAT_SECONDS)', options.streamHeartbeatSeconds ?? env['OQL_STREAM_HEARTBEAT_SECONDS'], 15),
  };
}


/**
 * OQL_ROLE_ACCESS: `role=slug,slug;role=slug`. A role may appear once; `member=` (no object)
 * lets that role read nothing. Every mistake is refused at start rather than read as "no access".
 */
export function parseRoleAccess(text: string): Partial<Record<Role, readonly string[]>> {
  const out: Partial<Record<Role, readonly string[]>> = {};
  const bad = (why: string): OqlError =>
    OqlError.plain('INVALID_OPTIONS', `OQL_ROLE_ACCESS ${why}`, 'write it as member=account,contact;admin=account,contact,lead');
  for (const entry of text.split(';')) {
    if (entry.trim() === '') continue;
    const eq = entry.indexOf('=');
    if (eq < 0) throw bad(`entry '${entry.trim()}' has no '='`);
    const role = entry.slice(0, eq).trim();
    if (!isRole(role)) throw bad(`names the role '${role}'; the roles are member, admin and superadmin`);
    if (out[role] !== undefined) throw bad(`names the role ${role} twice`);
    const slugs = entry.slice(eq + 1).split(',').map((x) => x.trim()).filter((x) => x !== '');
    const wrong = slugs.find((x) => !isObjectSlug(x));
    if (wrong !== undefined) throw bad(`lists '${wrong}', which is not an object slug`);
    out[role] = [...new Set(slugs)];
  }
  return out;
}

/** Role access naming an object the catalog does not have is a typo that would deny silently. */
export function checkRoleAccess(roleAccess: Partial<Record<Role, readonly string[]>>, catalog: Catalog): void {
  for (const [role, slugs] of Object.entries(roleAccess)) {
    for (const slug of slugs ?? []) {
      if (!catalog.objects.has(slug)) {
        const hint = didYouMean(slug, catalog.objects.keys()) ?? 'list the slugs of the objects that role may read';
        throw OqlError.plain('INVALID_OPTIONS', `role access for ${role} names the object '${slug}', which the catalog does not have`, hint);
      }
    }
  }
}
