import type { DiagnosticCode } from '../diagnostics/codes.js';
import type { Diagnostic, Fix } from '../diagnostics/diagnostic.js';
import { lint, type LintOptions } from './lint.js';

/**
 * The fixes `--fix` applies on its own: each makes the query valid, or answers what its author
 * meant where it answered something else (an alias that takes no name the query has, LIMIT 100,
 * the second AT TIME ZONE, a date string as epoch milliseconds with the same operator, compared
 * with the column itself where it was wrapped in to_timestamp, an option in its right case). A
 * query that ran keeps its rows otherwise. Other fixes change what runs, so they stay
 * suggestions a person applies (`lint()` returns them all): the fan-out rewrites, EXTRACT, and
 * `owner` for `owner.id`, which also keeps the rows whose owner the caller cannot see (a
 * deleted or missing record, whose `.id` is NULL).
 */
export const SAFE_FIX_CODES: ReadonlySet<DiagnosticCode> = new Set<DiagnosticCode>([
  'MISSING_ALIAS', 'MISSING_LIMIT', 'RELATIVE_DAY_ONE_ZONE', 'DATE_STRING_COMPARISON', 'UNKNOWN_OPTION',
]);

/** At most this many lint-and-fix passes: a fix may reveal another (an alias, then a LIMIT). */
const MAX_PASSES = 10;

/** Applies fixes in `text`; overlapping ones after the first are left for the next pass. */
export function applyFixes(text: string, fixes: readonly Fix[]): { text: string; applied: number } {
  const sorted = [...fixes].sort((a, b) => a.range[0] - b.range[0] || a.range[1] - b.range[1]);
  let out = '';
  let at = 0;
  let applied = 0;
  for (const f of sorted) {
    if (f.range[0] < at) continue;
    out += text.slice(at, f.range[0]) + f.text;
    at = f.range[1];
    applied++;
  }
  return { text: out + text.slice(at), applied };
}

export interface FixResult {
  /** The fixed text (the input when nothing applied). */
  readonly output: string;
  /** The fixed diagnostics, in the order they were applied. */
  readonly fixed: readonly Diagnostic[];
  /** What is still wrong after fixing. */
  readonly remaining: readonly Diagnostic[];
}

/** Lints and applies the safe fixes until none is left (idempotent: fixing the output changes nothing). */
export function fixQuery(text: string, options: LintOptions, codes: ReadonlySet<DiagnosticCode> = SAFE_FIX_CODES): FixResult {
  let current = text;
  const fixed: Diagnostic[] = [];
  let diagnostics = lint(current, options);
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const fixable = diagnostics.filter((d) => d.fix && codes.has(d.code));
    if (fixable.length === 0) break;
    const next = applyFixes(current, fixable.map((d) => d.fix!));
    if (next.applied === 0 || next.text === current) break;
    fixed.push(...fixable);
    current = next.text;
    diagnostics = lint(current, options);
  }
  return { output: current, fixed, remaining: diagnostics };
}
