import { quoteIdent } from '../catalog/quote.js';
import type { Catalog, ColumnDef, ObjectDef } from '../catalog/types.js';
import { OqlError } from '../diagnostics/diagnostic.js';
import { inWriteTransaction, readRows, together, type Tx, type Writable } from './db.js';
import { newRecordId } from './ids.js';
import { phoneLibrary, type PhoneLibrary } from './phone.js';
import type { Queryable } from '../run/transaction.js';
import type { Statement } from '../run/database.js';
import { put } from '../run/decode.js';
import { cast, liveGuard, nameColumn, paramValue, recordSelect, searchText, selectRecords, storedColumns, tableOf, toRecord } from './shape.js';
import { MAX_JSON_DEPTH, checkFields, isPlainRecord, isWritable, needsPhone, nestedDeeperThan, RecordProblems } from './values.js';
import { requireObject } from '../catalog/entities.js';
import { requireTenant } from '../rules.js';
import { diffRecords, type ChangeDraft, type ChangeSink } from './changes.js';

export interface WriteContext {
  readonly catalog: Catalog;
  /** The caller's organization: every statement is limited to it. */
  readonly orgId: string;
  /** The caller's user id, written to created_by and updated_by. */
  readonly userId: string;
  /**
   * Clock for created_at / updated_at (epoch ms). Default: the database's clock, read inside the
   * write transaction once it holds a transaction id, which is what lets the connector's
   * incremental sync prove it skips no late commit (docs/connector.md). Another clock is for tests.
   */
  readonly now?: () => number;
  /** Most records one bulk call may carry. Default 1000. */
  readonly maxRecords?: number;
  /** Budget of each statement, in milliseconds. Default 20000 for reads; none for writes. */
  readonly timeoutMs?: number;
  /**
   * Where each committed change is recorded, in the write's own transaction (the service's
   * change log). None by default: nothing is recorded.
   */
  readonly changes?: ChangeSink;
}

export type ReadContext = Omit<WriteContext, 'userId'>;

export const DEFAULT_MAX_RECORDS = 1000;

export interface UpsertResult {
  records_created: number;
  records_updated: number;
  failed_records: Record<string, unknown>[] | null;
  created_records: Record<string, unknown>[] | null;
  updated_records: Record<string, unknown>[] | null;
  records: Record<string, unknown>[];
}

// ------------------------------------------------------------------ the four functions

/**
 * Creates every record or none, in one transaction. Any problem in any record — field values,
 * required columns, relations, unique values (against the database and within the batch) —
 * throws `VALIDATION_FAILED` 'Failed to create records' listing all of them, and nothing is written.
 */
export async function bulkCreate(db: Writable, slug: string, records: unknown, ctx: WriteContext): Promise<{ message: string; ids: string[] }> {
  const { obj, clock } = setUp(slug, ctx, true);
  const problems = new RecordProblems(obj.slug);
  if (!Array.isArray(records)) {
    problems.add(null, '', 'INVALID_RECORD', 'the body must be a JSON array of records');
    throw OqlError.validation('Failed to create records', problems.list);
  }
  checkCount(records.length, ctx);
  const phone = needsPhone(obj, records) ? await phoneLibrary() : null;
  const drafts = records.map((r, i) => {
    if (isPlainRecord(r)) return checkFields(obj, r, i, 'create', phone, problems);
    problems.add(i, '', 'INVALID_RECORD', 'each record must be a JSON object');
    return null;
  });
  return inWriteTransaction(db, { tenant: ctx.orgId, timeoutMs: ctx.timeoutMs }, async (tx) => {
    const entries = drafts.flatMap((values, index) => (values ? [{ index, values, self: null }] : []));
    // The clock, the lock and the checks' reads wait on no answer of each other: one round trip.
    const [at] = await together<[number, void, void]>(tx, (q) => [
      clock(q), lockForUnique(q, ctx.catalog, obj, ctx.orgId), checkValues(q, ctx.catalog, obj, ctx.orgId, entries, problems),
    ]);
    if (problems.size > 0) throw OqlError.validation('Failed to create records', problems.list);
    const newRow = rowMaker(obj, ctx, at);
    const rows = entries.map((e) => newRow(e.values));
    // The ids are made here, so the change log's rows wait on no answer of the INSERT: both go out
    // with the COMMIT, one round trip. A create's row keeps its ids, not its record, and the answer
    // names none: nothing is read back.
    const changes: ChangeDraft[] = rows.map((r) => ({ objectSlug: obj.slug, recordId: r.id, operation: 'created', record: null }));
    const insert = insertStatement(ctx.catalog, obj, ctx.orgId, rows);
    await together(tx, (q) => [q.rows(insert.sql, insert.params), appendChanges(q, ctx, changes)]);
    return { message: `${rows.length} ${rows.length === 1 ? 'record' : 'records'} created`, ids: rows.map((r) => r.id) };
  }).catch(uniqueViolation('Failed to create records', obj));
}

