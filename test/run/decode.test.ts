import { describe, expect, it } from 'vitest';
import { decodeRows, put } from '../../src/run/decode.js';

/**
 * A record's fields are ordinary data whatever their keys: `__proto__`, `constructor` and the
 * names of Object.prototype's methods included. The oracle is JSON.parse, which makes every key
 * of a JSON text an own data property (`__proto__` too), and JSON.stringify, which writes a
 * record's own enumerable fields in the order they were set.
 */

const KEYS = ['id', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'name'];
const TEXT = `{${KEYS.map((k, i) => `${JSON.stringify(k)}:${i % 2 === 0 ? i : JSON.stringify({ n: i })}`).join(',')}}`;

describe('put', () => {
  it('sets every key as an own field and leaves the prototype alone', () => {
    const expected = JSON.parse(TEXT) as Record<string, unknown>;
    const record: Record<string, unknown> = {};
    for (const k of KEYS) put(record, k, expected[k]);
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
    expect(Object.keys(record)).toEqual(KEYS);
    expect(JSON.stringify(record)).toBe(TEXT);
    for (const k of KEYS) expect(Object.getOwnPropertyDescriptor(record, k)).toEqual({ value: expected[k], enumerable: true, writable: true, configurable: true });
  });

  it('replaces a field set before, __proto__ included', () => {
    const record: Record<string, unknown> = {};
    put(record, '__proto__', 1);
    put(record, 'name', 'a');
    put(record, '__proto__', 2);
    put(record, 'name', 'b');
    expect(JSON.stringify(record)).toBe('{"__proto__":2,"name":"b"}');
  });
});

describe('decodeRows', () => {
  it('keys a row by the output keys, __proto__ and constructor as fields', () => {
    const [record] = decodeRows([{ c0: 'x', c1: { admin: true }, c2: 'y' }], [
      { key: '__proto__', type: 'text' },
      { key: 'constructor', type: 'json' },
      { key: 'name', type: 'text' },
    ]);
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
    expect(JSON.stringify(record)).toBe('{"__proto__":"x","constructor":{"admin":true},"name":"y"}');
  });

  it('keeps a json value that is a string as the string it is', () => {
    // The drivers hand json over parsed: "0", "{}" and "[1]" are JSON strings a record holds, not documents.
    const [record] = decodeRows([{ c0: '0', c1: '{"a":1}', c2: { a: '[1]' } }], [
      { key: 'a', type: 'json' },
      { key: 'b', type: 'json' },
      { key: 'c', type: 'json' },
    ]);
    expect(record).toEqual({ a: '0', b: '{"a":1}', c: { a: '[1]' } });
  });
});
