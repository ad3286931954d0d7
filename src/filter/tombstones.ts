import { DELETED_AT } from '../catalog/lifecycle-columns.js';
import { quoteIdent, quoteQualified } from '../catalog/quote.js';
import type { Catalog } from '../catalog/types.js';
import type { CompiledFilter } from './filter.js';

// Tombstones in a connector sync (docs/connector.md, "Deletes"): the page's live records and the
// records deleted in the same window, merged in one statement, so both come from one snapshot and
// the byte ceiling of a bounded read cuts them together.

/** Keys of the two columns a page with tombstones adds after the sync key (never field slugs). */
export const DELETED_KEY = '$is_deleted';
export const DELETED_AT_KEY = '$deleted_at';

/** Where the page stands in the sync: the same window the live records are read in. */
export interface TombstoneWindow {
  /** The sync's `gte` bound on updated_at (epoch ms), or null for a sync without one. */
  readonly from: number | null;
  /** The token's position: [updated_at or null, id] of the last record delivered. */
  readonly position: readonly [number | null, string] | null;
  /** The largest updated_at the sync may deliver (inclusive). */
  readonly cutoff: number;
  /** Records without updated_at come last (a sync without a `gte` bound). */
  readonly nullsLast: boolean;
}

/**
 * The live page's statement with the object's deleted records of the window merged in, ordered by
 * (updated_at, id) as the live page is, `limit` rows in all. The live statement's columns are kept
 * (id first, the sync key last); two more follow: whether the row is a tombstone, and its
 * `deleted_at`. A tombstone carries its id, its updated_at as the sync key and nulls for every
 * field: the filter's other conditions do not judge it, since a record the filter no longer
 * matches, or one the client never saw, may have been delivered before (docs/connector.md).
 *
 * A deletion stamps updated_at with the database's clock after its transaction takes an id, as
 * every write of the record functions does, so the cutoff that holds back late commits holds back
 * late deletions too.
 */
export function withTombstones(live: CompiledFilter, catalog: Catalog, slug: string, window: TombstoneWindow, limit: number): CompiledFilter {
  const obj = catalog.objects.get(slug)!;
  const { schema, tenantColumn, idColumn, softDeleteColumn } = catalog.mapping;
  const updated = quoteIdent(obj.columns.get('updated_at')!.column!);
  const names = live.columns.map((_, i) => `"c${i}"`);
  const key = names[names.length - 1]!;
  const [deletedName, deletedAtName] = [`"c${names.length}"`, `"c${names.length + 1}"`];
  const params = [...live.params];
  const param = (value: unknown, type: string): string => {
    params.push(value);
    return `$${params.length}::${type}`;
  };
  const limitParam = param(limit, 'int8');
  let sql = `SELECT ${names.join(', ')}, false AS ${deletedName}, NULL::int8 AS ${deletedAtName} FROM (${live.sql}) AS "live"`;
  if (softDeleteColumn !== null) {
    const t = (column: string) => `"t".${quoteIdent(column)}`;
    const ts = `"t".${updated}`;
    const where = [`${t(tenantColumn)} = $1`, `${t(softDeleteColumn)} = true`];
    const [at, lastId] = window.position ?? [null, null];
    if (window.position && at === null) {
      where.push(`${ts} IS NULL`, `${t(idColumn)} > ${param(lastId, 'text')}`);
    } else {
      const dated = [`${ts} <= ${param(window.cutoff, 'int8')}`];
      if (window.position) dated.unshift(`(${ts}, ${t(idColumn)}) > (${param(at, 'int8')}, ${param(lastId, 'text')})`);
      if (window.from !== null) dated.push(`${ts} >= ${param(window.from, 'int8')}`);
      where.push(window.nullsLast ? `((${dated.join(' AND ')}) OR ${ts} IS NULL)` : dated.join(' AND '));
    }
    const select = [`${t(idColumn)} AS "c0"`, ...names.slice(1, -1).map((n) => `NULL AS ${n}`), `${ts} AS ${key}`, `true AS ${deletedName}`, `${t(DELETED_AT)} AS ${deletedAtName}`];
    sql += ` UNION ALL (SELECT ${select.join(', ')} FROM ${quoteQualified(schema, obj.table)} AS "t" WHERE ${where.join(' AND ')}`
      + ` ORDER BY ${ts} ASC NULLS LAST, ${t(idColumn)} ASC LIMIT ${limitParam})`;
  }
  return {
    sql: `SELECT * FROM (${sql}) AS "page" ORDER BY ${key} ASC NULLS LAST, "c0" ASC LIMIT ${limitParam}`,
    params,
    columns: [...live.columns, { key: DELETED_KEY, type: 'boolean' }, { key: DELETED_AT_KEY, type: 'datetime' }],
  };
}
