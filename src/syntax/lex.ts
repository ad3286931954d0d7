import type { IToken, TokenType } from 'chevrotain';
import * as T from './tokens.js';

/**
 * The lexer the compiler runs: one pass over the text, one switch on the character, keywords
 * found by looking the whole word up. It produces exactly the tokens (and the first error
 * offset) of a Chevrotain Lexer built from `T.allTokens` in `onlyOffset` mode, which the tests
 * keep as its oracle, without that lexer's cost: trying the token regexes one by one for every
 * token, and building its tables when the process starts.
 *
 * The token definitions in tokens.ts remain the specification (and what the parser and the
 * grammar documents are generated from); the rules below follow their order where patterns
 * overlap: comments before operators, numbers before `.`, keywords only as whole words.
 */

export interface Lexed {
  readonly tokens: IToken[];
  /** Offset of the first character no token matches, or -1. */
  readonly errorOffset: number;
}

/**
 * Keywords in slots by length and first letter (case-folded), each as its lower-case word: a
 * word is compared with the few keywords of its slot in place, case-insensitively, and is a
 * keyword only when all of it is one (`selection` is not). Looking each word up in a Map
 * instead made V8 hash every word of every text, and fold the case of mixed-case ones.
 */
const KEYWORD_SLOTS = keywordSlots();
const LONGEST_KEYWORD = Math.max(...T.allTokens.filter(isKeyword).map((t) => t.name.length));

// Tables are built in functions, not by loops at the top of the module: a loop there spends the
// budget of the bundle's whole top-level code, which V8 then compiles again (baseline code for
// hundreds of kilobytes) at every start of a process.
function keywordSlots(): (readonly (readonly [string, TokenType])[] | undefined)[] {
  const slots: (readonly (readonly [string, TokenType])[] | undefined)[] = [];
  for (const t of T.allTokens) {
    if (!isKeyword(t)) continue;
    const word = t.name.toLowerCase();
    const slot = keywordSlot(word.length, word.charCodeAt(0));
    const list = (slots[slot] ??= []) as (readonly [string, TokenType])[];
    list.push([word, t]);
  }
  return slots;
}

function isKeyword(t: TokenType): boolean {
  return (t.CATEGORIES ?? []).includes(T.Keyword);
}

/** A word's keyword slot: its length and first letter (`& 31` maps A and a alike; words start with a letter or _). */
function keywordSlot(length: number, first: number): number {
  return length * 32 + (first & 31);
}

/** The keyword `text.slice(start, end)` spells in any case, if any. */
function keywordAt(text: string, start: number, end: number): TokenType | undefined {
  const n = end - start;
  if (n > LONGEST_KEYWORD) return undefined;
  const slot = KEYWORD_SLOTS[keywordSlot(n, text.charCodeAt(start))];
  if (slot === undefined) return undefined;
  // An indexed loop: `for (const [word, type] of slot)` ran an iterator and a destructuring
  // per keyword tried, for every word of every text.
  next: for (let s = 0; s < slot.length; s++) {
    const entry = slot[s]!;
    const word = entry[0];
    // `| 32` folds ASCII letters to lower case and maps nothing else onto a letter: equal
    // folded codes are equal characters up to case, for the characters a word holds.
    for (let k = 1; k < n; k++) if ((text.charCodeAt(start + k) | 32) !== (word.charCodeAt(k) | 32)) continue next;
    return entry[1];
  }
  return undefined;
}

// Character classes as one lookup table of bits: one indexed load per character.
const IDENT_START = 1;
const IDENT_PART = 2;
const DIGIT = 4;
const OTHER_OPERATOR = 8;
const CLASS = characterClasses();

