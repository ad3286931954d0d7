import type { Tx } from './db.js';

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
}

/**
 * Where a write transaction records its changes. The record functions call `append` once, as the
 * last statement of the transaction, with everything it changed, so the changes commit with the
 * write or not at all. The service's change log implements it (src/service/changes/); a library
 * user who keeps no log passes none.
 */
export interface ChangeSink {
  append(tx: Tx, orgId: string, changes: readonly ChangeDraft[]): Promise<void>;
}

/** The fields of `after` whose values differ from `before`, with the values they had. */
export function diffRecords(before: Record<string, unknown>, after: Record<string, unknown>): { changedFields: string[]; previous: Record<string, unknown> } {
  const changedFields: string[] = [];
  const previous: Record<string, unknown> = {};
  for (const key of Object.keys(after)) {
    if (sameValue(before[key], after[key])) continue;
    changedFields.push(key);
    Object.defineProperty(previous, key, { value: before[key] ?? null, enumerable: true, writable: true, configurable: true });
  }
  return { changedFields, previous };
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return (a ?? null) === (b ?? null);
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  return JSON.stringify(a) === JSON.stringify(b);
}
