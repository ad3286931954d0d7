import type { IRecognitionException, IToken, TokenType } from 'chevrotain';
import type { DiagnosticCode } from '../diagnostics/codes.js';
import type { Span } from '../diagnostics/span.js';
import { closest, editDistance } from '../diagnostics/suggest.js';
import { exampleCondition, multiselectTests, relatedRecords, type Examples } from './examples.js';
import * as T from './tokens.js';

/**
 * Turns the parser's first syntax error into a diagnostic that says what the user wrote and
 * what to write instead. Constructs the dialect forbids (JOIN, UNION, FILTER, OVER, subscripts,
 * other statements) arrive here as the offending token and get their own codes and hints.
 */

export interface SyntaxDiagnostic {
  code: DiagnosticCode;
  span: Span;
  message: string;
  hint?: string;
}

const STATEMENTS = new Set([
  'insert', 'update', 'delete', 'merge', 'upsert', 'drop', 'create', 'alter', 'truncate', 'grant', 'revoke',
  'copy', 'set', 'reset', 'begin', 'start', 'commit', 'rollback', 'savepoint', 'vacuum', 'analyze', 'explain',
  'call', 'do', 'lock', 'show', 'values', 'table', 'prepare', 'execute', 'deallocate', 'listen', 'notify',
  'load', 'discard', 'comment', 'security', 'reindex', 'cluster', 'refresh', 'import',
]);
const JOIN_WORDS = new Set(['join', 'left', 'right', 'full', 'inner', 'cross', 'natural', 'lateral']);
const CLAUSE_KEYWORDS = ['SELECT', 'FROM', 'WHERE', 'GROUP', 'BY', 'HAVING', 'ORDER', 'LIMIT', 'OFFSET', 'AND', 'OR', 'NOT', 'DISTINCT', 'BETWEEN', 'ILIKE', 'LIKE', 'EXISTS', 'CASE', 'WHEN', 'THEN', 'ELSE', 'END', 'NULLS', 'DESC', 'ASC'];
const CLAUSE_TOKENS = new Set<TokenType>([T.From, T.Where, T.Group, T.Having, T.Order, T.Limit, T.Offset]);

const TOKEN_TEXT: Record<string, string> = {
  RParen: "')'",
  LParen: "'('",
  RBracket: "']'",
  Comma: "','",
  From: 'FROM',
  End: 'END',
  Then: 'THEN',
  By: 'BY',
  And: 'AND',
  Null: 'NULL',
  NumberLiteral: 'a number',
  Identifier: 'a name',
  Zone: 'ZONE',
  Time: 'TIME',
};

function spanOf(t: IToken): Span {
  return { start: t.startOffset, end: t.startOffset + t.image.length };
}

function shown(t: IToken): string {
  if (t.tokenType === T.StringLiteral) return t.image.length > 40 ? `${t.image.slice(0, 37)}...'` : t.image;
  return `'${t.image.length > 40 ? `${t.image.slice(0, 37)}...` : t.image}'`;
}

function indexOf(tokens: IToken[], t: IToken): number {
  if (Number.isNaN(t.startOffset) || t.tokenType.name === 'EOF') return tokens.length;
  let lo = 0;
  let hi = tokens.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const o = tokens[mid]!.startOffset;
    if (o === t.startOffset) return mid;
    if (o < t.startOffset) lo = mid + 1;
    else hi = mid - 1;
  }
  return tokens.length;
}

/** Index of the token closing the bracket opened at `open`, or the last token. */
function matching(tokens: IToken[], open: number): number {
  const o = tokens[open]!.tokenType;
  const c = o === T.LBracket ? T.RBracket : T.RParen;
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    if (tokens[i]!.tokenType === o) depth++;
    else if (tokens[i]!.tokenType === c && --depth === 0) return i;
  }
  return tokens.length - 1;
}

function range(tokens: IToken[], from: number, to: number): Span {
  return { start: tokens[from]!.startOffset, end: spanOf(tokens[to]!).end };
}

function textOf(source: string, tokens: IToken[], from: number, to: number): string {
  if (from > to) return '';
  const s = range(tokens, from, to);
  return source.slice(s.start, s.end);
}

function nearKeyword(word: string): string | undefined {
  if (!/^[A-Za-z_]+$/.test(word) || word.length < 2) return undefined;
  // `closest` ties break alphabetically (WHER -> WHEN, ORDR -> OR); a truncated or mistyped
  // keyword is better matched by the true distance, then by the longer shared prefix.
  const w = word.toUpperCase();
  const rank = (c: string) => editDistance(w, c) * 100 - sharedPrefix(w, c);
  return closest(w, CLAUSE_KEYWORDS, CLAUSE_KEYWORDS.length).sort((a, b) => rank(a) - rank(b))[0];
}