/**
 * Each element on its own, under a savepoint: without `id` it is created, with the id of a live
 * record of the organization it is updated with the fields given, otherwise it fails with an
 * `error_message` and the others go on. The result is shaped as the service's bulk_upsert answer.
 */
export async function bulkUpsert(db: Writable, slug: string, body: unknown, ctx: WriteContext): Promise<UpsertResult> {
  const { obj, clock } = setUp(slug, ctx, true);
  const values = isPlainRecord(body) ? body.values : undefined;
  if (!Array.isArray(values)) {
    const problems = new RecordProblems(obj.slug);
    problems.add(null, 'values', 'INVALID_RECORD', 'the body must be {"values": [records]}');
    throw OqlError.validation('Failed to upsert records', problems.list);
  }
  checkCount(values.length, ctx);
  const phone = needsPhone(obj, values) ? await phoneLibrary() : null;
  return inWriteTransaction(db, { tenant: ctx.orgId, timeoutMs: ctx.timeoutMs }, async (tx) => {
    // One instant for the whole call: its elements commit together.
    const at = await clock(tx);
    await lockForUnique(tx, ctx.catalog, obj, ctx.orgId);
    await lockInIdOrder(tx, ctx.catalog, obj, ctx.orgId, values);
    const results: Record<string, unknown>[] = [];
    const changes: ChangeDraft[] = [];
    for (let i = 0; i < values.length; i++) results.push(await upsertOne(tx, obj, values[i], i, phone, ctx, at, changes));
    await appendChanges(tx, ctx, changes);
    const created = results.filter((r) => r.action === 'CREATED');
    const updated = results.filter((r) => r.action === 'UPDATED');
    const failed = results.filter((r) => r.action === 'FAILED');
    return {
      records_created: created.length,
      records_updated: updated.length,
      failed_records: failed.length > 0 ? failed : null,
      created_records: created.length > 0 ? created : null,
      updated_records: updated.length > 0 ? updated : null,
      records: results,
    };
  });
}

/** The record, whole; another organization's, a soft-deleted or a missing one is NOT_FOUND alike. */
export async function getRecord(db: Queryable, slug: string, id: string, ctx: ReadContext): Promise<Record<string, unknown>> {
  const { obj } = setUp(slug, ctx, false);
  if (!isId(id)) throw notFound(obj, id);
  const rows = await readRows(db, selectRecords(ctx.catalog, obj), [ctx.orgId, [id]], { tenant: ctx.orgId, timeoutMs: ctx.timeoutMs });
  if (rows.length === 0) throw notFound(obj, id);
  return toRecord(obj, rows[0]!);
}

