import { defineConfig } from 'vitest/config';
import LongestFirst from './test/support/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // PGlite instances take seconds to start and hundreds of MB each: one per file.
    // Three at a time on two cores: most files spend much of their time waiting on a server, a
    // database or a child process, so a third keeps the cores busy (docs/testing.md).
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
  },
});
