import { bind } from '../bind/bind.js';
import type { CheckOptions } from '../compile.js';
import type { DiagnosticCode } from '../diagnostics/codes.js';
import { DiagnosticBag, isOqlError, type Diagnostic, type Severity } from '../diagnostics/diagnostic.js';
import { withFanout } from '../plan/fanout.js';
import { plan } from '../plan/plan.js';
import { parseInto } from '../syntax/parse.js';
import { validate } from '../validate/validate.js';
import { fanoutRules } from './fanout.js';
import { reportRules } from './rules.js';

/** A rule's level, as in ESLint: `off` drops the code's diagnostics, the others set their severity. */
export type RuleLevel = 'off' | 'warn' | 'error';

export interface LintOptions extends CheckOptions {
  /** Per-code levels. Default: each diagnostic keeps its own severity. */
  readonly rules?: Readonly<Partial<Record<DiagnosticCode, RuleLevel>>>;
}

/** The codes of the report rules, which only `lint` runs (compile never pays for them). */
export const LINT_CODES: readonly DiagnosticCode[] = [
  'FANOUT_AGGREGATE', 'FANOUT_CROSS_PRODUCT', 'FANOUT_OR', 'RELATIVE_DAY_ONE_ZONE', 'EPOCH_SECONDS',
  'TO_TIMESTAMP_MILLISECONDS', 'LIMIT_WITHOUT_ORDER', 'RELATION_ID_COMPARISON',
];

/**
 * Every diagnostic of a query, errors and warnings, in source order: what `compile` reports,
 * and for a query that compiles, the report rules (fan-out, units, zones, unstable LIMIT).
 * Never throws for bad input: a saved report is linted, not run. A diagnostic's `fix`, when
 * present, is the replacement that keeps what the user meant (see `applyFixes`).
 */
export function lint(text: string, options: LintOptions): Diagnostic[] {
  let items: readonly Diagnostic[];
  try {
    const bag = new DiagnosticBag(text, options.maxCompileMs);
    const ast = parseInto(text, bag, options);
    if (ast && validate(ast, bag, options)) {
      const bound = bind(ast, bag, options);
      bag.checkTime();
      const shaped = bound && !bag.hasErrors ? withFanout(bound, bag, options) : null;
      if (shaped && !bag.hasErrors) {
        const p = plan(shaped, options.catalog, { semiJoins: options.semiJoins ?? true });
        bag.checkTime();
        reportRules({ bag, ast, bound: bound! });
        fanoutRules({ bag, catalog: options.catalog, ast, bound: shaped, plan: p });
      }
    }
    items = bag.items;
  } catch (e) {
    // A malformed option (catalog with an unquotable name) is still a library error: report it;
    // so is a text whose checks ran out of their time (COMPILE_BUDGET_EXCEEDED).
    if (isOqlError(e)) items = e.diagnostics;
    else throw e;
  }
  return withLevels(items, options.rules).sort((a, b) => a.span.start - b.span.start || a.span.end - b.span.end);
}

function withLevels(items: readonly Diagnostic[], rules: LintOptions['rules']): Diagnostic[] {
  if (!rules) return [...items];
  const out: Diagnostic[] = [];
  for (const d of items) {
    const level = rules[d.code];
    if (level === 'off') continue;
    const severity: Severity | undefined = level === 'warn' ? 'warning' : level === 'error' ? 'error' : undefined;
    out.push(severity && severity !== d.severity ? { ...d, severity } : d);
  }
  return out;
}