/** Changes only the fields sent (and updated_at, updated_by); returns the whole record. */
export async function updateRecord(db: Writable, slug: string, id: string, patch: unknown, ctx: WriteContext): Promise<Record<string, unknown>> {
  const { obj, clock } = setUp(slug, ctx, true);
  const problems = new RecordProblems(obj.slug);
  if (!isPlainRecord(patch)) {
    problems.add(null, '', 'INVALID_RECORD', 'the body must be a JSON object of fields');
    throw OqlError.validation('Failed to update record', problems.list);
  }
  if (!isId(id)) throw notFound(obj, id);
  const phone = needsPhone(obj, [patch]) ? await phoneLibrary() : null;
  const values = checkFields(obj, patch, null, 'update', phone, problems);
  return inWriteTransaction(db, { tenant: ctx.orgId, timeoutMs: ctx.timeoutMs }, async (tx) => {
    const entries = [{ index: null, values, self: id }];
    // The clock, the lock, the record's row and the checks' reads wait on no answer of each other: one round trip.
    const [at, , existing] = await together<[number, void, Record<string, unknown>[], void]>(tx, (q) => [
      clock(q), lockForUnique(q, ctx.catalog, obj, ctx.orgId), q.rows(selectRecords(ctx.catalog, obj, true), [ctx.orgId, [id]]),
      checkValues(q, ctx.catalog, obj, ctx.orgId, entries, problems),
    ]);
    if (existing.length === 0) throw notFound(obj, id);
    if (problems.size > 0) throw OqlError.validation('Failed to update record', problems.list);
    const changed = updateValues(obj, values, ctx, at);
    const before = toRecord(obj, existing[0]!);
    if (ctx.changes?.update) {
      // The log's sink runs the statement, and records the change in it where it can.
      const { sql, params, written } = updateStatement(ctx.catalog, obj, ctx.orgId, id, changed);
      const [row] = await ctx.changes.update(tx, ctx.orgId, { sql, params, objectSlug: obj.slug, recordId: id, before, written, record: (r) => toRecord(obj, r) });
      return toRecord(obj, row!);
    }
    // Without a log, nothing follows the UPDATE: it goes out with the COMMIT.
    const record = toRecord(obj, await updateRow(tx, ctx.catalog, obj, ctx.orgId, id, changed, ctx.changes === undefined));
    await appendChanges(tx, ctx, [updatedChange(obj, before, record)]);
    return record;
  }).catch(uniqueViolation('Failed to update record', obj));
}

// ------------------------------------------------------------------ the change log

/** Records the transaction's changes, as its last statement, when the caller keeps a log. */
export async function appendChanges(tx: Tx, ctx: WriteContext, changes: readonly ChangeDraft[]): Promise<void> {
  if (ctx.changes === undefined || changes.length === 0) return;
  await ctx.changes.append(tx, ctx.orgId, changes);
}

function updatedChange(obj: ObjectDef, before: Record<string, unknown>, after: Record<string, unknown>): ChangeDraft {
  const { changedFields, previous } = diffRecords(before, after);
  return { objectSlug: obj.slug, recordId: String(after.id), operation: 'updated', record: after, changedFields, previous };
}

// ------------------------------------------------------------------ context

export function setUp(slug: string, ctx: ReadContext & { userId?: unknown }, writes: boolean): { obj: ObjectDef; clock: (tx: Tx) => Promise<number> } {
  if (typeof ctx !== 'object' || ctx === null || typeof ctx.catalog !== 'object' || ctx.catalog === null) {
    throw OqlError.plain('INVALID_OPTIONS', 'pass { catalog, orgId, userId } as the context');
  }
  requireTenant(ctx.orgId);
  if (writes) requireTenant(ctx.userId, 'userId');
  if (ctx.now !== undefined && typeof ctx.now !== 'function') throw OqlError.plain('INVALID_OPTIONS', 'now must be a function returning epoch milliseconds');
  const m = ctx.maxRecords;
  if (m !== undefined && !(Number.isSafeInteger(m) && m > 0)) throw OqlError.plain('INVALID_OPTIONS', 'maxRecords must be a positive whole number');
  const now = ctx.now;
  return { obj: requireObject(ctx.catalog, slug), clock: now ? async () => now() : databaseClock };
}

/**
 * The write's instant by the database's clock, read after the transaction has taken a
 * transaction id. From that moment the transaction shows in pg_stat_activity with a start no
 * later than this instant, so a connector page that stops short of the oldest such start
 * (connector.ts, `syncCutoff`) cannot pass a row this transaction has yet to commit. One clock
 * for writers and readers: a writer host's clock skew cannot reorder them.
 */
async function databaseClock(tx: Tx): Promise<number> {
  const [row] = await tx.rows('SELECT pg_current_xact_id()::text AS xid, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS at', []);
  return Number(row!.at);
}

/** A record id as the database can hold it; anything else cannot name a record. */
export function isId(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= 255 && !v.includes('\u0000');
}

