import { createHash } from 'node:crypto';
import type { Catalog } from '../../catalog/types.js';
import { OqlError } from '../../diagnostics/diagnostic.js';
import { diffRecords, undoChange, undoOf, type ChangeDraft, type ChangeOperation, type ChangeSink, type Undo } from '../../records/changes.js';
import { inWriteTransaction, type Tx as RecordsTx } from '../../records/db.js';
import { loggedRecords } from '../../records/lifecycle.js';
import { put } from '../../run/decode.js';
import type { Database, Tx } from '../../run/database.js';
import { databaseError } from '../../run/errors.js';
import { SERVICE_SCHEMA } from '../migrations.js';

const S = SERVICE_SCHEMA;

/** Which surface a change came through. Purges are the service's own: `system`, with no user. */
export type ChangeSurface = 'rest' | 'mcp' | 'console' | 'cli' | 'system';

export interface ChangeActor {
  readonly user_id: string | null;
  readonly surface: ChangeSurface;
}

/** One change as readers get it (docs/changes.md). */
export interface Change {
  readonly cursor: string;
  readonly event_id: string;
  readonly object_slug: string;
  readonly record_id: string;
  readonly operation: ChangeOperation;
  readonly changed_fields: string[] | null;
  readonly record: Record<string, unknown> | null;
  readonly previous: Record<string, unknown> | null;
  readonly actor: ChangeActor;
  readonly committed_at: number;
}

export interface ChangePage {
  readonly changes: Change[];
  /** Where the next read starts: the last change's cursor, or the one given when there was none. */
  readonly next_cursor: string;
  readonly has_more: boolean;
}

// A cursor is a position of the log, opaque to clients: "c" and the position in base 36, so it
// reads as a token and not as a number to do arithmetic on. Position 0 is before every change.
const CURSOR = /^c[0-9a-z]{1,13}$/;

export function cursorOf(position: bigint | number | string): string {
  return `c${BigInt(position).toString(36)}`;
}

/** The position a cursor names; INVALID_CURSOR for anything this service did not hand out. */
export function positionOf(cursor: unknown): bigint {
  if (typeof cursor !== 'string' || !CURSOR.test(cursor)) {
    throw OqlError.plain('INVALID_CURSOR', `${typeof cursor === 'string' ? JSON.stringify(cursor.slice(0, 40)) : 'this value'} is not a change cursor`,
      'pass a cursor exactly as a change, next_cursor or /api/v1/changes/head gave it, or leave after out to start at the oldest change kept');
  }
  let n = 0n;
  for (const ch of cursor.slice(1)) n = n * 36n + BigInt(parseInt(ch, 36));
  if (n > 9_223_372_036_854_775_807n) throw positionOf(null);
  return n;
}

/**
 * A row of the log as `expand` reads it. A row is one change, or the changes of one create
 * statement (`width` of them, their record ids in `record_ids`): their positions are the `width`
 * ones that end at the row's own. The position sequence steps by 1,000 (migration 13) and a row
 * holds at most 1,000 changes, so no other row's position falls among them, positions stay in
 * commit order, one per change, and a cursor is still one of them.
 */
const COLUMNS = `position::text AS pos, width, event_id::text AS event_id, object_slug, record_id, record_ids, operation, changed_fields, record, previous, undo,
  actor_user_id, actor_surface, committed_at::text AS committed_at`;

/** The most changes one row of the log holds (the sequence's step). */
const ROW_WIDTH = 1000;

export interface ChangeLogOptions {
  /** Whether a change keeps its record, a checkpoint for readers (default: one in CHECKPOINT_EVERY, at random). */
  readonly checkpoint?: (() => boolean) | undefined;
  /**
   * The statement budget of every read of an organization's changes, its records' rebuild
   * included (the service's query budget): a read past it fails QUERY_TIMEOUT. Default: none.
   */
  readonly timeoutMs?: number | undefined;
  /**
   * Whether anything listens to an organization's changes: an SQL condition on the text of the
   * organization's parameter, selected by the statement that writes a write's changes, in its
   * transaction (`ChangeSink.listened`). Default: none, and a sink cannot tell.
   */
  readonly listening?: ((orgParam: string) => string) | undefined;
}

