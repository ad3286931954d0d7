// The baseline for bench/cold-start.mjs that does nothing of oql: an ES module program from a
// file, reading the same clocks, so the difference is what importing and using the library adds.
performance.now();
const cpu = process.cpuUsage();
process.stdout.write(JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000 }));
