import { appendFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * A reporter for CI (`.ci/run`): one JSON line per test file when it starts and when it ends,
 * appended to the file named by OQL_TEST_PROGRESS as it happens. Vitest writes its JSON report
 * only at the end of a run; when a process of the run dies on a fault inside the engine itself
 * (V8 aborts on a failed internal check), the runner stops and writes none. These lines still say
 * which files finished, with their counts, and which were running.
 */
export default class ProgressReporter implements Reporter {
  private readonly path = process.env.OQL_TEST_PROGRESS;

  onTestModuleStart(module: TestModule): void {
    this.write({ event: 'start', file: module.moduleId });
  }

  onTestModuleEnd(module: TestModule): void {
    let passed = 0;
    let failed = 0;
    for (const test of module.children.allTests()) {
      const state = test.result().state;
      if (state === 'passed') passed++;
      else if (state === 'failed') failed++;
    }
    // How a failed file without a failed test counts is .ci/counts.mjs's rule, not this reporter's.
    this.write({ event: 'end', file: module.moduleId, state: module.state(), passed, failed });
  }

  private write(line: Record<string, unknown>): void {
    if (this.path) appendFileSync(this.path, `${JSON.stringify(line)}\n`);
  }
}