/**
 * The change log of every organization: one table of the service's schema, written by the record
 * functions in each write's own transaction (`sink`), read by the feed, the stream, the MCP tool
 * and the webhook sender, pruned past its retention.
 *
 * A row keeps what a change did, not the record after it: for an update its changed fields and
 * their old values, for a delete, restore or purge what takes the record back to before it
 * (`undoOf`), for a create nothing but its id; about one change in CHECKPOINT_EVERY keeps its
 * record too. A reader rebuilds each change's record from the first checkpoint after it, or from
 * the record as it stands, undoing the record's changes in between newest first, all in one
 * snapshot (`records`). Rows written before migration 13 kept their record, and it is read as
 * kept.
 */
export class ChangeLog {
  private readonly checkpoint: () => boolean;
  private readonly timeoutMs: number | undefined;
  private readonly listening: ((orgParam: string) => string) | undefined;

  constructor(private readonly db: Database, private readonly catalog: Catalog, options: ChangeLogOptions = {}) {
    this.checkpoint = options.checkpoint ?? (() => Math.random() * CHECKPOINT_EVERY < 1);
    this.timeoutMs = options.timeoutMs;
    this.listening = options.listening;
  }

  /** What the record functions record a request's changes with, for this actor. */
  sink(actor: ChangeActor): ChangeSink {
    // Without a condition to ask, the sink cannot tell: it answers true.
    let listened = this.listening === undefined;
    const heard = (rows: readonly Record<string, unknown>[]) => {
      if (rows[0]?.['listened'] === true) listened = true;
    };
    return {
      get listened() {
        return listened;
      },
      append: async (tx, orgId, changes) => heard(await this.write(tx, orgId, actor, logRows(changes, this.checkpoint))),
      update: async (tx, orgId, update) => {
        if (this.checkpoint()) {
          // A checkpoint keeps the record after the update, known once the UPDATE has run: its
          // row goes in a statement of its own, sent with the COMMIT.
          const rows = await tx.rows(update.sql, update.params);
          const after = update.record(rows[0]!);
          const { changedFields, previous } = diffRecords(update.before, after);
          heard(await this.write(tx, orgId, actor, [{ objectSlug: update.objectSlug, operation: 'updated', ids: [update.recordId], changedFields, previous, undo: null, record: after }]));
          return rows;
        }
        // The UPDATE and its change in one statement, sent with the COMMIT: the log costs the
        // write no statement. `log_change`, one more expression of the UPDATE's RETURNING list, takes
        // the organization's lock and writes the row once the record's row is updated; its plan is
        // kept, where an INSERT here would be planned with every update, and no CTE or join is
        // planned around the UPDATE. The row keeps the old values of every field the statement
        // writes, and no changed_fields: a reader, who rebuilds the record after the change, finds
        // which changed.
        const params = [...update.params];
        const param = (value: unknown) => {
          params.push(value);
          return `$${params.length}`;
        };
        const previous: Record<string, unknown> = {};
        for (const k of update.written) put(previous, k, Object.hasOwn(update.before, k) ? update.before[k] : null);
        const org = param(orgId);
        const rows = await tx.lastRows(
          `${update.sql}, ${S}.log_change(${org}, ${param(actor.user_id)}, ${param(actor.surface)}, ${param(update.objectSlug)}, 'updated', ${param(update.recordId)}, NULL, ${param(JSON.stringify(previous))}, NULL, NULL) AS logged${this.listened(org)}`,
          params);
        heard(rows);
        return rows;
      },
    };
  }

  /** `, <condition> AS listened` for a statement's select list, or nothing. */
  private listened(orgParam: string): string {
    return this.listening === undefined ? '' : `, (${this.listening(orgParam)}) AS listened`;
  }

