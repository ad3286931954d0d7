import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/service/config.js';
import { fastifyTrustProxy, parseTrustProxy } from '../../src/service/trust-proxy.js';

/** --trust-proxy / OQL_TRUST_PROXY: what is accepted, what is refused, and the address Fastify then reports. */

async function clientAddress(setting: string | undefined, remoteAddress: string, forwardedFor?: string): Promise<string> {
  const app = Fastify({ trustProxy: fastifyTrustProxy(parseTrustProxy(setting)) });
  app.get('/', async (request) => ({ ip: request.ip }));
  try {
    const res = await app.inject({ method: 'GET', url: '/', remoteAddress, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } });
    return (res.json() as { ip: string }).ip;
  } finally {
    await app.close();
  }
}

describe('--trust-proxy', () => {
  it('trusts no proxy by default: the socket address counts, whatever the header says', async () => {
    expect(parseTrustProxy(undefined)).toBe(false);
    expect(parseTrustProxy('')).toBe(false);
    expect(parseTrustProxy('0')).toBe(false);
    expect(resolveConfig({ env: {} }).trustProxy).toBe(false);
    expect(await clientAddress(undefined, '10.0.0.5', '203.0.113.9')).toBe('10.0.0.5');
  });

  it('takes a hop count: the client is the entry that many hops back', async () => {
    expect(parseTrustProxy('1')).toBe(1);
    expect(await clientAddress('1', '10.0.0.5', '198.51.100.1, 203.0.113.9')).toBe('203.0.113.9');
    expect(await clientAddress('2', '10.0.0.5', '198.51.100.1, 203.0.113.9')).toBe('198.51.100.1');
  });

  it('takes proxy addresses and ranges: a forwarded address counts only when a listed proxy sent it', async () => {
    expect(parseTrustProxy(' 10.0.0.0/8, 127.0.0.1,loopback ,fd00::/8')).toEqual(['10.0.0.0/8', '127.0.0.1', 'loopback', 'fd00::/8']);
    expect(await clientAddress('10.0.0.0/8', '10.1.2.3', '203.0.113.9')).toBe('203.0.113.9');
    expect(await clientAddress('10.0.0.0/8', '192.168.1.1', '203.0.113.9')).toBe('192.168.1.1');
    // A client behind the proxy cannot prepend an address of its choosing.
    expect(await clientAddress('10.0.0.0/8', '10.1.2.3', '1.2.3.4, 203.0.113.9')).toBe('203.0.113.9');
    expect(resolveConfig({ env: { OQL_TRUST_PROXY: '10.0.0.0/8' } }).trustProxy).toEqual(['10.0.0.0/8']);
    expect(resolveConfig({ trustProxy: 2, env: { OQL_TRUST_PROXY: '10.0.0.0/8' } }).trustProxy).toBe(2);
  });

  it('refuses to trust every hop, and names what it cannot read', () => {
    for (const bad of ['true', 'TRUE', '*', 'all', '10.0.0.0/8,true']) {
      expect(() => parseTrustProxy(bad)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('every hop') }));
    }
    for (const [bad, named] of [['10.0.0.0/33', '10.0.0.0/33'], ['proxy.example.com', 'proxy.example.com'], ['-1', '-1'], ['fd00::/129', 'fd00::/129'], ['1.2.3', '1.2.3']] as const) {
      expect(() => parseTrustProxy(bad)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining(named) }));
    }
    expect(() => parseTrustProxy('101')).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    expect(() => resolveConfig({ env: { OQL_TRUST_PROXY: 'true' } })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
  });
});
