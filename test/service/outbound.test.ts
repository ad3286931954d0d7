import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkOutboundHost, classifyAddress, hostAddress, OutboundAddressError, outboundLookup, resolveOutbound,
  type OutboundAllowance, type Resolver,
} from '../../src/service/outbound.js';

/**
 * The outbound address check against the IANA IPv4 and IPv6 Special-Purpose Address Registries
 * (https://www.iana.org/assignments/iana-ipv4-special-registry, iana-ipv6-special-registry),
 * written out here by hand from the registries, one address inside each range (and at its edges
 * where a neighbour is public), with the range that must be named. Nothing here leaves the machine:
 * names resolve through resolvers the tests define, and the only server listens on 127.0.0.1.
 */

type Reach = 'public' | 'loopback' | 'private' | 'never';

const IPV4: readonly (readonly [string, string | null, Reach])[] = [
  ['0.0.0.0', '0.0.0.0/8', 'never'],
  ['0.255.255.255', '0.0.0.0/8', 'never'],
  ['10.0.0.1', '10.0.0.0/8', 'private'],
  ['10.255.255.255', '10.0.0.0/8', 'private'],
  ['11.0.0.1', null, 'public'],
  ['100.63.255.255', null, 'public'],
  ['100.64.0.1', '100.64.0.0/10', 'private'],
  ['100.100.100.200', '100.64.0.0/10', 'private'],
  ['100.127.255.255', '100.64.0.0/10', 'private'],
  ['100.128.0.0', null, 'public'],
  ['127.0.0.1', '127.0.0.0/8', 'loopback'],
  ['127.255.255.254', '127.0.0.0/8', 'loopback'],
  ['169.254.169.254', '169.254.169.254/32', 'never'],
  ['169.254.0.1', '169.254.0.0/16', 'never'],
  ['172.15.255.255', null, 'public'],
  ['172.16.0.1', '172.16.0.0/12', 'private'],
  ['172.31.255.255', '172.16.0.0/12', 'private'],
  ['172.32.0.0', null, 'public'],
  ['192.0.0.1', '192.0.0.0/29', 'never'],
  ['192.0.0.8', '192.0.0.0/24', 'never'],
  ['192.0.0.9', '192.0.0.0/24', 'never'],
  ['192.0.0.170', '192.0.0.0/24', 'never'],
  ['192.0.2.1', '192.0.2.0/24', 'never'],
  ['192.31.196.1', '192.31.196.0/24', 'never'],
  ['192.52.193.1', '192.52.193.0/24', 'never'],
  ['192.88.99.1', '192.88.99.0/24', 'never'],
  ['192.167.255.255', null, 'public'],
  ['192.168.1.1', '192.168.0.0/16', 'private'],
  ['192.175.48.1', '192.175.48.0/24', 'never'],
  ['198.17.255.255', null, 'public'],
  ['198.18.0.1', '198.18.0.0/15', 'never'],
  ['198.19.255.255', '198.18.0.0/15', 'never'],
  ['198.20.0.0', null, 'public'],
  ['198.51.100.7', '198.51.100.0/24', 'never'],
  ['203.0.113.7', '203.0.113.0/24', 'never'],
  ['223.255.255.255', null, 'public'],
  ['224.0.0.1', '224.0.0.0/4', 'never'],
  ['239.255.255.250', '224.0.0.0/4', 'never'],
  ['240.0.0.1', '240.0.0.0/4', 'never'],
  ['255.255.255.254', '240.0.0.0/4', 'never'],
  ['255.255.255.255', '255.255.255.255/32', 'never'],
  ['8.8.8.8', null, 'public'],
  ['93.184.216.34', null, 'public'],
];

