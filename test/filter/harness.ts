import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll } from 'vitest';
import { fixtureData, loadFixtureCatalog, type FixtureName } from '../../fixtures/index.js';
import { Oracle, type Row } from '../support/oracle.js';
import { FilterOracle } from './filter-oracle.js';
import { pgliteWithFixtures } from '../support/pglite-template.js';

/** Both fixtures in one PGlite for a test file (their table names do not clash). */
export function filterHarness() {
  const env = {} as Record<FixtureName, { catalog: ReturnType<typeof loadFixtureCatalog>; data: Map<string, Row[]>; oracle: Oracle; ref: FilterOracle }>;
  for (const name of ['crm', 'helpdesk'] as const) {
    const catalog = loadFixtureCatalog(name);
    const data = fixtureData(name);
    const oracle = new Oracle(data);
    env[name] = { catalog, data, oracle, ref: new FilterOracle(catalog, oracle) };
  }
  const state = { db: null as unknown as PGlite };
  beforeAll(async () => {
    state.db = await pgliteWithFixtures([env.crm, env.helpdesk]);
  }, 120_000);
  afterAll(async () => {
    await state.db?.close();
  });
  return { env, state };
}

export const TENANTS = { crm: ['org_acme', 'org_globex'], helpdesk: ['org_north', 'org_south'] } as const;

export function sorted(ids: readonly unknown[]): string[] {
  return (ids as string[]).slice().sort();
}
