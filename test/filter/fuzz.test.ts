import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import { compileConnectorPage, compileFilter } from '../../src/filter/index.js';
import { filterRecords } from '../../src/query/filter.js';
import { checkSqlStructure, loadSqlParser } from '../fuzz/sql-structure.js';
import { PROPERTY_TIMEOUT, configureFastCheck, runs } from '../props/harness.js';
import { filterHarness } from './harness.js';

/**
 * Hostile filter and connector bodies. Random and mutated JSON (wrong types, huge arrays, deep
 * nesting, unicode, prototype keys) gives either SQL that passes the structural rules of
 * test/fuzz/sql-structure.ts or an OqlError with status 400, never another error. Every
 * injection payload of test/security/payloads in every string position of a body is rejected
 * or yields exactly the SQL of a harmless value in the same position (so it changed nothing
 * of the statement's shape), with the payload only ever in a bind parameter.
 */

configureFastCheck('filter/fuzz');
const { env, state } = filterHarness();
const catalog = env.crm.catalog;
const SECRET = 'fuzz-test-secret-0123456789abcdef';
const filterOptions = { catalog, slug: 'account', orgId: 'org_acme' };
const connectorOptions = { ...filterOptions, tokenSecret: SECRET, now: Date.UTC(2030, 0, 1) };

