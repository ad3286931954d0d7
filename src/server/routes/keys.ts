import type { FastifyInstance } from 'fastify';
import { OqlError } from '../../diagnostics/diagnostic.js';
import { toEnvelope } from '../../run/envelope.js';
import { checkMayManage, keyNotFound, keyScope, ownerOfNewKey } from '../../service/api-key-access.js';
import { ROLL_GRACE_MS, getApiKey, issueApiKey, listApiKeys, revokeApiKey, rollApiKey, type ApiKeyInfo } from '../../service/store/api-keys.js';
import type { RequestContext } from '../../service/policy.js';
import { ROLES, type Principal, type Role } from '../../service/types.js';
import { ORG_ID_PATTERN, ORG_ID_RULE } from '../../rules.js';
import { contextOf } from '../context.js';
import { ERROR_RESPONSE } from './schemas.js';

/**
 * API keys of the caller's organization (the API access page of the workspace settings): list,
 * create, roll and revoke, by API key or console session, under the rules of
 * src/service/api-key-access.ts and within the principal's budget of light requests (the policy
 * point). A new key is in the response once and never again.
 */

const USER_ID = { type: 'string', pattern: ORG_ID_PATTERN, description: ORG_ID_RULE } as const;

const KEY_VIEW = {
  type: 'object',
  required: ['id', 'name', 'role', 'user_id', 'prefix', 'last4', 'created_at', 'created_by', 'expires_at', 'last_used_at', 'revoked_at', 'revoked_by', 'rolled_from', 'status', 'can_manage'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'names the key in roll and revoke' },
    name: { type: ['string', 'null'] },
    role: { type: 'string', enum: [...ROLES] },
    user_id: { type: 'string', description: 'the user the key acts as (its owner)' },
    prefix: { type: ['string', 'null'], description: "the key's first 8 characters; null for keys stored before they were kept" },
    last4: { type: ['string', 'null'], description: "the key's last 4 characters" },
    created_at: { type: 'integer', description: 'epoch milliseconds' },
    created_by: { type: ['string', 'null'], description: 'the user who created it; null for keys made on the server' },
    expires_at: { type: ['integer', 'null'], description: 'epoch milliseconds; null: never' },
    last_used_at: { type: ['integer', 'null'], description: 'epoch milliseconds, to the minute' },
    revoked_at: { type: ['integer', 'null'] },
    revoked_by: { type: ['string', 'null'] },
    rolled_from: { type: ['string', 'null'], description: 'the id of the key this one replaced' },
    status: { type: 'string', enum: ['active', 'expired', 'revoked'] },
    can_manage: { type: 'boolean', description: 'whether the caller may roll and revoke it' },
  },
} as const;

const ID_PARAM = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 200 } } } as const;

const envelope = (data: object) => ({ type: 'object', required: ['success', 'data'], properties: { success: { type: 'boolean', const: true }, data } }) as const;

const ISSUED = envelope({
  type: 'object',
  required: ['key', 'secret'],
  properties: {
    key: KEY_VIEW,
    secret: { type: 'string', description: 'the whole key: shown in this response only, stored only as a hash' },
    previous: { ...KEY_VIEW, description: 'roll: the old key, now expiring at the end of the grace period' },
  },
});

const ERRORS = { 400: ERROR_RESPONSE, 401: ERROR_RESPONSE, 403: ERROR_RESPONSE } as const;

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
    status: key.revokedAt !== null ? 'revoked' : key.expiresAt !== null && key.expiresAt <= now ? 'expired' : 'active',
    can_manage: manageable && key.revokedAt === null,
  };
}

