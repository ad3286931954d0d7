import { compile } from '../../compile.js';
import { isOqlError } from '../../diagnostics/diagnostic.js';
import { fanoutFlag, instant, onePositional, parseCommand, slugFlag } from '../args.js';
import { formatDiagnostic } from '../errors.js';
import { EXIT, UsageError, println, type CliIo } from '../io.js';
import { formatColumns, formatParams } from '../render.js';
import { DEFAULT_ORG, loadSchema } from '../schema.js';
import { formatSql } from '../sql-format.js';

export const COMPILE_OPTIONS = {
  slug: { type: 'string' },
  schema: { type: 'string' },
  'type-codes': { type: 'string' },
  org: { type: 'string' },
  now: { type: 'string' },
  fanout: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function compileCommand(argv: readonly string[], io: CliIo, cwd: string): Promise<number> {
  const { values, positionals } = parseCommand('compile', argv, COMPILE_OPTIONS);
  const arg = onePositional('compile', positionals, 'query');
  const now = instant('now', values.now);
  const fanout = fanoutFlag('compile', values.fanout);
  const { catalog } = await loadSchema(values, cwd);
  // `-` reads the query from standard input, as ESLint's `-` does.
  let query = arg;
  if (arg === '-') {
    if (!io.readStdin) throw new UsageError('standard input is not available', 'compile');
    query = await io.readStdin();
  }
  const slug = slugFlag('compile', values.slug, query);
  let result;
  try {
    result = compile(query, {
      catalog, slug, orgId: values.org ?? DEFAULT_ORG, cache: false,
      ...(now === undefined ? {} : { now }),
      ...(fanout === undefined ? {} : { fanout }),
    });
  } catch (e) {
    // With --json a script reads the outcome from stdout either way: the error as JSON too.
    if (!values.json || !isOqlError(e)) throw e;
    println(io.stdout, JSON.stringify({ error: e.toJSON() }, null, 2));
    return EXIT.failed;
  }
  for (const w of result.warnings) println(io.stderr, formatDiagnostic(w, query));
  if (result.kind === 'restricted') {
    println(io.stderr, result.message);
    return EXIT.failed;
  }
  if (values.json) {
    println(io.stdout, JSON.stringify({ sql: result.sql, params: result.params, columns: result.columns, ...(result.warnings.length ? { warnings: result.warnings } : {}) }, null, 2));
  } else {
    println(io.stdout, `${formatSql(result.sql)};`, formatParams(result.params), formatColumns(result.columns));
  }
  return EXIT.ok;
}
