import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/**
 * Builds the console's front end (src/console/web, Preact) into one directory: index.html,
 * app.js, app.css and icon.svg, which src/console/assets.ts serves. `npm run build` writes
 * dist/console after tsup; the console's tests build into a directory of their own.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const WEB = join(ROOT, 'src/console/web');

export async function buildConsole(outDir: string): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  await build({
    absWorkingDir: ROOT,
    entryPoints: { app: join(WEB, 'main.tsx') },
    outdir: outDir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome109', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    // ASCII output: every character outside it is escaped, as in the other built files.
    charset: 'ascii',
    legalComments: 'none',
    sourcemap: false,
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  for (const file of ['index.html', 'icon.svg']) copyFileSync(join(WEB, file), join(outDir, file));
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildConsole(process.argv[2] ?? join(ROOT, 'dist/console'));
}
