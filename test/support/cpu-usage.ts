import { appendFileSync, readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { afterAll, beforeAll } from 'vitest';

/**
 * Where a run's CPU goes, per test file: with OQL_CPU_LOG=<file> set, every test file appends one
 * JSON line to it: the CPU seconds of its worker process (`self`, from its start, so the worker's
 * boot and the file's collection included), of that up to the first hook (`collect`: the file's
 * modules imported), of the child processes it waited for (`children`: `oql serve`, initdb,
 * pg_ctl...) and of the PostgreSQL clusters it stopped (`postgres`: a postmaster is not a child
 * the worker waits for, so pg-server.ts reads its CPU before stopping it). Without the variable it
 * does nothing. A file run in the worker thread (THREAD_FILES, vitest.config.ts) shares its
 * process with the runner and the other files of the thread: its line says `thread: true` and
 * gives no CPU; the run's total (e.g. `/usr/bin/time npx vitest run`) counts it. `node scripts/test-cpu.mjs <file>` sums the lines into a table.
 */

declare global {
  /** CPU seconds of the PostgreSQL clusters stopped in this process (pg-server.ts adds to it). */
  var oqlPostgresCpuSeconds: number | undefined;
}

const LOG = process.env.OQL_CPU_LOG;

/** utime, stime, cutime, cstime of /proc/<pid>/stat, in seconds. */
export function procCpuSeconds(pid: number | 'self'): { self: number; children: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count the fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const tick = 100; // USER_HZ on Linux
  const at = (field: number) => Number(fields[field - 3]) / tick;
  return { self: at(14) + at(15), children: at(16) + at(17) };
}

if (LOG && !isMainThread) {
  afterAll((suite) => {
    const file = 'filepath' in suite ? suite.filepath : '';
    const line = { file: file.replace(`${process.cwd()}/`, ''), thread: true, boot: 0, collect: 0, self: 0, children: 0, postgres: 0 };
    appendFileSync(LOG, `${JSON.stringify(line)}\n`);
  });
} else if (LOG) {
  const atSetup = procCpuSeconds('self').self;
  let atFirstHook = atSetup;
  let file = '';
  beforeAll((suite) => {
    atFirstHook = procCpuSeconds('self').self;
    file = 'filepath' in suite ? suite.filepath : '';
  });
  afterAll(() => {
    const end = procCpuSeconds('self');
    const line = {
      file: file.replace(`${process.cwd()}/`, ''),
      boot: round(atSetup),
      collect: round(atFirstHook - atSetup),
      self: round(end.self),
      children: round(end.children),
      postgres: round(globalThis.oqlPostgresCpuSeconds ?? 0),
    };
    appendFileSync(LOG, `${JSON.stringify(line)}\n`);
  });
}

function round(s: number): number {
  return Math.round(s * 100) / 100;
}
