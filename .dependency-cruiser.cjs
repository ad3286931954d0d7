/**
 * The architecture of oql, as rules a tool checks (`npm run depcruise`, and
 * test/package/architecture.test.ts in the test suite). docs/architecture.md draws the picture;
 * each rule below says one thing of it, and its name is what a violation reports.
 *
 *   compiler stages   syntax → validate → bind → plan → emit, with catalog and diagnostics beside
 *                     (lint reads the stages to report on a query)
 *   query/            the library's runners: a front end's statement run through run/ (execute,
 *                     count, filterRecords, connectorRecords), and the envelope of their answers
 *   front ends        compile.ts (query text), filter/ (record filter, connector), records/ (writes)
 *   run/              the one database layer: executes, bounds, decodes, times out; it knows no
 *                     front end (only the catalog, the diagnostics and the emitted column names)
 *   service/          request context, policy point, operations, stores, migrations
 *   surfaces          server/ (REST, and app.ts the composition root), mcp/, oauth/, console/, cli/
 *
 * Dependencies point down that list, never up; records/ writes through run/ too. Paths are relative to the repository root.
 */

/** The compiler's pipeline, in the order a query goes through it. */
const PIPELINE = ['syntax', 'validate', 'bind', 'plan', 'emit'];
const STAGES = '^src/(syntax|validate|bind|plan|emit|catalog|diagnostics|lint)/';
const SERVICE = '^src/(service|server|mcp|oauth|console|cli)/';
/** compile.ts with its cache, the query-text front end; index.ts, the library's entry. */
const FRONT = '^src/(compile|compile-cache|index)\\.ts$';
const LIBRARY = ['^src/(query|run|records|filter|demo)/', FRONT];

