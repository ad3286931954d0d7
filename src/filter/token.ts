import { createRequire } from 'node:module';
import { OqlError } from '../diagnostics/diagnostic.js';

/**
 * Connector page tokens: `base64url(payload).base64url(HMAC-SHA256(secret, payload))`. The
 * payload is plain data the server wrote (the position after the last record, the sync cutoff
 * and the expiry) plus a hash binding it to one request (tenant, object, fields, filter and include_deleted).
 * Only the server can make a valid one; a client can read it but not change a byte of it.
 */

export interface TokenPayload {
  readonly v: 1;
  /** Hash of tenant, object, fields and filter (`requestHash`). */
  readonly r: string;
  /** The sort key of the last record delivered: [timestamp or null, id]. */
  readonly k: readonly [number | null, string];
  /** The sync cutoff fixed by the first page (epoch ms), or null without a timestamp key. */
  readonly c: number | null;
  /** Expiry, epoch ms. */
  readonly x: number;
  /** 1 in a sync with include_deleted (tombstones); absent otherwise, so other tokens stay as they were. */
  readonly d?: 1;
}

/** How long a next_token stays valid after its page was served. */
export const TOKEN_TTL_MS = 60 * 60 * 1000;
const MAX_TOKEN_LENGTH = 4096;

/**
 * node:crypto, loaded at the first token: importing it starts OpenSSL, 10 to 20 ms of every
 * process that imports the library, and only the connector endpoints sign tokens.
 */
let crypto: typeof import('node:crypto') | undefined;
function nodeCrypto(): typeof import('node:crypto') {
  return (crypto ??= createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto'));
}

function keyOf(secret: string | Uint8Array): Buffer {
  const key = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : Buffer.from(secret);
  if (key.length < 16) throw OqlError.plain('INVALID_OPTIONS', 'tokenSecret must be at least 16 bytes', 'pass a long random secret shared by every server of the service');
  return key;
}

function mac(key: Buffer, payload: string): Buffer {
  return nodeCrypto().createHmac('sha256', key).update(payload).digest();
}

export function signToken(payload: TokenPayload, secret: string | Uint8Array): string {
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  return `${body}.${mac(keyOf(secret), body).toString('base64url')}`;
}

function invalid(reason: string): OqlError {
  return OqlError.plain('INVALID_TOKEN', `Invalid next_token: ${reason}`, 'send next_token exactly as the previous page returned it, with the same fields and filter, or null to start again');
}

/**
 * The payload of a token this server signed for this request, or an INVALID_TOKEN error.
 * `includeDeleted`: whether the request asks for tombstones; a token of the other mode is refused.
 */
export function readToken(token: unknown, secret: string | Uint8Array, requestHash: string, now: number, includeDeleted = false): TokenPayload {
  const key = keyOf(secret);
  if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) throw invalid('it is not a token this service issued');
  const dot = token.indexOf('.');
  if (dot < 0 || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) throw invalid('it is not a token this service issued');
  const body = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1), 'base64url');
  const expected = mac(key, body);
  if (given.length !== expected.length || !nodeCrypto().timingSafeEqual(given, expected)) throw invalid('it was altered or not issued by this service');
  let p: TokenPayload;
  try {
    p = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as TokenPayload;
  } catch {
    throw invalid('it is not a token this service issued');
  }
  if (p?.v !== 1 || typeof p.r !== 'string' || !Array.isArray(p.k) || typeof p.k[1] !== 'string' || typeof p.x !== 'number') throw invalid('it is not a token this service issued');
  if ((p.d === 1) !== includeDeleted) {
    throw invalid(p.d === 1 ? 'it was issued for a sync with include_deleted; send include_deleted: true with it, as on its first page' : 'it was issued for a sync without include_deleted; leave include_deleted out with it, as on its first page');
  }
  if (p.r !== requestHash) throw invalid('it was issued for another request (tenant, object, fields or filter)');
  if (now > p.x) throw invalid('it has expired; start the sync again from its last timestamp');
  return p;
}

/**
 * JSON with object keys sorted, so the same request always hashes the same. Written with its own
 * stack of pending pieces, not recursion: how deep a value is nested must not decide whether
 * hashing it overflows the call stack (the bodies that reach here are validated, but this
 * function does not rely on it).
 */
export function canonical(root: unknown): string {
  const out: string[] = [];
  // Pending pieces, the next on top: literal text (brackets, commas, keys) or a value to write.
  const pending: ({ text: string } | { value: unknown })[] = [{ value: root }];
  while (pending.length > 0) {
    const piece = pending.pop()!;
    if ('text' in piece) {
      out.push(piece.text);
      continue;
    }
    const v = piece.value;
    if (Array.isArray(v)) {
      pending.push({ text: ']' });
      for (let i = v.length - 1; i >= 0; i--) {
        pending.push({ value: v[i] });
        if (i > 0) pending.push({ text: ',' });
      }
      pending.push({ text: '[' });
    } else if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v).sort();
      pending.push({ text: '}' });
      for (let i = keys.length - 1; i >= 0; i--) {
        pending.push({ value: (v as Record<string, unknown>)[keys[i]!] });
        pending.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:` });
      }
      pending.push({ text: '{' });
    } else {
      out.push(JSON.stringify(v) ?? 'null');
    }
  }
  return out.join('');
}

/** Binds a token to its request; `includeDeleted` joins the hash only when set, so other hashes are as they were. */
export function requestHash(orgId: string, slug: string, fields: unknown, filter: unknown, includeDeleted = false): string {
  const parts: unknown[] = [orgId, slug, fields, filter ?? null];
  if (includeDeleted) parts.push({ include_deleted: true });
  return nodeCrypto().createHash('sha256').update(canonical(parts)).digest('base64url');
}
