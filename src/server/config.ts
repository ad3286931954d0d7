import type { Catalog } from '../catalog/types.js';
import { OqlError } from '../diagnostics/diagnostic.js';
import type { DatabaseOptions } from './database.js';
import type { AuthResolver, Role, ServiceDb } from './types.js';

export interface LogOptions {
  /** pino level. Default 'info'. */
  readonly level?: string;
  /** Where the JSON lines go. Default stdout. */
  readonly stream?: { write(line: string): unknown };
}

export interface ServerOptions extends DatabaseOptions {
  /** An open database to use instead of opening one; `close()` leaves it open. */
  readonly db?: ServiceDb;
  /** The catalog served. Default: the example CRM of fixtures/crm. */
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
  /** Analytics queries one key may have running at once (429 beyond). Default 2. */
  readonly maxConcurrentReports?: number;
  /** Statement timeout of analytics, filter and connector queries (504 beyond). Default 20000. */
  readonly queryTimeoutMs?: number;
  /** Objects each role may read; a role not listed reads every object. */
  readonly roleAccess?: Partial<Record<Role, readonly string[]>>;
  /** More ways to recognise a bearer token (OAuth access tokens), tried after API keys. */
  readonly authResolvers?: readonly AuthResolver[];
  /** Request logs (one JSON line per request); false or absent: none. */
  readonly log?: LogOptions | false;
  /** The environment read for OQL_* settings. Default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface ServerConfig {
  readonly bodyLimit: number;
  readonly maxBulkRecords: number;
  readonly maxConcurrentReports: number;
  readonly queryTimeoutMs: number;
  readonly apiKeys: string | undefined;
  readonly tokenSecret: string | undefined;
  readonly roleAccess: Partial<Record<Role, readonly string[]>>;
}

export const DEFAULT_BODY_LIMIT = 5 * 1024 * 1024;
export const DEFAULT_MAX_BULK_RECORDS = 1000;
export const DEFAULT_QUERY_TIMEOUT_MS = 20_000;

function positive(name: string, value: number | string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw OqlError.plain('INVALID_OPTIONS', `${name} must be a whole number of at least 1, not '${String(value)}'`);
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
    maxConcurrentReports: positive('maxConcurrentReports', options.maxConcurrentReports, 2),
    queryTimeoutMs: positive('queryTimeoutMs', options.queryTimeoutMs, DEFAULT_QUERY_TIMEOUT_MS),
    apiKeys: options.apiKeys ?? env['OQL_API_KEYS'],
    tokenSecret: secret === '' ? undefined : secret,
    roleAccess: options.roleAccess ?? {},
  };
}
