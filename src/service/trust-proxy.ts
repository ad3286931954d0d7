import { isIP } from 'node:net';
import { OqlError } from '../diagnostics/diagnostic.js';

/**
 * `--trust-proxy` / OQL_TRUST_PROXY: which proxies in front of the service may say who the client
 * is (X-Forwarded-For), so per-address limits and lockouts count the client, not the proxy every
 * user shares. Fastify's `trustProxy`, restricted to the forms that cannot be spoofed by a client:
 *
 * - a hop count (`1`: one proxy, such as a load balancer, in front of every request);
 * - addresses and CIDR ranges of the proxies, comma-separated (`10.0.0.0/8,192.168.1.7`), and
 *   the names `loopback`, `linklocal` and `uniquelocal` for those ranges.
 *
 * Trusting every hop (`true`) is refused: then any client could name any address in the header
 * and walk around its own limits. Unset or empty: no proxy is trusted, the socket's address counts.
 */
export type TrustProxy = false | number | readonly string[];

const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);
const HINT = 'give the number of proxies in front of the service (1 for one load balancer), or their addresses and CIDR ranges, e.g. 10.0.0.0/8,127.0.0.1';

function isCidr(entry: string): boolean {
  const slash = entry.indexOf('/');
  if (slash < 0) return isIP(entry) !== 0;
  const family = isIP(entry.slice(0, slash));
  const bits = entry.slice(slash + 1);
  if (family === 0 || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

export function parseTrustProxy(value: string | number | readonly string[] | false | undefined, source = '--trust-proxy (OQL_TRUST_PROXY)'): TrustProxy {
  if (value === undefined || value === false || value === '') return false;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0 || value > 100) throw OqlError.plain('INVALID_OPTIONS', `${source} must be a hop count from 0 to 100, not ${String(value)}`, HINT);
    return value === 0 ? false : value;
  }
  const entries = typeof value === 'string' ? value.split(',').map((e) => e.trim()).filter((e) => e !== '') : [...value];
  if (entries.length === 0) return false;
  if (entries.length === 1 && /^\d+$/.test(entries[0]!)) return parseTrustProxy(Number(entries[0]), source);
  for (const entry of entries) {
    if (/^(true|all|\*)$/i.test(entry)) {
      throw OqlError.plain('INVALID_OPTIONS', `${source} '${entry}' would trust every hop: any client could then choose the address its limits are counted under`, HINT);
    }
    if (!NAMED_RANGES.has(entry) && !isCidr(entry)) {
      throw OqlError.plain('INVALID_OPTIONS', `${source} entry '${entry.slice(0, 100)}' is not an address, a CIDR range, loopback, linklocal or uniquelocal`, HINT);
    }
  }
  return entries;
}

/** Fastify's `trustProxy` for a setting (a hop count is Fastify's own rule for numbers, typed as a function). */
export function fastifyTrustProxy(trust: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (trust === false) return false;
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return [...trust];
}
