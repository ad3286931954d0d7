import { lookup as systemLookup } from 'node:dns';
import { isIP, isIPv6, type LookupFunction } from 'node:net';

/**
 * The one check of every connection the service opens to an address someone else chose (a
 * client's metadata document, a tenant's webhook receiver): only the public internet.
 *
 * An address is judged against every range of the IANA IPv4 and IPv6 Special-Purpose Address
 * Registries, plus multicast, the IPv6 space outside global unicast 2000::/3, and the deprecated
 * IPv4-compatible ::/96 and site-local fec0::/10. An IPv6 address that carries an IPv4 address a
 * translator or tunnel would reach (::ffff:0:0/96 mapped, 64:ff9b::/96 NAT64, 2002::/16 6to4) is
 * judged by that IPv4 address; the local-use NAT64 prefix 64:ff9b:1::/48 is refused whole, as its
 * translator is inside the operator's own network.
 *
 * The check happens where the connection is made: `outboundLookup` is the `lookup` of
 * http.request, net.connect or undici's `connect`, so the address connected to is the address
 * checked, after DNS, and a name that answers 127.0.0.1 the second time (DNS rebinding) is
 * refused all the same. A host written as an address never reaches a lookup, so
 * `checkOutboundHost` judges it first.
 *
 * A caller, with its own allowance (`{}` in production; `{ loopback: true }` or
 * `{ privateNetworks: true }` behind its own development flag):
 *
 *   await resolveOutbound(url.hostname, allow);      // when the URL is given: refuse it early, saying why
 *   checkOutboundHost(url.hostname, allow);          // before each connection
 *   https.request(url, { lookup: outboundLookup(allow), agent: false }, …);
 *   // or undici: new Agent({ connect: { lookup: outboundLookup(allow) } })
 *
 * A refusal is an OutboundAddressError (`verdict` names the range; `describeVerdict` words it).
 */

/** What a caller lets through besides the public internet. Each caller has its own flag. */
export interface OutboundAllowance {
  /** Loopback (127.0.0.0/8, ::1): tests that serve on this machine. */
  readonly loopback?: boolean | undefined;
  /**
   * Loopback and the private networks (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7), for
   * development. Never link-local (the cloud metadata address is there), never the rest.
   */
  readonly privateNetworks?: boolean | undefined;
}

/** Which allowance, if any, may open a range. */
export type RangeReach = 'loopback' | 'private' | 'never';

export interface SpecialRange {
  /** The range as the registry writes it: `10.0.0.0/8`, `fc00::/7`. */
  readonly cidr: string;
  /** Its name in the registry: `Private-Use`, `Loopback Address`, … */
  readonly name: string;
  readonly reach: RangeReach;
}

/** Why an address is not the public internet: the range it is in, and the IPv4 address it carries, if judged by that. */
export interface AddressVerdict {
  /** The address as judged, normalised (`127.0.0.1`, `::1`). */
  readonly address: string;
  /** The special range, or undefined for a public address. */
  readonly range: SpecialRange | undefined;
  /** For an IPv6 address judged by the IPv4 address it embeds: that address. */
  readonly embedded?: string | undefined;
}

export class OutboundAddressError extends Error {
  readonly code = 'OUTBOUND_ADDRESS_REFUSED';
  constructor(readonly host: string, readonly verdict: AddressVerdict) {
    super(`${host} is not a public internet address: ${describeVerdict(verdict)}`);
    this.name = 'OutboundAddressError';
  }
}

/** `127.0.0.1 is in 127.0.0.0/8 (Loopback)`, `::7f00:1 carries 127.0.0.1, in 127.0.0.0/8 (Loopback)`. */
export function describeVerdict(verdict: AddressVerdict): string {
  if (!verdict.range) return `${verdict.address} is public`;
  const where = `${verdict.range.cidr} (${verdict.range.name})`;
  return verdict.embedded === undefined ? `${verdict.address} is in ${where}` : `${verdict.address} carries ${verdict.embedded}, in ${where}`;
}

// ---------------------------------------------------------------------------------------------
// Ranges. Most specific first: the first range that holds an address names it.

interface Range extends SpecialRange {
  readonly bytes: Uint8Array;
  readonly bits: number;
}

