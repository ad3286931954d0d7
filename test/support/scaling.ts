/**
 * How the cost of some work grows with its input, measured so that a loaded machine does not
 * decide the answer: CPU time of this process (user + system, not wall time, which counts the
 * time other processes held the cores), each size the best of several rounds run in turn with
 * the other (the least the work costs; what load and collections add is dropped).
 */

export interface Growth {
  readonly small: number;
  readonly large: number;
  /** Milliseconds of CPU of the small and the large input, the best of the rounds. */
  readonly smallMs: number;
  readonly largeMs: number;
  /** largeMs / smallMs. */
  readonly ratio: number;
}

function cpuMs(run: () => void): number {
  const before = process.cpuUsage();
  run();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/**
 * The cost of `run` on the inputs `make(small)` and `make(large)`. With `below`, a ratio at or
 * above it is measured again, up to four times as many rounds in all, keeping the least of each
 * size: a loaded machine only ever adds time, so the best seen is the nearest to the work's own
 * cost, and work that truly grows too fast stays above the bound however often it is measured.
 */
export function growth<T>(
  make: (n: number) => T,
  run: (input: T) => void,
  small: number,
  large: number,
  { rounds = 5, below }: { rounds?: number; below?: number } = {},
): Growth {
  const a = make(small);
  const b = make(large);
  run(a);
  run(b);
  let smallMs = Infinity;
  let largeMs = Infinity;
  // A clock that reads 0 for the small input (too fast to see) counts as its resolution.
  const ratio = () => largeMs / Math.max(smallMs, 0.05);
  for (let attempt = 0; attempt < 4; attempt++) {
    for (let r = 0; r < rounds; r++) {
      smallMs = Math.min(smallMs, cpuMs(() => run(a)));
      largeMs = Math.min(largeMs, cpuMs(() => run(b)));
    }
    if (below === undefined || ratio() < below) break;
  }
  return { small, large, smallMs, largeMs, ratio: ratio() };
}

/** The largest n for which `size(make(n))` is at most `cap` (make must grow with n). */
export function largestWithin<T>(make: (n: number) => T, size: (x: T) => number, cap: number): number {
  let lo = 1;
  let hi = 2;
  while (size(make(hi)) <= cap) {
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (size(make(mid)) <= cap) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * Four times the input may cost at most this many times as much. Linear work measures 4 to 7
 * here (collections grow a little faster than the heap); quadratic work 14 and more at these
 * sizes, as the control case of each scaling test shows.
 */
export const MAX_RATIO_FOR_4X = 10;

/** Work that is quadratic on purpose: the control that shows the bound can fail. */
export function quadratic(n: number): number {
  let x = 0;
  for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) x = (x + (i ^ j)) | 0;
  return x;
}
