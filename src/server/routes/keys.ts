import type { FastifyInstance } from 'fastify';
import { toEnvelope } from '../../query/envelope.js';
import { checkMayManage } from '../../service/api-key-access.js';
import { ROLL_GRACE_MS, type ApiKeyInfo } from '../../service/operations.js';
import { ROLES, type Principal, type Role } from '../../service/types.js';
import { ORG_ID_PATTERN, ORG_ID_RULE } from '../../rules.js';
import { contextOf } from '../context.js';
import { EXAMPLES } from '../openapi/examples.js';
import { ref } from '../openapi/response-schemas.js';
import { BODY_ERRORS, errors, LIGHT_ERRORS, success } from '../openapi/responses.js';

/**
 * API keys of the caller's organization (the API access page of the workspace settings): list,
 * create, roll and revoke, by API key or console session, under the rules of
 * src/service/api-key-access.ts and within the principal's budget of light requests (the policy
 * point). A new key is in the response once and never again.
 */

const ID_PARAM = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 200, description: "the key's id, as the listing gives it", examples: ['key_bWfjijee0vQn'] } },
} as const;

const CREATE_BODY = {
  type: 'object',
  required: ['name', 'role'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f]+$', description: 'what the key is for; not blank, no control characters (stored trimmed)' },
    role: { type: 'string', enum: [...ROLES], description: 'no higher than your own (member < admin < superadmin)' },
    expires_at: { type: ['integer', 'null'], minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'when it stops working, in the future (Unix epoch milliseconds); null or absent: never' },
    user_id: { type: 'string', pattern: ORG_ID_PATTERN, description: `admins and superadmins: the user of your organization the key acts as; default yourself. ${ORG_ID_RULE}` },
  },
  examples: [{ name: 'Nightly export', role: 'member', expires_at: null }],
} as const;

/** Keys per page of the listing: by default, and at most. */
const KEYS_PAGE = 100;
const MAX_KEYS_PAGE = 1000;

const LIST_QUERY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // Query values are checked as sent, as text: a whole number from 1 to MAX_KEYS_PAGE.
    limit: { type: 'string', pattern: '^(1000|[1-9][0-9]{0,2})$', description: `keys per page, 1 to ${MAX_KEYS_PAGE} (default ${KEYS_PAGE})`, examples: ['100'] },
    cursor: { type: 'string', minLength: 1, maxLength: 400, description: "the previous page's data.next, unchanged; leave out for the first page" },
  },
} as const;

/** A roll or revoke has no body: these are what the body parser refuses if one is sent anyway. */
const NO_BODY_ERRORS = ['malformedJson', 'tooLarge', 'notJson'] as const;
/** The key in the path: longer than the schema allows (400), or than the router reads (414). */
const KEY_PATH_ERRORS = ['keyIdSchema', 'longSegment'] as const;
const BY_SESSION = 'By API key, or by console session (a change then needs the session\'s X-CSRF-Token).';

interface CreateBody {
  readonly name: string;
  readonly role: Role;
  readonly expires_at?: number | null;
  readonly user_id?: string;
}

function view(key: ApiKeyInfo, p: Principal, now: number) {
  let manageable = true;
  try {
    checkMayManage(p, key);
  } catch {
    manageable = false;
  }
  return {
    id: key.id, name: key.name, role: key.role, user_id: key.userId, prefix: key.prefix, last4: key.last4,
    created_at: key.createdAt, created_by: key.createdBy, expires_at: key.expiresAt, last_used_at: key.lastUsedAt,
    revoked_at: key.revokedAt, revoked_by: key.revokedBy, rolled_from: key.rolledFrom,
    status: key.revokedAt !== null ? 'revoked' : key.live ? 'active' : 'expired',
    can_manage: manageable && key.revokedAt === null,
  };
}