/** One rule per stage: a stage may use the stages before it, never one after it. */
const pipelineRules = PIPELINE.slice(0, -1).map((stage, i) => ({
  name: `${stage}-never-imports-a-later-stage`,
  comment: `The pipeline runs ${PIPELINE.join(' → ')}; ${stage} knows nothing of ${PIPELINE.slice(i + 1).join(', ')}.`,
  severity: 'error',
  from: { path: `^src/${stage}/` },
  to: { path: `^src/(${PIPELINE.slice(i + 1).join('|')})/` },
}));

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
      name: 'every-import-resolves',
      comment: 'An import the tool cannot resolve is a dependency no rule sees: each must name a real module.',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
    {
      name: 'product-never-imports-tests',
      comment: 'Nothing under src/ imports test/, bench/, scripts/ or the fixtures code (demo data lives in src/demo/; it reads the JSON of fixtures/).',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: ['^test/', '^bench/', '^scripts/', '^fixtures/.+\\.[cm]?[jt]s$'] },
    },
    {
      name: 'compiler-stages-never-import-the-service',
      comment: 'The compiler stages know nothing of databases, HTTP, MCP, OAuth, the console or the CLI.',
      severity: 'error',
      from: { path: STAGES },
      to: { path: [SERVICE, '^src/query/', '^src/run/', '^src/records/', '^src/filter/', '^src/demo/'] },
    },
    ...pipelineRules,
    {
      name: 'stages-never-import-their-front-ends',
      comment: 'compile.ts (with its cache), the library entry and lint are built on the stages; a stage, the catalog and the diagnostics import none of them.',
      severity: 'error',
      from: { path: '^src/(syntax|validate|bind|plan|emit|catalog|diagnostics)/' },
      to: { path: [FRONT, '^src/lint/'] },
    },
    {
      name: 'catalog-and-diagnostics-sit-beside-the-pipeline',
      comment: 'Every stage reads the catalog and reports diagnostics; they import no stage.',
      severity: 'error',
      from: { path: '^src/(catalog|diagnostics)/' },
      to: { path: `^src/(${PIPELINE.join('|')})/` },
    },
    {
      name: 'front-ends-build-run-runs',
      comment: 'compile.ts and the record filter and connector front end return statements; run/ executes them, and query/ puts the two together.',
      severity: 'error',
      from: { path: ['^src/filter/', '^src/compile\\.ts$'] },
      to: { path: ['^src/query/', '^src/run/', '^src/records/', SERVICE] },
    },
    {
      name: 'run-sits-below-the-front-ends',
      comment: 'run/ executes statements and knows nothing of what built them: no compile.ts, filter/, records/, lint/, stage, '
        + 'or query/ (the runners that compose a front end with run/). The catalog, the diagnostics and the emitted column names it may read.',
      severity: 'error',
      from: { path: '^src/run/' },
      to: { path: [FRONT, '^src/(query|filter|records|lint|demo|syntax|validate|bind|plan)/'] },
    },
    {
      name: 'emit-only-through-the-planner-output',
      comment: 'The emitter turns a plan into SQL and is called by compile.ts alone (compile, compileCount, compileBound). '
        + 'run/ reads only the names of the emitted columns (emit/output-names.ts), to decode and bound rows.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/compile\\.ts$', '^src/emit/'] },
      to: { path: '^src/emit/', pathNot: '^src/emit/output-names\\.ts$' },
    },
    {
      name: 'library-never-imports-the-service',
      comment: "import 'oql' never loads the server, MCP, OAuth, the console, the CLI or their dependencies.",
      severity: 'error',
      from: { path: LIBRARY },
      to: { path: SERVICE },
    },
    {
      name: 'shared-rules-are-leaves',
      comment: 'src/rules.ts (slug, organization id, bearer, URL checks) and src/version.ts are imported everywhere; they import only diagnostics.',
      severity: 'error',
      from: { path: '^src/(rules|version)\\.ts$' },
      to: { path: '^src/', pathNot: '^src/diagnostics/' },
    },
    {
      name: 'service-knows-no-surface',
      comment: 'The request context, the policy point and the operations serve every surface; they import none of them.',
      severity: 'error',
      from: { path: '^src/service/' },
      to: { path: '^src/(server|mcp|oauth|console|cli)/' },
    },
    {
      name: 'surfaces-reach-data-through-operations',
      comment: "REST routes, MCP and the console reach the service's tables only through the operations (src/service/operations.ts), each with its policy and access rule; the CLI's commands and the admin host through the operator's (src/service/operator.ts); they never import a store.",
      severity: 'error',
      from: { path: ['^src/server/routes/', '^src/mcp/', '^src/console/', '^src/cli/', '^src/server/admin\\.ts$'] },
      to: { path: '^src/service/store/' },
    },
    {
      name: 'mcp-is-a-sibling-of-rest',
      comment: 'MCP depends on the service, the library and OAuth (it is a protected resource), never on the REST server, the console or the CLI.',
      severity: 'error',
      from: { path: '^src/mcp/' },
      to: { path: '^src/(server|console|cli)/' },
    },
    {
      name: 'oauth-imports-no-other-surface',
      comment: 'The authorization server serves MCP and the console; it depends on the service only.',
      severity: 'error',
      from: { path: '^src/oauth/' },
      to: { path: '^src/(server|mcp|console|cli)/' },
    },
    {
      name: 'console-is-a-sibling-of-rest',
      comment: 'The console depends on the service and OAuth (sign-in, consent); it calls the public API over HTTP, never the REST server or MCP in-process.',
      severity: 'error',
      from: { path: '^src/console/' },
      to: { path: '^src/(server|mcp|cli)/' },
    },
    {
      name: 'only-the-composition-root-mounts-surfaces',
      comment: 'REST routes and plugins never import MCP, OAuth or the console; src/server/app.ts mounts them side by side and src/server/index.ts exports them.',
      severity: 'error',
      from: { path: '^src/server/', pathNot: '^src/server/(app|index)\\.ts$' },
      to: { path: '^src/(mcp|oauth|console)/' },
    },
    {
      name: 'the-cli-is-the-top',
      comment: 'The CLI starts everything; nothing imports it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'console-web-is-browser-code',
      comment: "The console's pages run in a browser: they share only the catalog's checks, the diagnostics and the answers' shapes (src/wire/), and no Node code imports them (they are served built).",
      severity: 'error',
      from: { path: '^src/console/web/' },
      to: { path: '^src/', pathNot: ['^src/console/web/', '^src/(catalog|diagnostics|wire)/'] },
    },
    {
      name: 'answer-shapes-import-nothing',
      comment: "src/wire/ holds the JSON shapes of the API's answers (schema and type together) that the service, the OpenAPI document and the browser bundle share; it imports nothing of src/.",
      severity: 'error',
      from: { path: '^src/wire/' },
      to: { path: '^src/', pathNot: '^src/wire/' },
    },
    {
      name: 'only-the-console-web-imports-itself',
      comment: 'The browser bundle is built and served as files; Node code never imports its modules.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/console/web/' },
      to: { path: '^src/console/web/' },
    },
  ],
  options: {
    // Packages are seen (an import of one must resolve) but not walked into.
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a type from a layer above is a dependency on it all the same.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Resolve packages through their `exports` as Node and TypeScript do (chevrotain, the MCP SDK
    // and faker have no other entry for what oql imports).
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
