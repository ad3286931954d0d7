import type { Catalog } from '../../catalog/types.js';
import { LineMap } from '../../diagnostics/span.js';
import { lint } from '../../lint/lint.js';
import { REPORT_FORMATS, formatJson, formatSarif, formatStylish, type ReportDiagnostic, type ReportFile, type ReportFormat } from '../../lint/report.js';
import { parseCommand } from '../args.js';
import { EXIT, UsageError, println, useColor, type CliIo } from '../io.js';
import { findReportFiles, loadReportFile, type LoadedReportFile } from '../report-files.js';
import { loadSchema } from '../schema.js';
import { VERSION } from '../version.js';

export const LINT_OPTIONS = {
  slug: { type: 'string' },
  schema: { type: 'string' },
  'type-codes': { type: 'string' },
  format: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function lintCommand(argv: readonly string[], io: CliIo, cwd: string): Promise<number> {
  const { values, positionals } = parseCommand('lint', argv, LINT_OPTIONS);
  const format = (values.format ?? 'stylish') as ReportFormat;
  if (!REPORT_FORMATS.includes(format)) {
    throw new UsageError(`unknown --format '${values.format}': use ${REPORT_FORMATS.join(', ')}`, 'lint');
  }
  if (positionals.length === 0) throw new UsageError('no files to lint (give .sql, .oql or .json files, or directories)', 'lint');
  const { catalog } = await loadSchema(values, cwd);
  const paths = await findReportFiles(cwd, positionals);
  if (paths.length === 0) throw new UsageError(`no .sql, .oql or .json files in ${positionals.join(', ')}`, 'lint');

  const files: ReportFile[] = [];
  let unreadable = false;
  for (const path of paths) {
    const loaded = await loadReportFile(cwd, path, values.slug);
    for (const problem of loaded.problems) println(io.stderr, `${loaded.path}: ${problem}`);
    unreadable ||= loaded.problems.length > 0;
    files.push(lintFile(loaded, catalog));
  }

  const out = format === 'json' ? formatJson(files)
    : format === 'sarif' ? formatSarif(files, { toolVersion: VERSION })
    : formatStylish(files, { color: useColor(io) });
  io.stdout(out);
  if (unreadable) return EXIT.usage;
  return files.some((f) => f.diagnostics.some((d) => d.severity === 'error')) ? EXIT.failed : EXIT.ok;
}

function lintFile(file: LoadedReportFile, catalog: Catalog): ReportFile {
  const lines = new LineMap(file.source);
  const diagnostics: ReportDiagnostic[] = [];
  for (const q of file.queries) {
    for (const d of lint(q.text, { catalog, slug: q.slug })) {
      // Spans count in the query; re-place them in the file that holds it.
      const span = lines.resolve({ start: q.toFile(d.span.start), end: q.toFile(d.span.end) });
      diagnostics.push({ ...d, span, ...(q.name === undefined ? {} : { entry: q.name }) });
    }
  }
  return { path: file.path, source: file.source, diagnostics, queries: file.queries.length };
}
