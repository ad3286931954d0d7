import { defineConfig } from 'tsup';

// chevrotain is bundled, into a file of its own: dist/grammar.cjs holds the Chevrotain grammar
// (src/syntax/grammar.ts), which the bundles below require at the first text the compiler's own
// parser gives up on. Its own entry pulls in lodash-style helpers and imports slowly; bundled and
// apart, a process that only compiles valid queries never reads it (half of the library's size).
const GRAMMAR = { OQL_GRAMMAR_FILE: '"./grammar.cjs"', 'process.env.OQL_VALIDATE_GRAMMAR': '"0"' };
// The console's front end, built by scripts/build-console.ts after these (npm run build), sits in
// dist/console beside the bundles that serve it.
const CONSOLE = { OQL_CONSOLE_DIR: '"./console/"' };
//
// Not minified, and no source maps: an uncaught OqlError makes Node print the source line of
// the throw, which in a minified bundle is one line of tens of kilobytes; unminified, the
// message, a short stack of named functions and a one-line excerpt are all a user sees, with
// no source map to install. Measured side by side (25 fresh processes each), the import of
// dist/index.js took 17.1 ms minified (225 KB), 18.6 ms with whitespace and syntax minified but
// names kept (273 KB) and 19.8 ms as it is (355 KB): under 3 ms, not worth unreadable errors;
// and the maps were 4 MB of the package.
//
// Every built file stays ASCII (test/cli/e2e.test.ts): one other character in a comment esbuild
// keeps makes V8 read the whole file as two-byte text, which took 6 ms more to import.
// The test run's build (test/support/built-bundles.ts) sets OQL_BUILD_DECLARATIONS=0: the tests
// run the bundles and read no declaration file, and the declarations are nine tenths of the
// build (2.4 s without them, 24 s with them, on a 2-core machine with other work on it).
// `npm run build`, and so `npm pack`, writes them.
const DECLARATIONS = process.env['OQL_BUILD_DECLARATIONS'] !== '0';

export default defineConfig([
  {
    entry: { grammar: 'src/syntax/grammar.ts' },
    format: ['cjs'],
    clean: true,
    target: 'node20',
    sourcemap: false,
    minify: false,
    noExternal: ['chevrotain'],
    define: GRAMMAR,
  },
  {
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    dts: DECLARATIONS,
    target: 'node20',
    sourcemap: false,
    minify: false,
    // No keepNames: it wraps every function and closure the bundle creates in a naming call,
    // which cost 14% of a compile's CPU time. OqlError keeps its name without it (see
    // plainError in src/diagnostics/diagnostic.ts); test/package checks the printed name.
    // import.meta.url (the grammar's loader) in the CommonJS build.
    shims: true,
    define: GRAMMAR,
  },
  {
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    target: 'node20',
    sourcemap: false,
    minify: false,
    // Optional peer dependencies, loaded only by the commands that need them.
    external: ['@electric-sql/pglite', 'pg', 'fastify', '@fastify/swagger', '@fastify/formbody', '@faker-js/faker', '@modelcontextprotocol/server', '@modelcontextprotocol/node', 'libphonenumber-js', 'zod'],
    banner: { js: '#!/usr/bin/env node' },
    define: { ...GRAMMAR, ...CONSOLE },
  },
  {
    // oql/server: the HTTP service. Its framework and drivers stay external (runtime dependencies).
    entry: { server: 'src/server/index.ts' },
    format: ['esm'],
    dts: DECLARATIONS,
    target: 'node20',
    // No maps, like the library: the package does not ship them, so a map comment would name a
    // file that is not there.
    sourcemap: false,
    external: ['@electric-sql/pglite', 'pg', 'fastify', '@fastify/swagger'],
    define: { ...GRAMMAR, ...CONSOLE },
  },
  {
    // The embedded database's process (src/run/drivers/pglite/pglite-process.js, plain JavaScript). Built
    // beside the bundles that start it, under the same name: they find it as
    // new URL('./pglite-process.js', import.meta.url), from src/run/drivers/pglite/ and from dist/ alike.
    entry: { 'pglite-process': 'src/run/drivers/pglite/pglite-process.js' },
    format: ['esm'],
    target: 'node20',
    sourcemap: false,
    minify: false,
    external: ['@electric-sql/pglite'],
  },
]);
