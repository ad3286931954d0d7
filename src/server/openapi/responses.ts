import type { FastifyRequest } from 'fastify';
import type { DiagnosticCode } from '../../diagnostics/codes.js';
import { OqlError } from '../../diagnostics/diagnostic.js';
import { tooLarge } from '../../run/bounds.js';
import { checkCost } from '../../run/cost.js';
import { errorEnvelope, type ErrorEnvelope } from '../../query/envelope.js';
import { checkMayManage, checkNewKey, keyNotFound, keyNotRollable, ownerOfNewKey, readKeyCursor } from '../../service/api-key-access.js';
import { changeFromAnotherSite, csrfTokenMissing, sessionEnded } from '../../service/console-session.js';
import { DEFAULT_MAX_QUERY_COST, DEFAULT_MAX_RESPONSE_BYTES } from '../../service/config.js';
import { DEFAULT_KEY_CAPS, tooManyKeys, type ApiKeyInfo } from '../../service/store/api-keys.js';
import type { Principal } from '../../service/types.js';
import { envelopeFor } from '../plugins/envelope.js';
import { coolingDown } from '../../service/policy.js';
import { ref } from './response-schemas.js';
import { answerFormat } from '../csv.js';

/**
 * The `response` part of each route's schema: the success envelope with its `data` shape and an
 * example, and every error the route can answer with, grouped by status, in the error envelope,
 * each with examples. The error examples are built by the functions that answer errors
 * (`errorEnvelope` for the library's, `envelopeFor` for Fastify's), so their shape is the one a
 * client receives.
 *
 * Fastify does not serialise with these schemas (app.ts): they document the answers, and the
 * tests check real answers against them.
 */

const JSON_TYPE = 'application/json';

/** `{success: true, data}`, with what `data` holds and one example of it. */
export function success(description: string, data: object, example: unknown) {
  return {
    description,
    content: {
      [JSON_TYPE]: {
        schema: { type: 'object', required: ['success', 'data'], additionalProperties: false, properties: { success: { type: 'boolean', const: true }, data } },
        example: { success: true, data: example },
      },
    },
  };
}

/**
 * A 200 that is JSON by default and CSV when the request asks for it (`Accept: text/csv`, or
 * `"format": "csv"` in the body; src/server/csv.ts).
 */
export function successOrCsv(description: string, data: object, example: unknown, csvExample: string) {
  const json = success(description, data, example);
  return {
    ...json,
    description: `${description} As CSV (RFC 4180, a header row of the keys) when the request sends Accept: text/csv or "format": "csv".`,
    content: { ...json.content, 'text/csv': { schema: { type: 'string' }, example: csvExample } },
  };
}

const RETRY_AFTER = {
  'Retry-After': {
    type: 'integer',
    minimum: 1,
    description: 'Seconds after which the same request may succeed, when the server can tell.',
  },
};

/** What each status means, whichever operation answers with it. */
const STATUS: Readonly<Record<number, string>> = {
  400: 'The request cannot be served as sent; `error_code` says why, `validation_errors` lists every problem of a body, `hint` says what to send instead.',
  401: 'No bearer token, or one this service does not accept here (UNAUTHENTICATED).',
  403: "The caller's role may not do this (PERMISSION_DENIED).",
  410: 'The change cursor is older than the changes kept (CURSOR_EXPIRED): resynchronise, then follow the log from its head.',
  413: 'The body is larger than the server accepts (PAYLOAD_TOO_LARGE, OQL_BODY_LIMIT).',
  414: 'A path segment (object slug or record id) is longer than the server accepts (BAD_REQUEST).',
  406: 'The Accept header takes neither application/json nor text/csv (NOT_ACCEPTABLE).',
  415: 'The body is not JSON (UNSUPPORTED_MEDIA_TYPE): send Content-Type: application/json.',
  429: 'Too many requests of this caller or its organization are running (TOO_MANY_REQUESTS), or waiting for changes (TOO_MANY_WAITING); retry later.',
  500: 'An internal error; the body says nothing of its cause, the server log names it.',
  503: 'The database does not answer or the server is short of resources; retry later.',
  504: 'A statement ran past the time limit (QUERY_TIMEOUT, OQL_QUERY_TIMEOUT_MS).',
};