export function checkCount(n: number, ctx: WriteContext): void {
  const max = ctx.maxRecords ?? DEFAULT_MAX_RECORDS;
  if (n > max) throw OqlError.plain('TOO_MANY_RECORDS', `too many records: ${n} (the maximum per request is ${max})`, `send at most ${max} records per call`);
}

export function notFound(obj: ObjectDef, id: unknown): OqlError {
  return notFoundIds(obj, [id]);
}

/** NOT_FOUND naming the ids (the first twenty) that name no such record of the caller's organization. */
export function notFoundIds(obj: ObjectDef, ids: readonly unknown[], which = ''): OqlError {
  const shown = ids.slice(0, 20).map((id) => (typeof id === 'string' ? JSON.stringify(id.length > 80 ? `${id.slice(0, 80)}…` : id) : String(id)));
  const more = ids.length > 20 ? ` and ${ids.length - 20} more` : '';
  return OqlError.notFound('Record not found', `no ${which}${obj.slug} record with id ${shown.join(', ')}${more} was found`);
}

// ------------------------------------------------------------------ upsert, one element

async function upsertOne(
  tx: Tx, obj: ObjectDef, element: unknown, index: number, phone: PhoneLibrary | null, ctx: WriteContext, at: number, changes: ChangeDraft[],
): Promise<Record<string, unknown>> {
  if (!isPlainRecord(element)) return failed({}, null, 'each element must be a JSON object of fields');
  const hasId = Object.hasOwn(element, 'id') && element.id !== null && element.id !== undefined;
  const id = element.id;
  if (hasId && !isId(id)) return failed(element, id, 'Invalid id: an id must be a non-empty string of at most 255 characters');
  const problems = new RecordProblems(obj.slug);
  const values = checkFields(obj, element, index, hasId ? 'update' : 'create', phone, problems, true);
  await tx.rows('SAVEPOINT oql_upsert_element', []);
  let change: ChangeDraft | null = null;
  try {
    const result = await (async () => {
      let before: Record<string, unknown> | null = null;
      if (hasId) {
        const existing = await tx.rows(selectRecords(ctx.catalog, obj, true), [ctx.orgId, [id]]);
        if (existing.length === 0) return failed(element, id, `Invalid id: no ${obj.slug} record with id ${JSON.stringify(id)} exists`);
        before = toRecord(obj, existing[0]!);
      }
      const entries = [{ index, values, self: hasId ? (id as string) : null }];
      await checkValues(tx, ctx.catalog, obj, ctx.orgId, entries, problems);
      if (problems.size > 0) return failed(element, hasId ? id : null, problems.list.map((p) => p.message).join('; '));
      if (hasId) {
        const changed = updateValues(obj, values, ctx, at);
        const record = toRecord(obj, await updateRow(tx, ctx.catalog, obj, ctx.orgId, id as string, changed));
        change = updatedChange(obj, before!, record);
        return updatedItem(record, changed);
      }
      const row = rowMaker(obj, ctx, at)(values);
      const [created] = await insertRows(tx, ctx.catalog, obj, ctx.orgId, [row]);
      change = { objectSlug: obj.slug, recordId: row.id, operation: 'created', record: { ...created! } };
      const record = created!;
      put(record, 'system_created_at', at);
      put(record, 'action', 'CREATED');
      return record;
    })();
    await tx.rows('RELEASE SAVEPOINT oql_upsert_element', []);
    if (change !== null) changes.push(change);
    return result;
  } catch (e) {
    // A unique index the checks could not see (another writer without our lock): this element fails, the rest go on.
    if ((e as { code?: unknown }).code !== '23505') throw e;
    await tx.rows('ROLLBACK TO SAVEPOINT oql_upsert_element', []);
    return failed(element, hasId ? id : null, 'a unique value is already used by another record');
  }
}

function failed(element: Record<string, unknown>, id: unknown, message: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // A value nested deeper than any field stores is echoed as null: the answer is serialized by
  // JSON.stringify, which recurses, and a 5,000-deep echo would overflow the stack there.
  for (const key of Object.keys(element)) put(out, key, nestedDeeperThan(element[key], MAX_JSON_DEPTH) ? null : element[key]);
  put(out, 'action', 'FAILED');
  put(out, 'error_message', message);
  put(out, 'id', id ?? null);
  return out;
}

