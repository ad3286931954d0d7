import { describe, expect, it } from 'vitest';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import { compileFilter } from '../../src/filter/index.js';
import { errorEnvelope } from '../../src/query/envelope.js';
import { loadFixtureCatalog } from '../../fixtures/index.js';

/** Bad filter bodies: one 400 with every problem, each at its JSON path; limits before any SQL. */

const catalog = loadFixtureCatalog('crm');
const base = { catalog, slug: 'account', orgId: 'org_acme' };

function failure(body: unknown, options: Partial<Parameters<typeof compileFilter>[1]> = {}): OqlError {
  try {
    compileFilter(body, { ...base, ...options });
  } catch (e) {
    expect(e).toBeInstanceOf(OqlError);
    return e as OqlError;
  }
  throw new Error('expected the body to be rejected');
}

const problems = (e: OqlError) => e.validationErrors!.map((v) => [v.meta_data, v.error_code]);

describe('filter body validation', () => {
  it('reports every problem at once, with the JSON path of each', () => {
    const e = failure({
      query: {
        fields: ['nmae', 7],
        filters: {
          and: [
            { field: 'name', operator: 'eq', value: 'x' },
            { field: 'industry', operator: 'eq', value: 'retial' },
            { or: [{ field: 'name', operator: 'gt', value: 'a' }, { field: 'annual_revenue', operator: 'eqq', value: 1 }, { field: 'created_at', operator: 'gte', value: 'yesterday' }] },
          ],
        },
        sort: [{ field: 'tags', direction: 'up' }],
        pagination: { page: 0, page_size: 5000 },
      },
    });
    expect(e.code).toBe('VALIDATION_FAILED');
    expect(e.status).toBe(400);
    expect(problems(e)).toEqual([
      ['query.fields[0]', 'UNKNOWN_FIELD'],
      ['query.fields[1]', 'INVALID_BODY'],
      ['query.filters.and[1].value', 'UNKNOWN_OPTION'],
      ['query.filters.and[2].or[0].operator', 'OPERATOR_NOT_APPLICABLE'],
      ['query.filters.and[2].or[1].operator', 'UNKNOWN_OPERATOR'],
      ['query.filters.and[2].or[2].value', 'INVALID_VALUE'],
      ['query.sort[0].direction', 'INVALID_VALUE'],
      ['query.sort[0].field', 'OPERATOR_NOT_APPLICABLE'],
      ['query.pagination.page', 'INVALID_VALUE'],
      ['query.pagination.page_size', 'LIMIT_EXCEEDED'],
    ]);
    const [fieldErr, , optionErr, opErr, unknownOp] = e.validationErrors!;
    expect(fieldErr!.message).toContain("did you mean 'name'?");
    expect(optionErr!.message).toContain("did you mean 'retail'?");
    expect(optionErr!.message).toContain('software, retail, finance, healthcare, manufacturing');
    expect(opErr!.message).toContain("'gt'");
    expect(opErr!.message).toContain("'name' (text)");
    expect(unknownOp!.message).toContain("did you mean 'eq'?");
    expect(e.validationErrors!.every((v) => v.object_slug === 'account' && v.record_index === null)).toBe(true);
    const env = errorEnvelope(e);
    expect(env.success).toBe(false);
    expect(env.data.status_code).toBe(400);
    expect(env.data.error_code).toBe('VALIDATION_FAILED');
    expect(env.data.validation_errors).toHaveLength(10);
  });

  it('names the maximum page size, which is configurable', () => {
    expect(failure({ query: { pagination: { page_size: 1001 } } }).validationErrors![0]!.message).toBe('page_size is at most 1000, not 1001');
    expect(failure({ query: { pagination: { page_size: 51 } } }, { maxPageSize: 50 }).validationErrors![0]!.message).toBe('page_size is at most 50, not 51');
    expect(() => compileFilter({ query: { pagination: { page_size: 1000 } } }, base)).not.toThrow();
  });

  it('rejects an unknown slug as compile does, and objects outside access', () => {
    const e = failure({ query: {} }, { slug: 'acount' });
    expect(e.code).toBe('INVALID_SLUG');
    expect(errorEnvelope(e).data.message).toBe('Invalid slug');
    expect(failure({ query: {} }, { access: ['contact'] }).code).toBe('INVALID_SLUG');
    const denied = failure({ query: { fields: ['owner.name'] } }, { access: ['account'] });
    expect(denied.validationErrors![0]!.message).toContain("object 'user', which you may not read");
  });

  it('rejects reversed ranges, empty groups, wrong shapes and values no field can hold', () => {
    const e = failure({
      query: {
        filters: {
          and: [
            { field: 'annual_revenue', operator: 'between', value: [10, 1] },
            { or: [] },
            { field: 'name', operator: 'eq', value: 'a\u0000b' },
            { field: 'name', operator: 'in', value: 'x' },
            { field: 'created_at', operator: 'eq', value: '2024-02-30' },
            'text',
            { field: 'name' },
            { field: 'name', operator: 'eq', value: 1, opertor: 'x' },
          ],
        },
      },
    });
    expect(problems(e)).toEqual([
      ['query.filters.and[0].value', 'INVALID_RANGE'],
      ['query.filters.and[1].or', 'INVALID_BODY'],
      ['query.filters.and[2].value', 'INVALID_VALUE'],
      ['query.filters.and[3].value', 'INVALID_VALUE'],
      ['query.filters.and[4].value', 'INVALID_VALUE'],
      ['query.filters.and[5]', 'INVALID_BODY'],
      ['query.filters.and[6].operator', 'INVALID_BODY'],
      ['query.filters.and[7].opertor', 'INVALID_BODY'],
      ['query.filters.and[7].value', 'INVALID_VALUE'],
    ]);
    expect(failure({ query: { filters: { and: [] } } }).validationErrors![0]!.message).toContain('and is empty');
    expect(failure('nope').validationErrors![0]!.message).toContain('the body must be an object');
    expect(failure({ query: [] }).validationErrors![0]!.meta_data).toBe('query');
  });

  it('caps nesting depth and condition count before any SQL, without deep recursion', () => {
    let deep: Record<string, unknown> = { field: 'name', operator: 'eq', value: 'x' };
    for (let i = 0; i < 100_000; i++) deep = { and: [deep] };
    const e = failure({ query: { filters: deep } });
    expect(e.validationErrors![0]!.error_code).toBe('LIMIT_EXCEEDED');
    expect(e.validationErrors![0]!.message).toBe('conditions are nested deeper than 10 levels');
    let five: Record<string, unknown> = { field: 'name', operator: 'eq', value: 'x' };
    for (let i = 0; i < 5; i++) five = { and: [five] };
    expect(() => compileFilter({ query: { filters: five } }, base)).not.toThrow();
    expect(failure({ query: { filters: five } }, { maxDepth: 4 }).validationErrors![0]!.error_code).toBe('LIMIT_EXCEEDED');
    const wide = { and: Array.from({ length: 1_000_000 }, () => ({ field: 'name', operator: 'eq', value: 'x' })) };
    const w = failure({ query: { filters: wide } });
    expect(w.validationErrors![0]!.message).toBe('the filter has more than 200 conditions');
    expect(w.validationErrors!.length).toBe(1);
    const fifty = { and: Array.from({ length: 50 }, (_, i) => ({ field: 'name', operator: 'neq', value: `x${i}` })) };
    expect(() => compileFilter({ query: { filters: fifty } }, base)).not.toThrow();
    expect(failure({ query: { filters: { and: [{ field: 'name', operator: 'in', value: Array(1001).fill('a') }] } } }).validationErrors![0]!.error_code).toBe('LIMIT_EXCEEDED');
  });
});

describe('compiled filter SQL', () => {
  it('puts every value in a bind parameter and the tenant first', () => {
    const { sql, params } = compileFilter(
      { query: { fields: ['name'], filters: { and: [{ field: 'name', operator: 'contains', value: "O'Brien%_\\" }, { field: '', operator: 'global_search', value: 'x' }] } } },
      base,
    );
    expect(params[0]).toBe('org_acme');
    expect(sql).not.toContain("O'Brien");
    expect(params).toContain("%O'Brien\\%\\_\\\\%");
    expect(sql).toMatch(/ORDER BY "t0"\."id" ASC LIMIT \$\d+::int8$/);
  });

  it('without fields returns every stored column, never the one-to-many relations', () => {
    const { columns } = compileFilter({ query: {} }, base);
    expect(columns.map((c) => c.key)).toEqual(['id', 'name', 'industry', 'annual_revenue', 'city', 'external_id', 'tags', 'owner', 'created_at', 'updated_at', 'created_by', 'updated_by']);
  });
});
