import { DELETED_AT, DELETED_BY } from '../catalog/lifecycle-columns.js';
import { quoteIdent, quoteQualified } from '../catalog/quote.js';
import type { Catalog, ObjectDef } from '../catalog/types.js';
import { OqlError } from '../diagnostics/diagnostic.js';
import { databaseOf } from '../run/database-of.js';
import type { ChangeDraft, ChangeSink } from './changes.js';
import { tableColumns } from './audit-columns.js';
import { inWriteTransaction, type Tx, type Writable } from './db.js';
import { put } from '../run/decode.js';
import { cast, recordSelect, tableOf, toRecord } from './shape.js';
import { RecordProblems } from './values.js';
import {
  appendChanges, checkCount, checkUnique, isId, lockForUnique, notFoundIds, setUp, uniqueViolation, updateValues, type WriteContext,
} from './write.js';

// The record lifecycle: a record is deleted softly (the soft-delete column set, with when and by
// whom), can be restored while it is there, and is removed for good (purged) once it has been
// deleted for long enough. Every step is a change of the log, in the step's own transaction.

export interface DeletedRecord {
  readonly id: string;
  readonly is_deleted: true;
  readonly deleted_at: number;
}

/**
 * Deletes every record named, or none: an id that names no live record of the organization (absent,
 * another organization's, or deleted already) fails the call with NOT_FOUND naming every such id.
 * Each record keeps its values, marked deleted with `deleted_at` and `deleted_by` (and `updated_at`,
 * `updated_by`); from then on it reads as absent everywhere until it is restored or purged.
 */
export async function deleteRecords(db: Writable, slug: string, ids: unknown, ctx: WriteContext): Promise<DeletedRecord[]> {
  const { obj, clock } = setUp(slug, ctx, true);
  const soft = softDeleteColumn(ctx.catalog);
  if (!Array.isArray(ids) || ids.length === 0) {
    const problems = new RecordProblems(obj.slug);
    problems.add(null, 'ids', 'INVALID_RECORD', 'ids must be a non-empty JSON array of record ids');
    throw OqlError.validation('Failed to delete records', problems.list);
  }
  checkCount(ids.length, ctx);
  const wanted = [...new Set(ids)];
  const malformed = wanted.filter((id) => !isId(id));
  if (malformed.length > 0) throw notFoundIds(obj, malformed);
  const { idColumn, tenantColumn } = ctx.catalog.mapping;
  return inWriteTransaction(db, { tenant: ctx.orgId, timeoutMs: ctx.timeoutMs }, async (tx) => {
    const at = await clock(tx);
    // Locked in id order, so two deletes naming the same records in other orders queue, not deadlock.
    const live = await tx.rows(
      `SELECT ${recordSelect(ctx.catalog, obj)} FROM ${tableOf(ctx.catalog, obj)} WHERE ${quoteIdent(tenantColumn)} = $1 AND ${quoteIdent(idColumn)} = ANY($2::text[]) AND ${quoteIdent(soft)} = false ORDER BY ${quoteIdent(idColumn)} COLLATE "C" FOR UPDATE`,
      [ctx.orgId, wanted]);
    const before = new Map(live.map((r) => [String(r.id), toRecord(obj, r)]));
    const missing = wanted.filter((id) => !before.has(id as string));
    if (missing.length > 0) throw notFoundIds(obj, missing);
    const params: unknown[] = [ctx.orgId, wanted, at, ctx.userId];
    const sets = [`${quoteIdent(soft)} = true`, `${quoteIdent(DELETED_AT)} = $3::bigint`, `${quoteIdent(DELETED_BY)} = $4::text`];
    for (const [field, value] of updateValues(obj, new Map(), ctx, at)) {
      const col = obj.columns.get(field)!;
      params.push(value);
      sets.push(`${quoteIdent(col.column!)} = $${params.length}::${cast(col)}`);
    }
    const rows = await tx.rows(
      `UPDATE ${tableOf(ctx.catalog, obj)} SET ${sets.join(', ')} WHERE ${quoteIdent(tenantColumn)} = $1 AND ${quoteIdent(idColumn)} = ANY($2::text[]) AND ${quoteIdent(soft)} = false RETURNING ${recordSelect(ctx.catalog, obj)}`,
      params);
    const byId = new Map(rows.map((r) => [String(r.id), r]));
    const changes: ChangeDraft[] = wanted.map((id) => ({
      objectSlug: obj.slug, recordId: id as string, operation: 'deleted', record: deletedRecord(obj, byId.get(id as string)!, at, ctx.userId), before: before.get(id as string)!,
    }));
    await appendChanges(tx, ctx, changes);
    return wanted.map((id) => ({ id: id as string, is_deleted: true as const, deleted_at: at }));
  });
}

/**
 * Brings a deleted record back as it was, with `updated_at` and `updated_by` of the restore. A
 * record that is not deleted (live, absent, another organization's, purged) is NOT_FOUND; one whose
 * unique value another live record has taken since is VALIDATION_FAILED with NOT_UNIQUE.
 */
