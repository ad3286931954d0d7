import { describe, expect, it } from 'vitest';
import { catalogPayload, objectPayload } from '../../src/catalog/payload-out.js';
import { entities, entitySchema } from '../../src/catalog/entities.js';
import { catalogDdl, loadCatalog } from '../../src/catalog/index.js';
import { compile } from '../../src/compile.js';
import { fixturePayload, loadFixtureCatalog, FIXTURE_NAMES } from '../../fixtures/index.js';
import crmTypeCodes from '../../fixtures/crm/type-codes.json' with { type: 'json' };

const crm = loadFixtureCatalog('crm');
const helpdesk = loadFixtureCatalog('helpdesk');

describe('entities', () => {
  it('lists every object as an entity', () => {
    expect(entities(crm).map((e) => e.entity_identifier)).toEqual(['user', 'account', 'contact', 'opportunity', 'lead']);
    expect(entities(crm)[1]).toEqual({ entity_identifier: 'account', label: 'Account', description: expect.any(String), has_nested_entities: false, is_writable: true });
  });

  it('describes the fields of an object with the connector entity types', () => {
    const schema = entitySchema(crm, 'contact');
    expect(schema).toMatchObject({ entity_identifier: 'contact', label: 'Contact', has_nested_entities: false, is_writable: true });
    const byName = new Map(schema.fields.map((f) => [f.field_name, f]));
    // Stored columns only, in catalog order: contact has no one-to-many column.
    expect([...byName.keys()]).toEqual(['id', 'name', 'email', 'phone', 'status', 'account', 'birthday', 'is_primary', 'owner', 'created_at', 'updated_at', 'created_by', 'updated_by']);
    const types = Object.fromEntries(schema.fields.map((f) => [f.field_name, [f.data_type, f.data_type_label]]));
    expect(types).toEqual({
      id: ['String', 'varchar'], name: ['String', 'varchar'], email: ['String', 'email'], phone: ['String', 'phone'],
      status: ['String', 'enum'], account: ['String', 'relation'], birthday: ['DateTime', 'date'], is_primary: ['Boolean', 'bool'],
      owner: ['String', 'relation'], created_at: ['DateTime', 'timestamp'], updated_at: ['DateTime', 'timestamp'],
      created_by: ['String', 'relation'], updated_by: ['String', 'relation'],
    });
    expect(byName.get('id')).toMatchObject({ is_primary_key: true, is_deprecated: false, read_properties: { is_nullable: false } });
    expect(byName.get('name')!.read_properties).toEqual({ is_retrievable: true, is_nullable: false, is_queryable: true, is_timestamp_field_for_incremental_queries: false });
    expect(byName.get('email')!.read_properties.is_nullable).toBe(true);
    for (const f of schema.fields) {
      expect(f.read_properties.is_timestamp_field_for_incremental_queries).toBe(f.field_name === 'created_at' || f.field_name === 'updated_at');
    }
  });

  it('leaves one-to-many relations out and types numbers, integers and money', () => {
    const account = entitySchema(crm, 'account');
    expect(account.fields.map((f) => f.field_name)).not.toContain('contacts');
    expect(account.fields.find((f) => f.field_name === 'annual_revenue')).toMatchObject({ data_type: 'Float', data_type_label: 'currency' });
    const customer = entitySchema(helpdesk, 'customer');
    expect(customer.fields.find((f) => f.field_name === 'employee_count')).toMatchObject({ data_type: 'Integer', data_type_label: 'integer' });
    expect(customer.fields.find((f) => f.field_name === 'tags')).toMatchObject({ data_type: 'String', data_type_label: 'multiselect' });
  });

  it('answers an unknown slug with the error compile gives', () => {
    const fromCompile = (() => { try { compile('SELECT id FROM acount LIMIT 1', { catalog: crm, slug: 'acount', orgId: 'o' }); } catch (e) { return e; } })() as { code: string; status: number };
    const fromSchema = (() => { try { entitySchema(crm, 'acount'); } catch (e) { return e; } })() as { code: string; status: number; message: string; hint: string };
    expect(fromSchema.code).toBe(fromCompile.code);
    expect(fromSchema.status).toBe(400);
    expect(fromSchema.message).toMatch(/^Invalid slug/);
    expect(fromSchema.hint).toMatch(/account/);
    expect(() => objectPayload(crm, '__proto__')).toThrow(/Invalid slug/);
  });
});