  /** Rows of the log, as the transaction's last statement; answers the statement's row (none when there was nothing to write). */
  private async write(tx: RecordsTx, orgId: string, actor: ChangeActor, rows: readonly LogRow[]): Promise<Record<string, unknown>[]> {
    if (rows.length === 0) return [];
    // One statement, a function of migration 13: the organization's lock, held until the
    // transaction ends, so that its positions follow commit order, then the rows in the drafts'
    // order. The last statement of the write, sent with its COMMIT: the lock is held for no
    // round trip. One row, most writes, as scalars; several as parallel arrays, not one JSON
    // document: nothing to take apart on the server.
    const [one] = rows;
    if (rows.length === 1 && one!.ids.length === 1) {
      return tx.lastRows(`SELECT ${S}.log_change($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)${this.listened('$1')}`,
        [orgId, actor.user_id, actor.surface, one!.objectSlug, one!.operation, one!.ids[0], jsonText(one!.changedFields), jsonText(one!.previous), jsonText(one!.undo), jsonText(one!.record)]);
    }
    return tx.lastRows(
      `SELECT ${S}.log_changes($1, $2, $3, $4::text[], $5::text[], $6::int[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])${this.listened('$1')}`,
      [orgId, actor.user_id, actor.surface,
        rows.map((r) => r.objectSlug), rows.map((r) => r.operation), rows.map((r) => r.ids.length), rows.flatMap((r) => r.ids),
        rows.map((r) => jsonText(r.changedFields)), rows.map((r) => jsonText(r.previous)), rows.map((r) => jsonText(r.undo)), rows.map((r) => jsonText(r.record))]);
  }

  /**
   * Up to `limit` changes of the organization after the cursor, oldest first, of the objects named.
   * A cursor from before the retention pruned the organization's changes is CURSOR_EXPIRED.
   */
  async read(orgId: string, after: bigint, objects: readonly string[], limit: number): Promise<ChangePage> {
    // Each row after the cursor holds at least one change after it, so the first limit + 1 rows
    // hold the page and the one change that says there is more; of those, the rows that come after
    // limit + 1 changes are left in the table (`before`: the changes after the cursor in the rows
    // before this one). The horizon in the same snapshot: a prune that took rows this read should
    // have had moved it with them.
    for (;;) {
      const rows = await this.page<ChangeRow & { horizon: string | null }>(orgId,
        `SELECT h.horizon::text AS horizon, c.* FROM (SELECT (SELECT pruned_through FROM ${S}.change_horizons WHERE org_id = $1) AS horizon) h
           LEFT JOIN LATERAL (
             SELECT * FROM (
               SELECT r.*, sum(least(r.width, r.position - $2::bigint)) OVER (ORDER BY r.position) - least(r.width, r.position - $2::bigint) AS before
                 FROM (SELECT ${COLUMNS}, position FROM ${S}.changes WHERE org_id = $1 AND position > $2::bigint AND object_slug = ANY($3::text[]) ORDER BY position LIMIT $4) r) w
              WHERE w.before < $4) c ON true
          ORDER BY c.position`,
        [orgId, after.toString(), objects, limit + 1]);
      const horizon = BigInt(rows[0]?.horizon ?? '0');
      if (after > 0n && after < horizon) throw cursorExpired();
      const found = expand(rows.filter((r) => r.pos !== null), after).slice(0, limit + 1);
      const page = await this.records(orgId, after, horizon, found.slice(0, limit));
      // The retention took changes of the page since it was read: the cursor has expired now, or,
      // from the oldest change kept, the page starts later.
      if (page === null) {
        if (after > 0n) throw cursorExpired();
        continue;
      }
      return { changes: page, next_cursor: page.length > 0 ? page[page.length - 1]!.cursor : cursorOf(after), has_more: found.length > limit };
    }
  }

  /**
   * The organization's first change after `after` of these objects and operations (null: any), for
   * a reader that takes one at a time, in order (the webhook sender), and the organization's head
   * in the same snapshot: when there is no such change, the reader may move up to that head without
   * passing one that commits later.
   */
  async next(orgId: string, after: bigint, objects: readonly string[] | null, operations: readonly string[] | null): Promise<{ change: Change | null; head: bigint }> {
    const { changes, head } = await this.upcoming(orgId, after, objects, operations, 1);
    return { change: changes[0] ?? null, head };
  }

