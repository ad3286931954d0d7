/**
 * The user a key acts as when it was made without one (`oql keys create` without `--user`): a
 * user of its own, `apikey_` and the random part of the key's id. The store writes it and the
 * console's keys page reads it back ("the key itself"), so both follow this one rule.
 */
export function ownUserOf(keyId: string): string {
  return `apikey_${keyId.slice('key_'.length)}`;
}