describe('the catalog written back', () => {
  it.each(FIXTURE_NAMES)('reads back to an equal catalog (%s)', (name) => {
    const original = loadFixtureCatalog(name);
    const payload = catalogPayload(original);
    const again = loadCatalog(payload, name === 'crm' ? { typeCodes: crmTypeCodes } : {});
    expect(again.version).toBe(original.version);
    expect(again.objects).toEqual(original.objects);
    expect(catalogDdl(again)).toEqual(catalogDdl(original));
    // And once more, from the written form (compact catalogs are now in the service's shape).
    expect(loadCatalog(catalogPayload(again), name === 'crm' ? { typeCodes: crmTypeCodes } : {}).version).toBe(original.version);
  });

  it('gives the service\'s own objects back unchanged', () => {
    const envelope = fixturePayload('crm') as { data: unknown[] };
    expect(catalogPayload(crm)).toEqual(envelope.data);
    expect(objectPayload(crm, 'lead')).toEqual(envelope.data[4]);
    // A copy: changing it does not change the next answer.
    (catalogPayload(crm)[0] as { slug: string }).slug = 'changed';
    expect((catalogPayload(crm)[0] as { slug: string }).slug).toBe('user');
  });

  it('keeps what it was given, whatever the caller does to its payload afterwards', () => {
    // A copy of the shared fixture, which other tests read.
    const envelope = structuredClone(fixturePayload('crm')) as { data: Record<string, unknown>[] };
    const expected = structuredClone(envelope.data);
    const catalog = loadCatalog(envelope, { typeCodes: crmTypeCodes });
    envelope.data[0]!.slug = 'renamed after loading';
    (envelope.data[1]!.org_object_columns as Record<string, unknown>[]).pop();
    expect(catalogPayload(catalog)).toEqual(expected);
  });

  it('writes compact-form objects in the service shape', () => {
    const customer = objectPayload(helpdesk, 'customer') as { id: string; slug: string; org_object_columns: Record<string, unknown>[] };
    expect(customer).toMatchObject({ id: 'obj_customer', slug: 'customer', display_singular_name: 'Customer', display_plural_name: 'Customers' });
    const col = (slug: string) => customer.org_object_columns.find((c) => c.slug === slug)!;
    expect(col('name')).toMatchObject({ column_data_type: 1, is_primary: 1, column_type: 'standard', relationship_type: 0, relation: null });
    expect(col('account_manager')).toMatchObject({ column_data_type: 25, relationship_type: 6, relation: { column_slug: 'id', object_slug: 'agent', is_virtual: 0 } });
    expect(col('sites')).toMatchObject({ relationship_type: 2, relation: { column_slug: 'customer', object_slug: 'site', is_virtual: 1 } });
    expect((col('tier').enum_group as { values: { slug: string; rank: number }[] }).values.map((v) => [v.slug, v.rank])).toEqual([['bronze', 1], ['silver', 2], ['gold', 3], ['platinum', 4]]);
    expect(col('domain')).toMatchObject({ column_data_type: 1, data_type: 'url' });
    expect(col('created_at')).toMatchObject({ column_data_type: 19, column_type: 'system' });
  });

  it('keeps required, unique and properties through the round trip', () => {
    const c = loadCatalog({ objects: { t: { columns: {
      name: { type: 'text', required: true },
      ext: { type: 'text', unique: true },
      phone: { type: 'phone', properties: { phone_number: { country_code: '+44', restricted_length: 10 } } },
      fee: { type: 'number', properties: { currency: 'EUR' } },
      price: 'currency',
    } } } });
    const back = loadCatalog(catalogPayload(c));
    expect(back.objects).toEqual(c.objects);
    const t = back.objects.get('t')!;
    expect([t.columns.get('name')!.required, t.columns.get('ext')!.unique, t.columns.get('fee')!.type, t.columns.get('price')!.type]).toEqual([true, true, 'number', 'currency']);
    expect(t.columns.get('phone')!.properties).toEqual({ phone_number: { country_code: '+44', restricted_length: 10 } });
  });

  it('reads is_required, is_unique and properties from the service payload', () => {
    const user = crm.objects.get('user')!;
    expect([user.columns.get('name')!.required, user.columns.get('email')!.required, user.columns.get('email')!.unique, user.columns.get('phone')!.unique]).toEqual([true, false, true, false]);
    expect(user.columns.get('phone')!.properties).toEqual({ phone_number: { restricted_length: 10, country_code: '+91' } });
    expect(crm.objects.get('account')!.columns.get('annual_revenue')!.properties).toEqual({ currency: 'INR' });
    expect(crm.objects.get('account')!.objectId).toBe('obj_account');
    expect(Object.isFrozen(user.columns.get('phone')!.properties!.phone_number)).toBe(true);
  });

  it('changes the catalog version when a rule the validator reads changes', () => {
    const base = { objects: { t: { columns: { name: 'text' } } } };
    const v = (cols: Record<string, unknown>) => loadCatalog({ objects: { t: { columns: cols } } }).version;
    const plain = loadCatalog(base).version;
    expect(new Set([plain, v({ name: { type: 'text', required: true } }), v({ name: { type: 'text', unique: true } }), v({ name: { type: 'text', properties: { format: 'x' } } })]).size).toBe(4);
    expect(loadCatalog(base, { searchColumn: null }).version).not.toBe(plain);
  });
});
