import { OqlError } from './diagnostics/diagnostic.js';
import { didYouMean } from './diagnostics/suggest.js';

/**
 * The rules more than one part of oql needs, each said once. Library, service and surfaces
 * import them from here; test/rules.test.ts holds one table per rule.
 */

/** The tenant a caller passes the library: a non-empty string without NUL (Postgres text cannot hold one). */
export function isTenant(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && !value.includes('\u0000');
}

/** Throws INVALID_OPTIONS unless `orgId` is a tenant the library can run for. */
export function requireTenant(orgId: unknown, name = 'orgId'): string {
  if (!isTenant(orgId)) {
    throw OqlError.plain('INVALID_OPTIONS', `${name} must be a non-empty string without NUL characters`, 'pass the tenant of the caller, e.g. { orgId: "org_acme" }');
  }
  return orgId;
}

const ORG_ID = /^[A-Za-z0-9_.-]{1,128}$/;

/** An organization id the service stores (keys, workspaces): 1 to 128 letters, digits, '_', '.' or '-'. */
export function isOrgId(value: unknown): value is string {
  return typeof value === 'string' && ORG_ID.test(value);
}

export const ORG_ID_RULE = "1 to 128 letters, digits, '_', '.' or '-'";

/** The same rule as a JSON-schema `pattern`, for request schemas that take an organization or user id. */
export const ORG_ID_PATTERN = ORG_ID.source;

const SLUG = /^[a-z][a-z0-9_]*$/;

/** The syntax of an object slug: lower-case letters, digits and '_', starting with a letter. */
export function isObjectSlug(value: unknown): value is string {
  return typeof value === 'string' && SLUG.test(value);
}

/** The 'Invalid slug' error of every endpoint and tool that names an object the caller cannot see. */
export function invalidSlug(slug: unknown, known: readonly string[]): OqlError {
  const shown = typeof slug === 'string' ? slug.slice(0, 80) : String(slug);
  const hint = typeof slug === 'string' ? didYouMean(slug, known) : undefined;
  return OqlError.plain('INVALID_SLUG', `Invalid slug: there is no object '${shown}'`, hint ?? `the objects are ${known.join(', ')}`);
}

// RFC 6750 section 2.1: "Bearer" 1*SP b68token (letters, digits, -._~+/ then '=' padding).
const BEARER = /^Bearer[ \t]+([A-Za-z0-9\-._~+/]+=*)[ \t]*$/i;

/** The token of an `Authorization: Bearer <token>` header, or undefined for anything else. */
export function parseBearer(header: unknown): string | undefined {
  return typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
}

/** A public http(s) URL as given in options, without its trailing slash; anything else is INVALID_OPTIONS. */
export function publicUrl(name: string, value: string): string {
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
