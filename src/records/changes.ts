import type { Tx } from './db.js';
import { put } from '../run/decode.js';

/** What a committed write did to one record. */
export type ChangeOperation = 'created' | 'updated' | 'deleted' | 'restored' | 'purged';

export const CHANGE_OPERATIONS: readonly ChangeOperation[] = Object.freeze(['created', 'updated', 'deleted', 'restored', 'purged'] as const);

/** One change as the write path knows it, before the log gives it a position. */
export interface ChangeDraft {
  readonly objectSlug: string;
  readonly recordId: string;
  readonly operation: ChangeOperation;
  /** The record after the change as get-one returns it (with `is_deleted`, `deleted_at`, `deleted_by` once deleted); null once purged. */
  readonly record: Record<string, unknown> | null;
  /** For `updated`: the slugs whose values changed. */
  readonly changedFields?: readonly string[];
  /** For `updated`: the values those fields had before. */
  readonly previous?: Record<string, unknown>;
  /**
   * For `deleted`, `restored` and `purged`: the record before the change, as `record` shows one. A
   * log may keep only what takes `record` back to it (`undoOf`) and rebuild records on reading.
   */
  readonly before?: Record<string, unknown>;
}

/**
 * What takes a record from after a change back to before it: fields to give their old values,
 * fields to remove. `null` is the undo of a create: before it there was no record.
 */
export interface Undo {
  readonly set?: Record<string, unknown>;
  readonly drop?: readonly string[];
}

/** The undo of the change from `before` to `after` (null: none before it; null after: purged). */
export function undoOf(before: Record<string, unknown> | null, after: Record<string, unknown> | null): Undo | null {
  if (before === null) return null;
  if (after === null) return { set: before };
  const set: Record<string, unknown> = {};
  let any = false;
  for (const key of Object.keys(before)) {
    if (Object.hasOwn(after, key) && sameValue(before[key], after[key])) continue;
    put(set, key, before[key]);
    any = true;
  }
  const drop = Object.keys(after).filter((key) => !Object.hasOwn(before, key));
  return { ...(any ? { set } : {}), ...(drop.length > 0 ? { drop } : {}) };
}

/**
 * The record before a change, from the record after it and the change's undo: a new object, keys
 * in the order the record had them and the undo's new keys after them. `undo` null gives null.
 */
export function undoChange(after: Record<string, unknown> | null, undo: Undo | null): Record<string, unknown> | null {
  if (undo === null) return null;
  const out: Record<string, unknown> = {};
  const drop = new Set(undo.drop ?? []);
  if (after !== null) for (const key of Object.keys(after)) if (!drop.has(key)) put(out, key, after[key]);
  if (undo.set !== undefined) for (const key of Object.keys(undo.set)) put(out, key, undo.set[key]);
  return out;
}

/**
 * Where a write transaction records its changes, so they commit with the write or not at all. The
 * record functions call `append` once, as the last statement of the transaction, with everything
 * it changed; an update of one record goes to `update` instead when the sink has it. The service's
 * change log implements it (src/service/changes/); a library user who keeps no log passes none.
 */
export interface ChangeSink {
  append(tx: Tx, orgId: string, changes: readonly ChangeDraft[]): Promise<void>;
  /**
   * Whether anything listens to the changes this sink recorded (a webhook endpoint of the
   * organization), as the statements that recorded them answered: false when it recorded none or
   * nothing listened, true when it cannot tell. Absent: it cannot tell.
   */
  readonly listened?: boolean;
  /**
   * Runs an update's statement and records its change, in the same statement where the sink can,
   * so the log costs the write no statement of its own; answers the statement's rows. Optional: a
   * sink without it gets the update's change through `append`. Nothing may follow it in the
   * transaction.
   */
  update?(tx: Tx, orgId: string, update: LoggedUpdate): Promise<Record<string, unknown>[]>;
}

/** An update of one record as `ChangeSink.update` runs it. */
export interface LoggedUpdate {
  /**
   * `UPDATE` of the record `RETURNING` the columns of `recordSelect` (src/records/shape.ts), the
   * RETURNING list last: a sink may add expressions to it.
   */
  readonly sql: string;
  readonly params: readonly unknown[];
  readonly objectSlug: string;
  readonly recordId: string;
  /** The record before the update, as get-one returned it. */
  readonly before: Record<string, unknown>;
  /** The record's keys the statement writes: no other can change. */
  readonly written: readonly string[];
  /** A returned row as the record after the update. */
  readonly record: (row: Record<string, unknown>) => Record<string, unknown>;
}

/**
 * The fields of `after` whose values differ from `before`, with the values they had; `keys`: only
 * these of `after`'s (in its order), when `before` holds only some of the record's fields.
 */
export function diffRecords(before: Record<string, unknown>, after: Record<string, unknown>, keys = Object.keys(after)): { changedFields: string[]; previous: Record<string, unknown> } {
  const changedFields: string[] = [];
  const previous: Record<string, unknown> = {};
  for (const key of keys) {
    if (sameValue(before[key], after[key])) continue;
    changedFields.push(key);
    put(previous, key, before[key] ?? null);
  }
  return { changedFields, previous };
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return (a ?? null) === (b ?? null);
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  return JSON.stringify(a) === JSON.stringify(b);
}
