import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The CSRF token of a session: an HMAC of the session token under a secret kept in the database
 * (so every instance computes the same one). Bound to the session, it cannot be used with
 * another; readable by the page only from a same-origin response, never from the HttpOnly cookie.
 */
export function csrfTokenOf(secret: string, sessionToken: string): string {
  return createHmac('sha256', secret).update(`oql console csrf\0${sessionToken}`).digest('base64url');
}

export function csrfTokenMatches(secret: string, sessionToken: string, sent: unknown): boolean {
  if (typeof sent !== 'string' || sent.length !== 43) return false;
  const want = Buffer.from(csrfTokenOf(secret, sessionToken));
  const got = Buffer.from(sent);
  return want.length === got.length && timingSafeEqual(want, got);
}
