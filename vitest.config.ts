import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // PGlite instances take seconds to start and hundreds of MB each: one per file, two files at a time.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    env: { OQL_VALIDATE_GRAMMAR: '1' },
    // Once before any file runs: the bundles in dist/ when they are missing or stale, and the
    // empty PGlite cluster each test database starts from (test/support/global-setup.ts).
    globalSetup: ['test/support/global-setup.ts'],
  },
});
