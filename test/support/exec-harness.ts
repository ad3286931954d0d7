import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile, compileCount } from '../../src/compile.js';
import { fixtureData, loadFixtureCatalog, type FixtureName } from '../../fixtures/index.js';
import { Oracle, TEXT_TIME_PARSERS, decodeRows, foreignIds, multiset, sequence, type ExecCase, type Row } from './oracle.js';
import { pgliteWithFixtures } from './pglite-template.js';

/** Planner options: `{ semiJoins: false }` is the service's literal fan-out plan. */
export type Plan = { readonly semiJoins?: boolean; readonly fanout?: 'service' | 'exact' };
export const LITERAL: Plan = { semiJoins: false };

/**
 * One fixture loaded into one PGlite for a test file (PGlite takes seconds to start), with
 * helpers that compile a query for a tenant at a pinned NOW(), run it and decode the rows.
 */
export function execHarness(fixture: FixtureName, now: string) {
  const catalog = loadFixtureCatalog(fixture);
  const data = fixtureData(fixture);
  const oracle = new Oracle(data);
  let db: PGlite;

  beforeAll(async () => {
    db = await pgliteWithFixtures([{ catalog, data }]);
  }, 120_000);
  afterAll(async () => {
    await db?.close();
  });

  const run = async (query: string, slug: string, tenant: string, options: Plan = {}): Promise<Row[]> => {
    const compiled = compile(query, { catalog, slug, orgId: tenant, now, ...options });
    if (compiled.kind !== 'query') throw new Error(`restricted: ${compiled.message}`);
    const result = await db.query<Record<string, unknown>>(compiled.sql, compiled.params, { parsers: TEXT_TIME_PARSERS });
    return decodeRows(result, compiled.columns.map((c) => c.key));
  };

  const runCount = async (query: string, slug: string, tenant: string, options: Plan = {}): Promise<number> => {
    const compiled = compileCount(query, { catalog, slug, orgId: tenant, now, ...options });
    if (compiled.kind !== 'query') throw new Error(`restricted: ${compiled.message}`);
    const result = await db.query<{ count: unknown }>(compiled.sql, compiled.params);
    return Number(result.rows[0]!.count);
  };

  /** Whether the planner's semi-join rewrite changes this query's SQL (then both plans are run). */
  const plansDiffer = (query: string, slug: string): boolean => {
    try {
      const a = compile(query, { catalog, slug, orgId: 'org_x' });
      const b = compile(query, { catalog, slug, orgId: 'org_x', ...LITERAL });
      return a.sql !== b.sql;
    } catch {
      return false; // reported by the case itself
    }
  };

  /**
   * Runs every case for every tenant, under both plans when the semi-join rewrite applies:
   * rows against the oracle, no other tenant's ids, and count = number of rows.
   */
  const runCases = (title: string, cases: readonly ExecCase[], tenants: readonly string[]): void => {
    describe(title, () => {
      for (const c of cases) {
        describe(c.name, () => {
          const plans: [string, Plan][] = [['', {}]];
          const differ = plansDiffer(c.query, c.slug);
          if (differ) plans.push([' (literal fan-out plan)', LITERAL]);
          if (c.semiJoin !== undefined) it(`the planner ${c.semiJoin ? 'uses' : 'does not use'} a semi-join`, () => expect(differ).toBe(c.semiJoin));
          for (const [label, plan] of plans) {
            for (const tenant of tenants) {
              // A known bug marks the planned run; the literal fan-out plan must still pass.
              const test = c.bug && plan === plans[0]![1] ? it.fails : it;
              test(`${tenant}${label}`, async () => {
                const expected = c.expected(oracle, tenant);
                const actual = await run(c.query, c.slug, tenant, plan);
                if (c.ordered) expect(sequence(actual)).toEqual(sequence(expected));
                else expect(multiset(actual)).toEqual(multiset(expected));
                expect(foreignIds(actual, tenant, c.rawRefs)).toEqual([]);
                expect(await runCount(c.query, c.slug, tenant, plan)).toBe(actual.length);
              });
            }
          }
          const covers = c.covers;
          if (covers) it('the data exercises the case', () => expect(tenants.some((t) => covers(oracle, t, c.expected(oracle, t)))).toBe(true));
        });
      }
    });
  };

  return { catalog, data, oracle, db: () => db, run, runCount, plansDiffer, runCases };
}
