import { catalogDdl, loadCatalog, type Catalog } from '../../src/catalog/index.js';

/**
 * A catalog with one column of every writable type, a required name, a unique external_id and
 * an Indian phone column (country code +91, ten digits), plus a relation target.
 */
export function recordCatalog(): Catalog {
  return loadCatalog({
    objects: {
      person: {
        columns: {
          name: { type: 'text', primary: true, required: true },
          created_at: { type: 'datetime', system: true },
          updated_at: { type: 'datetime', system: true },
        },
      },
      thing: {
        columns: {
          name: { type: 'text', primary: true, required: true },
          email: 'email',
          phone: { type: 'phone', properties: { phone_number: { country_code: '+91', restricted_length: 10 } } },
          any_phone: 'phone',
          site: 'url',
          score: 'number',
          count: 'integer',
          price: { type: 'currency', properties: { currency: 'INR' } },
          active: 'boolean',
          born_on: 'date',
          seen_at: 'datetime',
          stage: { type: 'enum', options: ['new', 'won', 'lost'] },
          tags: { type: 'multiselect', options: ['a', 'b', 'c'] },
          owner: { type: 'relation', object: 'person' },
          extra: 'json',
          external_id: { type: 'text', unique: true },
          notes: { type: 'virtual', object: 'note', via: 'thing' },
          created_at: { type: 'datetime', system: true },
          updated_at: { type: 'datetime', system: true },
          created_by: { type: 'relation', object: 'person', system: true },
          updated_by: { type: 'relation', object: 'person', system: true },
        },
      },
      note: { columns: { body: 'text', thing: { type: 'relation', object: 'thing' } } },
    },
  });
}

export async function createTables(db: { exec(sql: string): Promise<unknown> }, catalog: Catalog): Promise<void> {
  await db.exec(catalogDdl(catalog, { uniqueIndexes: true }).join(';\n'));
}