function characterClasses(): Uint8Array {
  const classes = new Uint8Array(128);
  const mark = (chars: string, bits: number): void => {
    for (let i = 0; i < chars.length; i++) classes[chars.charCodeAt(i)]! |= bits;
  };
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_';
  const digits = '0123456789';
  mark(letters, IDENT_START | IDENT_PART);
  mark(digits, IDENT_PART | DIGIT);
  mark('$', IDENT_PART);
  mark('~!@#^&|`?', OTHER_OPERATOR);
  return classes;
}
/** JavaScript's `\s`, as the WhiteSpace token's pattern reads it. */
const SPACE = /\s/;
const SPACE_RUN = /\s+/y;

/** `\s` for one character: the ASCII ones by code, the others (U+00A0, U+2028...) by the pattern. */
function isSpace(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c < 128) return c === 32 || (c >= 9 && c <= 13);
  return SPACE.test(text[i]!);
}

function token(tokens: IToken[], type: TokenType, text: string, start: number, end: number): void {
  tokens.push({ image: text.slice(start, end), startOffset: start, tokenTypeIdx: type.tokenTypeIdx!, tokenType: type } as IToken);
}

const isDigit = (c: number): boolean => c < 128 && (CLASS[c]! & DIGIT) !== 0;

/** End of a quoted run starting at `start` (a quote), doubled quotes inside; -1 when it never closes. */
function closingQuote(text: string, start: number, quote: number): number {
  let i = start + 1;
  const n = text.length;
  while (i < n) {
    if (text.charCodeAt(i) !== quote) i++;
    else if (i + 1 < n && text.charCodeAt(i + 1) === quote) i += 2;
    else return i + 1;
  }
  return -1;
}

/** End of a NumberLiteral at `i`, or -1: (\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)? */
function numberEnd(text: string, i: number): number {
  const n = text.length;
  let j = i;
  while (j < n && isDigit(text.charCodeAt(j))) j++;
  const intDigits = j - i;
  if (j < n && text.charCodeAt(j) === 46 /* . */) {
    let k = j + 1;
    while (k < n && isDigit(text.charCodeAt(k))) k++;
    if (intDigits === 0 && k === j + 1) return -1; // a lone '.'
    j = k;
  } else if (intDigits === 0) return -1;
  const e = text.charCodeAt(j);
  if (e === 101 || e === 69) {
    let k = j + 1;
    const sign = text.charCodeAt(k);
    if (sign === 43 || sign === 45) k++;
    const digitsFrom = k;
    while (k < n && isDigit(text.charCodeAt(k))) k++;
    if (k > digitsFrom) j = k;
  }
  return j;
}

