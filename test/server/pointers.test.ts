import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, crmServiceOnPglite, expectEnvelope, KEYS, type CrmService } from './support.js';

/**
 * What a caller who took a wrong turn is told: the MCP endpoint's real URL from either host, and
 * the shape a record body should have had.
 */

let service: CrmService;
let mcpUrl: string;

beforeAll(async () => {
  service = await crmServiceOnPglite({ env: { OQL_WORKSPACES: 'acme=org_acme' } });
  const { server } = service.api;
  await server.mcpApp.listen({ port: 0, host: '127.0.0.1' });
  mcpUrl = `http://127.0.0.1:${(server.mcpApp.server.address() as AddressInfo).port}`;
}, 180_000);

afterAll(async () => {
  await service?.close();
});

describe('a request for MCP at the wrong place', () => {
  it('on the MCP host, a path that is not /<workspace>/mcp is told the endpoint, with this host\'s URL', async () => {
    for (const path of ['/mcp', '/', '/api/v1/reports/execute']) {
      const a = await call(mcpUrl, 'POST', path, { body: {} });
      expectEnvelope(a, 404, 'ROUTE_NOT_FOUND');
      expect(a.json.data.hint).toContain(`the MCP endpoint is ${mcpUrl}/<workspace>/mcp`);
      expect(a.json.data.hint).not.toContain('openapi');
    }
    // The hint's URL, filled in with a workspace that exists, is the endpoint (401: it wants a token).
    expect((await call(mcpUrl, 'POST', '/acme/mcp', { body: {} })).status).toBe(401);
  });

  it('on the main host, an MCP path is sent to the MCP host, with the workspace it named', async () => {
    const a = await call(service.api.url, 'POST', '/acme/mcp', { body: {} });
    expectEnvelope(a, 404, 'ROUTE_NOT_FOUND');
    expect(a.json.data.hint).toBe(`MCP is served by the MCP host: ${mcpUrl}/acme/mcp`);
    const bare = await call(service.api.url, 'POST', '/mcp', { body: {} });
    expect(bare.json.data.hint).toBe(`MCP is served by the MCP host: ${mcpUrl}/<workspace>/mcp`);
    // Anything else still points at the OpenAPI document, which is there.
    const other = await call(service.api.url, 'GET', '/api/v1/nothing', { key: KEYS.acmeAdmin });
    expect(other.json.data.hint).toBe(`see ${service.api.url}/openapi.json for the endpoints`);
    expect((await call(service.api.url, 'GET', '/openapi.json')).status).toBe(200);
  });
});

describe('a record body of the wrong shape', () => {
  it('bulk_upsert sent an array is told the object it takes', async () => {
    const a = await call(service.api.url, 'POST', '/api/v1/org/objects/lead/record/bulk_upsert', { key: KEYS.acmeAdmin, body: [{ name: 'x' }] });
    expectEnvelope(a, 400, 'VALIDATION_FAILED');
    expect(a.json.data.validation_errors).toEqual([expect.objectContaining({ message: 'body must be object, shaped as {"values": [{…}, …]}', error_code: 'TYPE_MISMATCH' })]);
    // The shape it names is accepted.
    const ok = await call(service.api.url, 'POST', '/api/v1/org/objects/lead/record/bulk_upsert', { key: KEYS.acmeAdmin, body: { values: [{ name: 'Shape Co' }] } });
    expect(ok.status, ok.text).toBe(200);
  });

  it('bulk_create sent an object, and upsert values that are not a list, are told theirs', async () => {
    const a = await call(service.api.url, 'POST', '/api/v1/org/objects/lead/record/bulk_create', { key: KEYS.acmeAdmin, body: { values: [] } });
    expect(a.json.data.validation_errors[0].message).toBe('body must be array, shaped as [{…}, …]');
    const b = await call(service.api.url, 'POST', '/api/v1/org/objects/lead/record/bulk_upsert', { key: KEYS.acmeAdmin, body: { values: { name: 'x' } } });
    expect(b.json.data.validation_errors[0].message).toBe('body.values must be array, shaped as [{…}, …]');
  });
});
