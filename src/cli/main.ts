import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { main } from './cli.js';
import { processIo } from './io.js';

export { main } from './cli.js';
export type { CliIo } from './io.js';

/** True when this module is the program (node dist/cli.js, npx tsx src/cli/main.ts, an npm bin link). */
function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  // `oql demo | head` closes the pipe early: that is not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  });
  // A last resort: main() reports its own failures, but a stray rejection must not print a stack.
  process.on('uncaughtException', (e) => {
    process.stderr.write(`oql: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}\n`);
    process.exit(1);
  });
  const code = await main(process.argv.slice(2), processIo());
  // Let stdout drain (a pipe to `head` or a file) before exiting.
  process.exitCode = code;
}
