import type { Catalog, ColumnDef, ObjectDef } from '../catalog/types.js';
import { printName } from './print.js';

/**
 * Names a hint may show, taken from the catalog the query is checked against: a hint that says
 * `write stage = 'won'` to someone whose schema has no stage is wrong when pasted. Every stage
 * builds its example texts from these, never from the example CRM. Each name is printed as the
 * query language reads it back (quoted when it is a keyword), and each is chosen from the object
 * the request is about when it has one of that kind.
 */
export interface HintSource {
  readonly catalog?: Catalog;
  /** The request's object: examples are written FROM it when the catalog has it. */
  readonly slug?: string;
}

export interface Examples {
  /** The object to write FROM. */
  readonly object: string;
  /** Another object, for hints about reading two (EXISTS, JOIN). */
  readonly other: string;
  /** A text column of `object` (its id when it has none). */
  readonly text: string;
  readonly number: string | null;
  /** A date or datetime column (epoch milliseconds). */
  readonly date: string | null;
  readonly boolean: string | null;
  readonly choice: { readonly column: string; readonly option: string } | null;
  readonly multiselect: { readonly column: string; readonly option: string } | null;
  /** A to-one path: `via.field`, the relation column and a text field of the record it names. */
  readonly toOne: { readonly via: string; readonly path: string } | null;
  /** A one-to-many relation of `object`: its children's object and the children's column holding the parent's id. */
  readonly children: {
    readonly relation: string;
    readonly object: string;
    readonly via: string;
    readonly text: string;
    /** A whole FROM ... WHERE EXISTS (...) over them, aliases chosen to clash with no column. */
    readonly exists: string;
  } | null;
}

const NONE: Examples = {
  object: '<object>', other: '<other_object>', text: '<column>', number: null, date: null, boolean: null,
  choice: null, multiselect: null, toOne: null, children: null,
};

const cache = new WeakMap<Catalog, Map<string, Examples>>();

/** The examples for a request; placeholders in angle brackets when no catalog is given. */
export function examplesFor(source: HintSource): Examples {
  const catalog = source.catalog;
  if (!catalog || catalog.objects.size === 0) return NONE;
  let bySlug = cache.get(catalog);
  if (!bySlug) cache.set(catalog, (bySlug = new Map()));
  const key = source.slug ?? '';
  let e = bySlug.get(key);
  if (!e) bySlug.set(key, (e = build(catalog, source.slug)));
  return e;
}

const TEXTUAL = new Set<ColumnDef['type']>(['text', 'email', 'phone', 'url']);
const NUMERIC = new Set<ColumnDef['type']>(['number', 'integer', 'currency']);

function build(catalog: Catalog, slug: string | undefined): Examples {
  const objects = [...catalog.objects.values()];
  const own = (slug !== undefined ? catalog.objects.get(slug) : undefined) ?? objects[0]!;
  const columns = (o: ObjectDef): ColumnDef[] => [...o.columns.values()].filter((c) => c.slug !== 'id');
  const first = (o: ObjectDef, ok: (c: ColumnDef) => boolean): ColumnDef | undefined =>
    columns(o).filter(ok).sort((a, b) => Number(b.isPrimary) - Number(a.isPrimary) || Number(a.isSystem) - Number(b.isSystem))[0];
  // Only the request's own columns: a hint writes them FROM that object. A kind it lacks is null,
  // and the hint leaves that example out.
  const textOf = (o: ObjectDef): string => printName(first(o, (c) => TEXTUAL.has(c.type))?.slug ?? 'id');
  const pick = (ok: (c: ColumnDef) => boolean): ColumnDef | undefined => first(own, ok);
  const withOptions = (type: 'enum' | 'multiselect') => {
    const c = pick((x) => x.type === type && (x.options?.length ?? 0) > 0);
    return c ? { column: printName(c.slug), option: c.options![0]!.replace(/'/g, "''") } : null;
  };
  const rel = pick((c) => c.relation?.kind === 'to-one' && catalog.objects.has(c.relation.object));
  const target = rel ? catalog.objects.get(rel.relation!.object)! : undefined;
  const virtual = pick((c) => c.relation?.kind === 'virtual' && catalog.objects.has(c.relation.object));
  const child = virtual ? catalog.objects.get(virtual.relation!.object)! : undefined;
  const other = child ?? target ?? objects.find((o) => o !== own) ?? own;
  const col = (c: ColumnDef | undefined): string | null => (c ? printName(c.slug) : null);
  return {
    object: printName(own.slug),
    other: printName(other.slug),
    text: textOf(own),
    number: col(pick((c) => NUMERIC.has(c.type))),
    date: col(pick((c) => c.type === 'date' || c.type === 'datetime')),
    boolean: col(pick((c) => c.type === 'boolean')),
    choice: withOptions('enum'),
    multiselect: withOptions('multiselect'),
    toOne: rel && target ? { via: printName(rel.slug), path: `${printName(rel.slug)}.${textOf(target)}` } : null,
    children: virtual && child && virtual.relation?.kind === 'virtual'
      ? { relation: printName(virtual.slug), object: printName(child.slug), via: printName(virtual.relation.via), text: textOf(child), exists: existsExample(own, child, virtual.relation.via) }
      : null,
  };
}

/** `FROM parent p WHERE EXISTS (SELECT 1 FROM child x WHERE x.via = p.id)`; a child column named like an alias would capture it. */
function existsExample(parent: ObjectDef, child: ObjectDef, via: string): string {
  const free = (candidates: readonly string[], taken: string): string => candidates.find((n) => n !== taken && !child.columns.has(n) && !parent.columns.has(n)) ?? candidates[candidates.length - 1]!;
  const inner = free(['x', 'c', 'child_row'], '');
  const outer = free(['p', 'parent_row', 'outer_row'], inner);
  return `FROM ${printName(parent.slug)} ${outer} WHERE EXISTS (SELECT 1 FROM ${printName(child.slug)} ${inner} WHERE ${inner}.${printName(via)} = ${outer}.id)`;
}

/** How a multiselect is tested, on the object's own multiselect, or on `column` as written. */
export function multiselectTests(e: Examples, column?: string): string {
  const col = column ?? e.multiselect?.column ?? e.text;
  const opt = e.multiselect && (column === undefined || column === e.multiselect.column) ? e.multiselect.option : 'x';
  return `${col} && ARRAY['${opt}'] (has any), NOT (${col} && ARRAY['${opt}']) (has none) or ${col} = ARRAY[NULL] (is empty)`;
}

/** Reaching related records: the object's own to-one path and EXISTS over its own children, where it has them. */
export function relatedRecords(e: Examples): string {
  const ways = [
    ...(e.toOne ? [`reach a related record with dot notation (${e.toOne.path})`] : []),
    ...(e.children ? [`filter by children with EXISTS, the outer object aliased: ${e.children.exists}`] : []),
  ];
  return ways.length ? ways.join(', or ') : 'query one object at a time: related records are reached with dot notation (relation.field) or EXISTS (SELECT 1 FROM ... WHERE ...)';
}

/** A whole minimal query on the object. */
export function exampleQuery(e: Examples): string {
  return `SELECT id${e.text === 'id' ? '' : `, ${e.text}`} FROM ${e.object} LIMIT 100`;
}

/** `amount > 0`, or a comparison of what the object has: the example condition of a hint. */
export function exampleCondition(e: Examples): string {
  if (e.choice) return `${e.choice.column} = '${e.choice.option}'`;
  if (e.number) return `${e.number} > 0`;
  if (e.boolean) return `${e.boolean} = 1`;
  return `${e.text} IS NOT NULL`;
}
