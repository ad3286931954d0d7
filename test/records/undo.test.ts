import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { undoChange, undoOf } from '../../src/records/changes.js';
import { configureFastCheck, runs } from '../props/harness.js';

/**
 * The change log keeps a change's undo and rebuilds the record before the change from the record
 * after it (src/service/changes/log.ts): for any two records, undoing the change from one to the
 * other gives the first back, every key and value, and the undo names nothing that did not change.
 */

// Keys of a record: field slugs, the lifecycle keys, and names an object literal would treat specially.
const key = fc.constantFrom('id', 'name', 'status', 'updated_at', 'is_deleted', 'deleted_at', 'deleted_by', '__proto__', 'constructor', 'toString', '');
const value = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double({ noNaN: true }), fc.string({ maxLength: 6 }), fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }));
const record = fc.uniqueArray(fc.tuple(key, value), { selector: ([k]) => k, maxLength: 8 }).map((entries) => {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
});
// JSON round trip: what the log stores and reads back.
const stored = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const entries = (r: Record<string, unknown> | null) => (r === null ? null : Object.keys(r).sort().map((k) => [k, JSON.stringify(r[k])]));

configureFastCheck('records/undo');

describe('a change undone', () => {
  it('gives the record before it back from the record after it and the undo the log stored', () => {
    fc.assert(
      fc.property(record, record, (before, after) => {
        const undo = undoOf(before, after);
        expect(entries(undoChange(after, stored(undo)))).toEqual(entries(before));
        // Only what changed: every key it sets had another value or none after the change, every key it drops was new.
        for (const k of Object.keys(undo?.set ?? {})) expect(Object.hasOwn(after, k) && JSON.stringify(after[k]) === JSON.stringify(before[k])).toBe(false);
        for (const k of undo?.drop ?? []) expect(Object.hasOwn(before, k)).toBe(false);
      }),
      { numRuns: runs(2_000, 50_000) },
    );
  });

  it('keeps the order of the record after the change, with the keys it gives back after them', () => {
    const after = { id: 'r1', name: 'New', updated_at: 2, is_deleted: true, deleted_at: 2, deleted_by: 'u1' };
    const before = { id: 'r1', name: 'Old', updated_at: 1 };
    expect(Object.keys(undoChange(after, undoOf(before, after))!)).toEqual(['id', 'name', 'updated_at']);
    // A restore undone: the lifecycle keys come back at the end, where a deleted record has them.
    expect(Object.keys(undoChange(before, undoOf(after, before))!)).toEqual(['id', 'name', 'updated_at', 'is_deleted', 'deleted_at', 'deleted_by']);
  });

  it('has nothing before a create, and the whole record before a purge', () => {
    const r = { id: 'r1', name: 'Gone' };
    expect(undoOf(null, r)).toBeNull();
    expect(undoChange(r, null)).toBeNull();
    expect(undoChange(null, stored(undoOf(r, null)))).toEqual(r);
  });
});