const V4: readonly (readonly [string, string, RangeReach])[] = [
  ['0.0.0.0/8', '"This network"', 'never'],
  ['10.0.0.0/8', 'Private-Use', 'private'],
  ['100.64.0.0/10', 'Shared Address Space (carrier-grade NAT)', 'private'],
  ['127.0.0.0/8', 'Loopback', 'loopback'],
  ['169.254.169.254/32', 'Link Local: the cloud instance metadata service', 'never'],
  ['169.254.0.0/16', 'Link Local', 'never'],
  ['172.16.0.0/12', 'Private-Use', 'private'],
  ['192.0.0.0/29', 'IPv4 Service Continuity Prefix (DS-Lite)', 'never'],
  ['192.0.0.0/24', 'IETF Protocol Assignments', 'never'],
  ['192.0.2.0/24', 'Documentation (TEST-NET-1)', 'never'],
  ['192.31.196.0/24', 'AS112-v4', 'never'],
  ['192.52.193.0/24', 'AMT', 'never'],
  ['192.88.99.0/24', 'Deprecated (6to4 Relay Anycast)', 'never'],
  ['192.168.0.0/16', 'Private-Use', 'private'],
  ['192.175.48.0/24', 'Direct Delegation AS112 Service', 'never'],
  ['198.18.0.0/15', 'Benchmarking', 'never'],
  ['198.51.100.0/24', 'Documentation (TEST-NET-2)', 'never'],
  ['203.0.113.0/24', 'Documentation (TEST-NET-3)', 'never'],
  ['224.0.0.0/4', 'Multicast', 'never'],
  ['255.255.255.255/32', 'Limited Broadcast', 'never'],
  ['240.0.0.0/4', 'Reserved', 'never'],
];

const V6: readonly (readonly [string, string, RangeReach])[] = [
  ['::/128', 'Unspecified Address', 'never'],
  ['::1/128', 'Loopback Address', 'loopback'],
  // Deprecated by RFC 4291 and routed nowhere; some stacks still reach the IPv4 address it carries.
  ['::/96', 'IPv4-Compatible IPv6 Address (deprecated)', 'never'],
  ['64:ff9b:1::/48', 'IPv4-IPv6 Translation, local use', 'never'],
  ['100::/64', 'Discard-Only Address Block', 'never'],
  ['100:0:0:1::/64', 'Dummy IPv6 Prefix', 'never'],
  ['2001::/32', 'TEREDO', 'never'],
  ['2001:2::/48', 'Benchmarking', 'never'],
  ['2001:3::/32', 'AMT', 'never'],
  ['2001:4:112::/48', 'AS112-v6', 'never'],
  ['2001:10::/28', 'Deprecated (previously ORCHID)', 'never'],
  ['2001:20::/28', 'ORCHIDv2', 'never'],
  ['2001:30::/28', 'Drone Remote ID Protocol Entity Tags (DETs) Prefix', 'never'],
  ['2001::/23', 'IETF Protocol Assignments', 'never'],
  ['2001:db8::/32', 'Documentation', 'never'],
  ['2620:4f:8000::/48', 'Direct Delegation AS112 Service', 'never'],
  ['3fff::/20', 'Documentation', 'never'],
  ['5f00::/16', 'Segment Routing (SRv6) SIDs', 'never'],
  ['fc00::/7', 'Unique-Local', 'private'],
  ['fe80::/10', 'Link-Local Unicast', 'never'],
  ['fec0::/10', 'Site-Local (deprecated)', 'never'],
  ['ff00::/8', 'Multicast', 'never'],
];

/** Global unicast: IPv6 outside it is reserved by the IETF or not unicast at all. */
const V6_GLOBAL_UNICAST = range('2000::/3', 'Global Unicast', 'never');
const V6_OUTSIDE_GLOBAL_UNICAST: SpecialRange = { cidr: '::/0', name: 'Reserved by the IETF: outside global unicast 2000::/3', reach: 'never' };

/**
 * IPv6 ranges whose addresses carry an IPv4 address, and where in the 16 bytes it is. A mapped
 * address is a socket's way to write the IPv4 address itself, so an allowance for that address
 * holds for it too; the others go through a translator or relay, so an internal address they
 * carry is refused whatever the caller allows.
 */
const V6_EMBEDDING: readonly { readonly range: Range; readonly at: number; readonly direct: boolean }[] = [
  { range: range('::ffff:0:0/96', 'IPv4-mapped Address', 'never'), at: 12, direct: true },
  { range: range('64:ff9b::/96', 'IPv4-IPv6 Translation', 'never'), at: 12, direct: false },
  { range: range('2002::/16', '6to4', 'never'), at: 2, direct: false },
];

