import { defineConfig } from 'vitest/config';
import LongestFirst from './test/support/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // PGlite instances take seconds to start and hundreds of MB each: one per file.
    // Two at a time on two cores. A third fills the cores better (most files wait on servers and
    // child processes) but makes the CPU-time laws of the scaling tests fail under its load.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    // The longest files first, so none starts last and holds the end of the run alone.
    sequence: { sequencer: LongestFirst },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    env: { OQL_VALIDATE_GRAMMAR: '1' },
    // Once before any file runs: the bundles in dist/ when they are missing or stale, and the
    // empty PGlite cluster each test database starts from (test/support/global-setup.ts).
    globalSetup: ['test/support/global-setup.ts'],
  },
});
