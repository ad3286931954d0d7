import { beforeEach, describe, expect, it, vi } from 'vitest';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import { didYouMean } from '../../src/diagnostics/suggest.js';
import { compileConnectorPage, compileFilter } from '../../src/filter/index.js';
import { loadFixtureCatalog } from '../../fixtures/index.js';

/**
 * Did-you-mean hints are searched only for the problems a body reports (at most 100). Counted,
 * not timed: the real didYouMean runs behind a counter, so the count is the number of searches
 * the front end asked for, whatever the machine's load.
 */

vi.mock('../../src/diagnostics/suggest.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/diagnostics/suggest.js')>();
  return { ...real, didYouMean: vi.fn(real.didYouMean) };
});

const searches = vi.mocked(didYouMean);
const catalog = loadFixtureCatalog('crm');
const filterOptions = { catalog, slug: 'account', orgId: 'org_acme' };
const connectorOptions = { ...filterOptions, tokenSecret: 'hints-test-secret-0123456789abcdef', now: 0 };
const REPORTED = 100;

function problems(compile: () => unknown): readonly { meta_data: string | null; message: string }[] {
  try {
    compile();
  } catch (e) {
    expect(e).toBeInstanceOf(OqlError);
    return (e as OqlError).validationErrors!;
  }
  throw new Error('expected the body to be rejected');
}

function keys(n: number, make: (i: number) => string): Record<string, number> {
  const o: Record<string, number> = {};
  for (let i = 0; i < n; i++) o[make(i)] = i;
  return o;
}

beforeEach(() => {
  searches.mockClear();
});

describe('hints only for reported problems', () => {
  it('100,000 unknown query keys: 100 searches, one per reported key', () => {
    const list = problems(() => compileFilter({ query: keys(100_000, (i) => `sort${i}`) }, filterOptions));
    expect(list).toHaveLength(REPORTED);
    expect(searches).toHaveBeenCalledTimes(REPORTED);
    // The search ran for the reported keys, in order, with their hint in the message.
    expect(searches.mock.calls.map((c) => c[0])).toEqual(list.map((p) => p.meta_data!.slice('query.'.length)));
    expect(list[0]!.message).toContain("did you mean 'sort'?");
  });

  it('unknown condition keys, operators, options and fields: never more searches than reported problems', () => {
    const and = [
      { field: 'name', operator: 'eq', value: 'x', ...keys(5_000, (i) => `valeu${i}`) },
      ...Array.from({ length: 150 }, (_, i) => ({ field: 'name', operator: `eqq${i}`, value: 'x' })),
      { field: 'industry', operator: 'in', value: Array.from({ length: 1_000 }, (_, i) => `retial${i}`) },
    ];
    const list = problems(() => compileFilter({ query: { fields: Array.from({ length: 500 }, (_, i) => `nmae${i}`), filters: { and } } }, filterOptions));
    expect(list).toHaveLength(REPORTED);
    expect(searches.mock.calls.length).toBeLessThanOrEqual(REPORTED);
    expect(searches.mock.calls.length).toBeGreaterThan(0);
  });

  it('a connector body of unknown keys: 100 searches', () => {
    const list = problems(() => compileConnectorPage({ query: { fields: ['name'], ...keys(100_000, (i) => `filtr${i}`) } }, connectorOptions));
    expect(list).toHaveLength(REPORTED);
    expect(searches).toHaveBeenCalledTimes(REPORTED);
  });

  it('a body with few problems still gets every hint', () => {
    const list = problems(() => compileFilter({ query: { fields: ['nmae'], filters: { and: [{ field: 'name', operator: 'eqq', value: 'x' }, { field: 'industry', operator: 'eq', value: 'retial' }] }, sortt: [] } }, filterOptions));
    expect(list.map((p) => p.message.match(/did you mean '(\w+)'\?/)?.[1])).toEqual(['sort', 'name', 'eq', 'retail']);
    expect(searches).toHaveBeenCalledTimes(4);
  });
});