const IPV6: readonly (readonly [string, string | null, Reach])[] = [
  ['::', '::/128', 'never'],
  ['::1', '::1/128', 'loopback'],
  ['0:0:0:0:0:0:0:1', '::1/128', 'loopback'],
  // IPv4-compatible (deprecated): refused whatever it carries.
  ['::7f00:1', '::/96', 'never'],
  ['::127.0.0.1', '::/96', 'never'],
  ['::8.8.8.8', '::/96', 'never'],
  // IPv4-mapped: judged by the IPv4 address.
  ['::ffff:127.0.0.1', '127.0.0.0/8', 'loopback'],
  ['::ffff:7f00:1', '127.0.0.0/8', 'loopback'],
  ['::ffff:10.1.2.3', '10.0.0.0/8', 'private'],
  ['::ffff:169.254.169.254', '169.254.169.254/32', 'never'],
  ['::ffff:0.0.0.0', '0.0.0.0/8', 'never'],
  ['::ffff:8.8.8.8', null, 'public'],
  // NAT64, well-known prefix: judged by the IPv4 address, and an internal one is never allowed
  // (a translator would reach it, not this machine); local-use prefix: refused.
  ['64:ff9b::7f00:1', '127.0.0.0/8', 'never'],
  ['64:ff9b::a9fe:a9fe', '169.254.169.254/32', 'never'],
  ['64:ff9b::808:808', null, 'public'],
  ['64:ff9b:1::808:808', '64:ff9b:1::/48', 'never'],
  ['100::1', '100::/64', 'never'],
  ['100:0:0:1::1', '100:0:0:1::/64', 'never'],
  ['2001::1', '2001::/32', 'never'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::/32', 'never'],
  ['2001:1::1', '2001::/23', 'never'],
  ['2001:2::1', '2001:2::/48', 'never'],
  ['2001:3::1', '2001:3::/32', 'never'],
  ['2001:4:112::1', '2001:4:112::/48', 'never'],
  ['2001:10::1', '2001:10::/28', 'never'],
  ['2001:20::1', '2001:20::/28', 'never'],
  ['2001:30::1', '2001:30::/28', 'never'],
  ['2001:1ff::1', '2001::/23', 'never'],
  ['2001:200::1', null, 'public'],
  ['2001:db8::1', '2001:db8::/32', 'never'],
  ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', '2001:db8::/32', 'never'],
  // 6to4: judged by the IPv4 address in bits 16-47; an internal one is never allowed (a relay would reach it).
  ['2002:7f00:1::', '127.0.0.0/8', 'never'],
  ['2002:a00:1::1', '10.0.0.0/8', 'never'],
  ['2002:c0a8:101::', '192.168.0.0/16', 'never'],
  ['2002:808:808::1', null, 'public'],
  ['2620:4f:8000::1', '2620:4f:8000::/48', 'never'],
  ['3fff::1', '3fff::/20', 'never'],
  ['3fff:fff::1', '3fff::/20', 'never'],
  ['5f00::1', '5f00::/16', 'never'],
  ['fc00::1', 'fc00::/7', 'private'],
  ['fd00:ec2::254', 'fc00::/7', 'private'],
  ['fe80::1', 'fe80::/10', 'never'],
  ['fe80::1%eth0', 'fe80::/10', 'never'],
  ['febf::1', 'fe80::/10', 'never'],
  ['fec0::1', 'fec0::/10', 'never'],
  ['ff02::1', 'ff00::/8', 'never'],
  ['ff05::1:3', 'ff00::/8', 'never'],
  // Outside global unicast 2000::/3: reserved.
  ['4000::1', '::/0', 'never'],
  ['::2', '::/96', 'never'],
  ['1::1', '::/0', 'never'],
  ['2606:4700:4700::1111', null, 'public'],
  ['2a00:1450:4001:80b::200e', null, 'public'],
];

const ALLOWANCES: readonly (readonly [string, OutboundAllowance, readonly Reach[]])[] = [
  ['nothing allowed', {}, ['public']],
  ['loopback allowed', { loopback: true }, ['public', 'loopback']],
  ['private networks allowed', { privateNetworks: true }, ['public', 'loopback', 'private']],
];

describe('every special-purpose range of the registries', () => {
  it.each([...IPV4, ...IPV6])('%s is in %s (%s)', (address, cidr, reach) => {
    const verdict = classifyAddress(address);
    expect(verdict.range?.cidr ?? null).toBe(cidr);
    for (const [, allow, passes] of ALLOWANCES) {
      const literal = address.includes(':') ? `[${address.replace(/%.*/, '')}]` : address;
      const check = () => checkOutboundHost(literal, allow);
      if (passes.includes(reach)) expect(check).not.toThrow();
      else expect(check).toThrow(OutboundAddressError);
    }
  });

  it('says why an address is refused, naming the range and the IPv4 address it carries', () => {
    expect(() => checkOutboundHost('[::7f00:1]')).toThrow(/::7f00:1 is in ::\/96 \(IPv4-Compatible/);
    expect(() => checkOutboundHost('[2002:7f00:1::]')).toThrow(/2002:7f00:1:: carries 127\.0\.0\.1, in 127\.0\.0\.0\/8 \(Loopback\)/);
    expect(() => checkOutboundHost('169.254.169.254')).toThrow(/cloud instance metadata/);
  });
});

describe('host spellings', () => {
  it.each([
    ['2130706433', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['017700000001', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['127.0.1', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['0', '0.0.0.0'],
    ['0xa9.0xfe.0xa9.0xfe', '169.254.169.254'],
    ['2852039166', '169.254.169.254'],
    ['012.0.0.1', '10.0.0.1'],
    ['[::1]', '::1'],
    ['[::ffff:127.0.0.1]', '::ffff:7f00:1'],
    ['[0:0:0:0:0:ffff:7f00:1]', '::ffff:7f00:1'],
    ['[2002:7F00:0001::]', '2002:7f00:1::'],
  ])('%s is the address %s', (host, address) => {
    expect(hostAddress(host)).toBe(address);
  });

  it.each(['example.com', 'localhost', '127.0.0.1.example.com', '0x7g.1', '256.0.0.1', '1.2.3.4.5', '08.0.0.1', '1..2', '4294967296', ''])(
    '%j is no address (a name, judged once resolved)', (host) => expect(hostAddress(host)).toBeUndefined(),
  );

  it.each([
    'http://2130706433/', 'http://0177.0.0.1/', 'http://0x7f.1/', 'http://127.1/', 'http://[::7f00:1]/', 'http://[2002:7f00:1::]/',
    'http://[::ffff:127.0.0.1]/', 'http://[::ffff:a9fe:a9fe]/', 'http://0xa9fea9fe/', 'https://[fd00::1]:8443/x',
  ])('%s: its host, as the URL parser leaves it, is refused', (text) => {
    expect(() => checkOutboundHost(new URL(text).hostname)).toThrow(OutboundAddressError);
  });
});

describe('at connection time, after DNS', () => {
  let server: Server;
  let port: number;
  let hits = 0;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      hits++;
      res.end('reached');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.close();
    await once(server, 'close');
  });

  /** A resolver that answers from a table and counts its questions. */
  function resolverOf(answers: (name: string, asked: number) => readonly string[]): Resolver & { asked: number } {
    const resolver = Object.assign(async (name: string) => {
      resolver.asked++;
      return answers(name, resolver.asked).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    }, { asked: 0 });
    return resolver;
  }

  function get(host: string, lookup: ReturnType<typeof outboundLookup>): Promise<{ body?: string; error?: Error }> {
    return new Promise((done) => {
      const req = request({ host, port, path: '/', lookup, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => { body += c; });
        res.on('end', () => done({ body }));
      });
      req.on('error', (error) => done({ error }));
      req.end();
    });
  }

  it('refuses a name that answers a public address when checked and 127.0.0.1 when connected to (DNS rebinding)', async () => {
    const rebinding = resolverOf((_name, asked) => (asked === 1 ? ['93.184.216.34'] : ['127.0.0.1']));
    // The check when the URL is given (a webhook's creation) passes ...
    await expect(resolveOutbound('receiver.example', {}, rebinding)).resolves.toEqual([{ address: '93.184.216.34', family: 4 }]);
    // ... and the connection, resolved again, is refused before a byte is sent.
    const before = hits;
    const got = await get('receiver.example', outboundLookup({}, rebinding));
    expect(got.error).toBeInstanceOf(OutboundAddressError);
    expect(got.error?.message).toMatch(/receiver\.example is not a public internet address: 127\.0\.0\.1 is in 127\.0\.0\.0\/8/);
    expect(rebinding.asked).toBe(2);
    expect(hits).toBe(before);
  });

  it('connects to the address it checked when the caller allows it', async () => {
    const local = resolverOf(() => ['127.0.0.1']);
    const got = await get('receiver.example', outboundLookup({ loopback: true }, local));
    expect(got.body).toBe('reached');
  });

  it('refuses a name with one internal answer among public ones', async () => {
    const mixed = resolverOf(() => ['93.184.216.34', '::ffff:10.0.0.5']);
    await expect(resolveOutbound('receiver.example', {}, mixed)).rejects.toThrow(/carries 10\.0\.0\.5, in 10\.0\.0\.0\/8/);
    await expect(resolveOutbound('receiver.example', { privateNetworks: true }, mixed)).resolves.toHaveLength(2);
  });

  it('refuses a numeric host a request gives without a URL, which the system resolver would read as 127.0.0.1', async () => {
    const never = resolverOf(() => ['93.184.216.34']);
    const got = await get('2130706433', outboundLookup({}, never));
    expect(got.error).toBeInstanceOf(OutboundAddressError);
    expect(never.asked).toBe(0);
  });

  it('passes on the error of a name that does not resolve', async () => {
    const nothing = resolverOf(() => []);
    const got = await get('nowhere.example', outboundLookup({}, nothing));
    expect((got.error as NodeJS.ErrnoException | undefined)?.code).toBe('ENOTFOUND');
  });
});
