/**
 * The V8 flags of the Node processes the suite runs: its worker processes (vitest.config.ts) and
 * the `oql serve`, `oql mcp --stdio` and scripts the tests start.
 *
 * `--liftoff-only`: WebAssembly is compiled by V8's baseline compiler alone, never optimised. Each
 * PGlite (in a test's own process, and in every database process, which takes the service's
 * WebAssembly flags: `wasmCompilerFlags` in src/run/drivers/pglite/process-client.ts) otherwise
 * spends about 2 s of CPU optimising PostgreSQL's hottest functions in the background, which pays
 * off in a process that serves for minutes and not in one a test starts for seconds: one
 * embedded database, opened, 30 statements and its spare warmed, takes 2.3 s of CPU instead of
 * 4.3 s. What the tests check is behaviour, which the compiler does not change; the speed of
 * statements is the benchmarks' business, and they run without it. docs/testing.md has the
 * figures of the whole suite.
 */
export const NODE_FLAGS: readonly string[] = ['--liftoff-only'];