  /** `next`'s first `limit` changes at once, in order, for a reader that keeps them until it has taken each. */
  async upcoming(orgId: string, after: bigint, objects: readonly string[] | null, operations: readonly string[] | null, limit: number): Promise<{ changes: Change[]; head: bigint }> {
    for (;;) {
      const rows = await this.page<ChangeRow & { head: string | null; horizon: string | null }>(orgId,
        `SELECT h.head::text AS head, h.horizon::text AS horizon, c.*
           FROM (SELECT max(position) AS head, (SELECT pruned_through FROM ${S}.change_horizons WHERE org_id = $1) AS horizon FROM ${S}.changes WHERE org_id = $1) h
           LEFT JOIN LATERAL (
             SELECT ${COLUMNS} FROM ${S}.changes
              WHERE org_id = $1 AND position > $2::bigint AND ($3::text[] IS NULL OR object_slug = ANY($3::text[])) AND ($4::text[] IS NULL OR operation = ANY($4::text[]))
              ORDER BY changes.position LIMIT $5) c ON true
          ORDER BY c.pos::bigint`,
        [orgId, after.toString(), objects, operations, limit]);
      const head = BigInt(rows[0]?.head ?? '0');
      const found = expand(rows.filter((r) => r.pos !== null), after).slice(0, limit);
      const changes = await this.records(orgId, after, BigInt(rows[0]?.horizon ?? '0'), found);
      // The retention took some of them since: what is left after `after` is read again.
      if (changes !== null) return { changes, head };
    }
  }

  /** The organization's newest position: a consumer starting here gets only what commits from now on. */
  async head(orgId: string): Promise<bigint> {
    const { rows } = await this.db.query<{ p: string | null; h: string | null }>(
      `SELECT (SELECT max(position) FROM ${S}.changes WHERE org_id = $1)::text AS p, (SELECT pruned_through FROM ${S}.change_horizons WHERE org_id = $1)::text AS h`,
      [orgId]);
    const p = BigInt(rows[0]?.p ?? '0');
    const h = BigInt(rows[0]?.h ?? '0');
    return p > h ? p : h;
  }

  /** The newest position of each of these organizations that has changes, for the watcher. */
  async heads(orgIds: readonly string[]): Promise<Map<string, bigint>> {
    if (orgIds.length === 0) return new Map();
    const { rows } = await this.db.query<{ org_id: string; p: string }>(
      `SELECT o AS org_id, (SELECT max(position) FROM ${S}.changes WHERE org_id = o)::text AS p FROM unnest($1::text[]) AS o`, [orgIds]);
    return new Map(rows.filter((r) => r.p !== null).map((r) => [String(r.org_id), BigInt(r.p)]));
  }

  /**
   * Removes changes committed before `before`, at most `batch` rows of the log a transaction and
   * `maxBatches` in all, moving each organization's horizon with them. Returns how many changes went.
   */
  async prune(before: number, batch = 1000, maxBatches = 50): Promise<number> {
    let pruned = 0;
    for (let i = 0; i < maxBatches; i++) {
      const { changes, rows: removed } = await this.db.transaction(async (tx) => {
        const { rows } = await tx.query<{ org_id: string; p: string; n: string; rows: string }>(
          `WITH gone AS (
             DELETE FROM ${S}.changes WHERE ctid = ANY(ARRAY(
               SELECT ctid FROM ${S}.changes WHERE committed_at < $1::bigint ORDER BY position LIMIT $2 FOR UPDATE SKIP LOCKED))
             RETURNING org_id, position, width)
           SELECT org_id, max(position)::text AS p, sum(width)::text AS n, count(*)::text AS rows FROM gone GROUP BY org_id`,
          [before, batch]);
        for (const r of rows) {
          await tx.query(
            `INSERT INTO ${S}.change_horizons (org_id, pruned_through) VALUES ($1, $2::bigint)
             ON CONFLICT (org_id) DO UPDATE SET pruned_through = greatest(${S}.change_horizons.pruned_through, EXCLUDED.pruned_through)`,
            [r.org_id, r.p]);
        }
        return { changes: rows.reduce((sum, r) => sum + Number(r.n), 0), rows: rows.reduce((sum, r) => sum + Number(r.rows), 0) };
      });
      pruned += changes;
      if (removed < batch) break;
    }
    return pruned;
  }

