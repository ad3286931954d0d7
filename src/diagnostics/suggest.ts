/**
 * Edit distance counting a swap of two neighbouring letters as one edit (optimal string
 * alignment), since `FORM` for `FROM` is the commonest typo; exits early once `max` is exceeded.
 */
export function editDistance(a: string, b: string, max = Infinity): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before = new Array<number>(b.length + 1).fill(0);
  let prev = new Array<number>(b.length + 1);
  let cur = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) {
        v = Math.min(v, before[j - 2]! + 1);
      }
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    [before, prev, cur] = [prev, cur, before];
  }
  return prev[b.length]!;
}

/**
 * The candidates closest to `word` (case-insensitive), best first. A candidate qualifies when
 * its distance is at most a third of the word's length (at least 1, at most 3), or when one
 * name is a prefix of the other.
 */
export function closest(word: string, candidates: Iterable<string>, limit = 3): string[] {
  const w = word.toLowerCase();
  const max = Math.min(3, Math.max(1, Math.floor(w.length / 3)));
  const scored: { c: string; d: number }[] = [];
  for (const c of candidates) {
    const lc = c.toLowerCase();
    if (lc === w) continue;
    let d = editDistance(w, lc, max);
    if (d > max && w.length >= 3 && (lc.startsWith(w) || w.startsWith(lc))) d = max;
    if (d <= max) scored.push({ c, d });
  }
  scored.sort((x, y) => x.d - y.d || x.c.localeCompare(y.c));
  return scored.slice(0, limit).map((s) => s.c);
}

/** "did you mean 'a'?" / "did you mean 'a' or 'b'?" or undefined when nothing is close. */
export function didYouMean(word: string, candidates: Iterable<string>, quote = "'"): string | undefined {
  return didYouMeanOf(closest(word, candidates), quote);
}

/** The "did you mean" line for names already found close (by `closest`), or undefined for none. */
export function didYouMeanOf(found: readonly string[], quote = "'"): string | undefined {
  if (found.length === 0) return undefined;
  const q = found.map((f) => `${quote}${f}${quote}`);
  return `did you mean ${q.length === 1 ? q[0] : `${q.slice(0, -1).join(', ')} or ${q[q.length - 1]}`}?`;
}
