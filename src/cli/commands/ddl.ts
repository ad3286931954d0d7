import { catalogDdl } from '../../catalog/ddl.js';
import { parseCommand } from '../args.js';
import { EXIT, UsageError, println, type CliIo } from '../io.js';
import { loadSchema } from '../schema.js';

export const DDL_OPTIONS = {
  schema: { type: 'string' },
  'type-codes': { type: 'string' },
  'if-not-exists': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function ddlCommand(argv: readonly string[], io: CliIo, cwd: string): Promise<number> {
  const { values, positionals } = parseCommand('ddl', argv, DDL_OPTIONS);
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}' (use --schema <file>)`, 'ddl');
  const { catalog } = await loadSchema(values, cwd);
  const statements = catalogDdl(catalog, { ifNotExists: values['if-not-exists'] === true });
  println(io.stdout, statements.map((s) => `${s};`).join('\n\n'));
  return EXIT.ok;
}
