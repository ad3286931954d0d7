// Reads what a run of the suite left behind, for .ci/run.
//   node .ci/counts.mjs report <vitest JSON report>       -> "<passed> <failed>"
//   node .ci/counts.mjs progress <progress lines> <root>  -> "<passed> <failed>" on the first line,
//     then the test files that had not finished, one a line, those that had started marked "running"
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const [kind, path, root] = process.argv.slice(2);

if (kind === 'report') {
  const r = JSON.parse(readFileSync(path, 'utf8'));
  // A file that failed before any of its tests ran (an import error, a failing beforeAll) has no
  // failed test of its own: it counts as one failure.
  const failedFiles = (r.testResults ?? []).filter(
    (f) => f.status === 'failed' && (f.assertionResults ?? []).every((a) => a.status !== 'failed'),
  ).length;
  console.log(r.numPassedTests, r.numFailedTests + failedFiles);
} else if (kind === 'progress') {
  const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const started = new Set(lines.filter((l) => l.event === 'start').map((l) => relative(root, l.file)));
  const ended = lines.filter((l) => l.event === 'end');
  const done = new Set(ended.map((l) => relative(root, l.file)));
  console.log(ended.reduce((s, l) => s + l.passed, 0), ended.reduce((s, l) => s + l.failed, 0));
  const files = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
    );
  for (const f of files('test').sort()) if (!done.has(f)) console.log(started.has(f) ? `${f} running` : f);
} else {
  console.error('usage: node .ci/counts.mjs report FILE | progress FILE ROOT');
  process.exit(2);
}