/** What the service returns for an updated element: id, the changed fields, and the system fields. */
function updatedItem(record: Record<string, unknown>, changed: Map<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  put(out, 'id', record.id);
  for (const slug of changed.keys()) put(out, slug, record[slug]);
  for (const key of ['object_id', 'org_id', 'search_field', 'updated_at', 'updated_by']) if (key in record) put(out, key, record[key]);
  put(out, 'action', 'UPDATED');
  return out;
}

// ------------------------------------------------------------------ system values and rows

interface NewRow {
  readonly id: string;
  readonly values: Map<string, unknown>;
  readonly search: string | null;
}

function systemValues(obj: ObjectDef, ctx: WriteContext, at: number, create: boolean): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const set = (slug: string, value: unknown, types: readonly string[]) => {
    const col = obj.columns.get(slug);
    if (col && col.column !== null && types.includes(col.type)) out.set(slug, value);
  };
  const times = ['datetime', 'date', 'number', 'integer'];
  const users = ['relation', 'text'];
  if (create) { set('created_at', at, times); set('created_by', ctx.userId, users); }
  set('updated_at', at, times);
  set('updated_by', ctx.userId, users);
  return out;
}

/** Makes the new rows of one write at `at`: the system columns and the name column are the same for each. */
function rowMaker(obj: ObjectDef, ctx: WriteContext, at: number): (values: Map<string, unknown>) => NewRow {
  const system = systemValues(obj, ctx, at, true);
  const name = nameColumn(obj);
  return (values) => {
    const all = new Map(values);
    for (const [slug, value] of system) all.set(slug, value);
    return { id: newRecordId(obj.slug, at), values: all, search: name ? searchText(all.get(name.slug)) : null };
  };
}

/** The columns an update sets: the fields sent, the system columns, and the search form when the name changed. */
export function updateValues(obj: ObjectDef, values: Map<string, unknown>, ctx: WriteContext, at: number): Map<string, unknown> {
  return new Map([...values, ...systemValues(obj, ctx, at, false)]);
}

/**
 * The INSERT of the rows. One statement whatever the number of rows: the rows travel as one JSON
 * document, taken apart by `json_to_recordset` into the columns' types, where a VALUES list of a
 * bind parameter per value costs PostgreSQL more to parse and plan than to insert
 * (bench/RESULTS.md, "bulk_create"). A value takes the path a bind parameter of its type would: its
 * text through the type's input function, an array to text[], and a json field's value as the JSON
 * it is. A column with the same string, number or boolean in every row of several (the system
 * columns of a create, a stage given to all) is one bind parameter instead, and a field without a
 * value is left out of its row (json_to_recordset makes a missing field NULL, as it does a null
 * one): the document holds only what differs. The organization is `$1` in the select list, in
 * every row as docs/scale.md asks of an INSERT.
 */
function insertStatement(catalog: Catalog, obj: ObjectDef, orgId: string, rows: readonly NewRow[]): Statement {
  const { idColumn, tenantColumn, searchColumn } = catalog.mapping;
  // $1 the organization, $2 the document (set below), then the values every row shares.
  const params: unknown[] = [orgId, null];
  const names = [quoteIdent(idColumn), quoteIdent(tenantColumn)];
  const select = ['r."c0"', '$1::text'];
  // The document's fields: c0 the id, then one per column that varies from row to row.
  const fields: { key: string; type: string; value: (row: NewRow) => unknown }[] = [{ key: 'c0', type: 'text', value: (row) => row.id }];
  const add = (column: string, type: string, value: (row: NewRow) => unknown, col?: ColumnDef) => {
    names.push(quoteIdent(column));
    const same = sameInEveryRow(rows, value);
    if (same !== undefined) {
      params.push(col ? paramValue(col, same) : same);
      select.push(`$${params.length}::${type}`);
      return;
    }
    const key = `c${fields.length}`;
    fields.push({ key, type, value });
    select.push(`r."${key}"`);
  };
  if (searchColumn !== null) add(searchColumn, 'text', (row) => row.search);
  for (const c of storedColumns(obj)) add(c.column!, cast(c), (row) => row.values.get(c.slug), c);
  const documents = rows.map((row) => {
    const out: Record<string, unknown> = {};
    for (const f of fields) {
      const value = f.value(row);
      if (value !== null && value !== undefined) out[f.key] = value;
    }
    return out;
  });
  params[1] = JSON.stringify(documents);
  return {
    sql: `INSERT INTO ${tableOf(catalog, obj)} (${names.join(', ')}) SELECT ${select.join(', ')} FROM json_to_recordset($2::json) AS r(${fields.map((f) => `"${f.key}" ${f.type}`).join(', ')})`,
    params,
  };
}

