import { defineConfig } from 'vitest/config';
import { NODE_FLAGS } from './test/support/node-flags.js';
import LongestFirst from './test/support/sequencer.js';

/**
 * The files that only compile, lint, parse or check text: no database, no server, no child
 * process, no fake timers, no module mocks, no environment changes. They run in one worker thread
 * that keeps its modules from file to file (`isolate: false`), so the compiler's modules are
 * imported once, not once per file in a fresh process: a file costs its tests' CPU, not a Node
 * start and a collection. A file that leaves state behind (vi.mock, fake timers, process.env,
 * a server) belongs with the isolated files below.
 */
const COMPILER_FILES = [
  'test/bench/corpora.test.ts',
  'test/bench/random-reports.test.ts',
  'test/bind/bind.test.ts',
  'test/catalog/decimal.test.ts',
  'test/catalog/entities.test.ts',
  'test/catalog/load.test.ts',
  'test/changes/wakeup.test.ts',
  'test/cli/format.test.ts',
  'test/docs/links.test.ts',
  'test/emit/golden.test.ts',
  'test/exec/pgmem.test.ts',
  'test/filter/limits.test.ts',
  'test/filter/validation.test.ts',
  'test/fuzz/fuzz.test.ts',
  'test/lint/docs.test.ts',
  'test/lint/fix.test.ts',
  'test/lint/hints.test.ts',
  'test/lint/rules.test.ts',
  'test/oauth/scopes.test.ts',
  'test/package/compile-cache.test.ts',
  'test/package/demo-data.test.ts',
  'test/package/install.test.ts',
  'test/plan/columns.test.ts',
  'test/plan/rewrites.test.ts',
  'test/run/fair-queue.test.ts',
  'test/service/tool-log-input.test.ts',
  'test/syntax/depth.test.ts',
  'test/syntax/descent.test.ts',
  'test/syntax/errors.test.ts',
  'test/syntax/grammar.test.ts',
  'test/syntax/lex.test.ts',
  'test/syntax/parser.test.ts',
  'test/syntax/robustness.test.ts',
  'test/validate/validate.test.ts',
];

/** What both projects share. */
const common = {
  testTimeout: 60_000,
  hookTimeout: 120_000,
  env: { OQL_VALIDATE_GRAMMAR: '1' },
  // With OQL_CPU_LOG=<file>, each file's CPU seconds (test/support/cpu-usage.ts); else nothing.
  setupFiles: ['test/support/cpu-usage.ts'],
};

export default defineConfig({
  test: {
    ...common,
    poolOptions: {
      // PGlite instances take seconds to start and hundreds of MB each: one per file. Three files
      // at a time on two cores: most files spend much of their time waiting on servers, child
      // processes and receivers, and a third fills the cores while they wait (8.4 minutes where two
      // took 9.3 on Node 20). The scaling tests' CPU-time laws measure again when load pushes a
      // ratio over its bound, so the extra load does not decide them (test/support/scaling.ts).
      // Each fork with the suite's V8 flags (test/support/node-flags.ts: WebAssembly not optimised).
      forks: { maxForks: 3, minForks: 1, execArgv: [...NODE_FLAGS] },
      // The compiler's files, one after another in one thread beside the forks, their modules
      // kept between files.
      threads: { maxThreads: 1, minThreads: 1, isolate: false },
    },
    // The longest files first, so none starts last and holds the end of the run alone.
    sequence: { sequencer: LongestFirst },
    // Once before any file runs: the bundles in dist/ when they are missing or stale, the empty
    // PGlite cluster each test database starts from and the PostgreSQL cluster each file's
    // database is made on (test/support/global-setup.ts). Here only, not in the projects: a
    // project's own would run it again.
    globalSetup: ['test/support/global-setup.ts'],
    projects: [
      { test: { ...common, name: 'compiler', include: COMPILER_FILES, pool: 'threads', isolate: false } },
      { test: { ...common, name: 'service', include: ['test/**/*.test.ts'], exclude: COMPILER_FILES, pool: 'forks' } },
    ],
  },
});
