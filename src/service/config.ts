import type { Catalog } from '../catalog/types.js';
import { OqlError } from '../diagnostics/diagnostic.js';
import { didYouMean } from '../diagnostics/suggest.js';
import type { DatabaseOptions } from '../run/open.js';
import { isRole, type AuthResolver, type Role, type ServiceDb } from './types.js';

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
  /** Analytics queries one key may have running at once (429 beyond). Default OQL_MAX_CONCURRENT_REPORTS or 2. */
  readonly maxConcurrentReports?: number;
  /** Statement timeout of analytics, filter and connector queries (504 beyond). Default OQL_QUERY_TIMEOUT_MS or 20000. */
  readonly queryTimeoutMs?: number;
  /**
   * Objects each role may read; a role not listed reads every object. Default OQL_ROLE_ACCESS,
   * written `member=account,contact;admin=account,contact,lead`.
   */
  readonly roleAccess?: Partial<Record<Role, readonly string[]>>;
  /** More ways to recognise a bearer token (OAuth access tokens), tried after API keys. */
  readonly authResolvers?: readonly AuthResolver[];
  /**
   * How long a verified API key is trusted without asking the database again, in ms; 0 checks
   * every request. A key revoked from another process stops working within it. Default
   * OQL_API_KEY_CACHE_MS or 5000.
   */
  readonly apiKeyCacheMs?: number;
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
  readonly apiKeyCacheMs: number;
}

export const DEFAULT_BODY_LIMIT = 5 * 1024 * 1024;
export const DEFAULT_MAX_BULK_RECORDS = 1000;
export const DEFAULT_QUERY_TIMEOUT_MS = 20_000;
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
    queryTimeoutMs: positive('queryTimeoutMs (OQL_QUERY_TIMEOUT_MS)', options.queryTimeoutMs ?? env['OQL_QUERY_TIMEOUT_MS'], DEFAULT_QUERY_TIMEOUT_MS),
    apiKeys: options.apiKeys ?? env['OQL_API_KEYS'],
    tokenSecret: secret === '' ? undefined : secret,
    roleAccess: options.roleAccess ?? parseRoleAccess(env['OQL_ROLE_ACCESS'] ?? ''),
    apiKeyCacheMs: nonNegative('apiKeyCacheMs (OQL_API_KEY_CACHE_MS)', options.apiKeyCacheMs ?? env['OQL_API_KEY_CACHE_MS'], DEFAULT_API_KEY_CACHE_MS),
  };
}

const SLUG = /^[a-z][a-z0-9_]*$/;

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
    const wrong = slugs.find((x) => !SLUG.test(x));
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
