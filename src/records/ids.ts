// Record ids: `<prefix>_<suffix>`.
//
// The prefix is a short name of the object: the first three letters and digits of its slug
// (`opportunity` → `opp`, `ticket_comment` → `tic`), so an id says what it is at a glance. Ids
// are unique per table, so two objects sharing a prefix is harmless.
//
// The suffix is 26 characters of Crockford base32 in lower case: 10 for the millisecond time
// and 16 (80 bits) of randomness, as a ULID. Ids therefore sort by creation time as text, in any
// collation that orders ASCII digits before letters; within one millisecond of one process the
// random part is incremented, so ids made by one process are strictly increasing.

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;

let lastTime = -1;
let lastRandom: number[] = [];

export function idPrefix(slug: string): string {
  const letters = slug.toLowerCase().replace(/[^a-z0-9]/g, '');
  return (letters || 'rec').slice(0, 3);
}

export function newRecordId(slug: string, now: number): string {
  return `${idPrefix(slug)}_${encodeTime(now)}${nextRandom(now).map((d) => ALPHABET[d]).join('')}`;
}

/**
 * An id of the same form from given parts: `random` yields the 16 random digits (0–31 each).
 * For data that must come out the same on every run (the demo data), where `newRecordId`'s
 * clock and randomness would not.
 */
export function recordIdOf(slug: string, ms: number, random: readonly number[]): string {
  if (random.length !== RANDOM_CHARS || random.some((d) => !Number.isInteger(d) || d < 0 || d > 31)) throw new Error(`an id needs ${RANDOM_CHARS} digits from 0 to 31`);
  return `${idPrefix(slug)}_${encodeTime(ms)}${random.map((d) => ALPHABET[d]).join('')}`;
}

function encodeTime(ms: number): string {
  let t = Math.max(0, Math.floor(ms));
  let out = '';
  for (let i = 0; i < TIME_CHARS; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function nextRandom(now: number): number[] {
  if (now === lastTime) {
    // Same millisecond: add one to the previous random part, base 32.
    const next = [...lastRandom];
    for (let i = next.length - 1; i >= 0; i--) {
      if (next[i]! < 31) { next[i]! += 1; break; }
      next[i] = 0;
    }
    lastRandom = next;
    return next;
  }
  const bytes = new Uint8Array(RANDOM_CHARS);
  globalThis.crypto.getRandomValues(bytes);
  lastTime = now;
  // The top digit is kept below 16 so a long run of increments within a millisecond cannot wrap.
  lastRandom = [...bytes].map((b, i) => (i === 0 ? b % 16 : b % 32));
  return lastRandom;
}
