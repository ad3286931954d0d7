import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadFixtureCatalog } from '../../fixtures/index.js';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import { resolveConfig } from '../../src/service/config.js';
import { MemoryLeaseStore } from '../../src/service/shared-state/leases.js';
import { Policy, requestContext } from '../../src/service/policy.js';

/**
 * The embedded database's cool-down (src/service/policy.ts): after a statement of an organization
 * ran out its budget, its heavy requests are refused for a while, three times as long each time
 * it happens again soon, and never another organization's. The clock is vitest's; the expected
 * lengths are written out here, not read from the module.
 */

const BASE_MS = 10_000;
const catalog = loadFixtureCatalog('crm');
const policy = () => new Policy({ catalog, config: resolveConfig({ env: {} }), leases: new MemoryLeaseStore(), timeoutMs: 2_000, coolDownMs: BASE_MS });
const b = requestContext({ orgId: 'org_b', userId: 'u_b', role: 'admin' } as never);
const b2 = requestContext({ orgId: 'org_b', userId: 'u_b2', role: 'admin' } as never);
const a = requestContext({ orgId: 'org_a', userId: 'u_a', role: 'admin' } as never);

const runaway = () => Promise.reject(OqlError.plain('QUERY_TIMEOUT', 'the query timed out after 2 seconds'));
const fine = () => Promise.resolve('rows');

async function refusal(p: Policy, ctx: typeof b): Promise<OqlError | null> {
  return p.admit(ctx, 'heavy', fine).then(() => null, (e: OqlError) => e);
}

describe('the cool-down after a runaway statement (embedded database)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
  });
  afterEach(() => vi.useRealTimers());

  it('refuses the organization, every user of it, for 10 s with Retry-After, and never another organization', async () => {
    const p = policy();
    await expect(p.admit(b, 'heavy', runaway)).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
    for (const ctx of [b, b2]) {
      const e = await refusal(p, ctx);
      expect(e).toMatchObject({ code: 'TOO_MANY_REQUESTS', status: 429 });
      expect(e!.retryAfterSeconds).toBe(10);
    }
    await expect(p.admit(a, 'heavy', fine)).resolves.toBe('rows');
    // Light requests (records) are not what ran away: they go on.
    await expect(p.admit(b, 'light', fine)).resolves.toBe('rows');
    vi.setSystemTime(Date.now() + BASE_MS + 1);
    await expect(p.admit(b, 'heavy', fine)).resolves.toBe('rows');
  });

  it('lasts three times as long when it happens again soon, up to five minutes, and starts over after ten quiet minutes', async () => {
    const p = policy();
    const expected = [10, 30, 90, 270, 300, 300];
    for (const seconds of expected) {
      await expect(p.admit(b, 'heavy', runaway)).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
      expect((await refusal(p, b))!.retryAfterSeconds).toBe(seconds);
      vi.setSystemTime(Date.now() + seconds * 1000 + 1);
    }
    vi.setSystemTime(Date.now() + 10 * 60_000 + 1);
    await expect(p.admit(b, 'heavy', fine)).resolves.toBe('rows');
    await expect(p.admit(b, 'heavy', runaway)).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
    expect((await refusal(p, b))!.retryAfterSeconds).toBe(10);
  });

  it('checks a heavy request that waited its organization\'s turn again, so a batch of runaway queries runs one', async () => {
    const p = policy();
    let ran = 0;
    const slow = () => {
      ran++;
      return runaway();
    };
    // Two users of one organization, within their budgets, send four runaway queries at once.
    const results = await Promise.all([b, b, b2, b2].map((ctx) => p.admit(ctx, 'heavy', slow).then(() => 'ok', (e: OqlError) => e.code)));
    expect(ran).toBe(1);
    expect(results.sort()).toEqual(['QUERY_TIMEOUT', 'TOO_MANY_REQUESTS', 'TOO_MANY_REQUESTS', 'TOO_MANY_REQUESTS']);
  });
});