const plain = (code: DiagnosticCode, message: string, hint?: string) => errorEnvelope(OqlError.plain(code, message, hint));
const validation = (message: string, errors: Parameters<typeof OqlError.validation>[1]) => errorEnvelope(OqlError.validation(message, errors));
/** The envelope of what `fn` throws: the library's own refusal, made by the function that refuses. */
const thrown = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return errorEnvelope(e);
  }
  throw new Error('expected a refusal');
};
/** What the error handler answers for an error Fastify raised (its code, or its schema validation). */
const framework = (err: object) => envelopeFor(err, { params: {} } as unknown as FastifyRequest);

// The callers and the key of the API-key examples: a member and an admin of one organization, and its superadmin's key.
const member: Principal = { orgId: 'org_acme', userId: 'u_acme_member', role: 'member', via: 'api_key' };
const admin: Principal = { orgId: 'org_acme', userId: 'u_acme_admin', role: 'admin', via: 'api_key' };
const superadminKey: ApiKeyInfo = {
  id: 'key_yxCswVPnreeK', orgId: 'org_acme', userId: 'u_acme_super', role: 'superadmin', name: 'Warehouse sync', prefix: 'oql_Zq3v', last4: 'x9Qe',
  createdAt: 1793036280647, createdBy: 'u_acme_super', expiresAt: null, lastUsedAt: null, revokedAt: null, revokedBy: null, rolledFrom: null, live: true,
};

