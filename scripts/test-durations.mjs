#!/usr/bin/env node
// Writes test/support/durations.json, the seconds each test file took, from a vitest JSON report:
//   npx vitest run --reporter=json --outputFile=/tmp/run.json && node scripts/test-durations.mjs /tmp/run.json
// The sequencer (test/support/sequencer.ts) starts the longest files first with it, so a long file
// never starts last and sets the run's end alone; a fresh clone has no vitest cache to order by.
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const [report] = process.argv.slice(2);
if (report === undefined) {
  console.error('usage: node scripts/test-durations.mjs <vitest JSON report>');
  process.exit(2);
}
const root = new URL('..', import.meta.url).pathname;
const { testResults } = JSON.parse(readFileSync(report, 'utf8'));
const seconds = Object.fromEntries(testResults
  .map((t) => [relative(root, t.name), Math.round((t.endTime - t.startTime) / 100) / 10])
  .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
writeFileSync(new URL('../test/support/durations.json', import.meta.url), `${JSON.stringify(seconds, null, 2)}\n`);
console.log(`${Object.keys(seconds).length} files written to test/support/durations.json`);
