import { defineConfig } from 'vitest/config';
import LongestFirst from './test/support/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // PGlite instances take seconds to start and hundreds of MB each: one per file. Three files
    // at a time on two cores: most files spend much of their time waiting on servers, child
    // processes and receivers, and a third fills the cores while they wait (8.4 minutes where two
    // took 9.3 on Node 20). The scaling tests' CPU-time laws measure again when load pushes a
    // ratio over its bound, so the extra load does not decide them (test/support/scaling.ts).
    pool: 'forks',
    poolOptions: { forks: { maxForks: 3, minForks: 1 } },
    // The longest files first, so none starts last and holds the end of the run alone.
    sequence: { sequencer: LongestFirst },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    env: { OQL_VALIDATE_GRAMMAR: '1' },
    // Once before any file runs: the bundles in dist/ when they are missing or stale, and the
    // empty PGlite cluster each test database starts from (test/support/global-setup.ts).
    globalSetup: ['test/support/global-setup.ts'],
    // With OQL_CPU_LOG=<file>, each file's CPU seconds (test/support/cpu-usage.ts); else nothing.
    setupFiles: ['test/support/cpu-usage.ts'],
  },
});
