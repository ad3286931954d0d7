/**
 * A unified diff (`diff -u` format, 3 lines of context) of two versions of a report file, for
 * `oql lint --fix-dry-run`. Report files are small, so a plain LCS table is enough.
 */
export function unifiedDiff(path: string, before: string, after: string, context = 3): string {
  if (before === after) return '';
  const a = splitLines(before);
  const b = splitLines(after);
  const ops = diffLines(a, b);
  const out: string[] = [`--- a/${path}`, `+++ b/${path}`];
  // Group the edit script into hunks of changes with their context.
  let i = 0;
  while (i < ops.length) {
    if (ops[i]!.kind === ' ') { i++; continue; }
    let start = i;
    let lead = 0;
    while (start > 0 && ops[start - 1]!.kind === ' ' && lead < context) { start--; lead++; }
    let end = i;
    for (;;) {
      while (end < ops.length && ops[end]!.kind !== ' ') end++;
      let run = 0;
      while (end + run < ops.length && ops[end + run]!.kind === ' ') run++;
      if (end + run < ops.length && run <= context * 2) { end += run; continue; }
      end += Math.min(run, context);
      break;
    }
    const hunk = ops.slice(start, end);
    const aStart = hunk[0]!.a;
    const bStart = hunk[0]!.b;
    const aLen = hunk.filter((o) => o.kind !== '+').length;
    const bLen = hunk.filter((o) => o.kind !== '-').length;
    out.push(`@@ -${aLen === 0 ? aStart : aStart + 1},${aLen} +${bLen === 0 ? bStart : bStart + 1},${bLen} @@`);
    for (const o of hunk) {
      out.push(`${o.kind}${o.text.replace(/\r?\n$/, '')}`);
      if (!/\n$/.test(o.text)) out.push('\\ No newline at end of file');
    }
    i = end;
  }
  return `${out.join('\n')}\n`;
}

interface Op {
  readonly kind: ' ' | '-' | '+';
  readonly text: string;
  /** Line index in the old (a) and new (b) file where the op stands. */
  readonly a: number;
  readonly b: number;
}

function splitLines(text: string): string[] {
  const lines = text.split(/(?<=\n)/);
  return lines.length === 1 && lines[0] === '' ? [] : lines;
}

function diffLines(a: readonly string[], b: readonly string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { ops.push({ kind: ' ', text: a[i]!, a: i, b: j }); i++; j++; }
    else if (j < m && (i === n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) { ops.push({ kind: '+', text: b[j]!, a: i, b: j }); j++; }
    else { ops.push({ kind: '-', text: a[i]!, a: i, b: j }); i++; }
  }
  // Removals before additions within a change, as diff -u prints them.
  for (let k = 0; k < ops.length; k++) {
    let e = k;
    while (e < ops.length && ops[e]!.kind !== ' ') e++;
    if (e > k) {
      const run = ops.slice(k, e);
      const sorted = [...run.filter((o) => o.kind === '-'), ...run.filter((o) => o.kind === '+')];
      ops.splice(k, e - k, ...sorted);
      k = e;
    }
  }
  return ops;
}