  /**
   * One statement that reads an organization's changes: in a transaction of its own, for the
   * statement budget and the organization's share of the connections; as the transaction's last
   * statement its COMMIT goes with it where the driver can, so it is still one round trip.
   */
  private async page<T>(orgId: string, sql: string, params: readonly unknown[]): Promise<T[]> {
    return await inWriteTransaction(this.db, { tenant: orgId, timeoutMs: this.timeoutMs }, (tx) => tx.lastRows(sql, params)) as T[];
  }

  /** `fn` in a read-only transaction of one snapshot: the records as they stand and the changes a rebuild walks back agree. */
  private async snapshot<T>(orgId: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction(async (tx) => {
        await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
        return fn(tx);
      }, { tenant: orgId, timeoutMs: this.timeoutMs });
    } catch (e) {
      throw databaseError(e, this.timeoutMs ?? 0);
    }
  }

  /**
   * The changes found, each with its record: as the row kept it (a checkpoint, or a row from before
   * migration 13), or rebuilt by undoing, newest first, the record's changes from the first
   * checkpoint at or after its newest change in the page, or else from the record as it stands in
   * this snapshot (`undoChange`). A record whose row is gone without a purge in the log (removed by
   * hand) reads as null in its changes before that. Null when the retention has moved past
   * `horizon`, the one the changes were found under, since: the walk may lack changes it took.
   */
  private async records(orgId: string, after: bigint, horizon: bigint, found: readonly Found[]): Promise<Change[] | null> {
    if (found.length === 0) return [];
    // The records to rebuild, and the newest of their changes in the page.
    const upto = new Map<string, { slug: string; id: string; upto: bigint }>();
    for (const f of found) {
      if (stored(f.row)) continue;
      const k = key(f.row.object_slug, f.recordId);
      const seen = upto.get(k);
      if (seen === undefined || seen.upto < f.position) upto.set(k, { slug: f.row.object_slug, id: f.recordId, upto: f.position });
    }
    const records = new Map<bigint, Record<string, unknown> | null>();
    // The rebuild in one snapshot of its own, later than the page's or the same: the records as they
    // stand and every change of theirs committed before, so the walk back from one passes the other.
    if (upto.size > 0 && !(await this.snapshot(orgId, async (tx) => {
      const wanted = [...upto.values()];
      // Each record's changes after the cursor, every one but a create (a record's first, whose
      // rows alone have no record_id), up to the first that keeps its record at or after the
      // record's newest change in the page (a checkpoint): the walk starts there, or at the table.
      // With the horizon of this snapshot: a prune since the changes were read (the horizon then,
      // `horizon`) may have taken some the walk needs, and then nothing is rebuilt.
      const { rows } = await tx.query<ChangeRow & { horizon: string | null }>(
        `SELECT h.horizon::text AS horizon, c.* FROM (SELECT (SELECT pruned_through FROM ${S}.change_horizons WHERE org_id = $1) AS horizon) h
           LEFT JOIN LATERAL (
             SELECT c.* FROM unnest($2::text[], $3::text[], $4::bigint[]) AS p(slug, id, upto)
               CROSS JOIN LATERAL (SELECT min(position) AS q FROM ${S}.changes
                                    WHERE org_id = $1 AND record_id = p.id AND object_slug = p.slug AND position >= p.upto AND record IS NOT NULL) k
               CROSS JOIN LATERAL (SELECT ${COLUMNS} FROM ${S}.changes
                                    WHERE org_id = $1 AND record_id = p.id AND object_slug = p.slug AND position > $5::bigint AND (k.q IS NULL OR position <= k.q)) c) c ON true`,
        [orgId, wanted.map((w) => w.slug), wanted.map((w) => w.id), wanted.map((w) => w.upto.toString()), after.toString()]);
      if (BigInt(rows[0]?.horizon ?? '0') > horizon) return false;
      const walk = rows.filter((r) => r.pos !== null).sort((a, b) => (BigInt(b.pos) > BigInt(a.pos) ? 1 : -1));
      // The records as they stand, for the walks no checkpoint starts.
      const fromCheckpoint = new Set(walk.filter((r) => stored(r) && BigInt(r.pos) >= upto.get(key(r.object_slug, r.record_id!))!.upto).map((r) => key(r.object_slug, r.record_id!)));
      const state = new Map<string, Record<string, unknown> | null>();
      const bySlug = new Map<string, string[]>();
      for (const [k, w] of upto) {
        state.set(k, null);
        if (fromCheckpoint.has(k)) continue;
        const ids = bySlug.get(w.slug);
        if (ids === undefined) bySlug.set(w.slug, [w.id]);
        else ids.push(w.id);
      }
      for (const [slug, list] of bySlug) {
        const obj = this.catalog.objects.get(slug);
        if (obj === undefined) continue;
        for (const [id, record] of await loggedRecords(rowsOf(tx), this.catalog, obj, orgId, list)) state.set(key(slug, id), record);
      }
      for (const row of walk) {
        const k = key(row.object_slug, row.record_id!);
        let current = state.get(k) ?? null;
        if (stored(row)) current = json<Record<string, unknown>>(row.record);
        records.set(BigInt(row.pos), current);
        state.set(k, current === null && row.operation !== 'purged' ? null : undoChange(current, undoFor(row)));
      }
      // What is left is each record right after its first change in the walk: a create's record.
      for (const f of found) if (!stored(f.row) && f.row.operation === 'created') records.set(f.position, state.get(key(f.row.object_slug, f.recordId)) ?? null);
      return true;
    }))) return null;
    return found.map((f) => changeOf(f, stored(f.row) ? json<Record<string, unknown>>(f.row.record) : records.get(f.position) ?? null));
  }
}

