import { describe, expect, it } from 'vitest';
import { MAX_LIST_LENGTH } from '../../src/filter/conditions.js';
import { compileConnectorPage, compileFilter } from '../../src/filter/index.js';
import { loadFixtureCatalog } from '../../fixtures/index.js';
import { growth, MAX_RATIO_FOR_4X, quadratic } from '../support/scaling.js';

/**
 * The record-filter and connector front end is linear in its body, construct by construct:
 * four times the conditions, list items, fields or relation paths may cost at most
 * MAX_RATIO_FOR_4X times the CPU (best of several rounds; see test/support/scaling.ts). The
 * condition cap is raised for the test (maxConditions), so that what is measured is the work per
 * condition and not the cap: a cap hides a quadratic step only until someone raises it.
 */

const catalog = loadFixtureCatalog('crm');
const SECRET = 'scaling-test-secret-0123456789abcdef';
const MANY = 5_000;
const options = { catalog, slug: 'account', orgId: 'org_scaling', maxConditions: 2 * MANY };

/** Runs a body and accepts its 400: a refused body's problems are work too. */
function run(build: () => unknown): void {
  try {
    build();
  } catch (e) {
    if (!(e instanceof Error) || e.name !== 'OqlError') throw e;
  }
}

const conditions = (n: number, condition: (i: number) => object) => Array.from({ length: n }, (_, i) => condition(i));

const BODIES: Record<string, { readonly small: number; readonly large: number; readonly make: (n: number) => unknown }> = {
  'conditions under AND': { small: MANY / 4, large: MANY, make: (n) => ({ query: { filters: { and: conditions(n, (i) => ({ field: 'name', operator: 'eq', value: `a${i}` })) } } }) },
  'conditions under OR': { small: MANY / 4, large: MANY, make: (n) => ({ query: { filters: { or: conditions(n, (i) => ({ field: 'annual_revenue', operator: 'gt', value: i })) } } }) },
  'nested groups of conditions': { small: MANY / 16, large: MANY / 4, make: (n) => ({ query: { filters: { or: conditions(n, (i) => ({ and: [{ field: 'city', operator: 'contains', value: `c${i}` }, { field: 'industry', operator: 'is_empty' }] })) } } }) },
  'relation paths': { small: MANY / 4, large: MANY, make: (n) => ({ query: { filters: { or: conditions(n, (i) => ({ field: 'owner.manager.name', operator: 'eq', value: `m${i}` })) } } }) },
  'unknown fields': { small: MANY / 4, large: MANY, make: (n) => ({ query: { filters: { and: conditions(n, (i) => ({ field: `nme${i % 7}`, operator: 'eq', value: 'x' })) } } }) },
  'unknown options': { small: MANY / 4, large: MANY, make: (n) => ({ query: { filters: { or: conditions(n, (i) => ({ field: 'industry', operator: 'eq', value: `zz${i}` })) } } }) },
  'in-list items': { small: MAX_LIST_LENGTH / 4, large: MAX_LIST_LENGTH, make: (n) => ({ query: { filters: { field: 'name', operator: 'in', value: Array.from({ length: n }, (_, i) => `n${i}`) } } }) },
  fields: { small: 125, large: 500, make: (n) => ({ query: { fields: Array.from({ length: n }, (_, i) => ['name', 'city', 'owner.name', 'owner.manager.email'][i % 4]) } }) },
};

describe('the filter front end grows linearly with its body', () => {
  for (const [name, { small, large, make }] of Object.entries(BODIES)) {
    it(`${name}: filter`, () => {
      const g = growth(make, (body) => run(() => compileFilter(body, options)), small, large, { below: MAX_RATIO_FOR_4X });
      expect(g.ratio, `${small} and ${large}: ${g.smallMs.toFixed(1)} ms and ${g.largeMs.toFixed(1)} ms`).toBeLessThan(MAX_RATIO_FOR_4X);
    });
  }

  it('conditions of a connector page', () => {
    const make = (n: number) => ({ query: { fields: ['name'], filter: { and: conditions(n, (i) => ({ field: 'name', operator: 'neq', value: `a${i}` })) } } });
    const connector = { ...options, tokenSecret: SECRET, now: Date.UTC(2030, 0, 1) };
    const g = growth(make, (body) => run(() => compileConnectorPage(body, connector)), MANY / 4, MANY, { below: MAX_RATIO_FOR_4X });
    expect(g.ratio, `${g.smallMs.toFixed(1)} ms and ${g.largeMs.toFixed(1)} ms`).toBeLessThan(MAX_RATIO_FOR_4X);
  });

  it('the bound fails for quadratic work (the control)', () => {
    expect(growth((n) => n, quadratic, 1500, 6000, { below: MAX_RATIO_FOR_4X }).ratio).toBeGreaterThan(MAX_RATIO_FOR_4X);
  });
});