export function lex(text: string): Lexed {
  const tokens: IToken[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    const next = i + 1 < n ? text.charCodeAt(i + 1) : -1;
    // Words first: most tokens are names and keywords.
    if (c < 128 && (CLASS[c]! & IDENT_START) !== 0) {
      let j = i + 1;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d >= 128 || (CLASS[d]! & IDENT_PART) === 0) break;
        j++;
      }
      const kw = keywordAt(text, i, j);
      tokens.push({ image: text.slice(i, j), startOffset: i, tokenTypeIdx: (kw ?? T.Identifier).tokenTypeIdx!, tokenType: kw ?? T.Identifier } as IToken);
      i = j;
      continue;
    }
    switch (c) {
      case 32: case 9: case 10: case 13:
        i++;
        while (i < n && isSpace(text, i)) i++;
        continue;
      case 45: // -
        if (next === 45) {
          let j = i + 2;
          while (j < n) {
            const d = text.charCodeAt(j);
            if (d === 10 || d === 13) break;
            j++;
          }
          i = j;
          continue;
        }
        token(tokens, T.Minus, text, i, i + 1);
        i++;
        continue;
      case 47: // /
        if (next === 42) {
          const close = text.indexOf('*/', i + 2);
          if (close < 0) {
            token(tokens, T.UnterminatedComment, text, i, n);
            i = n;
          } else i = close + 2;
          continue;
        }
        token(tokens, T.Slash, text, i, i + 1);
        i++;
        continue;
      case 39: { // '
        const end = closingQuote(text, i, c);
        if (end < 0) {
          token(tokens, T.UnterminatedString, text, i, n);
          i = n;
        } else {
          token(tokens, T.StringLiteral, text, i, end);
          i = end;
        }
        continue;
      }
      case 34: { // "
        const end = closingQuote(text, i, c);
        if (end < 0) {
          token(tokens, T.UnterminatedIdentifier, text, i, n);
          i = n;
        } else if (end === i + 2) {
          // A quoted identifier has at least one character: `""` lexes as an unterminated `"`
          // (and then another).
          token(tokens, T.UnterminatedIdentifier, text, i, ++i);
        } else {
          token(tokens, T.QuotedIdentifier, text, i, end);
          i = end;
        }
        continue;
      }
      case 36: { // $
        let j = i + 1;
        while (j < n && isDigit(text.charCodeAt(j))) j++;
        if (j === i + 1) return { tokens, errorOffset: i };
        token(tokens, T.Parameter, text, i, j);
        i = j;
        continue;
      }
      case 58: // :
        if (next === 58) {
          token(tokens, T.DoubleColon, text, i, i + 2);
          i += 2;
        } else {
          token(tokens, T.Colon, text, i, i + 1);
          i++;
        }
        continue;
      case 44: token(tokens, T.Comma, text, i, ++i); continue;
      case 59: token(tokens, T.Semicolon, text, i, ++i); continue;
      case 40: token(tokens, T.LParen, text, i, ++i); continue;
      case 41: token(tokens, T.RParen, text, i, ++i); continue;
      case 91: token(tokens, T.LBracket, text, i, ++i); continue;
      case 93: token(tokens, T.RBracket, text, i, ++i); continue;
      case 43: token(tokens, T.Plus, text, i, ++i); continue;
      case 42: token(tokens, T.Star, text, i, ++i); continue;
      case 37: token(tokens, T.Percent, text, i, ++i); continue;
      case 61: token(tokens, T.Equal, text, i, ++i); continue;
      case 60: { // <
        const type = next === 64 ? T.ContainedBy : next === 62 ? T.NotEqual : next === 61 ? T.LessEqual : null;
        if (type) {
          token(tokens, type, text, i, i + 2);
          i += 2;
        } else token(tokens, T.Less, text, i, ++i);
        continue;
      }
      case 62: // >
        if (next === 61) {
          token(tokens, T.GreaterEqual, text, i, i + 2);
          i += 2;
        } else token(tokens, T.Greater, text, i, ++i);
        continue;
      case 46: { // .
        const end = numberEnd(text, i);
        if (end < 0) token(tokens, T.Dot, text, i, ++i);
        else {
          token(tokens, T.NumberLiteral, text, i, end);
          i = end;
        }
        continue;
      }
      default:
        break;
    }
    if (isDigit(c)) {
      const end = numberEnd(text, i);
      token(tokens, T.NumberLiteral, text, i, end);
      i = end;
      continue;
    }
    // Two-character operators that also start a run of other operator characters.
    if (c === 33 && next === 61) { // !=
      token(tokens, T.NotEqual, text, i, i + 2);
      i += 2;
      continue;
    }
    if ((c === 38 && next === 38) || (c === 124 && next === 124) || (c === 64 && next === 62)) {
      token(tokens, c === 38 ? T.Overlap : c === 124 ? T.Concat : T.Contains, text, i, i + 2);
      i += 2;
      continue;
    }
    if (c < 128 && (CLASS[c]! & OTHER_OPERATOR) !== 0) {
      let j = i + 1;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d >= 128 || (CLASS[d]! & OTHER_OPERATOR) === 0) break;
        j++;
      }
      token(tokens, T.OtherOperator, text, i, j);
      i = j;
      continue;
    }
    if (isSpace(text, i)) {
      SPACE_RUN.lastIndex = i;
      SPACE_RUN.test(text);
      i = SPACE_RUN.lastIndex;
      continue;
    }
    return { tokens, errorOffset: i };
  }
  return { tokens, errorOffset: -1 };
}
