/**
 * The scopes an OAuth token of this service can carry, and what each allows on the MCP endpoint.
 *
 *   schema:read   list the objects, describe them, check a query without running it
 *   records:read  run queries, count and filter records (and everything schema:read allows:
 *                 running a query shows the schema anyway)
 *
 * A client that asks for no scope gets both, as every token did before scopes existed; tokens
 * issued then (no scope stored) count as holding both. API keys carry no scopes: a key is the
 * user's own credential, limited by its role only.
 */

export const SCOPES = ['schema:read', 'records:read'] as const;
export type Scope = (typeof SCOPES)[number];

/** Each scope with the narrower scopes it implies (MCP authorization: scope hierarchies). */
const IMPLIES: Readonly<Record<Scope, readonly Scope[]>> = {
  'schema:read': [],
  'records:read': ['schema:read'],
};

/** What each scope lets the user allow, for the consent page. */
export const SCOPE_TEXT: Readonly<Record<Scope, string>> = {
  'schema:read': 'see which objects and fields the workspace has, and check queries without running them',
  'records:read': 'read the records of the workspace: run queries, count and filter records',
};

/** The scope every tool needs; a tool missing here is refused to every token (see the test). */
export const TOOL_SCOPES: Readonly<Record<string, Scope>> = {
  list_objects: 'schema:read',
  describe_object: 'schema:read',
  lint_query: 'schema:read',
  execute_query: 'records:read',
  count_query: 'records:read',
  filter_records: 'records:read',
  list_changes: 'records:read',
};

/** What any MCP request needs before a tool is named: initialize, tools/list, ping. */
export const BASE_SCOPE: Scope = 'schema:read';

function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}

export type ScopeRequest =
  | { readonly ok: true; readonly scopes: readonly Scope[] }
  | { readonly ok: false; readonly description: string };

/**
 * The `scope` parameter of an authorization request (RFC 6749 section 3.3): space-separated,
 * every one known. Absent or empty asks for the default, every scope. Returned in SCOPES order.
 */
export function requestedScopes(value: string | undefined): ScopeRequest {
  const words = (value ?? '').split(' ').filter((w) => w !== '');
  if (words.length === 0) return { ok: true, scopes: [...SCOPES] };
  const unknown = words.filter((w) => !isScope(w));
  if (unknown.length > 0) {
    return { ok: false, description: `unknown scope ${unknown.map((w) => `'${w.slice(0, 60)}'`).join(', ')}: this server's scopes are ${SCOPES.join(' ')}` };
  }
  return { ok: true, scopes: SCOPES.filter((s) => words.includes(s)) };
}

/** A stored scope string as scopes; null (a token from before scopes) holds every scope. */
export function storedScopes(value: string | null | undefined): readonly Scope[] {
  if (value === null || value === undefined) return [...SCOPES];
  return SCOPES.filter((s) => value.split(' ').includes(s));
}

/** Whether a set of granted scopes covers one scope, directly or through a broader one. */
export function covers(granted: readonly string[], needed: Scope): boolean {
  return granted.some((g) => g === needed || (isScope(g) && IMPLIES[g].includes(needed)));
}

/** The names of the tools a JSON-RPC message (or batch) calls. */
function calledTools(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : [body];
  const names: string[] = [];
  for (const m of messages) {
    if (m === null || typeof m !== 'object') continue;
    const { method, params } = m as { method?: unknown; params?: { name?: unknown } };
    if (method === 'tools/call' && params && typeof params === 'object' && typeof params.name === 'string') names.push(params.name);
  }
  return names;
}

/**
 * The scopes a request to the MCP endpoint needs that the granted ones do not cover — every one
 * at once, so a client re-authorizes a single time (MCP authorization, scope challenge handling).
 * Empty when the request may go ahead. A tool this list does not know needs nothing here: the
 * MCP server answers it with its own "unknown tool" error.
 */
export function missingScopes(granted: readonly string[], body: unknown): Scope[] {
  const needed = new Set<Scope>([BASE_SCOPE]);
  for (const name of calledTools(body)) {
    const scope = TOOL_SCOPES[name];
    if (scope !== undefined) needed.add(scope);
  }
  const missing = [...needed].filter((s) => !covers(granted, s));
  return SCOPES.filter((s) => missing.includes(s));
}
