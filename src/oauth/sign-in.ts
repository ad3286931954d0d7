import { createHash } from 'node:crypto';
import type { AttemptStore, Limit } from '../service/shared-state/attempts.js';

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
 * Once either key is at its limit, the next attempt is refused before the key is even looked up.
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

  /** Seconds to wait before this attempt may be checked; 0 when it may be now. */
  wait(workspace: string, address: string, apiKey: string | undefined): Promise<number> {
    return this.attempts.exceeded(signInKeys(workspace, address, apiKey), this.limit);
  }

  /** Counts a refused key. */
  async failed(workspace: string, address: string, apiKey: string | undefined): Promise<void> {
    await this.attempts.hit(signInKeys(workspace, address, apiKey), this.limit);
  }
}
