import { expect } from 'vitest';
import { OqlError } from '../../src/diagnostics/diagnostic.js';
import type { Span } from '../../src/diagnostics/span.js';
import { parse, type SyntaxLimits } from '../../src/syntax/parse.js';

const SPAN_KEYS = new Set(['span', 'opSpan', 'typeSpan']);

/** A deep copy of a syntax tree without its spans, for comparing trees parsed from different text. */
export function stripSpans(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(stripSpans);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) if (!SPAN_KEYS.has(k)) out[k] = stripSpans(v);
  return out;
}

/** The span of the `nth` (0-based) occurrence of `needle` in `text`; fails when there is none. */
export function spanOf(text: string, needle: string, nth = 0): Span {
  let at = -1;
  for (let i = 0; i <= nth; i++) {
    at = text.indexOf(needle, at + 1);
    if (at < 0) throw new Error(`'${needle}' occurs fewer than ${nth + 1} times in: ${text}`);
  }
  return { start: at, end: at + needle.length };
}

/**
 * Malloy's markSource: the expected span of a diagnostic is written into the query between
 * « and »; returns the query without the markers and the span they delimited.
 */
export function marked(source: string): { text: string; span: Span } {
  const start = source.indexOf('«');
  const end = source.indexOf('»');
  if (start < 0 || end < start || source.indexOf('«', start + 1) >= 0 || source.indexOf('»', end + 1) >= 0) {
    throw new Error(`expected exactly one «...» marker in: ${source}`);
  }
  const text = source.slice(0, start) + source.slice(start + 1, end) + source.slice(end + 1);
  return { text, span: { start, end: end - 1 } };
}

/** Parses text that must fail and returns the OqlError; any other outcome fails the test. */
export function parseError(text: string, limits: SyntaxLimits = {}): OqlError {
  try {
    parse(text, limits);
  } catch (e) {
    if (e instanceof OqlError) return e;
    throw e;
  }
  throw new Error(`expected a syntax error, but the query parsed: ${text}`);
}

export function expectSpan(node: { span: Span }, text: string, needle: string, nth = 0): void {
  expect({ start: node.span.start, end: node.span.end }).toEqual(spanOf(text, needle, nth));
}