function payloads(): string[] {
  const dir = new URL('../security/payloads/', import.meta.url);
  const seen = new Set<string>();
  for (const f of readdirSync(fileURLToPath(dir)).filter((x) => x.endsWith('.txt'))) {
    for (const raw of readFileSync(new URL(f, dir), 'utf8').split('\n')) {
      const line = raw.replace(/\r$/, '');
      if (line.trim() !== '' && !/^# /.test(line)) seen.add(line);
    }
  }
  return [...seen];
}

beforeAll(async () => {
  await loadSqlParser();
});
afterAll(() => undefined);

type Outcome = { sql: string; params: unknown[] } | { error: OqlError };

function attempt(fn: () => { sql: string; params: unknown[] }): Outcome {
  try {
    return fn();
  } catch (e) {
    if (!(e instanceof OqlError)) throw new Error(`not an OqlError: ${(e as Error)?.stack ?? String(e)}`);
    if (e.status !== 400) throw new Error(`status ${e.status} (${e.code}): ${e.message}`);
    return { error: e };
  }
}

function structureOk(o: Outcome): void {
  if ('error' in o) return;
  // global_search also reads the mapping's search column, a physical column of every table
  // that the structure check (which knows the catalog's columns) does not list.
  const search = catalog.mapping.searchColumn;
  const problems = checkSqlStructure(o.sql, o.params, catalog).problems.filter((p) => !(search && new RegExp(`^column ${search} is not a column of \\w+$`).test(p)));
  expect(problems).toEqual([]);
}

/** String positions of a filter body; `§` is replaced by the payload. */
const FILTER_POSITIONS: Record<string, (p: string) => unknown> = {
  'fields[i]': (p) => ({ query: { fields: ['name', p] } }),
  'condition field': (p) => ({ query: { filters: { and: [{ field: p, operator: 'eq', value: 'x' }] } } }),
  'condition dot path': (p) => ({ query: { filters: { and: [{ field: `owner.${p}`, operator: 'eq', value: 'x' }] } } }),
  operator: (p) => ({ query: { filters: { and: [{ field: 'name', operator: p, value: 'x' }] } } }),
  'text value (eq)': (p) => ({ query: { filters: { and: [{ field: 'name', operator: 'eq', value: p }] } } }),
  'text value (like)': (p) => ({ query: { filters: { and: [{ field: 'name', operator: 'like', value: p }] } } }),
  'text value (contains, nested or)': (p) => ({ query: { filters: { or: [{ field: 'city', operator: 'contains', value: p }, { field: 'name', operator: 'not_contains', value: p }] } } }),
  'in list item': (p) => ({ query: { filters: { and: [{ field: 'external_id', operator: 'in', value: ['a', p] }] } } }),
  'enum value': (p) => ({ query: { filters: { and: [{ field: 'industry', operator: 'eq', value: p }] } } }),
  'multiselect value': (p) => ({ query: { filters: { and: [{ field: 'tags', operator: 'nin', value: [p] }] } } }),
  'datetime value': (p) => ({ query: { filters: { and: [{ field: 'created_at', operator: 'gte', value: p }] } } }),
  'number value': (p) => ({ query: { filters: { and: [{ field: 'annual_revenue', operator: 'gt', value: p }] } } }),
  'child field value': (p) => ({ query: { filters: { and: [{ field: 'contacts.name', operator: 'starts_with', value: p }] } } }),
  'global_search value': (p) => ({ query: { filters: { and: [{ field: '', operator: 'global_search', value: p }] } } }),
  'sort field': (p) => ({ query: { sort: [{ field: p, direction: 'asc' }] } }),
  'sort direction': (p) => ({ query: { sort: [{ field: 'name', direction: p }] } }),
  'condition key': (p) => ({ query: { filters: { and: [{ field: 'name', operator: 'eq', value: 'x', [p]: 1 }] } } }),
  'query key': (p) => ({ query: { [p]: [] } }),
  'page size': (p) => ({ query: { pagination: { page: 1, page_size: p } } }),
};

const CONNECTOR_POSITIONS: Record<string, (p: string) => unknown> = {
  'connector field': (p) => ({ query: { fields: ['name', p] } }),
  'connector value': (p) => ({ query: { fields: ['name'], filter: { and: [{ field: 'name', operator: 'eq', value: p }] } } }),
  'connector sync value': (p) => ({ query: { fields: ['name'], filter: { and: [{ field: 'updated_at', operator: 'gte', value: p }] } } }),
  next_token: (p) => ({ query: { fields: ['name'] }, next_token: p }),
};

/** A value each position accepts, where 'x' is not one. */
const HARMLESS: Record<string, string> = {
  'fields[i]': 'city',
  'condition field': 'city',
  'condition dot path': 'email',
  operator: 'neq',
  'enum value': 'retail',
  'multiselect value': 'key',
  'datetime value': '2024-01-01',
  'number value': '1',
  'sort field': 'city',
  'sort direction': 'desc',
  'connector field': 'city',
  'connector sync value': '2024-01-01T00:00:00Z',
};

describe('injection payloads in every string position of a body', () => {
  const list = payloads();
  it('are rejected, or give the SQL of a harmless value with the payload only in a parameter', async () => {
    expect(list.length).toBeGreaterThan(100);
    const run = (positions: Record<string, (p: string) => unknown>, compile: (b: unknown) => { sql: string; params: unknown[] }) => {
      let compiled = 0;
      for (const [name, build] of Object.entries(positions)) {
        const harmless = attempt(() => compile(build(HARMLESS[name] ?? 'x')));
        for (const p of list) {
          const o = attempt(() => compile(build(p)));
          if ('error' in o) continue;
          compiled++;
          structureOk(o);
          expect('sql' in harmless, `${name}: a harmless value is rejected where ${JSON.stringify(p)} is not`).toBe(true);
          if ('sql' in harmless) expect(o.sql, `${name}: ${JSON.stringify(p)}`).toBe(harmless.sql);
          if (p.length > 3) expect(o.sql.includes(p), `${name}: ${JSON.stringify(p)} is in the SQL`).toBe(false);
        }
      }
      return compiled;
    };
    expect(run(FILTER_POSITIONS, (b) => compileFilter(b, filterOptions))).toBeGreaterThan(list.length * 5);
    expect(run(CONNECTOR_POSITIONS, (b) => compileConnectorPage(b, connectorOptions))).toBeGreaterThanOrEqual(list.length);
    for (const p of list) expect(attempt(() => compileFilter({ query: {} }, { ...filterOptions, slug: p })).hasOwnProperty('error')).toBe(true);
  });

  it('run on PGlite, return only the caller\'s records and write nothing', async () => {
    const before = await state.db.query<{ n: number }>('SELECT count(*)::int AS n FROM "public"."account"');
    for (const p of payloads()) {
      const { records } = await filterRecords(state.db, { query: { fields: ['id'], filters: { or: [{ field: '', operator: 'global_search', value: p }, { field: 'name', operator: 'neq', value: p }] } } }, { ...filterOptions, maxPageSize: 1000 });
      expect(records.filter((r) => !(r['id'] as string).startsWith('org_acme_'))).toEqual([]);
    }
    const after = await state.db.query<{ n: number }>('SELECT count(*)::int AS n FROM "public"."account"');
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
  });
});

// ---- Random and mutated bodies.

const nasty = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '', ' ', '.', 'owner.', '..', 'name.', 'contacts', 'owner.name', '\u0000', '\uD800', 'é', '👍', 'NaN', '1e309', '-0'),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
);
const leafValue = fc.oneof(
  nasty,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(Number.MAX_SAFE_INTEGER + 2, -1, 0, 1e21, Infinity, -Infinity, NaN),
  fc.array(fc.oneof(nasty, fc.integer()), { maxLength: 4 }),
  fc.constantFrom('2024-05-01', '2024-05-01T10:00:00Z', '2024-13-01', '0000-01-01T00:00:00+23:59'),
);
const anyJson = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    leafValue,
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(nasty, fc.constantFrom('field', 'operator', 'value', 'and', 'or', 'fields', 'filters', 'filter', 'sort', 'pagination', 'page', 'page_size', 'direction')), tie('v'), { maxKeys: 5 }),
  ),
})).v;

