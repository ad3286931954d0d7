import { defineConfig } from 'tsup';

// chevrotain is bundled: its own entry pulls in lodash-style helpers and imports slowly,
// so the library and the CLI ship it inlined and start fast.
//
// Not minified, and no source maps: an uncaught OqlError makes Node print the source line of
// the throw, which in a minified bundle is one line of tens of kilobytes; unminified, the
// message, a short stack of named functions and a one-line excerpt are all a user sees, with
// no source map to install. Side by side, the minified build's cold start (import, load the
// example catalog, compile a query) took 3% less CPU time (328 against 339 ms, medians of 20
// interleaved runs on a machine loaded 8x; bare node 127 ms): not worth unreadable errors, and
// the maps were 4 MB of the package.
export default defineConfig([
  {
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    target: 'node20',
    sourcemap: false,
    minify: false,
    // No keepNames: it wraps every function and closure the bundle creates in a naming call,
    // which cost 14% of a compile's CPU time. OqlError keeps its name without it (see
    // plainError in src/diagnostics/diagnostic.ts); test/package checks the printed name.
    noExternal: ['chevrotain'],
    define: { 'process.env.OQL_VALIDATE_GRAMMAR': '"0"' },
  },
  {
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    target: 'node20',
    sourcemap: false,
    minify: false,
    noExternal: ['chevrotain'],
    // Optional peer dependencies, loaded only by the commands that need them.
    external: ['@electric-sql/pglite', 'pg', 'fastify', '@fastify/swagger', '@fastify/formbody', '@faker-js/faker', '@modelcontextprotocol/server', '@modelcontextprotocol/node', 'libphonenumber-js', 'zod'],
    banner: { js: '#!/usr/bin/env node' },
    define: { 'process.env.OQL_VALIDATE_GRAMMAR': '"0"' },
  },
  {
    // oql/server: the HTTP service. Its framework and drivers stay external (runtime dependencies).
    entry: { server: 'src/server/index.ts' },
    format: ['esm'],
    dts: true,
    target: 'node20',
    sourcemap: true,
    noExternal: ['chevrotain'],
    external: ['@electric-sql/pglite', 'pg', 'fastify', '@fastify/swagger'],
    define: { 'process.env.OQL_VALIDATE_GRAMMAR': '"0"' },
  },
]);
