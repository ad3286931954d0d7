#!/usr/bin/env node
// Sums the per-file CPU lines test/support/cpu-usage.ts writes into a table, heaviest first:
//   OQL_CPU_LOG=/tmp/cpu.jsonl npx vitest run && node scripts/test-cpu.mjs /tmp/cpu.jsonl [rows]
// Columns, in CPU seconds: the file's worker process (boot and collection included), its
// collection (modules imported), the child processes it waited for, the PostgreSQL clusters it
// stopped, and their sum. Files run in a worker thread (`thread: true`) share the runner's process:
// their CPU is only in the run's total, which the table's last line does not include.
import { readFileSync } from 'node:fs';

const [log, rows = '25'] = process.argv.slice(2);
if (log === undefined) {
  console.error('usage: node scripts/test-cpu.mjs <OQL_CPU_LOG file> [rows]');
  process.exit(2);
}
const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const total = (l) => l.self + l.children + l.postgres;
lines.sort((a, b) => total(b) - total(a));
const f = (n) => n.toFixed(1);
const sum = (key) => lines.reduce((s, l) => s + (key === 'total' ? total(l) : l[key]), 0);
console.log('| File | Worker | of it collection | Children | PostgreSQL | Total |');
console.log('|---|---|---|---|---|---|');
for (const l of lines.slice(0, Number(rows))) {
  console.log(`| \`${l.file}\` | ${f(l.self)} | ${f(l.collect)} | ${f(l.children)} | ${f(l.postgres)} | ${f(total(l))} |`);
}
const threaded = lines.filter((l) => l.thread).length;
if (threaded) console.log(`(${threaded} files ran in a worker thread: their CPU is in the runner's, not here)`);
console.log(`| all ${lines.length} files | ${f(sum('self'))} | ${f(sum('collect'))} | ${f(sum('children'))} | ${f(sum('postgres'))} | ${f(sum('total'))} |`);
