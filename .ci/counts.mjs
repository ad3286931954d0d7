// Reads what a run of the suite left behind, for .ci/run.
//   node .ci/counts.mjs report <vitest JSON report>       -> "<passed> <failed>"
//   node .ci/counts.mjs progress <progress lines> <root>  -> "<passed> <failed>" on the first line,
//     then the test files that had not finished, one a line, those that had started marked "running"
//   node .ci/counts.mjs failures <vitest JSON report> <root>  -> each failed test or file, with the
//     first lines of its message, so that the end of CI's output names what failed
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const [kind, path, root] = process.argv.slice(2);

/**
 * The failures a test file counts for: its failed tests, or one when the file failed before any
 * of its tests could (an import error, a failing beforeAll), so that it is never counted as none.
 */
const failuresOf = (fileFailed, failedTests) => (fileFailed && failedTests === 0 ? 1 : failedTests);

if (kind === 'report') {
  const r = JSON.parse(readFileSync(path, 'utf8'));
  const failed = (r.testResults ?? []).reduce(
    (sum, f) => sum + failuresOf(f.status === 'failed', (f.assertionResults ?? []).filter((a) => a.status === 'failed').length),
    0,
  );
  console.log(r.numPassedTests, failed);
} else if (kind === 'progress') {
  const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const started = new Set(lines.filter((l) => l.event === 'start').map((l) => relative(root, l.file)));
  const ended = lines.filter((l) => l.event === 'end');
  const done = new Set(ended.map((l) => relative(root, l.file)));
  console.log(ended.reduce((s, l) => s + l.passed, 0), ended.reduce((s, l) => s + failuresOf(l.state === 'failed', l.failed), 0));
  const files = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
    );
  for (const f of files('test').sort()) if (!done.has(f)) console.log(started.has(f) ? `${f} running` : f);
} else if (kind === 'failures') {
  const r = JSON.parse(readFileSync(path, 'utf8'));
  const firstLines = (text) =>
    String(text ?? '')
      .replace(/\x1b\[[0-9;]*m/g, '')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .slice(0, 6)
      .map((l) => `      ${l.slice(0, 200)}`)
      .join('\n');
  for (const f of r.testResults ?? []) {
    const file = relative(root, f.name);
    const failedTests = (f.assertionResults ?? []).filter((a) => a.status === 'failed');
    for (const a of failedTests) console.log(`  FAILED ${file} > ${a.fullName}\n${firstLines(a.failureMessages?.join('\n'))}`);
    if (f.status === 'failed' && failedTests.length === 0) console.log(`  FAILED ${file} (the file itself)\n${firstLines(f.message)}`);
  }
} else {
  console.error('usage: node .ci/counts.mjs report FILE | progress FILE ROOT | failures FILE ROOT');
  process.exit(2);
}
