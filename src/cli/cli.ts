import { compileCommand } from './commands/compile.js';
import { ddlCommand } from './commands/ddl.js';
import { explainCommand } from './commands/explain.js';
import { demoCommand } from './commands/demo.js';
import { lintCommand } from './commands/lint.js';
import { runCommand } from './commands/run.js';
import { reportFailure } from './errors.js';
import { COMMANDS, USAGE, type Command } from './help.js';
import { EXIT, UsageError, println, processIo, type CliIo } from './io.js';
import { didYouMean } from '../diagnostics/suggest.js';
import { VERSION } from '../version.js';

export type { CliIo } from './io.js';

type Handler = (argv: readonly string[], io: CliIo, cwd: string) => Promise<number>;

const HANDLERS: Record<Command, Handler> = {
  compile: compileCommand,
  lint: lintCommand,
  explain: (argv, io) => explainCommand(argv, io),
  run: runCommand,
  ddl: ddlCommand,
  demo: (argv, io) => demoCommand(argv, io),
  // Loaded on use: the server's dependencies (Fastify, pino and the rest) stay out of every other command.
  serve: async (argv, io, cwd) => (await import('./commands/serve.js')).serveCommand(argv, io, cwd),
  keys: async (argv, io) => (await import('./commands/keys.js')).keysCommand(argv, io),
  mcp: async (argv, io, cwd) => (await import('./commands/mcp.js')).mcpCommand(argv, io, cwd),
};

/**
 * The whole CLI as a function: arguments (without `node` and the script) in, exit code out.
 * Everything is written through `io`, so tests run it in process.
 */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  try {
    const [first, ...rest] = argv;
    if (first === undefined || first === '-h' || first === '--help') {
      (first === undefined ? io.stderr : io.stdout)(USAGE.main);
      return first === undefined ? EXIT.usage : EXIT.ok;
    }
    if (first === '-v' || first === '--version') {
      println(io.stdout, VERSION);
      return EXIT.ok;
    }
    if (first === 'help') {
      const topic = rest[0];
      if (topic === undefined) { io.stdout(USAGE.main); return EXIT.ok; }
      io.stdout(USAGE[commandNamed(topic)]);
      return EXIT.ok;
    }
    // Loaded on use like serve and keys (no server module in other commands); it prints its own usage.
    if (first === 'workspaces') return await (await import('./commands/workspaces.js')).workspacesCommand(rest, io);
    const command = commandNamed(first);
    // --help anywhere before `--` shows the command's usage, whatever else is wrong.
    const end = rest.indexOf('--');
    if ((end < 0 ? rest : rest.slice(0, end)).some((a) => a === '--help' || a === '-h')) {
      io.stdout(USAGE[command]);
      return EXIT.ok;
    }
    try {
      return await HANDLERS[command](rest, io, io.cwd ?? process.cwd());
    } catch (e) {
      // Name the command in usage errors thrown by shared helpers.
      throw e instanceof UsageError && e.command === undefined ? new UsageError(e.message, command) : e;
    }
  } catch (e) {
    return reportFailure(io, e);
  }
}

function commandNamed(name: string): Command {
  if ((COMMANDS as readonly string[]).includes(name)) return name as Command;
  const hint = name.startsWith('-') ? undefined : didYouMean(name, COMMANDS);
  throw new UsageError(name.startsWith('-') ? `unknown option '${name}' (options go after the command)` : `unknown command '${name}'${hint ? `: ${hint}` : ''}`);
}
