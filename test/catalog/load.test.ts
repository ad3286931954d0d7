import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TYPE_CODES, catalogObject, loadCatalog, loadCatalogText, type CatalogOptions } from '../../src/catalog/index.js';
import { OqlError } from '../../src/diagnostics/index.js';
import { loadFixtureCatalog } from '../../fixtures/index.js';

// The payload is read from disk here, independently of the loader and the fixtures module.
const examples = new URL('../../fixtures/', import.meta.url);
const envelope = JSON.parse(readFileSync(new URL('crm/objects-list.json', examples), 'utf8'));
const typeCodes: Record<string, string> = JSON.parse(readFileSync(new URL('crm/type-codes.json', examples), 'utf8'));
const helpdesk = JSON.parse(readFileSync(new URL('helpdesk/schema.json', examples), 'utf8'));

/** A deep copy of the bare object array, to mutate in one test. */
function objects(): any[] {
  return structuredClone(envelope.data);
}

function col(payload: any[], object: string, column: string): any {
  return payload.find((o) => o.slug === object).org_object_columns.find((c: any) => c.slug === column);
}

function loadError(payload: unknown, options?: CatalogOptions): OqlError {
  try {
    loadCatalog(payload, options);
  } catch (e) {
    expect(e).toBeInstanceOf(OqlError);
    return e as OqlError;
  }
  throw new Error('expected loadCatalog to fail');
}

describe('service payload', () => {
  const catalog = loadCatalog(envelope, { typeCodes });

  it('has every object of the payload, in payload order', () => {
    expect([...catalog.objects.keys()]).toEqual(envelope.data.map((o: any) => o.slug));
    expect(catalog.mapping).toEqual({ schema: 'public', tenantColumn: 'org_id', softDeleteColumn: 'is_deleted', idColumn: 'id', searchColumn: 'search_field' });
  });

  it('agrees with the payload on every column', () => {
    for (const o of envelope.data) {
      const obj = catalogObject(catalog, o.slug)!;
      expect(obj.displayName).toBe(o.display_singular_name);
      expect(obj.pluralName).toBe(o.display_plural_name);
      expect(obj.table).toBe(o.slug);
      const live = o.org_object_columns.filter((c: any) => c.is_archived !== 1);
      expect([...obj.columns.keys()]).toEqual(live.map((c: any) => c.slug));
      for (const c of live) {
        const def = obj.columns.get(c.slug)!;
        expect(def.isPrimary).toBe(c.is_primary === 1);
        expect(def.isSystem).toBe(c.column_type === 'system');
        expect(def.displayName).toBe(c.display_name);
        if (c.slug === 'id') expect(def.type).toBe('id');
        else if (c.relation?.is_virtual === 1) {
          expect(def).toMatchObject({ type: 'virtual', column: null, relation: { kind: 'virtual', object: c.relation.object_slug, via: c.relation.column_slug } });
        } else if (c.relation) {
          expect(def).toMatchObject({ type: 'relation', column: c.slug, relation: { kind: 'to-one', object: c.relation.object_slug } });
        } else {
          // A number with a currency property (properties.currency) is money.
          const coded = typeCodes[String(c.column_data_type)];
          expect(def.type).toBe(coded === 'number' && c.properties?.currency ? 'currency' : coded);
          expect(def.column).toBe(c.slug);
        }
        if (c.enum_group) {
          const ranked = [...c.enum_group.values].sort((a: any, b: any) => a.rank - b.rank).map((v: any) => v.slug);
          expect(def.options).toEqual(ranked);
        } else expect(def.options).toBeNull();
      }
    }
  });

  it('knows the documented facts of the example', () => {
    const opp = catalogObject(catalog, 'opportunity')!;
    expect(opp.columns.get('account')!.relation).toEqual({ kind: 'to-one', object: 'account' });
    expect(opp.columns.get('primary_contact')!.relation).toEqual({ kind: 'to-one', object: 'contact' });
    expect(opp.columns.get('stage')!.options).toEqual(['prospecting', 'qualification', 'proposal', 'negotiation', 'won', 'lost']);
    expect(opp.columns.get('close_date')!.type).toBe('date');
    expect(opp.columns.get('sources')!.type).toBe('multiselect');
    const account = catalogObject(catalog, 'account')!;
    expect(account.columns.get('contacts')!.relation).toEqual({ kind: 'virtual', object: 'contact', via: 'account' });
    expect(account.columns.get('opportunities')!.relation).toEqual({ kind: 'virtual', object: 'opportunity', via: 'account' });
    expect(catalogObject(catalog, 'user')!.columns.get('manager')!.relation).toEqual({ kind: 'to-one', object: 'user' });
    expect(catalogObject(catalog, 'nope')).toBeUndefined();
  });

  it('sorts options by rank and keeps inactive ones', () => {
    const p = objects();
    const stage = col(p, 'opportunity', 'stage');
    stage.enum_group.values.reverse();
    stage.enum_group.values[0].is_active = 0;
    const opp = catalogObject(loadCatalog(p), 'opportunity')!;
    expect(opp.columns.get('stage')!.options).toEqual(['prospecting', 'qualification', 'proposal', 'negotiation', 'won', 'lost']);
  });

  it('accepts the bare array, the envelope and one object alike', () => {
    const bare = loadCatalog(envelope.data, { typeCodes });
    expect(bare.version).toBe(catalog.version);
    expect(bare.objects.get('lead')).toEqual(catalog.objects.get('lead'));
    const one = loadCatalog({ success: true, data: envelope.data[0] });
    expect([...one.objects.keys()]).toEqual(['user']);
    expect([...loadCatalog(envelope.data[0]).objects.keys()]).toEqual(['user']);
  });

  it('uses the built-in type codes by default', () => {
    expect(DEFAULT_TYPE_CODES).toEqual(typeCodes);
    expect(loadCatalog(envelope).version).toBe(catalog.version);
  });

  it('adds an id column when the payload has none and skips archived columns', () => {
    const p = objects();
    const lead = p.find((o: any) => o.slug === 'lead');
    lead.org_object_columns = lead.org_object_columns.filter((c: any) => c.slug !== 'id');
    col(p, 'lead', 'company').is_archived = 1;
    const def = catalogObject(loadCatalog(p), 'lead')!;
    expect([...def.columns.keys()][0]).toBe('id');
    expect(def.columns.get('id')).toMatchObject({ type: 'id', column: 'id', relation: null });
    expect(def.columns.has('company')).toBe(false);
  });

  it('applies the physical mapping options', () => {
    const mapped = loadCatalog(envelope, {
      schema: 'crm',
      tenantColumn: 'tenant',
      softDeleteColumn: null,
      idColumn: 'record_id',
      tableName: (slug) => `t_${slug}`,
      columnName: (object, column) => `${object}.${column}`,
    });
    expect(mapped.mapping).toEqual({ schema: 'crm', tenantColumn: 'tenant', softDeleteColumn: null, idColumn: 'record_id', searchColumn: 'search_field' });
    const opp = catalogObject(mapped, 'opportunity')!;
    expect(opp.table).toBe('t_opportunity');
    expect(opp.columns.get('id')!.column).toBe('record_id');
    expect(opp.columns.get('amount')!.column).toBe('opportunity.amount');
    expect(mapped.version).not.toBe(catalog.version);
  });

  it('parses JSON text and reports bad JSON as a catalog error', () => {
    expect(loadCatalogText(JSON.stringify(envelope)).version).toBe(catalog.version);
    expect(() => loadCatalogText('{"data": [')).toThrow(expect.objectContaining({ code: 'CATALOG_INVALID' }));
  });
});

