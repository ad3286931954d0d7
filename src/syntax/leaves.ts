import type { IToken } from 'chevrotain';
import type { Span } from '../diagnostics/span.js';
import type * as A from './ast.js';

/** Tree leaves made from single tokens, shared by the grammar (parser.ts) and the compiler's parser (descent.ts). */

export function tokenSpan(t: IToken): Span {
  return { start: t.startOffset, end: t.startOffset + t.image.length };
}

/**
 * A name: quoted names keep their case (`""` is a quote), others are folded to lower case. Told
 * apart by the opening quote, not the token type: the two parsers' tokens have types of their own.
 */
export function identFrom(t: IToken): A.Ident {
  if (t.image.charCodeAt(0) === 34 /* " */) {
    return { kind: 'Ident', name: t.image.slice(1, -1).replace(/""/g, '"'), quoted: true, span: tokenSpan(t) };
  }
  return { kind: 'Ident', name: t.image.toLowerCase(), quoted: false, span: tokenSpan(t) };
}

export function between(a: { span: Span }, b: { span: Span }): Span {
  return { start: a.span.start, end: b.span.end };
}

export function numberNode(t: IToken): A.NumberLit {
  return { kind: 'Number', text: t.image, isInteger: /^\d+$/.test(t.image), span: tokenSpan(t) };
}
