import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_DECIMAL_LENGTH, decimalOf } from '../../src/catalog/decimal.js';
import { configureFastCheck, runs } from '../props/harness.js';

/**
 * decimalOf against an independent oracle: the regular expression it replaced, with Number,
 * which is what the filter and the write path accepted before. The expression is quadratic
 * only on long inputs; on the short strings here it is exact and fast.
 */

configureFastCheck('catalog/decimal');

const OLD = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;
const oracle = (s: string): number | null => (OLD.test(s) ? Number(s) : null);

describe('decimalOf', () => {
  it.each([
    ['12', 12],
    ['-12', -12],
    ['+12', 12],
    ['12.', 12],
    ['12.50', 12.5],
    ['.5', 0.5],
    ['-.5', -0.5],
    ['1e3', 1000],
    ['1E+3', 1000],
    ['2.5e-3', 0.0025],
    ['007', 7],
    ['  42\t\n', 42],
    ['\u00a042\u3000', 42],
    ['\ufeff1\u2028', 1],
    ['1e999', Infinity],
    ['-1e999', -Infinity],
    ['1e-999', 0],
    ['-0', -0],
  ])('reads %j as %d', (text, expected) => {
    expect(Object.is(decimalOf(text), expected)).toBe(true);
  });

  it.each([
    '', ' ', '.', '+', '-', '+-1', '1.2.3', '1e', '1e+', 'e3', '.e3', '1 2', '1_000', '1,5', '0x10', '0b1', '0o7',
    'Infinity', '-Infinity', 'NaN', '1a', 'a1', '１', '\u200b1', '1\u200b', '٣', '--1', '1e3.5', '1ee3',
  ])('refuses %j', (text) => {
    expect(decimalOf(text)).toBeNull();
  });

  it('takes up to MAX_DECIMAL_LENGTH characters, surrounding whitespace included, and refuses longer ones unread', () => {
    expect(MAX_DECIMAL_LENGTH).toBe(10_000);
    expect(decimalOf('0'.repeat(10_000))).toBe(0);
    expect(decimalOf(`${' '.repeat(9_999)}7`)).toBe(7);
    expect(decimalOf('0'.repeat(10_001))).toBeNull();
    expect(decimalOf(`${' '.repeat(10_000)}7`)).toBeNull();
    // The payload: a long run of digits ending in a character that is not one.
    expect(decimalOf(`${'0'.repeat(9_972)}Z`)).toBeNull();
    expect(decimalOf(`${'9'.repeat(9_999)}Z`)).toBeNull();
  });

  it('agrees with the old expression on every string of up to 5 characters over its alphabet', () => {
    const alphabet = ['0', '7', '.', 'e', 'E', '+', '-', ' ', '\u00a0', 'x'];
    let checked = 0;
    const walk = (s: string, left: number): void => {
      const want = oracle(s);
      const got = decimalOf(s);
      if (!Object.is(got, want)) expect({ s, got }).toEqual({ s, got: want });
      checked++;
      if (left > 0) for (const c of alphabet) walk(s + c, left - 1);
    };
    walk('', 5);
    expect(checked).toBe(111_111);
  });

  it('agrees with the old expression on whitespace: every UTF-16 code unit around and inside a number', () => {
    for (let code = 0; code <= 0xffff; code++) {
      const c = String.fromCharCode(code);
      for (const s of [c, `${c}1`, `1${c}`, `${c}1${c}`, `1${c}2`]) {
        const got = decimalOf(s);
        const want = oracle(s);
        if (!Object.is(got, want)) expect({ code: code.toString(16), s, got }).toEqual({ code: code.toString(16), s, got: want });
      }
    }
  });

  it('agrees with the old expression on random strings of up to 30 characters', () => {
    const unit = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('0', '1', '5', '9') },
      { weight: 2, arbitrary: fc.constantFrom('.', 'e', 'E', '+', '-') },
      { weight: 1, arbitrary: fc.constantFrom(' ', '\t', '\n', '\u00a0', '\u2003', '\ufeff', '\u200b', '\u0000') },
      { weight: 1, arbitrary: fc.constantFrom('x', 'Z', '_', ',', '１', '٣') },
    );
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 30 }), (s) => {
        expect(Object.is(decimalOf(s), oracle(s))).toBe(true);
      }),
      { numRuns: runs(20_000, 500_000) },
    );
  });

  it('reads every decimal written by the grammar as Number does', () => {
    const digits = (min: number) => fc.string({ unit: fc.constantFrom('0', '1', '2', '3', '4', '5', '6', '7', '8', '9'), minLength: min, maxLength: 25 });
    const space = fc.string({ unit: fc.constantFrom(' ', '\t', '\r', '\n', '\u00a0', '\u3000', '\ufeff'), maxLength: 3 });
    const mantissa = fc.oneof(
      digits(1),
      fc.tuple(digits(1), digits(0)).map(([a, b]) => `${a}.${b}`),
      digits(1).map((b) => `.${b}`),
    );
    const text = fc
      .tuple(space, fc.constantFrom('', '+', '-'), mantissa, fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), digits(1))), space)
      .map(([l, sign, m, exp, r]) => `${l}${sign}${m}${exp ? exp.join('') : ''}${r}`);
    fc.assert(
      fc.property(text, (s) => {
        expect(Object.is(decimalOf(s), Number(s))).toBe(true);
      }),
      { numRuns: runs(5_000, 200_000) },
    );
  });

  it('round-trips every finite double as JavaScript prints it', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        // String(-0) is '0': the sign of zero is the one thing printing loses.
        expect(Object.is(decimalOf(String(d)), d === 0 ? 0 : d)).toBe(true);
      }),
      { numRuns: runs(5_000, 200_000) },
    );
  });
});