describe('version', () => {
  it('is equal for equal catalogs and differs when anything differs', () => {
    const a = loadCatalog(envelope);
    expect(a.version).toMatch(/^[0-9a-f]{16}$/);
    expect(loadCatalog(structuredClone(envelope)).version).toBe(a.version);
    const p = objects();
    col(p, 'lead', 'status').enum_group.values[0].slug = 'fresh';
    expect(loadCatalog(p).version).not.toBe(a.version);
    expect(loadCatalog(envelope, { tenantColumn: 'tenant_id' }).version).not.toBe(a.version);
    expect(loadCatalog(envelope, { softDeleteColumn: null }).version).not.toBe(a.version);
  });

  it('ignores payload fields the catalog does not use', () => {
    const p = objects();
    p[0].org_object_columns[1].help_text = 'changed';
    p[0].state = 99;
    expect(loadCatalog(p).version).toBe(loadCatalog(envelope).version);
  });
});

describe('compact form', () => {
  it('loads the hand-written example from the docs', () => {
    const c = loadCatalog({
      objects: {
        agent: { columns: { name: { type: 'text', primary: true } } },
        comment: { columns: { body: 'text', ticket: { type: 'relation', object: 'ticket' } } },
        ticket: {
          displayName: 'Support ticket',
          columns: {
            subject: 'text',
            assignee: { type: 'relation', object: 'agent' },
            priority: { type: 'enum', options: ['low', 'high'] },
            tags: { type: 'multiselect', options: ['a', 'b'] },
            comments: { type: 'virtual', object: 'comment', via: 'ticket' },
          },
        },
      },
    });
    const ticket = catalogObject(c, 'ticket')!;
    expect(ticket.displayName).toBe('Support ticket');
    expect(ticket.pluralName).toBe('Support tickets');
    expect([...ticket.columns.keys()]).toEqual(['id', 'subject', 'assignee', 'priority', 'tags', 'comments']);
    expect(ticket.columns.get('assignee')).toMatchObject({ type: 'relation', relation: { kind: 'to-one', object: 'agent' }, column: 'assignee' });
    expect(ticket.columns.get('priority')!.options).toEqual(['low', 'high']);
    expect(ticket.columns.get('comments')).toMatchObject({ type: 'virtual', column: null, relation: { kind: 'virtual', object: 'comment', via: 'ticket' } });
    expect(catalogObject(c, 'agent')!.columns.get('name')!.isPrimary).toBe(true);
  });

  it('loads the helpdesk fixture with deep to-one chains and virtual relations', () => {
    const c = loadCatalog(helpdesk);
    expect(loadFixtureCatalog('helpdesk').version).toBe(c.version);
    let object = 'ticket_comment';
    for (const hop of ['ticket', 'asset', 'site', 'customer', 'account_manager', 'team', 'lead']) {
      const rel = catalogObject(c, object)!.columns.get(hop)!.relation;
      expect(rel?.kind, `${object}.${hop}`).toBe('to-one');
      object = rel!.object;
    }
    expect(object).toBe('agent');
    const virtuals = [...c.objects.values()].flatMap((o) => [...o.columns.values()].filter((x) => x.type === 'virtual'));
    expect(virtuals.length).toBeGreaterThanOrEqual(4);
    const types = new Set([...c.objects.values()].flatMap((o) => [...o.columns.values()].map((x) => x.type)));
    for (const t of ['enum', 'multiselect', 'date', 'datetime', 'boolean', 'number', 'integer', 'currency', 'email', 'phone', 'url']) {
      expect(types.has(t as never), t).toBe(true);
    }
  });

  it('reports unknown types and keys with a suggestion', () => {
    const e = loadError({ objects: { t: { columns: { a: 'txt', b: { type: 'enum', option: ['x'] } } } } });
    expect(e.diagnostics.map((d) => [d.code, d.message])).toEqual([
      ['CATALOG_UNKNOWN_TYPE', `column 't.a': unknown type "txt"`],
      ['CATALOG_INVALID', `column 't.b': unknown key 'option'`],
      ['CATALOG_INVALID', `column 't.b': enum columns need "options": an array of option slugs`],
    ]);
    expect(e.diagnostics[0]!.hint).toBe("did you mean 'text'?");
    expect(e.diagnostics[1]!.hint).toBe("did you mean 'options'?");
  });
});

