import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * .ci/counts.mjs, which .ci/run reads a run's outcome with: from vitest's JSON report, or, when a
 * test process died of a V8 abort and the runner wrote no report, from the lines
 * test/support/progress-reporter.ts appended as each file started and ended.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const SCRIPT = join(ROOT, '.ci/counts.mjs');
const dir = mkdtempSync(join(tmpdir(), 'oql-ci-counts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function counts(...args: string[]): string[] {
  return execFileSync(process.execPath, [SCRIPT, ...args], { cwd: dir, encoding: 'utf8' }).trim().split('\n');
}

describe('.ci/counts.mjs', () => {
  it('counts a finished run from the JSON report, a file that failed without a failed test as one failure', () => {
    const report = join(dir, 'report.json');
    writeFileSync(
      report,
      JSON.stringify({
        numPassedTests: 7,
        numFailedTests: 2,
        testResults: [
          { status: 'passed', assertionResults: [{ status: 'passed' }] },
          { status: 'failed', assertionResults: [{ status: 'failed' }, { status: 'failed' }] },
          { status: 'failed', assertionResults: [] },
          { status: 'failed', assertionResults: [{ status: 'skipped' }] },
        ],
      }),
    );
    expect(counts('report', report)).toEqual(['7 4']);
  });

  it('after a V8 abort: sums the files that ended, and lists the others, those that had started marked running', () => {
    for (const f of ['test/a.test.ts', 'test/deep/b.test.ts', 'test/c.test.ts', 'test/d.test.ts', 'test/e.test.ts', 'test/support/helper.ts']) {
      mkdirSync(join(dir, f, '..'), { recursive: true });
      writeFileSync(join(dir, f), '');
    }
    const progress = join(dir, 'progress.jsonl');
    const line = (o: object) => `${JSON.stringify(o)}\n`;
    writeFileSync(
      progress,
      line({ event: 'start', file: join(dir, 'test/a.test.ts') }) +
        line({ event: 'start', file: join(dir, 'test/deep/b.test.ts') }) +
        line({ event: 'end', file: join(dir, 'test/a.test.ts'), state: 'failed', passed: 5, failed: 1 }) +
        line({ event: 'start', file: join(dir, 'test/d.test.ts') }) +
        line({ event: 'end', file: join(dir, 'test/d.test.ts'), state: 'passed', passed: 3, failed: 0 }) +
        line({ event: 'start', file: join(dir, 'test/e.test.ts') }) +
        line({ event: 'end', file: join(dir, 'test/e.test.ts'), state: 'failed', passed: 0, failed: 0 }),
    );
    expect(counts('progress', progress, dir)).toEqual(['8 2', 'test/c.test.ts', 'test/deep/b.test.ts running']);
  });

  it('refuses an unknown mode with its usage', () => {
    expect(() => execFileSync(process.execPath, [SCRIPT, 'other'], { cwd: dir, stdio: 'pipe' })).toThrow(/usage/);
  });

  it('is fed by the progress reporter: a line as each file starts and ends, with its state and counts', () => {
    // Inside the repository, so that the files find vitest; .scratch/ is ignored by git.
    mkdirSync(join(ROOT, '.scratch'), { recursive: true });
    const project = mkdtempSync(join(ROOT, '.scratch', 'progress-'));
    try {
      writeFileSync(join(project, 'vitest.config.ts'), "export default { test: { include: ['*.test.ts'] } };\n");
      writeFileSync(
        join(project, 'mixed.test.ts'),
        "import { it, expect } from 'vitest';\nit('one', () => expect(1).toBe(1));\nit('two', () => expect(2).toBe(2));\nit('three', () => expect(3).toBe(4));\nit.skip('skipped', () => {});\n",
      );
      writeFileSync(
        join(project, 'broken.test.ts'),
        "import { beforeAll, it } from 'vitest';\nbeforeAll(() => { throw new Error('no database'); });\nit('never runs', () => {});\n",
      );
      const progress = join(project, 'progress.jsonl');
      try {
        execFileSync(join(ROOT, 'node_modules/.bin/vitest'), ['run', '--root', project, `--reporter=${join(ROOT, 'test/support/progress-reporter.ts')}`], {
          cwd: project,
          env: { ...process.env, OQL_TEST_PROGRESS: progress },
          stdio: 'pipe',
        });
      } catch {
        // Two of the files fail on purpose: vitest exits 1.
      }
      const lines = readFileSync(progress, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      const ends = Object.fromEntries(lines.filter((l) => l['event'] === 'end').map((l) => [String(l['file']).slice(project.length + 1), [l['state'], l['passed']]]));
      expect(ends).toEqual({ 'mixed.test.ts': ['failed', 2], 'broken.test.ts': ['failed', 0] });
      // What .ci/run makes of them: 2 passed; 1 failed test, and 1 for the file that failed before its test.
      expect(counts('progress', progress, project)[0]).toBe('2 2');
      expect(lines.filter((l) => l['event'] === 'start').length).toBe(2);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