export async function restoreRecord(db: Writable, slug: string, id: string, ctx: WriteContext): Promise<Record<string, unknown>> {
  const { obj, clock } = setUp(slug, ctx, true);
  const soft = softDeleteColumn(ctx.catalog);
  if (!isId(id)) throw notFoundIds(obj, [id], 'deleted ');
  const { idColumn, tenantColumn } = ctx.catalog.mapping;
  return inWriteTransaction(db, { tenant: ctx.orgId, timeoutMs: ctx.timeoutMs }, async (tx) => {
    const at = await clock(tx);
    await lockForUnique(tx, ctx.catalog, obj, ctx.orgId);
    const [row] = await tx.rows(
      `SELECT ${loggedSelect(ctx.catalog, obj)} FROM ${tableOf(ctx.catalog, obj)} WHERE ${quoteIdent(tenantColumn)} = $1 AND ${quoteIdent(idColumn)} = $2 AND ${quoteIdent(soft)} = true FOR UPDATE`,
      [ctx.orgId, id]);
    if (row === undefined) throw notFoundIds(obj, [id], 'deleted ');
    const before = toRecord(obj, row);
    const values = new Map<string, unknown>();
    for (const col of obj.columns.values()) if (col.unique && before[col.slug] !== null && before[col.slug] !== undefined) values.set(col.slug, before[col.slug]);
    const problems = new RecordProblems(obj.slug);
    await checkUnique(tx, ctx.catalog, obj, ctx.orgId, [{ index: null, values, self: id }], problems);
    if (problems.size > 0) throw OqlError.validation('Failed to restore record', problems.list);
    const params: unknown[] = [ctx.orgId, id];
    const sets = [`${quoteIdent(soft)} = false`, `${quoteIdent(DELETED_AT)} = NULL`, `${quoteIdent(DELETED_BY)} = NULL`];
    for (const [field, value] of updateValues(obj, new Map(), ctx, at)) {
      const col = obj.columns.get(field)!;
      params.push(value);
      sets.push(`${quoteIdent(col.column!)} = $${params.length}::${cast(col)}`);
    }
    const [restored] = await tx.rows(
      `UPDATE ${tableOf(ctx.catalog, obj)} SET ${sets.join(', ')} WHERE ${quoteIdent(tenantColumn)} = $1 AND ${quoteIdent(idColumn)} = $2 RETURNING ${recordSelect(ctx.catalog, obj)}`,
      params);
    const record = toRecord(obj, restored!);
    await appendChanges(tx, ctx, [{ objectSlug: obj.slug, recordId: id, operation: 'restored', record, before: loggedRecord(ctx.catalog, obj, row) }]);
    return record;
  }).catch(uniqueViolation('Failed to restore record', obj));
}

export interface PurgeOptions {
  /** Records deleted before this instant (epoch ms) go. */
  readonly deletedBefore: number;
  /** Records removed per transaction, so no lock is held long. Default 100. */
  readonly batchSize?: number;
  /** Most batches in one call. Default 50. */
  readonly maxBatches?: number;
  /** The log each organization's purges go to. */
  readonly changes?: ChangeSink;
  readonly timeoutMs?: number;
}

/**
 * Removes for good the records deleted before `deletedBefore`, every object and organization, in
 * small transactions: each deletes at most `batchSize` rows of one organization's table (rows a
 * writer holds are skipped for the next round) and records a `purged` change for each. Returns
 * how many records went.
 */
export async function purgeDeleted(db: Writable, catalog: Catalog, options: PurgeOptions): Promise<number> {
  const soft = softDeleteColumn(catalog);
  const batch = options.batchSize ?? 100;
  let batches = options.maxBatches ?? 50;
  const { idColumn, tenantColumn } = catalog.mapping;
  const database = databaseOf(db);
  let purged = 0;
  for (const obj of catalog.objects.values()) {
    const table = tableOf(catalog, obj);
    const { rows: orgs } = await database.query<{ org: string }>(
      `SELECT DISTINCT ${quoteIdent(tenantColumn)} AS "org" FROM ${table} WHERE ${quoteIdent(soft)} = true AND ${quoteIdent(DELETED_AT)} < $1::bigint LIMIT 1000`,
      [options.deletedBefore]);
    for (const { org } of orgs) {
      for (;;) {
        if (batches-- <= 0) return purged;
        const ctx = { catalog, orgId: String(org), userId: 'system', ...(options.changes ? { changes: options.changes } : {}) };
        const gone = await inWriteTransaction(db, { tenant: String(org), timeoutMs: options.timeoutMs }, async (tx: Tx) => {
          const rows = await tx.rows(
            `DELETE FROM ${table} WHERE ${quoteIdent(tenantColumn)} = $1 AND ${quoteIdent(idColumn)} IN (SELECT ${quoteIdent(idColumn)} FROM ${table} WHERE ${quoteIdent(tenantColumn)} = $1 AND ${quoteIdent(soft)} = true AND ${quoteIdent(DELETED_AT)} < $2::bigint LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING ${loggedSelect(catalog, obj)}`,
            [org, options.deletedBefore, batch]);
          await appendChanges(tx, ctx, rows.map((r) => ({ objectSlug: obj.slug, recordId: String(r.id), operation: 'purged', record: null, before: loggedRecord(catalog, obj, r) })));
          return rows.length;
        });
        purged += gone;
        if (gone < batch) break;
      }
    }
  }
  return purged;
}

