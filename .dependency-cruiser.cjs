/**
 * The architecture of oql, as rules a tool checks (`npm run depcruise`, run by the test suite).
 * Read docs/architecture.md for the picture; each rule below says one thing of it.
 *
 *   compiler stages   syntax → validate → bind → plan → emit, with catalog and diagnostics beside
 *   front ends        compile.ts (query text), filter/ (record filter, connector), records/ (writes)
 *   run/              the one database layer: executes, bounds, decodes, times out
 *   service/          request context, policy point, operations, stores, migrations
 *   surfaces          server/ (REST, the composition root), mcp/, oauth/, console/, cli/
 */
const STAGES = '^src/(syntax|validate|bind|plan|emit|catalog|diagnostics|lint)/';
const SERVICE = '^src/(service|server|mcp|oauth|console|cli)/';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'Modules depend on each other one way only.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'product-never-imports-tests',
      comment: 'Nothing under src/ imports test/ or the fixtures code (demo data lives in src/demo/).',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: ['^test/', '^fixtures/.+\\.ts$', '^bench/'] },
    },
    {
      name: 'compiler-stages-never-import-the-service',
      comment: 'The compiler stages know nothing of databases, HTTP, MCP or the CLI.',
      severity: 'error',
      from: { path: STAGES },
      to: { path: [SERVICE, '^src/run/', '^src/records/', '^src/filter/', '^src/demo/'] },
    },
    {
      name: 'front-ends-build-run-runs',
      comment: 'The record filter and connector front end return statements; only run/ executes them.',
      severity: 'error',
      from: { path: '^src/filter/' },
      to: { path: ['^src/run/', SERVICE] },
    },
    {
      name: 'emit-only-through-the-planner-output',
      comment: 'The emitter is reached through compile.ts (compile, compileBound), never by a front end directly.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/compile\\.ts$', '^src/emit/', '^src/run/(decode|bounds)\\.ts$'] },
      to: { path: '^src/emit/' },
    },
    {
      name: 'library-never-imports-the-service',
      comment: "import 'oql' never loads the server, MCP, OAuth or their dependencies.",
      severity: 'error',
      from: { path: '^src/(run|records|filter|compile\\.ts|index\\.ts|demo)' },
      to: { path: SERVICE },
    },
    {
      name: 'service-knows-no-surface',
      comment: 'The policy point and the operations serve every surface; they import none of them.',
      severity: 'error',
      from: { path: '^src/service/' },
      to: { path: '^src/(server|mcp|oauth|console|cli)/' },
    },
    {
      name: 'mcp-is-a-sibling-of-rest',
      comment: 'MCP depends on the service and the library, never on the REST server.',
      severity: 'error',
      from: { path: '^src/(mcp|oauth)/' },
      to: { path: '^src/server/' },
    },
    {
      name: 'only-the-composition-root-mounts-surfaces',
      comment: 'REST routes and plugins never import MCP or the console; src/server/app.ts mounts them side by side.',
      severity: 'error',
      from: { path: '^src/server/', pathNot: '^src/server/(app|index)\\.ts$' },
      to: { path: '^src/(mcp|console)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
