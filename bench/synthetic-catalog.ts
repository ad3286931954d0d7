/**
 * Catalogs described as shapes (objects, their columns and relations) and written in both payload
 * forms: the very large grid of the catalog-load benchmark here, random ones in
 * random-catalog.ts. In the grid, object `oN` has a primary `name`, to-one relations
 * `ref_0..ref_3` to four other objects, virtual relations `kids_0`, `kids_1` back from the
 * objects whose `ref_0`/`ref_1` point at it, and the remaining columns cycle through the scalar
 * logical types.
 */

const REF_STEPS = [1, 7, 31, 101];
export const SCALARS = ['text', 'number', 'integer', 'currency', 'boolean', 'date', 'datetime', 'enum', 'multiselect', 'email', 'phone', 'url', 'json'] as const;
export type ScalarType = (typeof SCALARS)[number];
const OPTIONS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'];

const name = (i: number): string => `o${String(i).padStart(3, '0')}`;
const mod = (a: number, n: number): number => ((a % n) + n) % n;

/** A column of a shape; the primary column is text. Enum and multiselect options default to six Greek letters. */
export type ShapeColumn =
  | { readonly slug: string; readonly kind: 'primary' }
  | { readonly slug: string; readonly kind: 'ref'; readonly object: string }
  | { readonly slug: string; readonly kind: 'virtual'; readonly object: string; readonly via: string }
  | { readonly slug: string; readonly kind: 'scalar'; readonly type: ScalarType; readonly options?: readonly string[] };

export interface Shape {
  readonly slug: string;
  readonly columns: readonly ShapeColumn[];
}

function shapes(objects: number, columns: number): Shape[] {
  const out: Shape[] = [];
  for (let i = 0; i < objects; i++) {
    const cols: ShapeColumn[] = [{ slug: 'name', kind: 'primary' }];
    REF_STEPS.forEach((step, k) => cols.push({ slug: `ref_${k}`, kind: 'ref', object: name(mod(i + step, objects)) }));
    [0, 1].forEach((k) => cols.push({ slug: `kids_${k}`, kind: 'virtual', object: name(mod(i - REF_STEPS[k]!, objects)), via: `ref_${k}` }));
    for (let c = cols.length; c < columns; c++) {
      const type = SCALARS[c % SCALARS.length]!;
      cols.push({ slug: `${type}_${c}`, kind: 'scalar', type });
    }
    out.push({ slug: name(i), columns: cols });
  }
  return out;
}

/** The grid of `objects` × `columns` in the compact hand-written form. */
export function compactCatalog(objects: number, columns: number): unknown {
  return compactPayload(shapes(objects, columns));
}

/** The grid of `objects` × `columns` as the service's object-list response. */
export function servicePayload(objects: number, columns: number): unknown {
  return servicePayloadOf(shapes(objects, columns));
}

/** The compact hand-written form (`{ objects: { slug: { columns: {...} } } }`). */
export function compactPayload(shapes: readonly Shape[]): unknown {
  const out: Record<string, unknown> = {};
  for (const s of shapes) {
    const cols: Record<string, unknown> = {};
    for (const c of s.columns) {
      if (c.kind === 'primary') cols[c.slug] = { type: 'text', primary: true };
      else if (c.kind === 'ref') cols[c.slug] = { type: 'relation', object: c.object };
      else if (c.kind === 'virtual') cols[c.slug] = { type: 'virtual', object: c.object, via: c.via };
      else if (c.type === 'enum' || c.type === 'multiselect') cols[c.slug] = { type: c.type, options: c.options ?? OPTIONS };
      else cols[c.slug] = c.type;
    }
    out[s.slug] = { displayName: s.slug.toUpperCase(), columns: cols };
  }
  return { objects: out };
}

// column_data_type codes of the example deployment, plus codes for the types it has none for.
const CODES: Record<string, number> = {
  text: 1, email: 5, phone: 7, boolean: 9, number: 11, enum: 15, multiselect: 17, datetime: 19, date: 21, relation: 25,
  integer: 31, currency: 33, url: 35, json: 37,
};
export const SYNTHETIC_TYPE_CODES: Record<string, string> = Object.fromEntries(Object.entries(CODES).map(([t, c]) => [String(c), t]));

/** The service's object-list response, with every field the real payload carries. */
export function servicePayloadOf(shapes: readonly Shape[]): unknown {
  let colId = 0;
  const audit = { id: 'usr_0001', name: 'Asha Rao', avatar: null };
  const data = shapes.map((s) => {
    const column = (slug: string, code: number, extra: Record<string, unknown>) => ({
      id: `col_${++colId}`, org_id: 'org_synth', org_object_id: `obj_${s.slug}`, display_name: slug, slug, description: null,
      default_value: null, help_text: null, placeholder: null, constraints: null, expression: null, parent_column_slug: null,
      column_data_type: code, column_type: 'standard', is_indexed: 0, is_visible: 1, is_unique: 0, is_required: 0, is_primary: 0,
      is_archived: 0, is_history_field: 0, is_formula_type: 0, is_json_column: 0, is_dependent_field: 0, is_primary_relation: 0,
      relationship_type: 0, relation: null, enum_group: null, properties: null, created_at: 1735689600000, updated_at: 1735689600000,
      created_by: audit, updated_by: audit, ...extra,
    });
    const cols = [column('id', 1, { column_type: 'system', is_unique: 1 })];
    for (const c of s.columns) {
      if (c.kind === 'primary') cols.push(column(c.slug, 1, { is_primary: 1, is_required: 1 }));
      else if (c.kind === 'ref') {
        cols.push(column(c.slug, 25, { relationship_type: 1, relation: { column_slug: 'id', object_slug: c.object, associated_col_name: null, is_virtual: 0 } }));
      } else if (c.kind === 'virtual') {
        cols.push(column(c.slug, 25, { relationship_type: 2, relation: { column_slug: c.via, object_slug: c.object, associated_col_name: c.via, is_virtual: 1 } }));
      } else if (c.type === 'enum' || c.type === 'multiselect') {
        cols.push(column(c.slug, CODES[c.type]!, {
          enum_group: {
            id: `eg_${s.slug}_${c.slug}`, org_id: 'org_synth', slug: `${s.slug}_${c.slug}`, is_global: 0, enum_group_type: 'normal', properties: null,
            values: (c.options ?? OPTIONS).map((o, rank) => ({
              org_id: 'org_synth', slug: o, display_name: o, rank: rank + 1, is_active: 1, is_system_field: 0, color: null, badge_config: null, category: 0, dependent_enum_slugs: null,
            })),
          },
        }));
      } else cols.push(column(c.slug, CODES[c.type]!, {}));
    }
    return { id: `obj_${s.slug}`, slug: s.slug, display_singular_name: s.slug, display_plural_name: `${s.slug}s`, sys_object_id: null, state: 1, org_object_columns: cols };
  });
  return { success: true, data };
}