/** The value `value` gives every one of two or more rows, when it is one string, number or boolean. */
function sameInEveryRow(rows: readonly NewRow[], value: (row: NewRow) => unknown): string | number | boolean | undefined {
  if (rows.length < 2) return undefined;
  const first = value(rows[0]!);
  if (typeof first !== 'string' && typeof first !== 'number' && typeof first !== 'boolean') return undefined;
  for (let i = 1; i < rows.length; i++) if (value(rows[i]!) !== first) return undefined;
  return first;
}

/** Inserts the rows (`insertStatement`); returns them as get-one would, in the order given. */
async function insertRows(tx: Tx, catalog: Catalog, obj: ObjectDef, orgId: string, rows: readonly NewRow[]): Promise<Record<string, unknown>[]> {
  const { sql, params } = insertStatement(catalog, obj, orgId, rows);
  const returned = await tx.rows(`${sql} RETURNING ${recordSelect(catalog, obj)}`, params);
  const inserted = new Map<string, Record<string, unknown>>();
  for (const r of returned) inserted.set(String(r.id), toRecord(obj, r));
  return rows.map((r) => inserted.get(r.id)!);
}

/** Updates one live record; `last`: the transaction's last statement, sent with its COMMIT. */
async function updateRow(tx: Tx, catalog: Catalog, obj: ObjectDef, orgId: string, id: string, values: Map<string, unknown>, last = false): Promise<Record<string, unknown>> {
  const { sql, params } = updateStatement(catalog, obj, orgId, id, values);
  const [row] = await (last ? tx.lastRows(sql, params) : tx.rows(sql, params));
  return row!;
}

/** The UPDATE of one live record's fields, returning the record's columns, and the record keys it writes. */
function updateStatement(catalog: Catalog, obj: ObjectDef, orgId: string, id: string, values: Map<string, unknown>): { sql: string; params: unknown[]; written: string[] } {
  const { idColumn, tenantColumn, searchColumn } = catalog.mapping;
  const params: unknown[] = [orgId, id];
  const sets: string[] = [];
  const written = [...values.keys()];
  for (const [slug, value] of values) {
    const col = obj.columns.get(slug)!;
    params.push(paramValue(col, value));
    sets.push(`${quoteIdent(col.column!)} = $${params.length}::${cast(col)}`);
  }
  const name = nameColumn(obj);
  if (searchColumn !== null && name && values.has(name.slug)) {
    params.push(searchText(values.get(name.slug)));
    sets.push(`${quoteIdent(searchColumn)} = $${params.length}::text`);
    written.push('search_field');
  }
  if (sets.length === 0) sets.push(`${quoteIdent(idColumn)} = ${quoteIdent(idColumn)}`);
  const sql = `UPDATE ${tableOf(catalog, obj)} SET ${sets.join(', ')} WHERE ${quoteIdent(tenantColumn)} = $1 AND ${quoteIdent(idColumn)} = $2${liveGuard(catalog)} RETURNING ${recordSelect(catalog, obj)}`;
  return { sql, params, written };
}

// ------------------------------------------------------------------ checks against the database

export interface Entry {
  readonly index: number | null;
  readonly values: Map<string, unknown>;
  /** The record's own id on update, so its current value does not count as taken. */
  readonly self: string | null;
}

