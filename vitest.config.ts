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
    // The bundles in dist/, built once before any file runs when they are missing or stale.
    globalSetup: ['test/support/built-bundles.ts'],
  },
});
