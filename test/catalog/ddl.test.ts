import { PGlite } from '@electric-sql/pglite';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogDdl, loadCatalog, quoteIdent, quoteQualified, type Catalog, type LogicalType } from '../../src/catalog/index.js';
import { fixturePayload, loadFixtureCatalog } from '../../fixtures/index.js';
import { emptyPglite } from '../support/pglite-template.js';

const EXPECTED_SQL_TYPE: Record<LogicalType, string | null> = {
  id: 'text', text: 'text', email: 'text', phone: 'text', url: 'text', enum: 'text', relation: 'text',
  number: 'numeric', integer: 'numeric', currency: 'numeric', boolean: 'boolean',
  date: 'bigint', datetime: 'bigint', multiselect: 'ARRAY', json: 'jsonb', virtual: null,
};

let db: PGlite;
beforeAll(async () => {
  db = await emptyPglite();
  await db.waitReady;
});
afterAll(async () => {
  await db.close();
});

async function columnsOf(schema: string, table: string): Promise<Map<string, { type: string; nullable: string; default: string | null }>> {
  const r = await db.query<{ column_name: string; data_type: string; is_nullable: string; column_default: string | null }>(
    `SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns
     WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
    [schema, table],
  );
  return new Map(r.rows.map((c) => [c.column_name, { type: c.data_type, nullable: c.is_nullable, default: c.column_default }]));
}

async function indexesOf(schema: string, table: string): Promise<string[]> {
  const r = await db.query<{ indexdef: string }>('SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 ORDER BY indexname', [schema, table]);
  return r.rows.map((x) => x.indexdef);
}

function check(catalog: Catalog) {
  return async () => {
    const { schema, tenantColumn, softDeleteColumn, idColumn } = catalog.mapping;
    for (const obj of catalog.objects.values()) {
      const cols = await columnsOf(schema, obj.table);
      expect(cols.get(idColumn)).toEqual({ type: 'text', nullable: 'NO', default: null });
      expect(cols.get(tenantColumn)).toEqual({ type: 'text', nullable: 'NO', default: null });
      if (softDeleteColumn) expect(cols.get(softDeleteColumn)).toEqual({ type: 'boolean', nullable: 'NO', default: 'false' });
      const expected = [idColumn, tenantColumn, ...(softDeleteColumn ? [softDeleteColumn] : [])];
      for (const c of obj.columns.values()) {
        if (c.type === 'virtual' || c.type === 'id') continue;
        expected.push(c.column!);
        expect(cols.get(c.column!), `${obj.slug}.${c.slug}`).toEqual({ type: EXPECTED_SQL_TYPE[c.type], nullable: 'YES', default: null });
      }
      if (catalog.mapping.searchColumn !== null) {
        expected.push(catalog.mapping.searchColumn);
        expect(cols.get(catalog.mapping.searchColumn)).toEqual({ type: 'text', nullable: 'YES', default: null });
      }
      expect([...cols.keys()]).toEqual(expected);

      const indexes = await indexesOf(schema, obj.table);
      const q = (s: string) => (/^[a-z_][a-z0-9_]*$/.test(s) ? s : quoteIdent(s));
      expect(indexes.some((d) => d.includes('UNIQUE') && d.endsWith(`(${q(tenantColumn)}, ${q(idColumn)})`))).toBe(true);
      const toOne = [...obj.columns.values()].filter((c) => c.relation?.kind === 'to-one');
      for (const c of toOne) {
        expect(indexes.filter((d) => d.endsWith(`(${q(tenantColumn)}, ${q(c.column!)})`)), `${obj.slug}.${c.slug}`).toHaveLength(1);
      }
      expect(indexes).toHaveLength(1 + toOne.length);
    }
  };
}

describe('catalogDdl on PGlite', () => {
  const crm = loadFixtureCatalog('crm');
  const helpdesk = loadFixtureCatalog('helpdesk');

  it('creates the crm tables: one per object of the payload, in the public schema, and nothing else', async () => {
    // The oracle is the payload file itself and PostgreSQL's own catalog, not the library's mapping.
    const payload = JSON.parse(readFileSync(fileURLToPath(new URL('../../fixtures/crm/objects-list.json', import.meta.url)), 'utf8')) as { data: { slug: string }[] };
    const slugs = payload.data.map((o) => o.slug).sort();
    expect(slugs).toEqual(['account', 'contact', 'lead', 'opportunity', 'user']);
    const tables = async () => (await db.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name",
    )).rows.map((r) => r.table_name);
    expect(await tables()).toEqual([]);
    await db.exec(catalogDdl(crm).join(';\n'));
    expect(await tables()).toEqual(slugs);
  });
  it('crm columns, types and indexes match the catalog', check(crm));

  it('creates the helpdesk tables in its own schema with unusual physical names', async () => {
    const odd = loadCatalog(fixturePayload('helpdesk'), {
      schema: 'Help Desk',
      tenantColumn: 'Tenant "Id"',
      idColumn: 'Record Id',
      softDeleteColumn: 'deleted?',
      tableName: (slug) => `HD ${slug}`,
      columnName: (object, column) => (column === 'status' ? 'select' : `${column}"x`),
    });
    const ddl = catalogDdl(odd);
    expect(ddl[0]).toBe('CREATE SCHEMA IF NOT EXISTS "Help Desk"');
    await db.exec(ddl.join(';\n'));
    await check(odd)();
  });

  it('default helpdesk mapping works too', async () => {
    const ddl = catalogDdl(loadCatalog(fixturePayload('helpdesk'), { schema: 'helpdesk' }));
    await db.exec(ddl.join(';\n'));
    await check(loadCatalog(fixturePayload('helpdesk'), { schema: 'helpdesk' }))();
    expect(ddl).not.toEqual(catalogDdl(helpdesk));
  });

  it('is deterministic and re-runnable with ifNotExists', async () => {
    expect(catalogDdl(crm)).toEqual(catalogDdl(loadFixtureCatalog('crm')));
    await db.exec(catalogDdl(crm, { ifNotExists: true }).join(';\n'));
    await expect(db.exec(catalogDdl(crm).join(';\n'))).rejects.toThrow(/already exists/);
  });

  it('omits the soft-delete column when there is none and indexes on request', () => {
    const c = loadCatalog(fixturePayload('crm'), { softDeleteColumn: null });
    const ddl = catalogDdl(c, { indexes: false });
    expect(ddl).toHaveLength(c.objects.size);
    expect(ddl.join('\n')).not.toContain('is_deleted');
    expect(catalogDdl(loadCatalog(fixturePayload('crm'), { searchColumn: null })).join('\n')).not.toContain('search_field');
    expect(catalogDdl(crm).some((s) => s.startsWith('CREATE SCHEMA'))).toBe(false);
  });

  it('shortens long index names and keeps them unique', async () => {
    const long = 'x'.repeat(60);
    const c = loadCatalog({
      objects: {
        [long]: { columns: { [`${long}a`]: { type: 'relation', object: long }, [`${long}b`]: { type: 'relation', object: long } } },
      },
    }, { schema: 'long' });
    const ddl = catalogDdl(c);
    const names = ddl.filter((s) => s.startsWith('CREATE INDEX')).map((s) => s.split('"')[1]!);
    expect(new Set(names).size).toBe(2);
    for (const n of names) expect(Buffer.byteLength(n)).toBeLessThanOrEqual(63);
    await db.exec(ddl.join(';\n'));
    expect(await indexesOf('long', long)).toHaveLength(3);
  });
});

describe('quoteIdent', () => {
  it('always quotes and doubles embedded quotes', () => {
    expect(quoteIdent('user')).toBe('"user"');
    expect(quoteIdent('a"b')).toBe('"a""b"');
    expect(quoteQualified('public', 'Ticket Comment')).toBe('"public"."Ticket Comment"');
  });

  it('refuses names Postgres would mangle', () => {
    expect(() => quoteIdent('')).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    expect(() => quoteIdent('a\0b')).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    expect(() => quoteIdent('é'.repeat(32))).toThrow(/63 bytes/);
  });
});
