import type { SwaggerOptions } from '@fastify/swagger';
import { CSRF_HEADER, SAFE_METHODS, SECURE_SESSION_COOKIE, SESSION_COOKIE } from '../../service/console-session.js';
import { VERSION } from '../../version.js';
import { errorExamples, withSessionChangeErrors } from './responses.js';

/**
 * The OpenAPI document of the main host, built by @fastify/swagger from the routes' own schemas
 * (request schemas in each route file, response schemas in openapi/responses.ts): what is written
 * here is only what no route says — the API as a whole, its tags and its credentials.
 */

const TAGS = [
  { name: 'records', description: 'Create, upsert, read and update the records of an object, and filter them (docs/rest.md, docs/filter.md).' },
  { name: 'objects', description: "The organization's objects and their columns, as the service describes them (docs/rest.md#objects-and-entities)." },
  { name: 'reports', description: 'Read-only analytics in the object query language (docs/query-language.md): rows and counts, and lint, which checks a query without running it.' },
  { name: 'connectors', description: 'Records page by page for sync, and the objects as connector entities, for the two connector families (docs/connector.md).' },
  { name: 'tool logs', description: "The organization's MCP tool calls, for superadmins (docs/rest.md#tool-logs)." },
  { name: 'changes', description: "What changed: every committed create, update, delete, restore and purge of the organization's records, in commit order, as pages, long-polls or a stream (docs/changes.md)." },
  { name: 'webhooks', description: "The organization's webhook endpoints: the change log pushed to its receivers, signed as Standard Webhooks, retried, dead-lettered and replayable (docs/webhooks.md)." },
  { name: 'keys', description: "The organization's API keys: list, create, roll and revoke, within the caller's role (members manage their own keys)." },
];

const DESCRIPTION = [
  "Records, objects, analytics, connectors, the change log, MCP tool logs and API keys of one organization: the one a key's bearer belongs to.",
  '',
  'Every answer is an envelope: `{"success": true, "data": ...}`, or `{"success": false, "data": {message, status_code, error_code, validation_errors, meta_data}}` with the HTTP status repeated in `status_code`.',
  'Paths are answered with and without a trailing slash; they are listed without.',
  '`GET /health` (no credentials) answers 200 while the database answers and 503 otherwise; it is not listed here.',
].join('\n');

export const SECURITY_SCHEMES = {
  apiKey: {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key, sent as `Authorization: Bearer <key>`: `oql keys create --org ORG --role member|admin|superadmin` prints one. Its organization and role decide what the calls see.',
  },
  oauthToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'OAuth 2.0 access token',
    description: "An access token of a workspace's authorization server (`/.well-known/oauth-authorization-server/<subdomain>` on this host), accepted by the tool-log listing only.",
  },
  consoleSession: {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description: `The console's session, which signing in to the console (at \`/\` on this host) with an API key sets: it acts as that key wherever the key is accepted. Over HTTPS the cookie is \`${SECURE_SESSION_COOKIE}\`. A change (every method but ${[...SAFE_METHODS].join(' and ')}: every POST here) also needs the session's CSRF token (\`consoleCsrf\`) and must come from this host's own pages, or is refused with 403 PERMISSION_DENIED; a session that ended or expired gets 401 UNAUTHENTICATED.`,
  },
  consoleCsrf: {
    type: 'apiKey',
    in: 'header',
    name: CSRF_HEADER,
    description: "With `consoleSession`, on a change: the `csrf_token` that `GET /console/session` gives the signed-in console.",
  },
} as const;

/**
 * The credentials each route's `config.auth` lets in (plugins/auth.ts), as the document says
 * them: a console session wherever an API key is accepted, with its CSRF token on a change.
 */
function securityOf(auth: unknown, method: string | readonly string[]): { [scheme: string]: string[] }[] {
  if (auth === false) return [];
  const safe = [method].flat().every((m) => SAFE_METHODS.has(m.toUpperCase()));
  const session: { [scheme: string]: string[] } = safe ? { consoleSession: [] } : { consoleSession: [], consoleCsrf: [] };
  return auth === 'any' ? [{ apiKey: [] }, { oauthToken: [] }, session] : [{ apiKey: [] }, session];
}

/** @fastify/swagger's options: everything but the routes. */
export function swaggerOptions(): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'oql CRM data service',
        version: VERSION,
        description: DESCRIPTION,
        license: { name: 'MIT', identifier: 'MIT' },
      },
      tags: TAGS,
      components: { securitySchemes: SECURITY_SCHEMES, examples: errorExamples() },
      security: [{ apiKey: [] }],
    },
    // 3.1 has `const`; an enum of one would read worse in the generated types.
    convertConstToEnum: false,
    // Shared schemas are named after their $id (`#/components/schemas/Record`), not def-0, def-1 and so on
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    // The router ignores a trailing slash, so each path is listed once, without it.
    transform: ({ schema, url, route }) => {
      const security = securityOf(route.config?.auth, route.method);
      const change = security.some((s) => 'consoleCsrf' in s);
      const response = change && schema.response ? withSessionChangeErrors(schema.response as Record<string, object>) : schema.response;
      return { schema: { ...schema, security, ...(response ? { response } : {}) }, url: url.length > 1 ? url.replace(/\/+$/, '') : url };
    },
    transformObject: (document) => optionalBodies((document as { openapiObject: object }).openapiObject),
  } as SwaggerOptions;
}

type Operation = { requestBody?: { required?: boolean; content?: Record<string, { schema?: { type?: unknown } }> } };

/**
 * @fastify/swagger marks every request body required; a body whose schema accepts null may be
 * left out instead (the JSON parser reads an empty body as none), as the tool-log listing's may.
 */
function optionalBodies<T extends object>(document: T): T {
  for (const item of Object.values((document as { paths?: Record<string, object> }).paths ?? {})) {
    for (const op of Object.values(item) as Operation[]) {
      const type = op.requestBody?.content?.['application/json']?.schema?.type;
      if (Array.isArray(type) && type.includes('null')) op.requestBody!.required = false;
    }
  }
  return document;
}

/** The document with the server it is reached at: the public base URL, or `/` for a file that travels. */
export function documentFor(document: object, serverUrl: string): object {
  return { ...document, servers: [{ url: serverUrl, description: serverUrl === '/' ? 'wherever the service is reached (oql serve listens on port 8080 by default)' : 'this server' }] };
}