/** One error of each kind the routes can answer with: the example's name, its summary and the envelope. */
const ERRORS = {
  validation: ['A body that fails its schema or the records\' columns', validation('Failed to create records', [
    { object_slug: 'contact', field: 'email', message: '\'email\' is not an email address: "nope"', error_code: 'PARSE_INVALID_FORMAT', record_index: 0, meta_data: null },
  ])],
  bodySchema: ['A body of the wrong shape', framework({
    validation: [{ instancePath: '', keyword: 'required', params: { missingProperty: 'query' }, message: "must have required property 'query'" }],
    validationContext: 'body',
  })],
  updateValidation: ['A value the column does not accept', validation('Failed to update record', [
    { object_slug: 'contact', field: 'phone', message: "'phone' is not a valid phone number: \"12\"", error_code: 'PARSE_INVALID_FORMAT', record_index: null, meta_data: null },
  ])],
  filterValidation: ['A condition the filter cannot apply, with where it is in the body', validation('Invalid filter', [
    { object_slug: 'contact', field: 'email', message: "unknown operator 'equals'; did you mean 'eq'?", error_code: 'UNKNOWN_OPERATOR', record_index: null, meta_data: 'query.filters.and[0].operator' },
  ])],
  malformedJson: ['A body that is not JSON', framework({ code: 'FST_ERR_CTP_INVALID_JSON_BODY' })],
  invalidSlug: ['An object slug the catalog does not have', plain('INVALID_SLUG', "Invalid slug: there is no object 'contcat'", "did you mean 'contact'?")],
  longSegment: ['A path segment over 500 characters', framework({ code: 'FST_ERR_MAX_PARAM_LENGTH' })],
  notFound: ['A record id the organization does not have', errorEnvelope(OqlError.notFound('Record not found', 'no contact record with id "con_01m89wjat7freynknt66qfcz18" was found'))],
  queryText: ['An error in the query text, with where it is', errorEnvelope(new OqlError([{
    code: 'UNKNOWN_COLUMN', severity: 'error', message: "unknown column 'nme' on object 'account'", hint: "did you mean 'name'?",
    span: { start: 7, end: 10, line: 1, column: 8, endLine: 1, endColumn: 11 },
  }], 'SELECT nme FROM account LIMIT 10'))],
  invalidToken: ['A next_token this server did not issue, or one that expired', plain('INVALID_TOKEN', 'Invalid next_token: it was altered, or issued for another request', 'send next_token exactly as the previous page returned it, with the same fields and filter, or null to start again')],
  invalidPointer: ['A pointer this server did not issue for this organization', plain('INVALID_TOKEN', 'the pointer is not one this service issued for this organization', "pass the previous response's data.next unchanged, or omit pointer for the first page")],
  unauthenticated: ['No bearer token', plain('UNAUTHENTICATED', 'missing bearer token', 'send Authorization: Bearer <API key>')],
  sessionEnded: ['A console session that ended or expired', errorEnvelope(sessionEnded())],
  crossSiteChange: ['A change with the console session, sent from another site', errorEnvelope(changeFromAnotherSite())],
  csrfMissing: ['A change with the console session but without its CSRF token', errorEnvelope(csrfTokenMissing())],
  objectDenied: ['An object the role may not use', plain('PERMISSION_DENIED', "the member role may not use the object 'opportunity'", 'the objects this role may use are: account, contact, user')],
  tooManyKeys: ['A user (or organization) that already holds its cap of live keys (OQL_MAX_KEYS_PER_USER, OQL_MAX_KEYS_PER_ORG)', errorEnvelope(tooManyKeys("the user 'u_acme_admin'", DEFAULT_KEY_CAPS.perUser))],
  invalidKeyCursor: ['A cursor this listing did not give', thrown(() => readKeyCursor('not-a-cursor'))],
  keyListQuery: ['A page size that is not a whole number from 1 to 1000', framework({
    validation: [{ instancePath: '/limit', keyword: 'pattern', params: { pattern: '^(1000|[1-9][0-9]{0,2})$' }, message: 'must match pattern "^(1000|[1-9][0-9]{0,2})$"' }],
    validationContext: 'querystring',
  })],
  keyIdSchema: ['A key id longer than 200 characters', framework({
    validation: [{ instancePath: '/id', keyword: 'maxLength', params: { limit: 200 }, message: 'must NOT have more than 200 characters' }],
    validationContext: 'params',
  })],
  newKeyValidation: ['A blank name and an expiry already past', thrown(() => checkNewKey('   ', 1767225600000, 1795628280647))],
  keyNotFound: ['A key id the caller cannot see: none of its organization, or another member\'s', errorEnvelope(keyNotFound('key_nosuch'))],
  keyNotRollable: ['A key that is revoked or expired', errorEnvelope(keyNotRollable('key_bWfjijee0vQn'))],
  keyRoleAbove: ['A new key of a role above the caller\'s', thrown(() => ownerOfNewKey(member, 'admin', undefined))],
  keyForAnother: ['A member naming another user as the owner', thrown(() => ownerOfNewKey(member, 'member', 'u_acme_admin'))],
  keyManageDenied: ['A key of a role above the caller\'s', thrown(() => checkMayManage(admin, superadminKey))],
  adminOnly: ['A member deleting or restoring a record', plain('PERMISSION_DENIED', 'the member role may not delete records', 'delete records needs a key of the admin role or higher')],
  invalidCursor: ['A change cursor this service did not hand out', plain('INVALID_CURSOR', '"12" is not a change cursor', 'pass a cursor exactly as a change, next_cursor or /api/v1/changes/head gave it, or leave after out to start at the oldest change kept')],
  cursorExpired: ['A change cursor older than the changes kept', plain('CURSOR_EXPIRED', 'the cursor is older than the changes kept: some changes after it were removed by the retention', 'resynchronise: run a full connector sync of the objects you follow, then continue from GET /api/v1/changes/head')],
  tooManyWaiting: ['The user already has its share of long-polls and streams open', errorEnvelope(OqlError.retryLater('TOO_MANY_WAITING', 'you already have 10 long-polls or change streams open', 5, 'at most 10 per user wait at once: share one stream between consumers, or close one first'))],
  changesQuery: ['A query parameter out of its range', plain('VALIDATION_FAILED', 'limit must be a whole number from 1 to 1000, not "5000"', 'pass limit=100, or leave it out')],
  webhookAdminOnly: ['A member managing webhooks', plain('PERMISSION_DENIED', 'the member role may not manage webhooks', 'manage webhooks needs a key of the admin role or higher')],
  webhookNotFound: ['A webhook id the organization does not have', plain('NOT_FOUND', 'your organization has no webhook endpoint "whk_nosuch"', 'GET /api/v1/webhooks lists your endpoints')],
  webhookUrl: ['A URL the service never sends to', plain('INVALID_WEBHOOK_URL', 'the webhook URL is refused: 169.254.169.254 is in 169.254.0.0/16 (Link-Local)', 'give an https URL of a receiver on the public internet, e.g. https://hooks.example.com/oql')],
  notDeadLettered: ['A delivery that was not dead-lettered', plain('VALIDATION_FAILED', 'delivery 412 succeeded; only a dead-lettered change is retried this way', 'to send delivered changes again, replay the endpoint from a cursor before them')],
  tooManyWebhooks: ['The organization has its most endpoints', plain('TOO_MANY_WEBHOOKS', 'your organization already has 50 webhook endpoints, the most it may have', 'delete an endpoint you no longer use first (at most 50: OQL_MAX_WEBHOOKS_PER_ORG)')],
  superadminOnly: ['A caller that is not a superadmin', plain('PERMISSION_DENIED', 'only the Superadmin role may list tool logs')],
  notAcceptable: ['An Accept header that takes neither JSON nor CSV', thrown(() => answerFormat({ headers: { accept: 'application/xml' } } as FastifyRequest, undefined))],
  badFormat: ['A format other than json or csv', thrown(() => answerFormat({ headers: {} } as FastifyRequest, 'xlsx'))],
  tooLarge: ['A body over the limit', framework({ code: 'FST_ERR_CTP_BODY_TOO_LARGE' })],
  notJson: ['A body of another content type', framework({ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' })],
  orgShare: ["The organization's share of the database's connections is in use", errorEnvelope(OqlError.retryLater('TOO_MANY_REQUESTS', "your organization is using its whole share of the database's connections; retry later", 10, "run fewer requests at once across your organization's keys"))],
  tooManyHeavy: ['The user already runs its share of reports, filter and connector pages', errorEnvelope(OqlError.retryLater('TOO_MANY_REQUESTS', 'too many concurrent analytics requests are running; retry later', 1, 'at most 2 reports, filter or connector pages run at once per user, across all of its keys and clients; wait for one to finish'))],
  coolDown: ['A query of the organization just ran out its time (embedded database)', errorEnvelope(coolingDown(3))],
  tooManyLight: ['The user already runs its share of record requests', errorEnvelope(OqlError.retryLater('TOO_MANY_REQUESTS', 'too many concurrent requests are running; retry later', 1, 'at most 8 record requests run at once per user, across all of its keys and clients; wait for one to finish'))],
  shortOfMemory: ['The server is short of memory', errorEnvelope(OqlError.retryLater('SERVICE_UNAVAILABLE', 'the service is short of memory and takes no new work for a moment', 5, 'retry after the time Retry-After gives'))],
  queryTooLarge: ['A result over the response ceiling', errorEnvelope(tooLarge(DEFAULT_MAX_RESPONSE_BYTES, 'query'))],
  pageTooLarge: ['A page over the response ceiling', errorEnvelope(tooLarge(DEFAULT_MAX_RESPONSE_BYTES, 'page'))],
  recordTooLarge: ['A record over the response ceiling', errorEnvelope(tooLarge(DEFAULT_MAX_RESPONSE_BYTES, 'record'))],
  tooCostly: ["A query the database's planner estimates above the cost ceiling", thrown(() => checkCost({ 'Node Type': 'Nested Loop', 'Total Cost': 2.4e8, 'Plan Rows': 3_600_000 }, DEFAULT_MAX_QUERY_COST, undefined))],
  internal: ['Any internal failure', errorEnvelope(new Error('not shown'))],
  unavailable: ['The database does not answer', plain('DATABASE_ERROR', 'the database is unavailable; retry later')],
  timeout: ['A statement over the time limit', plain('QUERY_TIMEOUT', 'the query timed out after 20 seconds', 'make the query cheaper, or narrow the WHERE clause')],
} as const satisfies Record<string, readonly [string, ErrorEnvelope]>;

export type ErrorCase = keyof typeof ERRORS;

/** What every route of the API-key scope can answer, besides its own errors. */
const EVERY_ROUTE: readonly ErrorCase[] = ['unauthenticated', 'sessionEnded', 'internal', 'unavailable'];
/** What a change (every method but GET and HEAD) sent with the console's session can answer as well. */
const SESSION_CHANGE_ERRORS: readonly ErrorCase[] = ['crossSiteChange', 'csrfMissing'];
/** What a route admitted within the user's budget of heavy requests (reports, filter, connector pages) can answer as well. */
export const HEAVY_ERRORS: readonly ErrorCase[] = ['tooManyHeavy', 'coolDown', 'orgShare', 'shortOfMemory', 'timeout'];
/** What a route admitted within the user's budget of light requests (records, tool logs) can answer as well. */
export const LIGHT_ERRORS: readonly ErrorCase[] = ['tooManyLight', 'orgShare', 'shortOfMemory', 'timeout'];
/** What a route with a JSON body can answer as well. */
export const BODY_ERRORS: readonly ErrorCase[] = ['malformedJson', 'bodySchema', 'tooLarge', 'notJson'];
/** What a route with an object slug (and a record id) in its path can answer as well. */
export const PATH_ERRORS: readonly ErrorCase[] = ['invalidSlug', 'longSegment'];

function described(status: number): string {
  const text = STATUS[status];
  if (text === undefined) throw new Error(`no description of the status ${status}`);
  return text;
}

/**
 * The error responses of a route: its own cases plus those of every route, one response per
 * status with the error envelope and one named example per case; 429 and 503 with Retry-After.
 */
export function errors(...cases: readonly ErrorCase[]) {
  const byStatus = new Map<number, ErrorCase[]>();
  for (const name of [...cases, ...EVERY_ROUTE]) {
    const status = ERRORS[name][1].data.status_code;
    const list = byStatus.get(status) ?? [];
    if (!list.includes(name)) list.push(name);
    byStatus.set(status, list);
  }
  const out: Record<string, object> = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) out[String(status)] = errorResponse(status, byStatus.get(status)!);
  return out;
}

/** One error response: the envelope, with one named example per case. */
function errorResponse(status: number, cases: readonly string[]) {
  return {
    description: described(status),
    ...(status === 429 || status === 503 ? { headers: RETRY_AFTER } : {}),
    content: {
      [JSON_TYPE]: {
        schema: ref('ErrorEnvelope'),
        examples: Object.fromEntries(cases.map((name) => [name, { $ref: `#/components/examples/${name}` }])),
      },
    },
  };
}

type ErrorResponse = ReturnType<typeof errorResponse>;

/**
 * The responses of a route a console session may call when it is a change: its own, and the
 * refusals of a change that came from another site or without the session's CSRF token.
 */
export function withSessionChangeErrors(responses: Readonly<Record<string, object>>): Record<string, object> {
  const out: Record<string, object> = { ...responses };
  for (const name of SESSION_CHANGE_ERRORS) {
    const status = ERRORS[name][1].data.status_code;
    const before = out[String(status)] as ErrorResponse | undefined;
    const cases = Object.keys(before?.content[JSON_TYPE].examples ?? {});
    out[String(status)] = errorResponse(status, cases.includes(name) ? cases : [...cases, name]);
  }
  return out;
}

/** Every error example, once, for `components.examples` of the document; the responses refer to them. */
export function errorExamples(): Record<ErrorCase, { summary: string; value: unknown }> {
  const entries = Object.entries(ERRORS).map(([name, [summary, value]]) => [name, { summary, value }]);
  return Object.fromEntries(entries) as Record<ErrorCase, { summary: string; value: unknown }>;
}
