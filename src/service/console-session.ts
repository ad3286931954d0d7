import { OqlError } from '../diagnostics/diagnostic.js';

/**
 * What the console's session asks of a request and answers when it is not met: the console
 * enforces it (src/console/plugin.ts) and the OpenAPI document describes it (src/server/openapi/document.ts),
 * both from here. A session acts as the API key it was signed in with, wherever the key would be
 * accepted; a request that changes anything must also carry the session's CSRF token and come
 * from this host's own pages.
 */

/** The cookie of a session over plain HTTP; over HTTPS the `__Host-` form, which the browser keeps Secure and to this host. */
export const SESSION_COOKIE = 'oql_session';
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;
/** The request header of the session's CSRF token, on every change. */
export const CSRF_HEADER = 'x-csrf-token';
/** Methods that change nothing, so need no CSRF token. */
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

export function sessionEnded(): OqlError {
  return OqlError.plain('UNAUTHENTICATED', 'the console session has ended or expired', 'sign in again');
}

export function changeFromAnotherSite(): OqlError {
  return OqlError.plain('PERMISSION_DENIED', 'this change was sent from another site', 'use the console on this host');
}

export function csrfTokenMissing(): OqlError {
  return OqlError.plain('PERMISSION_DENIED', 'a change made with the console session needs its CSRF token',
    `send the csrf_token of GET /console/session in the ${CSRF_HEADER} header, or reload the console`);
}
