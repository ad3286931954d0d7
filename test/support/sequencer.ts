import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Starts the longest test files first, by the seconds test/support/durations.json gives them
 * (`node scripts/test-durations.mjs <vitest JSON report>` writes it), so that no long file starts
 * last and sets the end of the run by itself; files it does not know yet count as 10 s. Vitest's
 * own ordering needs a cache of earlier runs, which a fresh clone does not have.
 */
const DURATIONS: Record<string, number> = JSON.parse(readFileSync(new URL('./durations.json', import.meta.url), 'utf8'));
const UNKNOWN_SECONDS = 10;
const ROOT = new URL('../..', import.meta.url).pathname;

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (f: TestSpecification) => DURATIONS[relative(ROOT, f.moduleId)] ?? UNKNOWN_SECONDS;
    return [...files].sort((a, b) => seconds(b) - seconds(a) || a.moduleId.localeCompare(b.moduleId));
  }
}