export async function keyRoutes(app: FastifyInstance): Promise<void> {
  const { db } = app.oql;
  const admit = <T>(ctx: RequestContext, fn: () => Promise<T>): Promise<T> => app.oql.policy.admit(ctx, 'light', fn);
  const visibleKey = async (p: Principal, id: string): Promise<ApiKeyInfo> => {
    const key = await getApiKey(db, p.orgId, id);
    if (!key) throw keyNotFound(id);
    checkMayManage(p, key);
    return key;
  };

  app.get('/api/v1/keys', {
    schema: {
      summary: 'The API keys you can see, newest first: all of the organization\'s for admins, your own for members', tags: ['keys'],
      response: { 200: envelope({ type: 'object', required: ['keys'], properties: { keys: { type: 'array', items: KEY_VIEW } } }), ...ERRORS },
    },
  }, async (request) => {
    const ctx = contextOf(request);
    const p = ctx.principal;
    const keys = await admit(ctx, () => listApiKeys(db, { ...keyScope(p), revoked: true, newestFirst: true }));
    const now = Date.now();
    return toEnvelope({ keys: keys.map((k) => view(k, p, now)) });
  });

  app.post<{ Body: CreateBody }>('/api/v1/keys', {
    schema: {
      summary: 'Create an API key (a role no higher than your own); the key is in this response only', tags: ['keys'],
      body: {
        type: 'object',
        required: ['name', 'role'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f]+$', description: 'what the key is for' },
          role: { type: 'string', enum: [...ROLES] },
          expires_at: { type: ['integer', 'null'], minimum: 0, description: 'epoch milliseconds in the future; null or absent: never' },
          user_id: { ...USER_ID, description: 'admins: the user the key acts as; default yourself' },
        },
      },
      response: { 201: ISSUED, ...ERRORS },
    },
  }, async (request, reply) => {
    const ctx = contextOf(request);
    const p = ctx.principal;
    const { name, role, expires_at: expiresAt = null, user_id: userId } = request.body;
    const now = Date.now();
    const invalid = (field: string, message: string) => OqlError.validation('Invalid request', [
      { object_slug: '', field, message, error_code: 'INVALID_VALUE', record_index: null, meta_data: `body.${field}` },
    ]);
    if (name.trim() === '') throw invalid('name', 'name must not be blank');
    if (expiresAt !== null && expiresAt <= now) throw invalid('expires_at', 'expires_at must be in the future');
    const owner = ownerOfNewKey(p, role, userId);
    const { issued, key } = await admit(ctx, async () => {
      const made = await issueApiKey(db, { orgId: p.orgId, role, userId: owner, name: name.trim(), expiresAt, createdBy: p.userId });
      return { issued: made, key: (await getApiKey(db, p.orgId, made.id))! };
    });
    return reply.code(201).send(toEnvelope({ key: view(key, p, now), secret: issued.key }));
  });

  app.post<{ Params: { id: string } }>('/api/v1/keys/:id/roll', {
    schema: {
      summary: `Roll a key: a new key now, the old one expiring ${ROLL_GRACE_MS / 3_600_000} hours later; the new key is in this response only`, tags: ['keys'],
      params: ID_PARAM,
      response: { 201: ISSUED, ...ERRORS },
    },
  }, async (request, reply) => admit(contextOf(request), async () => {
    const p = contextOf(request).principal;
    const old = await visibleKey(p, request.params.id);
    const issued = await rollApiKey(db, old.id, { orgId: p.orgId, by: p.userId });
    if (!issued) {
      throw OqlError.plain('NOT_FOUND', `the API key '${old.id}' is revoked or expired: only an active key can be rolled`,
        'create a new key instead (POST /api/v1/keys)');
    }
    app.oql.keys.forgetKey(old.id);
    const now = Date.now();
    const [key, previous] = await Promise.all([getApiKey(db, p.orgId, issued.id), getApiKey(db, p.orgId, old.id)]);
    return reply.code(201).send(toEnvelope({ key: view(key!, p, now), secret: issued.key, previous: view(previous!, p, now) }));
  }));

  app.post<{ Params: { id: string } }>('/api/v1/keys/:id/revoke', {
    schema: {
      summary: 'Revoke a key: it fails from its next request (on other servers within their key cache time); revoking it again changes nothing', tags: ['keys'],
      params: ID_PARAM,
      response: { 200: envelope({ type: 'object', required: ['key'], properties: { key: KEY_VIEW } }), ...ERRORS },
    },
  }, async (request) => admit(contextOf(request), async () => {
    const p = contextOf(request).principal;
    const key = await visibleKey(p, request.params.id);
    if (key.revokedAt === null) {
      await revokeApiKey(db, key.id, Date.now(), { by: p.userId, orgId: p.orgId });
      app.oql.keys.forgetKey(key.id);
    }
    return toEnvelope({ key: view((await getApiKey(db, p.orgId, key.id))!, p, Date.now()) });
  }));
}

