import { OqlError, type ValidationError } from '../diagnostics/diagnostic.js';
import type { ApiKeyInfo } from './store/api-keys.js';
import { aRole, ROLES, type Principal, type Role } from './types.js';

/**
 * Who may see and manage which API keys, for every surface that manages them (the REST endpoints
 * and so the console). Members see and manage the keys that act as themselves; admins and
 * superadmins every key of their organization; no one another organization's. No one creates,
 * rolls or revokes a key whose role is above their own: rolling shows the new key to the one who
 * rolls it, so it would hand them that role.
 */

/** Whether `role` is `ceiling` or below it, in the order of ROLES (member < admin < superadmin). */
export function roleAtMost(role: string, ceiling: Role): boolean {
  const rank = ROLES.indexOf(role as Role);
  return rank >= 0 && rank <= ROLES.indexOf(ceiling);
}

/** The keys a principal sees: their organization's, and for a member only those acting as them. */
export function keyScope(p: Principal): { readonly orgId: string; readonly userId?: string } {
  return p.role === 'member' ? { orgId: p.orgId, userId: p.userId } : { orgId: p.orgId };
}

export function seesKey(p: Principal, key: ApiKeyInfo): boolean {
  return key.orgId === p.orgId && (p.role !== 'member' || key.userId === p.userId);
}

/**
 * A key the principal may not see is answered as one that does not exist: its existence is not
 * theirs to learn. NOT_FOUND with the status the service gives every NOT_FOUND (a record's too).
 */
export function keyNotFound(id: string): OqlError {
  return OqlError.plain('NOT_FOUND', `no API key '${id.slice(0, 80)}' in your organization`, 'GET /api/v1/keys lists the keys you can manage');
}

/** Refuses a roll or revoke of a key the principal sees but whose role is above theirs. */
export function checkMayManage(p: Principal, key: ApiKeyInfo): void {
  if (!seesKey(p, key)) throw keyNotFound(key.id);
  if (!roleAtMost(key.role, p.role)) {
    throw OqlError.plain('PERMISSION_DENIED', `the ${p.role} role may not manage ${aRole(key.role)} key`, 'ask a superadmin of your organization');
  }
}

/**
 * The owner of a new key: the creator, unless an admin or superadmin names another user of
 * their organization. Refuses a role above the creator's, and a member naming anyone but themselves.
 */
export function ownerOfNewKey(p: Principal, role: Role, userId: string | undefined): string {
  if (!roleAtMost(role, p.role)) {
    throw OqlError.plain('PERMISSION_DENIED', `the ${p.role} role may not create ${aRole(role)} key`,
      `choose a role no higher than your own: ${ROLES.filter((r) => roleAtMost(r, p.role)).join(', ')}`);
  }
  if (userId !== undefined && userId !== p.userId && p.role === 'member') {
    throw OqlError.plain('PERMISSION_DENIED', 'a member may create keys for themselves only', 'leave user_id out');
  }
  return userId ?? p.userId;
}

/**
 * What a new key's request must hold beyond its schema: a name that is not blank once trimmed,
 * and an expiry, when one is given, after `now`. Every problem at once, as a body's validation
 * errors; returns the name as it is stored (trimmed).
 */
export function checkNewKey(name: string, expiresAt: number | null, now: number): string {
  const problems: ValidationError[] = [];
  const problem = (field: string, message: string): ValidationError => (
    { object_slug: '', field, message, error_code: 'INVALID_VALUE', record_index: null, meta_data: `body.${field}` }
  );
  const trimmed = name.trim();
  if (trimmed === '') problems.push(problem('name', 'name must not be blank'));
  if (expiresAt !== null && expiresAt <= now) {
    problems.push(problem('expires_at', `expires_at must be in the future: ${expiresAt} has passed (epoch milliseconds; null or absent: never)`));
  }
  if (problems.length > 0) throw OqlError.validation('Invalid request', problems);
  return trimmed;
}

/**
 * A roll of a key that is revoked or expired: there is nothing left to switch over from. NOT_FOUND,
 * as for a key the principal cannot see, since no active key has this id.
 */
export function keyNotRollable(id: string): OqlError {
  return OqlError.plain('NOT_FOUND', `the API key '${id.slice(0, 80)}' is revoked or expired: only an active key can be rolled`,
    'create a new key instead (POST /api/v1/keys)');
}

/** The listing's cursor: where a page ended (its last key's creation time and id), opaque to clients. */
export function keyCursorOf(key: { readonly createdAt: number; readonly id: string }): string {
  return Buffer.from(JSON.stringify([key.createdAt, key.id]), 'utf8').toString('base64url');
}

/**
 * The position a cursor names. It only says where to go on from: the listing is still of the
 * caller's own keys, so a cursor made up or taken from another organization shows nothing more.
 */
export function readKeyCursor(cursor: string): { readonly createdAt: number; readonly id: string } {
  let position: unknown;
  try {
    position = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    position = null;
  }
  if (!Array.isArray(position) || position.length !== 2 || !Number.isSafeInteger(position[0]) || typeof position[1] !== 'string' || position[1].length > 200) {
    throw OqlError.plain('INVALID_TOKEN', 'the cursor is not one this listing gave', "pass the previous page's data.next unchanged, or leave cursor out for the first page");
  }
  return { createdAt: position[0] as number, id: position[1] as string };
}
