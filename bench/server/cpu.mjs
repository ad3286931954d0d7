// CPU time of the processes a bench run involves, read from /proc (Linux): what a server and
// PostgreSQL spend per request, so that a ratio can be explained by where the cores went.
import { readdirSync, readFileSync } from 'node:fs';

/** Linux counts CPU time in ticks of 1/100 s (USER_HZ). */
const TICK_MS = 10;

/** Fields of /proc/<pid>/stat after the command name, which may hold spaces. */
function statFields(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** The parent of a process, or null. */
export function parentOf(pid) {
  const f = statFields(pid);
  return f ? Number(f[1]) : null;
}

/**
 * CPU milliseconds (user and system) a process has used, with those of its children it has
 * waited for (a PostgreSQL backend that ended is counted in its postmaster's).
 */
function used(pid) {
  const f = statFields(pid);
  return f ? (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * TICK_MS : 0;
}

/** CPU milliseconds so far of the processes `pid` started and that still run. */
export function childrenCpuMs(pid) {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (/^\d+$/.test(entry) && parentOf(Number(entry)) === pid) total += used(Number(entry));
  }
  return total;
}

/** CPU milliseconds of one process so far, its children that ended included. */
export function processCpuMs(pid) {
  return used(pid);
}

/** CPU milliseconds of a PostgreSQL server so far: its postmaster and every backend it started. */
export function postgresCpuMs(postmaster) {
  return used(postmaster) + childrenCpuMs(postmaster);
}
