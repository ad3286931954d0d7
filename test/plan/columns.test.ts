import { describe, expect, it } from 'vitest';
import { compile, planOf } from '../../src/compile.js';
import { loadCatalog } from '../../src/catalog/load.js';

/**
 * The plan names every column it reads physically (`columns`, keyed `object.column`, and
 * `physical`, by object then column), for a catalog whose physical names differ from the slugs.
 */
describe('physical column names of a plan', () => {
  const catalog = loadCatalog(
    {
      objects: {
        shipment: { columns: { code: { type: 'text', primary: true }, weight: 'number', carrier: { type: 'relation', object: 'carrier' } } },
        carrier: { columns: { name: { type: 'text', primary: true }, region: { type: 'enum', options: ['eu', 'us'] } } },
      },
    },
    { columnName: (object, column) => `${object.slice(0, 2)}_${column}` },
  );

  it('lists each column the query reads, through relations too, under its physical name', () => {
    const p = planOf("SELECT code, carrier.name, weight * 2 AS w FROM shipment WHERE carrier.region = 'eu' ORDER BY code LIMIT 5", { catalog, slug: 'shipment' });
    expect(p.columns).toEqual({ 'shipment.code': 'sh_code', 'shipment.weight': 'sh_weight', 'carrier.name': 'ca_name', 'carrier.region': 'ca_region' });
    expect(Object.fromEntries([...p.physical].map(([object, columns]) => [object, Object.fromEntries(columns)]))).toEqual({
      shipment: { code: 'sh_code', weight: 'sh_weight' },
      carrier: { name: 'ca_name', region: 'ca_region' },
    });
  });

  it('joins on the physical relation column, and the SQL reads the physical names', () => {
    const p = planOf('SELECT carrier.name FROM shipment LIMIT 5', { catalog, slug: 'shipment' });
    expect(p.columns).toEqual({ 'carrier.name': 'ca_name' });
    expect(p.scopes[0]!.joins[0]!.fromColumn).toBe('sh_carrier');
    const { sql } = compile('SELECT carrier.name FROM shipment LIMIT 5', { catalog, slug: 'shipment', orgId: 'org_a' });
    expect(sql).toContain('"t1"."ca_name" AS "c0"');
    expect(sql).toContain('ON "t1"."id" = "t0"."sh_carrier"');
  });
});
