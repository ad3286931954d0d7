// The ES module entry alone in a fresh `node`, run by bench/unseen.ts:
//   node bench/cold-import.mjs <dist/index.js>
// Prints the import's time and the process's CPU time as JSON; the parent measures wall time.
import { pathToFileURL } from 'node:url';

const t0 = performance.now();
await import(pathToFileURL(process.argv[2]).href);
const t1 = performance.now();
const cpu = process.cpuUsage();
process.stdout.write(JSON.stringify({ import: t1 - t0, cpuMs: (cpu.user + cpu.system) / 1000 }));