/** The live records the entries' relation values name (every relation value must be a live record of the related object in the same organization), by related object: one statement a related object, all sent before any answer is awaited. */
async function relatedIds(tx: Tx, catalog: Catalog, obj: ObjectDef, orgId: string, entries: readonly Entry[]): Promise<Map<string, Set<string>>> {
  const wanted = new Map<string, Set<string>>(); // related object → ids
  for (const e of entries) {
    for (const [slug, value] of e.values) {
      const col = obj.columns.get(slug)!;
      if (col.relation?.kind !== 'to-one' || typeof value !== 'string') continue;
      let ids = wanted.get(col.relation.object);
      if (!ids) wanted.set(col.relation.object, (ids = new Set()));
      ids.add(value);
    }
  }
  const { idColumn, tenantColumn } = catalog.mapping;
  const found = await Promise.all([...wanted].map(async ([target, ids]) => {
    const rows = await tx.rows(
      `SELECT ${quoteIdent(idColumn)} AS "id" FROM ${tableOf(catalog, catalog.objects.get(target)!)} WHERE ${quoteIdent(tenantColumn)} = $1 AND ${quoteIdent(idColumn)} = ANY($2::text[])${liveGuard(catalog)}`,
      [orgId, [...ids]],
    );
    return [target, new Set(rows.map((r) => String(r.id)))] as const;
  }));
  return new Map(found);
}

/** A problem for each relation value that names no live record (`relatedIds`); the value is dropped from its entry. */
function judgeRelations(obj: ObjectDef, entries: readonly Entry[], found: ReadonlyMap<string, ReadonlySet<string>>, problems: RecordProblems): void {
  for (const e of entries) {
    for (const [slug, value] of e.values) {
      const col = obj.columns.get(slug)!;
      if (col.relation?.kind !== 'to-one' || typeof value !== 'string') continue;
      if (!found.get(col.relation.object)!.has(value)) {
        problems.add(e.index, slug, 'INVALID_RELATION', `'${slug}' names no ${col.relation.object} record with id ${JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value)}`);
        e.values.delete(slug);
      }
    }
  }
}

/**
 * Relations, then unique values, of the entries: the statements of both sent together (and with
 * the statements of the steps beside it, when `tx` is a `together`'s), judged in that order once
 * answered (a relation value that names no record is not judged for uniqueness).
 */
async function checkValues(tx: Tx, catalog: Catalog, obj: ObjectDef, orgId: string, entries: readonly Entry[], problems: RecordProblems): Promise<void> {
  const [related, holders] = await together<[Map<string, Set<string>>, Holders]>(tx, (q) => [relatedIds(q, catalog, obj, orgId, entries), uniqueHolders(q, catalog, obj, orgId, entries)]);
  judgeRelations(obj, entries, related, problems);
  judgeUnique(obj, entries, holders, problems);
}

function uniqueColumns(obj: ObjectDef): ColumnDef[] {
  return [...obj.columns.values()].filter((c) => c.unique && isWritable(c) && c.type !== 'multiselect' && c.type !== 'json');
}

/** Unique values: not held by another live record of the organization, nor twice in one request. */
export async function checkUnique(tx: Tx, catalog: Catalog, obj: ObjectDef, orgId: string, entries: readonly Entry[], problems: RecordProblems): Promise<void> {
  judgeUnique(obj, entries, await uniqueHolders(tx, catalog, obj, orgId, entries), problems);
}

/** Per unique column: the live records that hold each of the entries' values (by `keyOf`). */
type Holders = Map<string, Map<string, string[]>>;

/** Who holds the entries' unique values: one statement a unique column, all sent before any answer is awaited. */
async function uniqueHolders(tx: Tx, catalog: Catalog, obj: ObjectDef, orgId: string, entries: readonly Entry[]): Promise<Holders> {
  const { idColumn, tenantColumn } = catalog.mapping;
  const found = await Promise.all(uniqueColumns(obj).map(async (col) => {
    const holders = new Map<string, string[]>();
    const values = entries.map((e) => e.values.get(col.slug)).filter((v) => v !== null && v !== undefined);
    if (values.length === 0) return [col.slug, holders] as const;
    const rows = await tx.rows(
      `SELECT ${quoteIdent(col.column!)} AS "v", ${quoteIdent(idColumn)} AS "id" FROM ${tableOf(catalog, obj)} WHERE ${quoteIdent(tenantColumn)} = $1 AND ${quoteIdent(col.column!)} = ANY($2::${cast(col)}[])${liveGuard(catalog)}`,
      [orgId, values],
    );
    for (const r of rows) {
      const k = keyOf(col, r.v);
      holders.set(k, [...(holders.get(k) ?? []), String(r.id)]);
    }
    return [col.slug, holders] as const;
  }));
  return new Map(found);
}

