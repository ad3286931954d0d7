import { describe, expect, it } from 'vitest';
import { MAX_DEPTH, storableInput, storableResponse, storableText } from '../../src/service/store/tool-log-input.js';

/** The laws of what the tool log keeps of a call's arguments: storable, within the cap, marked when cut. */

/** A surrogate without its other half. */
const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('storableText', () => {
  it('escapes a NUL and lone surrogates, keeps pairs and everything else', () => {
    expect(storableText('a\u0000b')).toBe('a\\u0000b');
    expect(storableText('\ud800x\udc00')).toBe('\\ud800x\\udc00');
    expect(storableText('\ud83d\ude00 é')).toBe('\ud83d\ude00 é');
    expect(storableText('\udbff')).toBe('\\udbff');
  });
});

describe('storableInput', () => {
  it('keeps small arguments as they are', () => {
    const input = { slug: 'account', query: 'SELECT id FROM account LIMIT 5' };
    expect(storableInput(input, 1024)).toEqual({ json: JSON.stringify(input), truncated: false });
    expect(storableInput(undefined, 1024)).toEqual({ json: '{}', truncated: false });
  });

  it('never passes the cap, is always JSON of well-formed strings, and says when it cut', () => {
    const inputs: unknown[] = [
      { query: 'x'.repeat(10_000), slug: 'account' },
      { query: '\u0000'.repeat(5000) },
      { query: '\ud83d\ude00'.repeat(3000), other: 'é'.repeat(3000), small: 'ok' },
      { list: Array.from({ length: 2000 }, (_, i) => `item ${i}`) },
      { keys: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`key_${i}`, i])) },
      Array.from({ length: 3000 }, () => null),
    ];
    for (const max of [1024, 4096]) {
      for (const input of inputs) {
        const out = storableInput(input, max);
        expect(bytes(out.json)).toBeLessThanOrEqual(max);
        expect(out.truncated).toBe(true);
        const parsed = JSON.parse(out.json);
        const walk = (v: unknown): void => {
          if (typeof v === 'string') expect(!LONE.test(v) && !v.includes('\u0000')).toBe(true);
          else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) { walk(k); walk(x); }
        };
        walk(parsed);
      }
    }
  });

  it('cuts the longest strings first and keeps short ones and the structure whole', () => {
    const out = storableInput({ slug: 'account', query: 'q'.repeat(50_000), note: 'n'.repeat(3000) }, 4096);
    const parsed = JSON.parse(out.json);
    expect(out.truncated).toBe(true);
    expect(parsed.slug).toBe('account');
    expect(parsed.query).toBe('q'.repeat(parsed.query.length));
    expect(parsed.note).toBe('n'.repeat(parsed.note.length));
    // Both long strings share the room: neither is starved.
    expect(parsed.query.length).toBeGreaterThan(1000);
    expect(parsed.note.length).toBeGreaterThan(1000);
  });

  it('keeps nesting up to its depth, and cuts deeper nesting, saying so', () => {
    const nest = (levels: number): unknown => {
      let deep: unknown = 'bottom';
      for (let i = 0; i < levels; i++) deep = [deep];
      return deep;
    };
    const kept = storableInput({ deep: nest(MAX_DEPTH - 2) }, 64 * 1024);
    expect(kept.truncated).toBe(false);
    expect(JSON.parse(kept.json)).toEqual({ deep: nest(MAX_DEPTH - 2) });
    for (const levels of [MAX_DEPTH * 2, 200_000]) {
      const cut = storableInput({ deep: nest(levels) }, 64 * 1024);
      expect(cut.truncated).toBe(true);
      expect(cut.json).toContain('nested deeper than');
    }
  });

  it('writes a call of only escapes, or of many small values, within the cap', () => {
    for (const input of [{ query: '\u0000'.repeat(100_000) }, { list: Array.from({ length: 50_000 }, (_, i) => `v${i}\ud800`) }]) {
      const out = storableInput(input, 4096);
      expect(out.truncated).toBe(true);
      expect(bytes(out.json)).toBeLessThanOrEqual(4096);
      expect(out.json.includes('\\u0000') || out.json.includes('input_prefix') || out.json.includes('\\ud800')).toBe(true);
    }
  });
});

describe('storableResponse', () => {
  it('keeps an answer within the cap as it is, escaping only what text refuses', () => {
    expect(storableResponse('{"records": []}', 1024)).toEqual({ text: '{"records": []}', truncated: false });
    expect(storableResponse('a\u0000b\ud800c', 1024)).toEqual({ text: 'a\\u0000b\\ud800c', truncated: false });
  });

  it('cuts a longer answer to the bytes of the cap, never splitting a character, and says so', () => {
    // 'é' is two bytes and '😀' four (a surrogate pair): the cut falls where neither fits whole.
    for (const [answer, max, kept] of [
      ['x'.repeat(100), 10, 'x'.repeat(10)],
      ['é'.repeat(100), 11, 'é'.repeat(5)],
      ['ab' + '\u{1F600}'.repeat(10), 9, 'ab\u{1F600}'],
      ['\u0000'.repeat(10), 13, '\\u0000\\u0000'],
    ] as const) {
      const got = storableResponse(answer, max);
      expect(got, answer.slice(0, 20)).toEqual({ text: kept, truncated: true });
      expect(Buffer.byteLength(got.text)).toBeLessThanOrEqual(max);
    }
  });

  it('an answer exactly at the cap is whole', () => {
    expect(storableResponse('é'.repeat(5), 10)).toEqual({ text: 'é'.repeat(5), truncated: false });
  });
});
