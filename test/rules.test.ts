import { describe, expect, it } from 'vitest';
import { invalidSlug, isObjectSlug, isOrgId, isTenant, parseBearer, publicUrl, requireTenant } from '../src/rules.js';

/** One table per shared rule (src/rules.ts): the values each accepts and refuses, written out by hand. */

describe('the tenant the library runs for', () => {
  it.each([
    ['org_acme', true], ['a', true], ["o'brien; DROP", true], ['', false], ['org\u0000x', false], [42, false], [null, false], [undefined, false],
  ])('%j → %s', (value, ok) => {
    expect(isTenant(value)).toBe(ok);
    if (ok) expect(requireTenant(value)).toBe(value);
    else expect(() => requireTenant(value)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
  });
});

describe('an organization id the service stores', () => {
  it.each([
    ['org_acme', true], ['ORG.1-x_y', true], ['a'.repeat(128), true], ['a'.repeat(129), false], ['', false], ['org acme', false],
    ['org/acme', false], ['orgé', false], ['org\u0000', false], [7, false],
  ])('%j → %s', (value, ok) => expect(isOrgId(value)).toBe(ok));
});

describe('an object slug', () => {
  it.each([
    ['account', true], ['lead_source2', true], ['Account', false], ['2fa', false], ['_x', false], ['a-b', false], ['', false], ['a b', false],
  ])('%j → %s', (value, ok) => expect(isObjectSlug(value)).toBe(ok));

  it('names the likely object in the Invalid slug error', () => {
    const e = invalidSlug('acount', ['account', 'contact']);
    expect(e).toMatchObject({ code: 'INVALID_SLUG', message: "Invalid slug: there is no object 'acount'" });
    expect(e.hint).toContain('account');
    expect(invalidSlug(12, ['account']).hint).toBe('the objects are account');
  });
});

describe('a bearer token', () => {
  it.each([
    ['Bearer oql_abc-DEF_123', 'oql_abc-DEF_123'], ['bearer  tok==', 'tok=='], ['Bearer a.b~c+d/e', 'a.b~c+d/e'], ['Bearer tok \t', 'tok'],
    ['Basic abc', undefined], ['Bearer', undefined], ['Bearer a b', undefined], ['Bearer ab"c', undefined], ['Bearer ab=c', undefined],
    [undefined, undefined], [['Bearer x'], undefined],
  ])('%j → %j', (header, token) => expect(parseBearer(header)).toBe(token));
});

describe('a public URL', () => {
  it.each([
    ['https://mcp.example.com', 'https://mcp.example.com'], ['http://127.0.0.1:8080/', 'http://127.0.0.1:8080'], ['https://x.test/base//', 'https://x.test/base'],
  ])('%s → %s', (value, out) => expect(publicUrl('baseUrl', value)).toBe(out));

  it.each(['ftp://x.test', 'not a url', 'https://x.test/?a=1', 'https://x.test/#f', ''])('refuses %j', (value) => {
    expect(() => publicUrl('baseUrl', value)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
  });
});