export async function keyRoutes(app: FastifyInstance): Promise<void> {
  const { ops } = app.oql;

  app.get<{ Querystring: { limit?: string; cursor?: string } }>('/api/v1/keys', {
    schema: {
      operationId: 'listKeys', summary: 'The API keys you can see, newest first, a page at a time', tags: ['keys'], querystring: LIST_QUERY,
      description: `Admins and superadmins see every key of their organization, members the keys that act as themselves; revoked and expired keys included. Never the keys themselves. Pages of ${KEYS_PAGE} keys by default; send data.next as cursor until it is null. ${BY_SESSION}`,
      response: {
        200: success('One page of keys, newest first, and the cursor of the next page (null after the last).', {
          type: 'object', required: ['keys', 'next'], additionalProperties: false,
          properties: { keys: { type: 'array', items: ref('ApiKey') }, next: { type: ['string', 'null'] } },
        }, EXAMPLES.keys),
        ...errors('invalidKeyCursor', 'keyListQuery', ...LIGHT_ERRORS),
      },
    },
  }, async (request) => {
    const ctx = contextOf(request);
    const limit = request.query.limit === undefined ? KEYS_PAGE : Number(request.query.limit);
    const { keys, next } = await ops.listKeys(ctx, { limit, cursor: request.query.cursor });
    const now = Date.now();
    return toEnvelope({ keys: keys.map((k) => view(k, ctx.principal, now)), next });
  });

  app.post<{ Body: CreateBody }>('/api/v1/keys', {
    schema: {
      operationId: 'createKey', summary: 'Create an API key; the key itself is in this answer only', tags: ['keys'], body: CREATE_BODY,
      description: `The key belongs to your organization, with a role no higher than your own; members create keys for themselves only. It works from its first request. ${BY_SESSION}`,
      response: {
        201: success('The key as the listing will show it, and the key itself, once.', ref('IssuedKey'), EXAMPLES.issuedKey),
        ...errors('newKeyValidation', 'bodySchema', 'keyRoleAbove', 'keyForAnother', 'tooManyKeys', ...LIGHT_ERRORS, ...BODY_ERRORS),
      },
    },
  }, async (request, reply) => {
    const ctx = contextOf(request);
    const { name, role, expires_at: expiresAt = null, user_id: userId } = request.body;
    const { key, secret } = await ops.createKey(ctx, { name, role, expiresAt, userId });
    return reply.code(201).send(toEnvelope({ key: view(key, ctx.principal, Date.now()), secret }));
  });

  app.post<{ Params: { id: string } }>('/api/v1/keys/:id/roll', {
    schema: {
      operationId: 'rollKey', summary: 'Roll a key: a new key now, the old one expiring after a grace period', tags: ['keys'], params: ID_PARAM,
      description: `The new key has the old one's name, role, owner and expiry, and is in this answer only; the old key keeps working for ${ROLL_GRACE_MS / 3_600_000} hours (or until its own expiry, if sooner), time to switch over. Only an active key of a role no higher than yours can be rolled. ${BY_SESSION}`,
      response: {
        201: success('The new key, with the key itself once, and the old key with its new expiry.', ref('RolledKey'), EXAMPLES.rolledKey),
        ...errors('keyNotFound', 'keyNotRollable', 'tooManyKeys', ...KEY_PATH_ERRORS, 'keyManageDenied', ...LIGHT_ERRORS, ...NO_BODY_ERRORS),
      },
    },
  }, async (request, reply) => {
    const ctx = contextOf(request);
    const { key, secret, previous } = await ops.rollKey(ctx, request.params.id);
    const now = Date.now();
    return reply.code(201).send(toEnvelope({ key: view(key, ctx.principal, now), secret, previous: view(previous, ctx.principal, now) }));
  });

  app.post<{ Params: { id: string } }>('/api/v1/keys/:id/revoke', {
    schema: {
      operationId: 'revokeKey', summary: 'Revoke a key: it fails from its next request', tags: ['keys'], params: ID_PARAM,
      description: `On this server at once; on other servers sharing the database within their key cache time (OQL_API_KEY_CACHE_MS). Revoking a revoked key changes nothing and answers the same. A key of a role above yours cannot be revoked. ${BY_SESSION}`,
      response: {
        200: success('The key, revoked.', {
          type: 'object', required: ['key'], additionalProperties: false, properties: { key: ref('ApiKey') },
        }, EXAMPLES.revokedKey),
        ...errors('keyNotFound', ...KEY_PATH_ERRORS, 'keyManageDenied', ...LIGHT_ERRORS, ...NO_BODY_ERRORS),
      },
    },
  }, async (request) => {
    const ctx = contextOf(request);
    return toEnvelope({ key: view(await ops.revokeKey(ctx, request.params.id), ctx.principal, Date.now()) });
  });
}