/**
 * Start-up migration: adds `deleted_at` (epoch ms) and `deleted_by` to every table of the catalog
 * that lacks them, and a partial index of deleted rows by `deleted_at` for the purge. Nullable
 * columns: no table rewrite; rows deleted before they existed have no `deleted_at` and are never
 * purged. Returns the columns added.
 */
export async function addLifecycleColumns(db: Writable, catalog: Catalog): Promise<string[]> {
  const { schema, softDeleteColumn: soft } = catalog.mapping;
  if (soft === null) return [];
  for (const obj of catalog.objects.values()) {
    for (const col of obj.columns.values()) {
      if (col.column === DELETED_AT || col.column === DELETED_BY) {
        throw OqlError.plain('CATALOG_DUPLICATE_SLUG', `column '${obj.slug}.${col.slug}' is stored in "${col.column}", which the service keeps for when and by whom a record was deleted`,
          `store '${col.slug}' under another physical name`);
      }
    }
  }
  // Instances starting at once queue here: two CREATE INDEX IF NOT EXISTS of one name side by side
  // would otherwise fail on the catalog's unique index.
  return databaseOf(db).transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('oql lifecycle columns|' || $1, 0))`, [schema]);
    const tables = await tableColumns(tx, schema);
    const added: string[] = [];
    for (const obj of catalog.objects.values()) {
      const have = tables.get(obj.table);
      if (!have) continue;
      const table = quoteQualified(schema, obj.table);
      for (const [name, type] of [[DELETED_AT, 'bigint'], [DELETED_BY, 'text']] as const) {
        if (have.has(name)) continue;
        await tx.query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${quoteIdent(name)} ${type}`);
        added.push(`${table}.${quoteIdent(name)}`);
      }
      const index = `${obj.table.slice(0, 40)}_deleted_at_idx`;
      await tx.query(`CREATE INDEX IF NOT EXISTS ${quoteIdent(index)} ON ${table} (${quoteIdent(DELETED_AT)}) WHERE ${quoteIdent(soft)} = true`);
    }
    return added;
  });
}

function softDeleteColumn(catalog: Catalog): string {
  const soft = catalog.mapping.softDeleteColumn;
  if (soft === null) throw OqlError.plain('INVALID_OPTIONS', 'this catalog has no soft-delete column, so its records cannot be deleted or restored', 'set mapping.softDeleteColumn (is_deleted by default)');
  return soft;
}

/** `recordSelect` and, where records are deleted softly, whether the row is deleted, when and by whom (for `loggedRecord`). */
export function loggedSelect(catalog: Catalog, obj: ObjectDef): string {
  const soft = catalog.mapping.softDeleteColumn;
  if (soft === null) return recordSelect(catalog, obj);
  return `${recordSelect(catalog, obj)}, ${quoteIdent(soft)} AS "$deleted", ${quoteIdent(DELETED_AT)}::text AS "$deleted_at", ${quoteIdent(DELETED_BY)} AS "$deleted_by"`;
}

/** A row of `loggedSelect` as the change log shows its record: as get-one returns it, with `is_deleted`, `deleted_at` and `deleted_by` when it is deleted. */
export function loggedRecord(catalog: Catalog, obj: ObjectDef, row: Record<string, unknown>): Record<string, unknown> {
  if (catalog.mapping.softDeleteColumn === null || row.$deleted !== true) return toRecord(obj, row);
  return deletedRecord(obj, row, row.$deleted_at === null || row.$deleted_at === undefined ? null : Number(row.$deleted_at), (row.$deleted_by ?? null) as string | null);
}

/**
 * The records of the organization with these ids as they stand, deleted ones too, as the change log
 * shows them (`loggedRecord`), by id; an id with no row is absent. The change log rebuilds its
 * records from them (src/service/changes/log.ts).
 */
export async function loggedRecords(tx: Tx, catalog: Catalog, obj: ObjectDef, orgId: string, ids: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
  const { idColumn, tenantColumn } = catalog.mapping;
  const rows = await tx.rows(
    `SELECT ${loggedSelect(catalog, obj)} FROM ${tableOf(catalog, obj)} WHERE ${quoteIdent(tenantColumn)} = $1 AND ${quoteIdent(idColumn)} = ANY($2::text[])`,
    [orgId, ids]);
  return new Map(rows.map((r) => [String(r.id), loggedRecord(catalog, obj, r)]));
}

/** The record as the log shows it once deleted: its values, then when and by whom. */
function deletedRecord(obj: ObjectDef, row: Record<string, unknown>, at: number | null, by: string | null): Record<string, unknown> {
  const record = toRecord(obj, row);
  put(record, 'is_deleted', true);
  put(record, 'deleted_at', at);
  put(record, 'deleted_by', by);
  return record;
}
