import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import { MAX_LIST_LENGTH, MAX_STRING_LENGTH, MAX_TEXT, MAX_VALUES } from '../../src/filter/conditions.js';
import { compileConnectorPage, compileFilter } from '../../src/filter/index.js';
import { show } from '../../src/filter/problems.js';
import { canonical, requestHash } from '../../src/filter/token.js';
import { loadFixtureCatalog, type FixtureName } from '../../fixtures/index.js';
import { configureFastCheck, runs } from '../props/harness.js';
import { OBJECTS } from './cases.js';

/**
 * Bodies built to take the process's stack or time (issue 26), and the caps that stop them:
 * each is a 400 with its JSON path, refused before the work that would have grown faster than
 * the body. No timings here (test/fuzz/bodies.test.ts measures them); these pin the answers.
 */

configureFastCheck('filter/limits');
const catalogs: Record<FixtureName, ReturnType<typeof loadFixtureCatalog>> = { crm: loadFixtureCatalog('crm'), helpdesk: loadFixtureCatalog('helpdesk') };
const catalog = catalogs.crm;
const SECRET = 'limits-test-secret-0123456789abcdef';
const filterOptions = { catalog, slug: 'account', orgId: 'org_acme' };
const connectorOptions = { ...filterOptions, tokenSecret: SECRET, now: Date.UTC(2030, 0, 1) };

function failure(compile: () => unknown): OqlError {
  try {
    compile();
  } catch (e) {
    if (!(e instanceof OqlError)) throw e;
    expect(e.status).toBe(400);
    return e;
  }
  throw new Error('expected the body to be rejected');
}

const entries = (e: OqlError) => e.validationErrors!.map((v) => [v.meta_data, v.error_code]);