const V4_RANGES = V4.map(([cidr, name, reach]) => range(cidr, name, reach));
const V6_RANGES = V6.map(([cidr, name, reach]) => range(cidr, name, reach));

function range(cidr: string, name: string, reach: RangeReach): Range {
  const [net, bits] = cidr.split('/') as [string, string];
  const bytes = isIPv6(net) ? ipv6Bytes(net) : ipv4Bytes(net);
  if (!bytes) throw new Error(`bad range ${cidr}`);
  return { cidr, name, reach, bytes, bits: Number(bits) };
}

function contains(r: Range, bytes: Uint8Array): boolean {
  if (r.bytes.length !== bytes.length) return false;
  let left = r.bits;
  for (let i = 0; left > 0; i++, left -= 8) {
    const mask = left >= 8 ? 0xff : (0xff << (8 - left)) & 0xff;
    if ((r.bytes[i]! & mask) !== (bytes[i]! & mask)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Parsing.

/**
 * An IPv4 address in any spelling the WHATWG URL parser and inet_aton accept: one to four parts,
 * each decimal, octal (leading 0) or hexadecimal (0x), the last filling the remaining bytes
 * (`2130706433`, `0177.0.0.1`, `0x7f.1`, `127.1`), with one trailing dot allowed.
 */
export function parseIPv4(text: string): Uint8Array | undefined {
  const parts = text.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length < 1 || parts.length > 4) return undefined;
  const numbers: number[] = [];
  for (const part of parts) {
    let n: number;
    if (/^0x[0-9a-f]*$/i.test(part)) n = part.length === 2 ? 0 : parseInt(part.slice(2), 16);
    else if (/^0[0-7]+$/.test(part)) n = parseInt(part.slice(1), 8);
    else if (/^(0|[1-9][0-9]*)$/.test(part)) n = Number(part);
    else return undefined;
    if (!Number.isSafeInteger(n)) return undefined;
    numbers.push(n);
  }
  const last = numbers.pop()!;
  if (numbers.some((n) => n > 255) || last >= 256 ** (4 - numbers.length)) return undefined;
  let value = last;
  numbers.forEach((n, i) => { value += n * 256 ** (3 - i); });
  return Uint8Array.of(Math.floor(value / 2 ** 24) % 256, Math.floor(value / 2 ** 16) % 256, Math.floor(value / 2 ** 8) % 256, value % 256);
}

function ipv4Bytes(text: string): Uint8Array | undefined {
  return isIP(text) === 4 ? Uint8Array.from(text.split('.').map(Number)) : undefined;
}

/** The 16 bytes of an IPv6 address (a zone, `%eth0`, is dropped). */
function ipv6Bytes(text: string): Uint8Array | undefined {
  const address = text.replace(/%.*$/, '');
  if (!isIPv6(address)) return undefined;
  let groups: string[];
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  let head = address;
  const extra: number[] = [];
  if (tail) {
    const v4 = ipv4Bytes(tail[1]!)!;
    extra.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
    head = address.slice(0, -tail[1]!.length);
    if (!head.endsWith('::')) head = head.slice(0, -1);
  }
  const want = 8 - extra.length;
  if (head.includes('::')) {
    const [left, right] = head.split('::') as [string, string];
    const l = left === '' ? [] : left.split(':');
    const r = right === '' ? [] : right.split(':');
    groups = [...l, ...Array<string>(want - l.length - r.length).fill('0'), ...r];
  } else {
    groups = head === '' ? [] : head.split(':');
  }
  const words = [...groups.map((g) => parseInt(g, 16)), ...extra];
  if (words.length !== 8) return undefined;
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => { bytes[2 * i] = w >> 8; bytes[2 * i + 1] = w & 0xff; });
  return bytes;
}

function v4Text(bytes: Uint8Array): string {
  return Array.from(bytes).join('.');
}

function v6Text(bytes: Uint8Array): string {
  const words = Array.from({ length: 8 }, (_, i) => (bytes[2 * i]! << 8) | bytes[2 * i + 1]!);
  // RFC 5952: the longest run of two or more zero groups becomes '::'.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (words[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen) { best = i; bestLen = j - i; }
    i = j;
  }
  const hex = words.map((w) => w.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/**
 * The address a URL's host (or any host text) denotes, normalised, or undefined for a name:
 * `[::1]` and `::1` give `::1`; `2130706433`, `0x7f.1` and `127.1` give `127.0.0.1`.
 */
export function hostAddress(host: string): string | undefined {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const v6 = ipv6Bytes(bare);
  if (v6) return v6Text(v6);
  const v4 = parseIPv4(bare);
  return v4 ? v4Text(v4) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Judging.

/** The special range an address (IPv4 or IPv6 text) is in, or none when it is public; throws on text that is no address. */
export function classifyAddress(address: string): AddressVerdict {
  const text = hostAddress(address);
  if (text === undefined) throw new TypeError(`not an IP address: ${address}`);
  if (isIP(text) === 4) return { address: text, range: V4_RANGES.find((r) => contains(r, ipv4Bytes(text)!)) };
  const bytes = ipv6Bytes(text)!;
  const own = V6_RANGES.find((r) => contains(r, bytes));
  if (own) return { address: text, range: own };
  for (const { range: r, at, direct } of V6_EMBEDDING) {
    if (!contains(r, bytes)) continue;
    const embedded = v4Text(bytes.subarray(at, at + 4));
    const inner = V4_RANGES.find((v4) => contains(v4, ipv4Bytes(embedded)!));
    return { address: text, embedded, range: inner && !direct ? { cidr: inner.cidr, name: inner.name, reach: 'never' } : inner };
  }
  if (!contains(V6_GLOBAL_UNICAST, bytes)) return { address: text, range: V6_OUTSIDE_GLOBAL_UNICAST };
  return { address: text, range: undefined };
}

/** Whether a verdict lets a connection through, given what the caller allows. */
export function allowed(verdict: AddressVerdict, allow: OutboundAllowance = {}): boolean {
  const reach = verdict.range?.reach;
  if (reach === undefined) return true;
  if (reach === 'loopback') return allow.loopback === true || allow.privateNetworks === true;
  if (reach === 'private') return allow.privateNetworks === true;
  return false;
}

/**
 * Throws OutboundAddressError when a URL's host is written as an address that is refused (a
 * connection to an address skips any lookup, so this is its only check). A name passes here and
 * is judged at connection time by `outboundLookup`.
 */
export function checkOutboundHost(host: string, allow: OutboundAllowance = {}): void {
  const address = hostAddress(host);
  if (address === undefined) return;
  const verdict = classifyAddress(address);
  if (!allowed(verdict, allow)) throw new OutboundAddressError(host, verdict);
}

export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}

/** Every address a name resolves to (dns.lookup with `all: true`); a test passes its own. */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => new Promise((resolve, reject) => {
  systemLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
});

/**
 * The addresses a host may be reached at: every one it resolves to must be allowed (a name with
 * one internal answer among public ones is refused). Rejects with OutboundAddressError, or with
 * the resolver's error (ENOTFOUND) for a name that does not resolve.
 */
export async function resolveOutbound(host: string, allow: OutboundAllowance = {}, resolver: Resolver = systemResolver): Promise<readonly ResolvedAddress[]> {
  checkOutboundHost(host, allow);
  const literal = hostAddress(host);
  if (literal !== undefined) return [{ address: literal, family: isIP(literal) }];
  const addresses = await resolver(host);
  if (addresses.length === 0) throw Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' });
  for (const a of addresses) {
    const verdict = classifyAddress(a.address);
    if (!allowed(verdict, allow)) throw new OutboundAddressError(host, verdict);
  }
  return addresses;
}

/**
 * A `lookup` for http.request, https.request, net.connect or undici's `connect` option: the
 * addresses it hands the socket are the addresses it checked, so a name that resolves to an
 * internal address at connection time is refused however it resolved before.
 */
export function outboundLookup(allow: OutboundAllowance = {}, resolver: Resolver = systemResolver): LookupFunction {
  return ((hostname: string, options: { all?: boolean } | number | undefined, callback: (...args: unknown[]) => void) => {
    const all = typeof options === 'object' && options !== null && options.all === true;
    resolveOutbound(hostname, allow, resolver).then(
      (addresses) => {
        if (all) callback(null, addresses.map((a) => ({ address: a.address, family: a.family })));
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: unknown) => callback(err),
    );
  }) as unknown as LookupFunction;
}
