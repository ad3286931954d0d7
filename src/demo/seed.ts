import { quoteQualified } from '../catalog/quote.js';
import type { Catalog } from '../catalog/types.js';
import { nameColumn, searchText } from '../records/shape.js';
import type { Database } from '../run/database.js';

/** The organization the demo data and the first key belong to. */
export const DEMO_ORG = 'org_demo';

/**
 * Loads demo data for `org_demo` when every table of the catalog is empty: for the example CRM,
 * believable people, companies and deals (src/demo/demo.ts); for any other catalog, the seeded
 * generator's rows. `search_field` is filled the way record writes fill it, so `global_search`
 * finds demo records too.
 */
export async function loadDemoData(db: Database, catalog: Catalog, isFixture: boolean): Promise<number> {
  for (const obj of catalog.objects.values()) {
    const { rows } = await db.query(`SELECT 1 FROM ${quoteQualified(catalog.mapping.schema, obj.table)} LIMIT 1`);
    if (rows.length > 0) return 0;
  }
  const { generateRows, insertRows } = await import('./index.js');
  const data = isFixture
    ? await (await import('./demo.js')).demoData(catalog, { organizations: [DEMO_ORG] })
    : generateRows(catalog, { seed: 20240601, tenants: [DEMO_ORG], counts: 200 });
  const searchColumn = catalog.mapping.searchColumn;
  let total = 0;
  await db.transaction(async (tx) => {
    for (const obj of catalog.objects.values()) {
      const rows = data.get(obj.slug);
      if (!rows || rows.length === 0) continue;
      const name = nameColumn(obj)?.column;
      const withSearch = searchColumn && name ? rows.map((r) => ({ ...r, [searchColumn]: searchText(r[name]) })) : rows;
      await insertRows(tx, catalog, obj, withSearch);
      total += rows.length;
    }
  });
  return total;
}