/** What a row of `log_changes` holds: a create statement's records of one object, or one other change. */
interface LogRow {
  readonly objectSlug: string;
  readonly operation: ChangeOperation;
  readonly ids: string[];
  readonly changedFields: readonly string[] | null;
  readonly previous: Record<string, unknown> | null;
  readonly undo: Undo | null;
  /** The record after the change, on a checkpoint. */
  readonly record: Record<string, unknown> | null;
}

/**
 * About one change in this many (updates, deletes, restores) keeps its record: a reader rebuilding
 * a record starts from the first checkpoint after the change it wants, or from the table, so a
 * record changed thousands of times since costs a walk of about this many rows, not thousands.
 */
const CHECKPOINT_EVERY = 32;

/**
 * The drafts as rows of the log, in order: consecutive creates of one object share a row (at most
 * ROW_WIDTH); an update keeps its changed fields and their old values; a delete, a restore and a
 * purge what takes the record back (`undoOf`); a checkpoint its record too.
 */
function logRows(changes: readonly ChangeDraft[], checkpoint: () => boolean): LogRow[] {
  const rows: LogRow[] = [];
  for (const d of changes) {
    const last = rows[rows.length - 1];
    if (d.operation === 'created') {
      if (last !== undefined && last.operation === 'created' && last.objectSlug === d.objectSlug && last.ids.length < ROW_WIDTH) last.ids.push(d.recordId);
      else rows.push({ objectSlug: d.objectSlug, operation: 'created', ids: [d.recordId], changedFields: null, previous: null, undo: null, record: null });
      continue;
    }
    const record = d.record !== null && checkpoint() ? d.record : null;
    if (d.operation === 'updated') {
      rows.push({ objectSlug: d.objectSlug, operation: d.operation, ids: [d.recordId], changedFields: d.changedFields ?? [], previous: d.previous ?? {}, undo: null, record });
    } else {
      rows.push({ objectSlug: d.objectSlug, operation: d.operation, ids: [d.recordId], changedFields: null, previous: null, undo: undoOf(d.before ?? null, d.record), record });
    }
  }
  return rows;
}

