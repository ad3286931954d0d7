import { defineConfig } from 'tsup';

// chevrotain is bundled: its own entry pulls in lodash-style helpers and imports slowly,
// so the library and the CLI ship it inlined and start fast.
export default defineConfig([
  {
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    target: 'node20',
    sourcemap: true,
    // Half the bytes for V8 to compile at import; the source maps keep stack traces readable.
    minify: true,
    noExternal: ['chevrotain'],
    define: { 'process.env.OQL_VALIDATE_GRAMMAR': '"0"' },
  },
  {
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    target: 'node20',
    sourcemap: true,
    minify: true,
    noExternal: ['chevrotain'],
    external: ['@electric-sql/pglite', 'pg', 'fastify', '@fastify/swagger'],
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
