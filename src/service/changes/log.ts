import { OqlError } from '../../diagnostics/diagnostic.js';
import type { ChangeDraft, ChangeOperation, ChangeSink } from '../../records/changes.js';
import type { Database } from '../../run/database.js';
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

/** A change row's columns, as `changeOf` reads them. */
const SELECT = 'position::text AS pos, event_id::text AS event_id, object_slug, record_id, operation, changed_fields, record, previous, actor_user_id, actor_surface, committed_at::text AS committed_at';

/**
 * The change log of every organization: one table of the service's schema, written by the record
 * functions in each write's own transaction (`sink`), read by the feed, the stream, the MCP tool
 * and the webhook sender, pruned past its retention.
 */
export class ChangeLog {
  constructor(private readonly db: Database) {}

  /** What the record functions record a request's changes with, for this actor. */
  sink(actor: ChangeActor): ChangeSink {
    return {
      append: async (tx, orgId, changes) => {
        if (changes.length === 0) return;
        // One statement, the function of migration 12: the organization's lock, held until the
        // transaction ends, so that its positions follow commit order, then the rows in the drafts'
        // order. Parallel arrays, not one JSON document: nothing to take apart on the server. The
        // last statement of the write, sent with its COMMIT: the lock is held for no round trip.
        await tx.lastRows(
          `SELECT ${S}.append_changes($1, $2, $3, $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])`,
          [orgId, actor.user_id, actor.surface,
            changes.map((d) => d.objectSlug), changes.map((d) => d.recordId), changes.map((d) => d.operation),
            changes.map((d) => jsonText(d.changedFields)), changes.map((d) => jsonText(d.record)), changes.map((d) => jsonText(d.previous))]);
      },
    };
  }

  /**
   * Up to `limit` changes of the organization after the cursor, oldest first, of the objects named.
   * A cursor from before the retention pruned the organization's changes is CURSOR_EXPIRED.
   */
  async read(orgId: string, after: bigint, objects: readonly string[], limit: number): Promise<ChangePage> {
    const { rows } = await this.db.query<ChangeRow>(
      `SELECT ${SELECT} FROM ${S}.changes WHERE org_id = $1 AND position > $2::bigint AND object_slug = ANY($3::text[]) ORDER BY changes.position LIMIT $4`,
      [orgId, after.toString(), objects, limit + 1]);
    // After the read: a prune that took rows this read should have had has moved the horizon by now.
    if (after > 0n) await this.checkHorizon(orgId, after);
    const page = rows.slice(0, limit).map(changeOf);
    return { changes: page, next_cursor: page.length > 0 ? page[page.length - 1]!.cursor : cursorOf(after), has_more: rows.length > limit };
  }

  /**
   * The organization's first change after `after` of these objects and operations (null: any), for
   * a reader that takes one at a time, in order (the webhook sender), and the organization's head
   * in the same snapshot: when there is no such change, the reader may move up to that head without
   * passing one that commits later.
   */
  async next(orgId: string, after: bigint, objects: readonly string[] | null, operations: readonly string[] | null): Promise<{ change: Change | null; head: bigint }> {
    const { rows } = await this.db.query<ChangeRow & { head: string | null }>(
      `SELECT h.head::text AS head, c.* FROM (SELECT max(position) AS head FROM ${S}.changes WHERE org_id = $1) h
         LEFT JOIN LATERAL (
           SELECT ${SELECT} FROM ${S}.changes
            WHERE org_id = $1 AND position > $2::bigint AND ($3::text[] IS NULL OR object_slug = ANY($3::text[])) AND ($4::text[] IS NULL OR operation = ANY($4::text[]))
            ORDER BY changes.position LIMIT 1) c ON true`,
      [orgId, after.toString(), objects, operations]);
    const row = rows[0];
    return { change: row === undefined || row.pos === null ? null : changeOf(row), head: BigInt(row?.head ?? '0') };
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
   * Removes changes committed before `before`, at most `batch` a transaction and `maxBatches` in
   * all, moving each organization's horizon with them. Returns how many went.
   */
  async prune(before: number, batch = 1000, maxBatches = 50): Promise<number> {
    let pruned = 0;
    for (let i = 0; i < maxBatches; i++) {
      const n = await this.db.transaction(async (tx) => {
        const { rows } = await tx.query<{ org_id: string; p: string; n: string }>(
          `WITH gone AS (
             DELETE FROM ${S}.changes WHERE position IN (
               SELECT position FROM ${S}.changes WHERE committed_at < $1::bigint ORDER BY position LIMIT $2 FOR UPDATE SKIP LOCKED)
             RETURNING org_id, position)
           SELECT org_id, max(position)::text AS p, count(*)::text AS n FROM gone GROUP BY org_id`,
          [before, batch]);
        for (const r of rows) {
          await tx.query(
            `INSERT INTO ${S}.change_horizons (org_id, pruned_through) VALUES ($1, $2::bigint)
             ON CONFLICT (org_id) DO UPDATE SET pruned_through = greatest(${S}.change_horizons.pruned_through, EXCLUDED.pruned_through)`,
            [r.org_id, r.p]);
        }
        return rows.reduce((sum, r) => sum + Number(r.n), 0);
      });
      pruned += n;
      if (n < batch) break;
    }
    return pruned;
  }

  private async checkHorizon(orgId: string, after: bigint): Promise<void> {
    const { rows } = await this.db.query<{ h: string }>(`SELECT pruned_through::text AS h FROM ${S}.change_horizons WHERE org_id = $1`, [orgId]);
    const h = rows[0] === undefined ? 0n : BigInt(rows[0].h);
    if (after < h) {
      throw OqlError.plain('CURSOR_EXPIRED', 'the cursor is older than the changes kept: some changes after it were removed by the retention',
        'resynchronise: run a full connector sync of the objects you follow, then continue from GET /api/v1/changes/head');
    }
  }
}

interface ChangeRow {
  pos: string;
  event_id: string;
  object_slug: string;
  record_id: string;
  operation: ChangeOperation;
  changed_fields: unknown;
  record: unknown;
  previous: unknown;
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

function changeOf(r: ChangeRow): Change {
  return {
    cursor: cursorOf(r.pos),
    event_id: r.event_id,
    object_slug: r.object_slug,
    record_id: r.record_id,
    operation: r.operation,
    changed_fields: json<string[]>(r.changed_fields),
    record: json<Record<string, unknown>>(r.record),
    previous: json<Record<string, unknown>>(r.previous),
    actor: { user_id: r.actor_user_id, surface: r.actor_surface },
    committed_at: Number(r.committed_at),
  };
}