const VALID_FILTER = {
  query: {
    fields: ['name', 'owner.name', 'tags'],
    filters: { and: [{ field: 'name', operator: 'contains', value: 'a' }, { or: [{ field: 'tags', operator: 'in', value: ['key'] }, { field: 'contacts.status', operator: 'eq', value: 'active' }] }] },
    sort: [{ field: 'name', direction: 'desc' }],
    pagination: { page: 2, page_size: 10 },
  },
};
const VALID_CONNECTOR = { query: { fields: ['name', 'updated_at'], filter: { and: [{ field: 'updated_at', operator: 'gte', value: 0 }] } }, next_token: null };

/** Replaces the subtree at a random path of `body` with `value`. */
function mutate(body: unknown, steps: readonly number[], value: unknown): unknown {
  const copy = structuredClone(body) as unknown;
  let node = copy as Record<string, unknown>;
  for (const s of steps) {
    if (node === null || typeof node !== 'object') break;
    const keys = Object.keys(node);
    if (keys.length === 0) break;
    const key = keys[s % keys.length]!;
    const child = node[key];
    if (child === null || typeof child !== 'object' || s % 3 === 0) {
      Object.defineProperty(node, key, { value, enumerable: true, writable: true, configurable: true });
      return copy;
    }
    node = child as Record<string, unknown>;
  }
  return copy;
}

function deep(n: number): unknown {
  let v: unknown = { field: 'name', operator: 'eq', value: 'x' };
  for (let i = 0; i < n; i++) v = i % 2 ? { or: [v] } : [v];
  return v;
}

describe('random and mutated bodies', () => {
  it('give valid SQL or a 400 OqlError, never anything else', () => {
    fc.assert(
      fc.property(fc.oneof(anyJson, fc.record({ query: anyJson }), fc.record({ query: fc.record({ filters: anyJson }) })), (body) => {
        structureOk(attempt(() => compileFilter(body, filterOptions)));
        structureOk(attempt(() => compileConnectorPage(body, connectorOptions)));
      }),
      { numRuns: runs(3000, 100_000) },
    );
  }, PROPERTY_TIMEOUT);

  it('mutations of valid bodies give valid SQL or a 400 OqlError', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { minLength: 1, maxLength: 8 }), anyJson, (steps, value) => {
        structureOk(attempt(() => compileFilter(mutate(VALID_FILTER, steps, value), filterOptions)));
        structureOk(attempt(() => compileConnectorPage(mutate(VALID_CONNECTOR, steps, value), connectorOptions)));
      }),
      { numRuns: runs(3000, 100_000) },
    );
  }, PROPERTY_TIMEOUT);

  it('huge and deep inputs are a 400 before any SQL', () => {
    const huge = [
      { query: { fields: Array(100_000).fill('name') } },
      { query: { filters: { and: [{ field: 'name', operator: 'in', value: Array(100_000).fill('x') }] } } },
      { query: { filters: { and: [{ field: 'name', operator: 'eq', value: 'x'.repeat(1_000_000) }] } } },
      { query: { filters: deep(50_000) } },
      { query: { filters: { and: [deep(50_000)] } } },
      { query: { sort: Array(10_000).fill({ field: 'name' }) } },
      JSON.parse('{"query":{"filters":{"__proto__":{"and":[]},"and":[{"field":"__proto__","operator":"eq","value":"x"}]}}}'),
      JSON.parse('{"query":{"fields":["__proto__"],"__proto__":{"fields":1}}}'),
    ];
    for (const body of huge) {
      const o = attempt(() => compileFilter(body, filterOptions));
      expect('error' in o).toBe(true);
    }
    expect('error' in attempt(() => compileConnectorPage({ query: { fields: ['name'], filter: { and: [deep(50_000)] } } }, connectorOptions))).toBe(true);
  });
});
