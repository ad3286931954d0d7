import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectEnvelope } from '../server/support.js';
import { KEYS, startChangesService, type ChangesHarness } from '../changes/support.js';

/**
 * Without the development flag a webhook goes only to https URLs on the public internet: every
 * class of internal address is refused when the endpoint is made or changed, whatever its
 * spelling, and a name that resolves to loopback at delivery time (a resolver the test controls,
 * so nothing leaves the machine) is refused on the address actually connected to.
 */

let h: ChangesHarness;
const resolved: string[] = [];

beforeAll(async () => {
  h = await startChangesService('pglite', {
    webhookRetryScale: 0.0001,
    webhookResolver: async (host) => {
      resolved.push(host);
      return host === 'hooks.example.test' ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '93.184.215.14', family: 4 }];
    },
  });
}, 120_000);

afterAll(async () => {
  await h?.close();
});

// Each an address class of the issue, written as a URL would carry it.
const REFUSED = [
  ['http scheme', 'http://hooks.example.com/x'],
  ['loopback', 'https://127.0.0.1/x'],
  ['loopback, decimal', 'https://2130706433/x'],
  ['loopback, octal', 'https://0177.0.0.1/x'],
  ['loopback, hex', 'https://0x7f.1/x'],
  ['loopback IPv6', 'https://[::1]/x'],
  ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/x'],
  ['IPv4-compatible loopback', 'https://[::7f00:1]/x'],
  ['6to4 of loopback', 'https://[2002:7f00:1::]/x'],
  ['private 10/8', 'https://10.1.2.3/x'],
  ['private 172.16/12', 'https://172.20.0.1/x'],
  ['private 192.168/16', 'https://192.168.1.1/x'],
  ['IPv4-mapped private', 'https://[::ffff:10.0.0.1]/x'],
  ['link-local, cloud metadata', 'https://169.254.169.254/latest/meta-data'],
  ['carrier-grade NAT', 'https://100.64.0.1/x'],
  ['unique-local IPv6', 'https://[fd00::1]/x'],
  ['link-local IPv6', 'https://[fe80::1]/x'],
  ['multicast', 'https://224.0.0.1/x'],
  ['unspecified', 'https://0.0.0.0/x'],
  ['unspecified IPv6', 'https://[::]/x'],
  ['localhost', 'https://localhost/x'],
  ['credentials in the URL', 'https://user:pass@hooks.example.com/x'],
  ['not a URL', 'hooks.example.com/x'],
] as const;

describe('webhook addresses without the development flag', () => {
  it.each(REFUSED)('refuses %s when an endpoint is made or changed', async (_what, url) => {
    const made = await h.call('POST', '/api/v1/webhooks', { key: KEYS.acmeAdmin, body: { url } });
    expectEnvelope(made, 400, 'INVALID_WEBHOOK_URL');
    expect(made.json.data.message).toContain('refused');
  });

  it('accepts a public https URL, and refuses to change it to an internal one', async () => {
    const made = await h.call('POST', '/api/v1/webhooks', { key: KEYS.acmeAdmin, body: { url: 'https://hooks.example.com/oql' } });
    expect(made.status, made.text).toBe(201);
    expectEnvelope(await h.call('PATCH', `/api/v1/webhooks/${made.json.data.id}`, { key: KEYS.acmeAdmin, body: { url: 'https://169.254.169.254/' } }), 400, 'INVALID_WEBHOOK_URL');
    expect((await h.call('DELETE', `/api/v1/webhooks/${made.json.data.id}`, { key: KEYS.acmeAdmin })).status).toBe(200);
  });

  it('refuses at delivery a name that resolves to loopback, and records why', async () => {
    const made = await h.call('POST', '/api/v1/webhooks', { key: KEYS.globexAdmin, body: { url: 'https://hooks.example.test/oql', objects: ['contact'] } });
    expect(made.status, made.text).toBe(201);
    await h.call('POST', '/api/v1/org/objects/contact/record/bulk_create', { key: KEYS.globexAdmin, body: [{ name: 'Rebound Globex' }] });
    let failed: any[] = [];
    for (let i = 0; i < 500 && failed.length === 0; i++) {
      failed = (await h.call('GET', `/api/v1/webhooks/${made.json.data.id}/deliveries?status=failed`, { key: KEYS.globexAdmin })).json.data.deliveries;
    }
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0]).toMatchObject({ http_status: null });
    expect(failed[0].error).toMatch(/^refused: 127\.0\.0\.1 is in 127\.0\.0\.0\/8/);
    expect(resolved).toContain('hooks.example.test');
    // The ping is refused the same way.
    const ping = await h.call('POST', `/api/v1/webhooks/${made.json.data.id}/test`, { key: KEYS.globexAdmin });
    expect(ping.json.data).toMatchObject({ success: false, http_status: null });
    expect(ping.json.data.error).toContain('127.0.0.1');
  });
});
