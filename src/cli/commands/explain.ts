import { CODES, type DiagnosticCode } from '../../diagnostics/codes.js';
import { didYouMean } from '../../diagnostics/suggest.js';
import { diagnosticsMarkdown, explainText } from '../../lint/docs.js';
import { onePositional, parseCommand } from '../args.js';
import { EXIT, UsageError, type CliIo } from '../io.js';

export const EXPLAIN_OPTIONS = {
  markdown: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** `oql explain CODE`: what a diagnostic code means, with a wrong and a right query. */
export async function explainCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand('explain', argv, EXPLAIN_OPTIONS);
  if (values.markdown) {
    if (positionals.length > 0) throw new UsageError('--markdown prints every page: give no code with it', 'explain');
    io.stdout(diagnosticsMarkdown());
    return EXIT.ok;
  }
  const raw = onePositional('explain', positionals, 'diagnostic code (for example FANOUT_AGGREGATE)');
  const code = raw.trim().toUpperCase();
  if (!Object.hasOwn(CODES, code)) {
    const near = didYouMean(code, Object.keys(CODES));
    throw new UsageError(`unknown diagnostic code '${raw}'${near ? `: ${near}` : ''}`, 'explain');
  }
  io.stdout(explainText(code as DiagnosticCode));
  return EXIT.ok;
}
