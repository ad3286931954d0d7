import { createHash } from 'node:crypto';
import type { AttemptStore, Limit, Reservation } from '../service/shared-state/attempts.js';

/**
 * The key-guessing budget of a sign-in with an API key (the consent form), counted on failures
 * only, under two keys:
 *
 * - the workspace and the client's address: an attacker hammering one workspace from one address
 *   locks out that pair, not the other workspaces that address signs in to, and not the
 *   workspace's users at other addresses (behind a proxy, `--trust-proxy` makes the address the
 *   client's own rather than the proxy's);
 * - the key's first characters: guessing the rest of a key whose beginning leaked (a log line, a
 *   screenshot) is slowed however many addresses the guesses come from. A random guess almost
 *   never repeats a beginning, so the counter only ever fills for one that is being targeted;
 *   while it is full, that beginning signs in nowhere, the right key included (answering the right
 *   key would tell the guesser which guess was right).
 *
 * Each attempt is counted before its key is looked up and given back once the key is accepted, so
 * attempts sent at once are checked at most as many as the limit allows, the rest refused before
 * the key is looked up; once either counter is full, every attempt is.
 */

/** Characters of a key that make its counted beginning: `oql_` and 8 random characters (48 bits). */
export const KEY_PREFIX_LENGTH = 12;

/** The counters a sign-in attempt falls under. The key's beginning is stored hashed, never as written. */
export function signInKeys(workspace: string, address: string, apiKey: string | undefined): string[] {
  const keys = [`sign-in|ws|${workspace.slice(0, 100)}|ip|${address.slice(0, 100)}`];
  if (apiKey !== undefined && apiKey.length >= KEY_PREFIX_LENGTH) {
    keys.push(`sign-in|prefix|${createHash('sha256').update(apiKey.slice(0, KEY_PREFIX_LENGTH), 'utf8').digest('base64url')}`);
  }
  return keys;
}

export class SignInGuard {
  constructor(private readonly attempts: AttemptStore, private readonly limit: Limit) {}

  /**
   * Counts this attempt as refused until it is released: check the key only when granted, and
   * release the reservation when the key is accepted. Refused: the seconds to wait.
   */
  begin(workspace: string, address: string, apiKey: string | undefined): Promise<Reservation> {
    return this.attempts.reserve(signInKeys(workspace, address, apiKey), this.limit);
  }
}