/** One change of a row: its position, its record's id, the row. */
interface Found {
  readonly position: bigint;
  readonly recordId: string;
  readonly row: ChangeRow;
}

/** The rows' changes after `after`, in order. */
function expand(rows: readonly ChangeRow[], after: bigint): Found[] {
  const out: Found[] = [];
  for (const row of rows) {
    const end = BigInt(row.pos);
    const width = Number(row.width);
    for (let i = 0; i < width; i++) {
      const position = end - BigInt(width - 1 - i);
      if (position <= after) continue;
      out.push({ position, recordId: row.record_ids === null ? row.record_id! : String(row.record_ids[i]), row });
    }
  }
  return out;
}

/** A row from before migration 13: it kept the record after its change (null for a purge). */
function stored(row: ChangeRow): boolean {
  return row.record !== null || (row.operation === 'purged' && row.undo === null);
}

/** What takes a row's record back to before its change; rows from before migration 13 have no undo of their own. */
function undoFor(row: ChangeRow): Undo | null {
  if (row.undo !== null) return json<Undo>(row.undo);
  switch (row.operation) {
    case 'updated': return { set: json<Record<string, unknown>>(row.previous) ?? {} };
    case 'deleted': return { drop: ['is_deleted', 'deleted_at', 'deleted_by'] };
    case 'restored': return {};
    default: return null;
  }
}

function key(slug: string, id: string): string {
  return `${slug}\u0000${id}`;
}

/** The record functions' view of a transaction. */
function rowsOf(tx: Tx): RecordsTx {
  return { rows: async (text, params) => (await tx.query(text, params)).rows, lastRows: async (text, params) => (await tx.query(text, params)).rows };
}

function cursorExpired(): OqlError {
  return OqlError.plain('CURSOR_EXPIRED', 'the cursor is older than the changes kept: some changes after it were removed by the retention',
    'resynchronise: run a full connector sync of the objects you follow, then continue from GET /api/v1/changes/head');
}

/**
 * A change's event id: the one its row was given (rows before migration 13), or one derived from
 * its position, the same at every reading: the UUID layout of an MD5 of it, version 8.
 */
function eventIdOf(f: Found): string {
  if (f.row.event_id !== null) return f.row.event_id;
  const h = createHash('md5').update(`oql change ${f.position}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

interface ChangeRow {
  pos: string;
  width: number;
  event_id: string | null;
  object_slug: string;
  record_id: string | null;
  record_ids: string[] | null;
  operation: ChangeOperation;
  changed_fields: unknown;
  record: unknown;
  previous: unknown;
  undo: unknown;
  actor_user_id: string | null;
  actor_surface: ChangeSurface;
  committed_at: string;
}

/** A draft's JSON value as the text its json column takes; null stays SQL NULL. */
function jsonText(v: unknown): string | null {
  return v === null || v === undefined ? null : JSON.stringify(v);
}

/** json columns arrive parsed from node-postgres and as text from some drivers: one shape either way. */
function json<T>(v: unknown): T | null {
  if (v === null || v === undefined) return null;
  return (typeof v === 'string' ? JSON.parse(v) : v) as T;
}

function changeOf(f: Found, record: Record<string, unknown> | null): Change {
  const r = f.row;
  let changedFields = json<string[]>(r.changed_fields);
  let previous = r.operation === 'updated' ? json<Record<string, unknown>>(r.previous) : null;
  if (r.operation === 'updated' && changedFields === null) {
    // An update logged by its own statement kept the old values of every field it wrote: the ones
    // that changed are those the record after it holds otherwise, in the record's order.
    const written = previous ?? {};
    if (record === null) changedFields = Object.keys(written);
    else ({ changedFields, previous } = diffRecords(written, record, Object.keys(record).filter((k) => Object.hasOwn(written, k))));
  }
  return {
    cursor: cursorOf(f.position),
    event_id: eventIdOf(f),
    object_slug: r.object_slug,
    record_id: f.recordId,
    operation: r.operation,
    changed_fields: changedFields,
    record,
    previous,
    actor: { user_id: r.actor_user_id, surface: r.actor_surface },
    committed_at: Number(r.committed_at),
  };
}