/** A problem for each unique value another live record holds (`uniqueHolders`), or an earlier entry of the request has. */
function judgeUnique(obj: ObjectDef, entries: readonly Entry[], holdersOf: Holders, problems: RecordProblems): void {
  for (const col of uniqueColumns(obj)) {
    const holders = holdersOf.get(col.slug) ?? new Map<string, string[]>();
    const firstInRequest = new Map<string, number | null>();
    for (const e of entries) {
      const v = e.values.get(col.slug);
      if (v === null || v === undefined) continue;
      const k = keyOf(col, v);
      if ((holders.get(k) ?? []).some((holder) => holder !== e.self)) {
        problems.add(e.index, col.slug, 'NOT_UNIQUE', `'${col.slug}' must be unique: another ${obj.slug} record already has this value`);
      } else if (firstInRequest.has(k)) {
        const first = firstInRequest.get(k);
        const which = typeof first === 'number' ? `record ${first}` : 'another record';
        problems.add(e.index, col.slug, 'NOT_UNIQUE', `'${col.slug}' must be unique: ${which} of this request has the same value`, typeof first === 'number' ? String(first) : null);
      } else firstInRequest.set(k, e.index);
    }
  }
}

/** Values as comparable keys: the driver returns numeric and bigint columns as strings. */
function keyOf(col: ColumnDef, v: unknown): string {
  return NUMERIC.has(col.type) ? `n${Number(v)}` : `s${String(v)}`;
}

const NUMERIC = new Set(['number', 'integer', 'currency', 'date', 'datetime']);

/**
 * Writers of one organization's records of an object with unique columns queue on a
 * transaction-scoped advisory lock, so "check, then insert" cannot interleave: of two writers
 * of the same value exactly one wins, with or without the unique index of `uniqueIndexes`.
 */
export async function lockForUnique(tx: Tx, catalog: Catalog, obj: ObjectDef, orgId: string): Promise<void> {
  if (uniqueColumns(obj).length === 0) return;
  await tx.rows('SELECT pg_advisory_xact_lock(hashtext($1))', [`oql records|${catalog.mapping.schema}|${obj.table}|${orgId}`]);
}

/**
 * Locks the rows an upsert will update, all at once and in id order, before any is changed:
 * two upserts naming the same records in different orders then queue instead of deadlocking.
 */
async function lockInIdOrder(tx: Tx, catalog: Catalog, obj: ObjectDef, orgId: string, values: readonly unknown[]): Promise<void> {
  const ids = [...new Set(values.flatMap((v) => (isPlainRecord(v) && isId(v.id) ? [v.id] : [])))].sort();
  if (ids.length === 0) return;
  const { idColumn, tenantColumn } = catalog.mapping;
  await tx.rows(
    `SELECT ${quoteIdent(idColumn)} FROM ${tableOf(catalog, obj)} WHERE ${quoteIdent(tenantColumn)} = $1 AND ${quoteIdent(idColumn)} = ANY($2::text[])${liveGuard(catalog)} ORDER BY ${quoteIdent(idColumn)} COLLATE "C" FOR UPDATE`,
    [orgId, ids],
  );
}

/** A unique index the checks did not cover turns into the validation error the checks would give. */
export function uniqueViolation(message: string, obj: ObjectDef): (e: unknown) => never {
  return (e: unknown) => {
    const cause = (e as { cause?: { code?: unknown } } | null)?.cause;
    if (cause?.code === '23505') {
      const problems = new RecordProblems(obj.slug);
      problems.add(null, '', 'NOT_UNIQUE', 'a unique value is already used by another record');
      throw OqlError.validation(message, problems.list);
    }
    throw e;
  };
}
