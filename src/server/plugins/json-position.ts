/**
 * Where a text stops being JSON: the offset of the first character JSON.parse cannot take (the
 * text's length when it ends too soon), with its line and column (1-based). JSON.parse's own
 * message names a position on some Node lines and not on others, so the text is walked here, on
 * the error path only. Undefined for a text nested deeper than MAX_DEPTH, which is not walked.
 */
export function jsonErrorAt(text: string): { offset: number; line: number; column: number } | undefined {
  const offset = firstBadOffset(text);
  if (offset === undefined) return undefined;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { offset, line, column: offset - lineStart + 1 };
}

/** Deeper nesting is not walked (the walk recurses): no body a client means to send is that deep. */
const MAX_DEPTH = 512;

class TooDeep {}

class Stop {
  constructor(readonly at: number) {}
}

function firstBadOffset(text: string): number | undefined {
  let i = 0;
  let depth = 0;
  const fail = (): never => {
    throw new Stop(i);
  };
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const literal = (word: string) => {
    for (const c of word) {
      if (text[i] !== c) fail();
      i++;
    }
  };
  const string = () => {
    i++;
    for (;;) {
      if (i >= text.length) fail();
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return;
      }
      if (c < 32) fail();
      if (c === 92) {
        i++;
        const e = text[i];
        if (e === 'u') {
          for (let k = 1; k <= 4; k++) if (!/[0-9a-fA-F]/.test(text[i + k] ?? '')) fail();
          i += 5;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
        else fail();
      } else i++;
    }
  };
  const digits = () => {
    if (!/[0-9]/.test(text[i] ?? '')) fail();
    while (/[0-9]/.test(text[i] ?? '')) i++;
  };
  const number = () => {
    if (text[i] === '-') i++;
    if (text[i] === '0') i++;
    else digits();
    if (text[i] === '.') {
      i++;
      digits();
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      digits();
    }
  };
  const value = (): void => {
    depth++;
    if (depth > MAX_DEPTH) throw new TooDeep();
    try {
      valueAt();
    } finally {
      depth--;
    }
  };
  const valueAt = (): void => {
    space();
    const c = text[i];
    if (c === '{') {
      i++;
      space();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        space();
        if (text[i] !== '"') fail();
        string();
        space();
        if (text[i] !== ':') fail();
        i++;
        value();
        space();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return;
        } else fail();
      }
    }
    if (c === '[') {
      i++;
      space();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        space();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return;
        } else fail();
      }
    }
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    if (c === '-' || /[0-9]/.test(c ?? '')) return number();
    fail();
  };
  try {
    value();
    space();
    if (i < text.length) fail();
    return text.length;
  } catch (e) {
    if (e instanceof Stop) return e.at;
    if (e instanceof TooDeep) return undefined;
    throw e;
  }
}
