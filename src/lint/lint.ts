import { check, type CheckOptions } from '../compile.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { isOqlError } from '../diagnostics/diagnostic.js';

/**
 * Every diagnostic of a query, errors and warnings, in source order. Never throws for bad
 * input: a saved report is linted, not run.
 */
export function lint(text: string, options: CheckOptions): Diagnostic[] {
  try {
    return [...check(text, options).diagnostics];
  } catch (e) {
    // A malformed option (catalog with an unquotable name) is still a library error: report it.
    if (isOqlError(e)) return [...e.diagnostics];
    throw e;
  }
}
