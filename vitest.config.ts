import { defineConfig } from 'vitest/config';
import { NODE_FLAGS } from './test/support/node-flags.js';
import LongestFirst from './test/support/sequencer.js';
import { useMemoryTempDir } from './test/support/temp-dir.js';

// The run's temporary files on tmpfs where there is one with room (test/support/temp-dir.ts):
// set here, before any worker starts, so that every process of the run inherits it.
useMemoryTempDir();

/**
 * The files whose work stays inside their own tests: they compile, lint and parse, query a PGlite
 * of their own or their database on the run's PostgreSQL cluster, and serve HTTP on port 0 from
 * this process, closing all of it in their `afterAll`. No child process, no signal, no fake timers,
 * no module mocks, no environment changes, no CPU-time laws. They run one after another in one
 * worker thread that keeps its modules from file to file (`isolate: false`): a file costs its
 * tests' CPU, not a Node start, the import of its modules and the warm-up of their code, and the
 * code V8 compiled from PGlite's WebAssembly for one file serves the next (V8 keeps compiled code
 * per module bytes, process-wide), and a PGlite one file closed is emptied and given to the next
 * instead of opened again (test/support/pglite-template.ts). A file that leaves anything behind
 * (vi.mock, fake timers, process.env, a child process) or measures its process's CPU belongs with
 * the isolated forks below.
 */
const THREAD_FILES = [
  'test/bench/corpora.test.ts',
  'test/bench/random-reports.test.ts',
  'test/bind/bind.test.ts',
  'test/catalog/ddl.test.ts',
  'test/catalog/decimal.test.ts',
  'test/catalog/entities.test.ts',
  'test/catalog/load.test.ts',
  'test/changes/lifecycle.test.ts',
  'test/changes/order.test.ts',
  'test/changes/rebuild.test.ts',
  'test/changes/replay.test.ts',
  'test/changes/stream-and-mcp.test.ts',
  'test/changes/tombstones.test.ts',
  'test/changes/wakeup.test.ts',
  'test/cli/compile.test.ts',
  'test/cli/fanout.test.ts',
  'test/cli/format.test.ts',
  'test/cli/lint-fix.test.ts',
  'test/cli/lint.test.ts',
  'test/cli/report-formats.test.ts',
  'test/cli/run-server.test.ts',
  'test/console/sessions.test.ts',
  'test/docs/links.test.ts',
  'test/emit/golden.test.ts',
  'test/emit/single-shard.test.ts',
  'test/exec/date-boundaries.test.ts',
  'test/exec/crm.test.ts',
  'test/exec/helpdesk.test.ts',
  'test/exec/literals.test.ts',
  'test/exec/pgmem.test.ts',
  'test/filter/connector.test.ts',
  'test/filter/fuzz.test.ts',
  'test/filter/indexes.test.ts',
  'test/filter/late-commits.test.ts',
  'test/filter/limits.test.ts',
  'test/filter/operators.test.ts',
  'test/filter/props.test.ts',
  'test/filter/validation.test.ts',
  'test/fixtures/empty-pglite.test.ts',
  'test/fixtures/generate.test.ts',
  'test/fixtures/temp-dir.test.ts',
  'test/fuzz/fuzz.test.ts',
  'test/lint/catalog-hints.test.ts',
  'test/lint/docs.test.ts',
  'test/lint/fanout.test.ts',
  'test/lint/fix-settles.test.ts',
  'test/lint/fix.test.ts',
  'test/lint/hints.test.ts',
  'test/lint/rules.test.ts',
  'test/mcp/agent.test.ts',
  'test/mcp/http.test.ts',
  'test/mcp/oauth.test.ts',
  'test/mcp/rest-parity.test.ts',
  'test/mcp/tool-log-audit.test.ts',
  'test/oauth/errors.test.ts',
  'test/oauth/flow.test.ts',
  'test/oauth/postgres.test.ts',
  'test/oauth/revision.test.ts',
  'test/oauth/scopes.test.ts',
  'test/oauth/server.test.ts',
  'test/package/compile-cache.test.ts',
  'test/package/demo-data.test.ts',
  'test/package/install.test.ts',
  'test/package/package.test.ts',
  'test/plan/columns.test.ts',
  'test/plan/fanout-exact-pg.test.ts',
  'test/plan/fanout-exact.test.ts',
  'test/plan/rewrites.test.ts',
  'test/plan/semijoin.test.ts',
  'test/props/oracles-logic.test.ts',
  'test/props/oracles-plans.test.ts',
  'test/props/oracles-rows.test.ts',
  'test/records/concurrency.test.ts',
  'test/records/security.test.ts',
  'test/records/undo.test.ts',
  'test/records/validate.test.ts',
  'test/records/write.test.ts',
  'test/rules.test.ts',
  'test/run/big-numbers.test.ts',
  'test/run/decode.test.ts',
  'test/run/fair-queue.test.ts',
  'test/security/injection.test.ts',
  'test/server/audit-fields.test.ts',
  'test/server/concurrency.test.ts',
  'test/server/config.test.ts',
  'test/server/core.test.ts',
  'test/server/csv.test.ts',
  'test/server/key-caps.test.ts',
  'test/server/keys.test.ts',
  'test/server/lint-and-logs.test.ts',
  'test/server/lint-budget.test.ts',
  'test/server/openapi-client.test.ts',
  'test/server/pointers.test.ts',
  'test/server/postgres.test.ts',
  'test/server/records.test.ts',
  'test/server/startup.test.ts',
  'test/service/attempts.test.ts',
  'test/service/outbound.test.ts',
  'test/service/table-statistics.test.ts',
  'test/service/tool-log-input.test.ts',
  'test/service/trust-proxy.test.ts',
  'test/syntax/depth.test.ts',
  'test/syntax/descent.test.ts',
  'test/syntax/errors.test.ts',
  'test/syntax/grammar.test.ts',
  'test/syntax/lex.test.ts',
  'test/syntax/parser.test.ts',
  'test/syntax/robustness.test.ts',
  'test/validate/validate.test.ts',
  'test/webhooks/addresses.test.ts',
  'test/webhooks/stop.test.ts',
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
      // THREAD_FILES, one after another in one thread beside the forks, their modules
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
      { test: { ...common, name: 'thread', include: THREAD_FILES, pool: 'threads', isolate: false } },
      { test: { ...common, name: 'service', include: ['test/**/*.test.ts'], exclude: THREAD_FILES, pool: 'forks' } },
    ],
  },
});