describe('errors', () => {
  it('unknown type code names the column and lists the known codes', () => {
    const p = objects();
    col(p, 'opportunity', 'stage').column_data_type = 99;
    const e = loadError(p, { typeCodes });
    expect(e.code).toBe('CATALOG_UNKNOWN_TYPE');
    expect(e.status).toBe(500);
    expect(e.message).toBe("column 'opportunity.stage': unknown column_data_type 99");
    expect(e.hint).toContain('15 (enum)');
  });

  it('a relation to a missing object suggests the near name', () => {
    const p = objects();
    col(p, 'opportunity', 'account').relation.object_slug = 'acount';
    const e = loadError(p);
    expect(e.code).toBe('CATALOG_MISSING_OBJECT');
    expect(e.message).toContain("'opportunity.account'");
    expect(e.message).toContain("'acount'");
    expect(e.hint).toBe("did you mean 'account'?");
  });

  it('duplicate object and column slugs', () => {
    const dupObject = loadError([...objects(), objects()[1]]);
    expect(dupObject.code).toBe('CATALOG_DUPLICATE_SLUG');
    expect(dupObject.message).toContain("'account'");
    const p = objects();
    const lead = p.find((o: any) => o.slug === 'lead');
    lead.org_object_columns.push({ ...col(p, 'lead', 'email') });
    const dupColumn = loadError(p);
    expect(dupColumn.code).toBe('CATALOG_DUPLICATE_SLUG');
    expect(dupColumn.message).toContain("'lead.email'");
  });

  it('a column that lands on the tenant column', () => {
    const p = objects();
    p[0].org_object_columns.push({ ...col(p, 'user', 'name'), slug: 'org_id' });
    const e = loadError(p);
    expect(e.code).toBe('CATALOG_DUPLICATE_SLUG');
    expect(e.message).toContain("'user.org_id'");
    expect(e.message).toContain('tenant column');
  });

  it('a virtual relation via a missing column or a column that does not point back', () => {
    const p = objects();
    col(p, 'account', 'contacts').relation.column_slug = 'acount';
    const missing = loadError(p);
    expect(missing.code).toBe('CATALOG_BAD_VIRTUAL');
    expect(missing.message).toContain("'account.contacts'");
    expect(missing.message).toContain("'contact.acount'");
    expect(missing.hint).toBe("did you mean 'account'?");

    const q = objects();
    col(q, 'account', 'contacts').relation.column_slug = 'owner';
    const wrong = loadError(q);
    expect(wrong.code).toBe('CATALOG_BAD_VIRTUAL');
    expect(wrong.message).toBe(
      "column 'account.contacts': virtual relation via 'contact.owner', which is a to-one relation to 'user', not a to-one relation to 'account'",
    );

    const r = objects();
    col(r, 'account', 'contacts').relation.column_slug = 'email';
    expect(loadError(r).code).toBe('CATALOG_BAD_VIRTUAL');
  });

  it('malformed payloads', () => {
    for (const bad of [null, 42, 'objects', true, {}, { success: true, data: 'x' }, { objects: [] }]) {
      expect(loadError(bad).code, JSON.stringify(bad)).toBe('CATALOG_INVALID');
    }
    expect(loadError({ success: false, message: 'unauthorized' }).message).toContain('unauthorized');
    expect(loadError([1]).message).toBe('object #0: expected an object, got number 1');
    expect(loadError([{ org_object_columns: [] }]).message).toContain('object #0: slug');
    expect(loadError([{ slug: 'x' }]).message).toContain("object 'x': org_object_columns");
    expect(loadError([{ slug: 'x', org_object_columns: [{ slug: 'a' }] }]).message).toContain("column 'x.a'");
    const p = objects();
    col(p, 'lead', 'status').enum_group = { values: 'no' };
    expect(loadError(p).message).toContain("column 'lead.status'");
  });

  it('collects every problem, not only the first', () => {
    const p = objects();
    col(p, 'lead', 'score').column_data_type = 3;
    col(p, 'contact', 'account').relation.object_slug = 'firm';
    const e = loadError(p);
    expect(e.diagnostics.map((d) => d.code)).toEqual(['CATALOG_UNKNOWN_TYPE', 'CATALOG_MISSING_OBJECT']);
  });

  it('rejects bad options', () => {
    expect(loadError(envelope, { typeCodes: { '1': 'txt' } }).code).toBe('INVALID_OPTIONS');
    expect(loadError(envelope, { tenantColumn: 'id' }).code).toBe('INVALID_OPTIONS');
    expect(loadError(envelope, { schema: '' }).code).toBe('INVALID_OPTIONS');
    const long = loadError(envelope, { tableName: (s) => s.repeat(20) });
    expect(long.code).toBe('CATALOG_INVALID');
    expect(long.message).toContain('63 bytes');
    expect(loadError(envelope, { tableName: () => 'same' }).code).toBe('CATALOG_DUPLICATE_SLUG');
  });

  it('never throws anything but an OqlError for mutated payloads', () => {
    const paths: (string | number)[][] = [];
    const walk = (v: unknown, path: (string | number)[]) => {
      paths.push(path);
      if (Array.isArray(v)) v.slice(0, 3).forEach((x, i) => walk(x, [...path, i]));
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
    };
    walk(envelope, []);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...paths), fc.jsonValue({ maxDepth: 2 })), { maxLength: 4 }), (edits) => {
        const p = structuredClone(envelope);
        for (const [path, value] of edits) {
          if (path.length === 0) return;
          let target: any = p;
          for (const key of path.slice(0, -1)) target = target?.[key];
          if (target && typeof target === 'object') target[path[path.length - 1]!] = value;
        }
        try {
          loadCatalog(p);
        } catch (e) {
          if (!(e instanceof OqlError)) throw e;
          expect(e.code).toMatch(/^CATALOG_/);
        }
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        try {
          loadCatalog(v);
          loadCatalog({ objects: v });
          loadCatalog({ objects: { a: v } });
          loadCatalog({ objects: { a: { columns: v } } });
        } catch (e) {
          if (!(e instanceof OqlError)) throw e;
        }
      }),
      { numRuns: 300 },
    );
  });
});
