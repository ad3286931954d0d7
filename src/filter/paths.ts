import type * as B from '../bind/bound.js';
import { columnValueType } from '../bind/types.js';
import type { Catalog, ColumnDef, ObjectDef, VirtualRelation } from '../catalog/types.js';
import { didYouMean } from '../diagnostics/suggest.js';
import type { Message } from './problems.js';

/** Most relation hops in one dot path (as the query language's default). */
export const MAX_PATH_HOPS = 6;

export const SPAN = { start: 0, end: 0 } as const;

/** A dot path that ends on a stored column, through to-one relations only. */
export interface ColumnPath {
  readonly kind: 'column';
  readonly hops: readonly B.Hop[];
  readonly object: string;
  readonly def: ColumnDef;
}

/**
 * A dot path that reaches a one-to-many relation: `hops` lead (to-one) to `parent`, whose
 * column `relation` is virtual; `rest` is the path inside the child object (empty when the
 * path names the relation itself).
 */
export interface VirtualPath {
  readonly kind: 'virtual';
  readonly hops: readonly B.Hop[];
  readonly parent: string;
  readonly relation: ColumnDef & { readonly relation: VirtualRelation };
  readonly rest: readonly string[];
}

export type ResolvedPath = ColumnPath | VirtualPath;

/** The error's message is written (with its did-you-mean search) only if it is reported. */
export type PathResult = { ok: ResolvedPath } | { error: Message };

/**
 * Resolves `owner.manager.email` from `object`: each segment but the last must be a relation.
 * Objects outside `access` are unknown to the caller, so they resolve like missing ones.
 */
export function resolvePath(catalog: Catalog, object: string, segments: readonly string[], access: ReadonlySet<string> | null): PathResult {
  const hops: B.Hop[] = [];
  let obj = catalog.objects.get(object) as ObjectDef;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    const def = obj.columns.get(seg);
    const where = i === 0 ? `'${obj.slug}'` : `'${obj.slug}' (reached by '${segments.slice(0, i).join('.')}')`;
    if (!def) {
      const columns = obj.columns;
      return { error: () => `${where} has no field '${seg}'${withHint(didYouMean(seg, columns.keys()))}` };
    }
    const last = i === segments.length - 1;
    if (def.relation?.kind === 'virtual') {
      if (access && !access.has(def.relation.object)) return { error: `'${segments.slice(0, i + 1).join('.')}' leads to object '${def.relation.object}', which you may not read` };
      return { ok: { kind: 'virtual', hops, parent: obj.slug, relation: def as VirtualPath['relation'], rest: segments.slice(i + 1) } };
    }
    if (last) return { ok: { kind: 'column', hops, object: obj.slug, def } };
    if (def.relation?.kind !== 'to-one') return { error: `'${seg}' of ${where} is not a relation, so '${segments.slice(0, i + 2).join('.')}' does not exist` };
    if (hops.length >= MAX_PATH_HOPS) return { error: `'${segments.join('.')}' crosses more than ${MAX_PATH_HOPS} relations` };
    const target = catalog.objects.get(def.relation.object);
    if (!target || (access && !access.has(target.slug))) return { error: `'${segments.slice(0, i + 1).join('.')}' leads to object '${def.relation.object}', which you may not read` };
    hops.push({ kind: 'to-one', via: seg, object: target.slug });
    obj = target;
  }
  return { error: 'the field is empty' };
}

function withHint(hint: string | undefined): string {
  return hint ? `; ${hint}` : '';
}

/** Splits a field into path segments; null when it is not a well-formed dot path. */
export function splitPath(field: string): string[] | null {
  if (field.length === 0 || field.length > 512) return null;
  const parts = field.split('.');
  return parts.every((p) => p.length > 0) ? parts : null;
}

export function columnNode(scope: number, path: { hops: readonly B.Hop[]; object: string }, def: ColumnDef): B.BColumn {
  return { kind: 'Column', scope, hops: path.hops, object: path.object, column: def.slug, logical: def.type, type: columnValueType(def.type), span: SPAN };
}