function sharedPrefix(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

/** `examples` gives the names hints show, from the catalog in hand (looked up only when a hint needs them). */
export function classifySyntaxError(source: string, tokens: IToken[], e: IRecognitionException, examples: () => Examples): SyntaxDiagnostic {
  const i = indexOf(tokens, e.token);
  const t = tokens[i];
  const prev = i > 0 ? tokens[i - 1] : undefined;

  if (!t) {
    const last = tokens[tokens.length - 1]!;
    const end = spanOf(last).end;
    const expected = expectedText(e);
    return {
      code: 'UNEXPECTED_END',
      span: { start: end, end },
      message: `the query ends after ${shown(last)}${expected ? `; expected ${expected}` : ''}`,
      hint: expected ? `continue the query with ${expected}` : 'complete the query',
    };
  }
  const word = t.image.toLowerCase();
  const type = t.tokenType;

  if (i === 0) return classifyStart(tokens, t, examples);

  if (type === T.Join || (type === T.Identifier && JOIN_WORDS.has(word))) {
    let end = i;
    while (end + 1 < tokens.length && tokens[end]!.tokenType !== T.Join) end++;
    if (end + 1 < tokens.length) end++; // the joined object
    return {
      code: 'UNSUPPORTED_JOIN',
      span: range(tokens, i, end),
      message: `${textOf(source, tokens, i, end)} is not supported: the dialect has no JOIN`,
      // The outer object gets an alias: inside FROM the child, `parent.id` could name the child's own column.
      hint: relatedRecords(examples()),
    };
  }
  if (type === T.Comma && afterFromItem(tokens, i)) {
    return {
      code: 'UNSUPPORTED_JOIN',
      span: range(tokens, i, Math.min(i + 1, tokens.length - 1)),
      message: 'FROM takes exactly one object; listing several is a join, which the dialect does not have',
      hint: `query one object: ${relatedRecords(examples())}`,
    };
  }
  if (type === T.Union || type === T.Intersect || type === T.Except) {
    const next = tokens[i + 1];
    const end = next && (next.tokenType === T.All || next.tokenType === T.Distinct) ? i + 1 : i;
    return {
      code: 'UNSUPPORTED_SET_OPERATION',
      span: range(tokens, i, end),
      message: `${textOf(source, tokens, i, end).toUpperCase()} is not supported`,
      hint: 'run the queries separately, or combine their conditions with OR in one WHERE; for counts use inclusion-exclusion: |A or B| = |A| + |B| - |A and B|',
    };
  }
  if ((type === T.Semicolon && i + 1 < tokens.length) || prev?.tokenType === T.Semicolon) {
    // A second `;` at the very end (`...;;`) is itself the extra statement.
    const from = type === T.Semicolon && i + 1 < tokens.length ? i + 1 : i;
    return {
      code: 'MULTIPLE_STATEMENTS',
      span: range(tokens, from, tokens.length - 1),
      message: 'only one statement is accepted, but more text follows the ;',
      hint: 'send each query on its own',
    };
  }
  if (type === T.Filter && tokens[i + 1]?.tokenType === T.LParen) return classifyFilter(source, tokens, i, examples);
  if (type === T.Over) {
    const end = tokens[i + 1]?.tokenType === T.LParen ? matching(tokens, i + 1) : Math.min(i + 1, tokens.length - 1);
    return {
      code: 'UNSUPPORTED_WINDOW',
      span: range(tokens, i, end),
      message: `window functions are not supported: ${textOf(source, tokens, i, end)}`,
      hint: 'aggregate with GROUP BY instead, or compute running figures outside the query',
    };
  }
  if (type === T.LBracket) {
    const end = matching(tokens, i);
    return {
      code: 'UNSUPPORTED_SUBSCRIPT',
      span: range(tokens, i, end),
      message: `array subscripts are not supported: ${textOf(source, tokens, i, end)}`,
      hint: `test a multiselect with ${multiselectTests(examples(), prev?.tokenType === T.Identifier ? prev.image : undefined)}`,
    };
  }
  if (type === T.Concat || type === T.Contains || type === T.ContainedBy || type === T.OtherOperator) {
    return { code: 'UNSUPPORTED_OPERATOR', span: spanOf(t), message: `operator ${shown(t)} is not supported`, hint: operatorHint(t.image, prev?.tokenType === T.Identifier ? prev.image : undefined, examples()) };
  }
  if (type === T.StringLiteral && prev?.tokenType === T.Identifier && prev.image.toLowerCase() === 'interval') return classifyInterval(source, tokens, i);
  if (type === T.Parameter) {
    return {
      code: 'SYNTAX_ERROR',
      span: spanOf(t),
      message: `bind parameters such as ${shown(t)} are not accepted in the query text`,
      hint: `write the value itself, e.g. ${exampleCondition(examples())}`,
    };
  }
  // A misspelled clause keyword is usually swallowed as an alias (`FORM`, `WHER`, `LIMT`), and
  // the error surfaces one token later: point at the misspelling instead.
  for (const cand of [t, prev]) {
    if (!cand || cand.tokenType !== T.Identifier) continue;
    const kw = nearKeyword(cand.image);
    if (kw) {
      return {
        code: 'SYNTAX_ERROR',
        span: spanOf(cand),
        message: `unexpected ${shown(cand)}`,
        hint: `did you mean ${kw}?`,
      };
    }
  }
  if (prev?.tokenType === T.Comma && CLAUSE_TOKENS.has(type)) {
    return {
      code: 'SYNTAX_ERROR',
      span: spanOf(prev),
      message: `a ',' is followed by ${t.image.toUpperCase()} instead of another item`,
      hint: `remove the ',' before ${t.image.toUpperCase()}`,
    };
  }
  if (type === T.Limit || type === T.Where || type === T.Order || type === T.Group) {
    if (!tokens.slice(0, i).some((x) => x.tokenType === T.From)) {
      return {
        code: 'SYNTAX_ERROR',
        span: spanOf(t),
        message: `${t.image.toUpperCase()} comes before any FROM`,
        hint: `name the object first: ... FROM ${examples().object} ${t.image.toUpperCase()} ...`,
      };
    }
  }
  const expected = expectedText(e);
  return {
    code: 'SYNTAX_ERROR',
    span: spanOf(t),
    message: `unexpected ${shown(t)}${prev ? ` after ${shown(prev)}` : ''}${expected ? `; expected ${expected}` : ''}`,
    ...(expected ? { hint: `write ${expected} here` } : { hint: 'check the query against the grammar (see grammar/oql.ebnf)' }),
  };
}

function classifyStart(tokens: IToken[], t: IToken, examples: () => Examples): SyntaxDiagnostic {
  const word = t.image.toLowerCase();
  if (t.tokenType === T.With) {
    return {
      code: 'UNSUPPORTED_WITH',
      span: range(tokens, 0, Math.min(1, tokens.length - 1)),
      message: 'WITH (common table expressions) is not supported',
      hint: 'inline the subquery: use EXISTS (SELECT ...) or IN (SELECT ...) in WHERE',
    };
  }
  if (t.tokenType === T.Identifier && STATEMENTS.has(word)) {
    return {
      code: 'NOT_SELECT',
      span: spanOf(t),
      message: `only SELECT queries are accepted, not ${t.image.toUpperCase()}`,
      hint: `queries are read-only: write SELECT id FROM ${examples().object} WHERE ... LIMIT 100`,
    };
  }
  if (t.tokenType === T.LParen) {
    return {
      code: 'SYNTAX_ERROR',
      span: spanOf(t),
      message: 'a query starts with SELECT, not a parenthesis',
      hint: 'remove the parentheses around the query',
    };
  }
  const kw = t.tokenType === T.Identifier ? nearKeyword(t.image) : undefined;
  return {
    code: 'SYNTAX_ERROR',
    span: spanOf(t),
    message: `a query starts with SELECT, not ${shown(t)}`,
    hint: kw === 'SELECT' ? 'did you mean SELECT?' : `write SELECT id FROM ${examples().object} LIMIT 100`,
  };
}

function classifyFilter(source: string, tokens: IToken[], i: number, examples: () => Examples): SyntaxDiagnostic {
  const close = matching(tokens, i + 1);
  const e = examples();
  let hint = `write a conditional aggregate: COUNT(CASE WHEN ${exampleCondition(e)} THEN 1 END)${e.number ? ` or SUM(CASE WHEN ${exampleCondition(e)} THEN ${e.number} END)` : ''}`;
  // Rebuild the user's own aggregate as a conditional one: COUNT(*) FILTER (WHERE c) -> COUNT(CASE WHEN c THEN 1 END).
  const callClose = i - 1;
  if (tokens[callClose]?.tokenType === T.RParen && tokens[i + 2]?.tokenType === T.Where) {
    let depth = 0;
    let open = callClose;
    for (; open >= 0; open--) {
      const ty = tokens[open]!.tokenType;
      if (ty === T.RParen) depth++;
      else if (ty === T.LParen && --depth === 0) break;
    }
    const fn = open > 0 ? tokens[open - 1]!.image : '';
    const cond = textOf(source, tokens, i + 3, close - 1);
    let arg = textOf(source, tokens, open + 1, callClose - 1);
    const distinct = /^distinct\s+/i.test(arg);
    if (distinct) arg = arg.replace(/^distinct\s+/i, '');
    if (fn && cond) {
      const value = arg === '*' || arg === '' ? '1' : arg;
      hint = `write ${fn}(${distinct ? 'DISTINCT ' : ''}CASE WHEN ${cond} THEN ${value} END)`;
    }
  }
  return {
    code: 'UNSUPPORTED_FILTER',
    span: range(tokens, i, close),
    message: `aggregate FILTER clauses are not supported: ${textOf(source, tokens, i, close)}`,
    hint,
  };
}

/** `left`: the name before the operator, when it is one. */
function operatorHint(op: string, left: string | undefined, e: Examples): string {
  switch (op) {
    case '||':
      return `join strings with concat(a, b), e.g. concat(${left ?? e.text}, ' ')`;
    case '@>':
    case '<@':
      return `test a multiselect with ${multiselectTests(e, left)}`;
    case '~':
    case '~*':
    case '!~':
    case '!~*':
      return `match patterns with LIKE or ILIKE: ${left ?? e.text} ILIKE '%acme%'`;
    case '^':
      return 'multiply instead: x * x';
    default:
      return 'the operators are + - * / %, comparisons (= <> != < <= > >=), && for multiselects, AND, OR, NOT';
  }
}

/** True when the comma at `i` follows `FROM <object> [alias]` at the same parenthesis depth. */
function afterFromItem(tokens: IToken[], i: number): boolean {
  let depth = 0;
  for (let j = i - 1; j >= 0 && j >= i - 4; j--) {
    const ty = tokens[j]!.tokenType;
    if (ty === T.RParen) depth++;
    if (ty === T.LParen) depth--;
    if (depth !== 0) return false;
    if (ty === T.From) return true;
    if (ty !== T.Identifier && ty !== T.QuotedIdentifier && ty !== T.As && !(ty.CATEGORIES ?? []).includes(T.NonReserved)) return false;
  }
  return false;
}

function expectedText(e: IRecognitionException): string | undefined {
  const m = /Expecting token of type --> (\w+) <--/.exec(e.message);
  if (m) return TOKEN_TEXT[m[1]!] ?? m[1]!.toUpperCase();
  if (e.name === 'NoViableAltException' && /Expecting: one of these possible Token sequences/.test(e.message)) {
    if (/\[StringLiteral\]|\[NumberLiteral\]|\[Identifier\]/.test(e.message)) return 'an expression';
  }
  return undefined;
}

const INTERVAL_MS: Record<string, number> = { millisecond: 1, second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000 };

/**
 * `NOW() - INTERVAL '30 days'`: dates are epoch milliseconds, so a fixed interval is a number
 * of milliseconds, and NOW() becomes its epoch milliseconds. Months and years have no fixed
 * length: those get a calendar form instead.
 */
function classifyInterval(source: string, tokens: IToken[], i: number): SyntaxDiagnostic {
  const t = tokens[i]!;
  const span = range(tokens, i - 1, i);
  const m = /^'\s*(\d+)\s*(millisecond|second|minute|hour|day|week)s?\s*'$/i.exec(t.image);
  const message = `INTERVAL ${t.image} is not supported: dates are epoch milliseconds`;
  if (!m) {
    return { code: 'SYNTAX_ERROR', span, message, hint: "months and years have no fixed length: compare with a calendar bound such as date_part('epoch', date_trunc('month', NOW() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')*1000" };
  }
  const ms = `${m[1]}*${INTERVAL_MS[m[2]!.toLowerCase()]}`;
  // `NOW() - INTERVAL ...`: show the whole epoch form, the user's operator kept.
  const op = tokens[i - 2];
  const close = tokens[i - 3];
  const open = tokens[i - 4];
  const fn = tokens[i - 5];
  if (op && (op.tokenType === T.Minus || op.image === '+') && close?.tokenType === T.RParen && open?.tokenType === T.LParen && fn && fn.image.toLowerCase() === 'now') {
    return { code: 'SYNTAX_ERROR', span, message, hint: `write date_part('epoch', ${textOf(source, tokens, i - 5, i - 3)})*1000 ${op.image} ${ms}` };
  }
  return { code: 'SYNTAX_ERROR', span, message, hint: `write ${ms} (${m[1]} ${m[2]!.toLowerCase()}s in milliseconds)` };
}