function nested(levels: number, inner: unknown): unknown {
  let v = inner;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

/** The issue's number payload: a long run of digits that ends in a character that is not one. */
const digitsThenZ = `${'0'.repeat(9_972)}Z`;

describe("the issue's payloads", () => {
  it('a connector presence condition with a value nested 5,000 deep is a 400 at its path, not a stack overflow', () => {
    for (const levels of [5_000, 100_000]) {
      const body = { query: { fields: ['name'], filter: { and: [{ field: 'city', operator: 'exists', value: nested(levels, [1]) }] } } };
      const e = failure(() => compileConnectorPage(body, connectorOptions));
      expect(e.code).toBe('VALIDATION_FAILED');
      expect(entries(e)).toEqual([['query.filter.and[0].value', 'INVALID_VALUE']]);
      expect(e.validationErrors![0]!.message).toBe("'exists' takes no value, not an array; leave value out or send null");
      const f = failure(() => compileFilter({ query: { filters: { and: [{ field: 'city', operator: 'exists', value: nested(levels, [1]) }] } } }, filterOptions));
      expect(entries(f)).toEqual([['query.filters.and[0].value', 'INVALID_VALUE']]);
    }
  });

  it("a number value of 9,972 zeros and a 'Z' is an INVALID_VALUE with the value cut short in the message", () => {
    const e = failure(() => compileFilter({ query: { filters: { field: 'annual_revenue', operator: 'eq', value: digitsThenZ } } }, filterOptions));
    expect(entries(e)).toEqual([['query.filters.value', 'INVALID_VALUE']]);
    expect(e.validationErrors![0]!.message).toBe(`'annual_revenue' is a number: expects a finite number, not '${'0'.repeat(56)}...`);
  });

  it('an in-list of 1,000 such values stops at the characters of the whole body', () => {
    const list = Array.from({ length: 1_000 }, () => digitsThenZ);
    // Each value holds 9,973 characters: the ones that fit in MAX_TEXT are read (and are not
    // numbers), the next crosses it and ends the build.
    const fit = Math.floor(200_000 / 9_973);
    for (const [compile, path] of [
      [() => compileFilter({ query: { filters: { field: 'annual_revenue', operator: 'in', value: list } } }, filterOptions), 'query.filters.value'],
      [() => compileConnectorPage({ query: { fields: ['name'], filter: { and: [{ field: 'annual_revenue', operator: 'in', value: list }] } } }, connectorOptions), 'query.filter.and[0].value'],
    ] as const) {
      const e = failure(compile);
      expect(entries(e)).toEqual([
        ...Array.from({ length: fit }, (_, i) => [`${path}[${i}]`, 'INVALID_VALUE']),
        [`${path}[${fit}]`, 'LIMIT_EXCEEDED'],
      ]);
      expect(e.validationErrors![fit]!.message).toBe("the filter's string values hold more than 200000 characters in all");
    }
  });

  it('a query object of 100,000 unknown keys reports the first 100, typos with their hint', () => {
    const query: Record<string, unknown> = { filtres: {}, feilds: ['name'] };
    for (let i = 0; i < 100_000; i++) query[`key${i}`] = i;
    const e = failure(() => compileFilter({ query }, filterOptions));
    expect(e.validationErrors).toHaveLength(100);
    expect(entries(e).slice(0, 3)).toEqual([['query.filtres', 'INVALID_BODY'], ['query.feilds', 'INVALID_BODY'], ['query.key0', 'INVALID_BODY']]);
    expect(e.validationErrors![0]!.message).toBe("'filtres' is not a key of query (they are fields, filters, sort, pagination); did you mean 'filters'?");
    expect(e.validationErrors![1]!.message).toContain("did you mean 'fields'?");
    expect(e.validationErrors![99]!.meta_data).toBe('query.key97');
    const c = failure(() => compileConnectorPage({ query: { fields: ['name'], ...query } }, connectorOptions));
    expect(c.validationErrors).toHaveLength(100);
    expect(c.validationErrors![0]!.message).toBe("'filtres' is not a key of query (they are fields and filter); did you mean 'filter'?");
  });
});

describe('presence operators take no value', () => {
  const refused: unknown[] = ['', 'x', 0, 1, false, true, [], [null], {}, { a: 1 }];

  it('null or no value compiles to the same SQL; any other value is an INVALID_VALUE at its path, on every column of both fixtures', () => {
    let columns = 0;
    for (const fixture of ['crm', 'helpdesk'] as const) {
      const cat = catalogs[fixture];
      for (const slug of OBJECTS[fixture]) {
        for (const col of cat.objects.get(slug)!.columns.values()) {
          columns++;
          for (const operator of ['exists', 'not_exists', 'is_empty', 'not_empty']) {
            const options = { catalog: cat, slug, orgId: 'org_a' };
            const bare = compileFilter({ query: { fields: ['id'], filters: { and: [{ field: col.slug, operator }] } } }, options);
            expect(compileFilter({ query: { fields: ['id'], filters: { and: [{ field: col.slug, operator, value: null }] } } }, options)).toEqual(bare);
            for (const value of refused) {
              const e = failure(() => compileFilter({ query: { filters: { or: [{ field: col.slug, operator, value }] } } }, options));
              expect(entries(e)).toEqual([['query.filters.or[0].value', 'INVALID_VALUE']]);
              expect(e.validationErrors![0]!.message).toMatch(new RegExp(`^'${operator}' takes no value, not an? \\w+; leave value out or send null$`));
            }
          }
        }
      }
    }
    expect(columns).toBeGreaterThan(60);
  });

  it('in connector bodies too, where null is the value a client must send when it sends one', () => {
    const bare = compileConnectorPage({ query: { fields: ['name'], filter: { and: [{ field: 'contacts', operator: 'not_exists' }] } } }, connectorOptions);
    const withNull = compileConnectorPage({ query: { fields: ['name'], filter: { and: [{ field: 'contacts', operator: 'not_exists', value: null }] } } }, connectorOptions);
    expect(withNull.sql).toBe(bare.sql);
    expect(withNull.params).toEqual(bare.params);
    const e = failure(() => compileConnectorPage({ query: { fields: ['name'], filter: { and: [{ field: 'name', operator: 'eq', value: 'x' }, { field: 'contacts', operator: 'not_exists', value: '' }] } } }, connectorOptions));
    expect(entries(e)).toEqual([['query.filter.and[1].value', 'INVALID_VALUE']]);
  });
});

describe('caps of a whole body', () => {
  const list = (k: number, n = MAX_LIST_LENGTH) => Array.from({ length: n }, (_, i) => `v${k}_${i}`);

  it(`binds at most ${MAX_VALUES} values; the list that would cross it is refused at its path`, () => {
    expect(MAX_VALUES).toBe(5_000);
    const five = { and: [0, 1, 2, 3, 4].map((k) => ({ field: 'name', operator: 'in', value: list(k) })) };
    const ok = compileFilter({ query: { fields: ['id'], filters: five } }, filterOptions);
    // The tenant, 5,000 values and the page size.
    expect(ok.params).toHaveLength(5_002);
    const e = failure(() => compileFilter({ query: { filters: { and: [...five.and, { field: 'name', operator: 'eq', value: 'one more' }, { field: 'nmae', operator: 'eq', value: 'x' }] } } }, filterOptions));
    expect(entries(e)).toEqual([['query.filters.and[5].value', 'LIMIT_EXCEEDED']]);
    expect(e.validationErrors![0]!.message).toBe('the filter has more than 5000 values in all (each item of a list counts one)');
  });

  it(`holds at most ${MAX_TEXT} characters of string values; the value that would cross it is refused`, () => {
    expect(MAX_TEXT).toBe(20 * MAX_STRING_LENGTH);
    const long = (i: number) => ({ field: 'name', operator: 'contains', value: `${i}`.padEnd(MAX_STRING_LENGTH, 'x') });
    expect(() => compileFilter({ query: { filters: { or: Array.from({ length: 20 }, (_, i) => long(i)) } } }, filterOptions)).not.toThrow();
    const e = failure(() => compileFilter({ query: { filters: { or: [...Array.from({ length: 20 }, (_, i) => long(i)), { field: 'city', operator: 'eq', value: 'x' }] } } }, filterOptions));
    expect(entries(e)).toEqual([['query.filters.or[20].value', 'LIMIT_EXCEEDED']]);
  });

  it('a string over the length cap is refused as too long whatever the field reads it as', () => {
    const long = '1'.repeat(MAX_STRING_LENGTH + 1);
    for (const field of ['annual_revenue', 'created_at', 'name', 'industry', 'tags', 'owner']) {
      const e = failure(() => compileFilter({ query: { filters: { field, operator: 'in', value: ['1', long] } } }, filterOptions));
      expect(entries(e)).toContainEqual(['query.filters.value[1]', 'LIMIT_EXCEEDED']);
    }
  });

  it('maxDepth may be set up to 64: a body of that depth compiles, a deeper option is refused', () => {
    let body: unknown = { field: 'name', operator: 'eq', value: 'x' };
    for (let i = 0; i < 64; i++) body = { or: [body, { field: 'city', operator: 'eq', value: `c${i}` }] };
    expect(compileFilter({ query: { filters: body } }, { ...filterOptions, maxDepth: 64 }).sql).toContain('"city"');
    expect(failure(() => compileFilter({ query: { filters: body } }, { ...filterOptions, maxDepth: 63 })).validationErrors![0]!.error_code).toBe('LIMIT_EXCEEDED');
    const e = (() => {
      try {
        compileFilter({ query: {} }, { ...filterOptions, maxDepth: 65 });
      } catch (err) {
        return err as OqlError;
      }
      throw new Error('maxDepth 65 was accepted');
    })();
    expect(e).toBeInstanceOf(OqlError);
    expect(e.code).toBe('INVALID_OPTIONS');
    expect(e.message).toBe('maxDepth must be a whole number from 1 to 64, not 65');
  });
});

describe('renderings and hashes of any value, however deep', () => {
  /** What show() wrote before it was bounded: the oracle for the values it can still afford. */
  const oldShow = (v: unknown): string => {
    const s = typeof v === 'string' ? `'${v}'` : JSON.stringify(v) ?? String(v);
    return s.length > 60 ? `${s.slice(0, 57)}...` : s;
  };
  /** canonical() as it was, recursive: the oracle for values of ordinary depth. */
  const oldCanonical = (v: unknown): string => {
    if (Array.isArray(v)) return `[${v.map(oldCanonical).join(',')}]`;
    if (v !== null && typeof v === 'object') {
      return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${oldCanonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
    }
    return JSON.stringify(v) ?? 'null';
  };

  it('show() writes what JSON.stringify wrote, cut to 60 characters', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(show(v)).toBe(oldShow(v));
      }),
      { numRuns: runs(3_000, 100_000) },
    );
    for (const v of [undefined, NaN, -0, 'x'.repeat(59), 'x'.repeat(58), [undefined, () => 1], { a: undefined, b: 1 }, [1e21, -Infinity]]) expect(show(v)).toBe(oldShow(v));
  });

  it('show() of a value nested 100,000 deep, or of 100,000 keys, prints its first 60 characters', () => {
    expect(show(nested(100_000, 1))).toBe(`${'['.repeat(57)}...`);
    const wide: Record<string, number> = {};
    for (let i = 0; i < 100_000; i++) wide[`k${i}`] = i;
    expect(show(wide)).toBe(oldShow(wide));
    expect(show({ [`${'k'.repeat(100_000)}`]: 1 })).toBe(`{"${'k'.repeat(55)}...`);
  });

  it('canonical() writes what the recursive version wrote, and hashes a value nested 100,000 deep', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(canonical(v)).toBe(oldCanonical(v));
      }),
      { numRuns: runs(3_000, 100_000) },
    );
    const deep = nested(100_000, { b: 1, a: [2] });
    expect(canonical(deep)).toBe(`${'['.repeat(100_000)}{"a":[2],"b":1}${']'.repeat(100_000)}`);
    expect(requestHash('org', 'account', ['name'], { and: [deep] })).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
