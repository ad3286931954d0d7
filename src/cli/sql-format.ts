/**
 * Lays out emitted SQL for reading: each clause on its own line, and a subquery's clauses
 * indented on lines of their own. Only whitespace changes, so the text runs the same. Quoted
 * identifiers and string literals are skipped, though the emitter writes every value as a
 * parameter.
 */
const CLAUSES = ['FROM', 'LEFT JOIN', 'WHERE', 'GROUP BY', 'HAVING', 'ORDER BY', 'LIMIT', 'OFFSET'];

export function formatSql(sql: string, indent = '  '): string {
  let out = '';
  // One entry per open parenthesis: whether it holds a subquery.
  const parens: boolean[] = [];
  const level = (): number => parens.filter(Boolean).length;
  const breakable = (): boolean => parens.length === 0 || parens[parens.length - 1] === true;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === '"' || c === "'") {
      const end = closingQuote(sql, i);
      out += sql.slice(i, end);
      i = end;
      continue;
    }
    if (c === '(') {
      const isSubquery = /^\s*SELECT\b/i.test(sql.slice(i + 1, i + 16));
      parens.push(isSubquery);
      out += '(';
      i++;
      if (isSubquery) {
        while (sql[i] === ' ') i++;
        out += `\n${indent.repeat(level())}`;
      }
      continue;
    }
    if (c === ')') {
      const wasSubquery = parens.pop() === true;
      if (wasSubquery) out = `${out.trimEnd()}\n${indent.repeat(level())}`;
      out += ')';
      i++;
      continue;
    }
    if (c === ' ' && breakable()) {
      const clause = CLAUSES.find((k) => startsWithWord(sql, i + 1, k));
      if (clause) {
        out += `\n${indent.repeat(level())}`;
        i++;
        continue;
      }
    }
    out += c;
    i++;
  }
  return out;
}

function closingQuote(sql: string, start: number): number {
  const q = sql[start]!;
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === q) {
      if (sql[i + 1] === q) { i += 2; continue; }
      return i + 1;
    }
    i++;
  }
  return sql.length;
}

function startsWithWord(sql: string, at: number, word: string): boolean {
  if (sql.slice(at, at + word.length).toUpperCase() !== word) return false;
  const next = sql[at + word.length];
  return next === undefined || !/[A-Za-z0-9_]/.test(next);
}
