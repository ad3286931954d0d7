import { writeFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import type { Catalog } from '../../catalog/types.js';
import type { DiagnosticCode } from '../../diagnostics/codes.js';
import type { Fix } from '../../diagnostics/diagnostic.js';
import { LineMap } from '../../diagnostics/span.js';
import { unifiedDiff } from '../../lint/diff.js';
import { SAFE_FIX_CODES, applyFixes } from '../../lint/fix.js';
import { lint, type LintOptions, type RuleLevel } from '../../lint/lint.js';
import { REPORT_FORMATS, formatJson, formatSarif, formatStylish, type ReportDiagnostic, type ReportFile, type ReportFormat } from '../../lint/report.js';
import { fanoutFlag, parseCommand, positiveInt } from '../args.js';
import { findConfig, parseRuleFlags, type OqlConfig } from '../config.js';
import { EXIT, UsageError, println, useColor, type CliIo } from '../io.js';
import { displayPath, findReportFiles, loadReportFile, parseReportSource, type LoadedReportFile } from '../report-files.js';
import { loadSchema } from '../schema.js';
import { VERSION } from '../../version.js';

export const LINT_OPTIONS = {
  slug: { type: 'string' },
  schema: { type: 'string' },
  'type-codes': { type: 'string' },
  'time-zone': { type: 'string' },
  fanout: { type: 'string' },
  format: { type: 'string' },
  fix: { type: 'boolean' },
  'fix-dry-run': { type: 'boolean' },
  'max-warnings': { type: 'string' },
  quiet: { type: 'boolean' },
  rule: { type: 'string', multiple: true },
  stdin: { type: 'boolean' },
  'stdin-filename': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** How many lint-and-fix passes a file gets: a fix can make another one possible. */
const MAX_FIX_PASSES = 10;

interface Settings {
  readonly catalog: Catalog;
  readonly rules: Readonly<Partial<Record<DiagnosticCode, RuleLevel>>>;
  readonly timeZone: string | undefined;
  readonly maxLimit: number | undefined;
  readonly slug: string | undefined;
  readonly fanout: 'service' | 'exact' | undefined;
}

export async function lintCommand(argv: readonly string[], io: CliIo, cwd: string): Promise<number> {
  const { values, positionals } = parseCommand('lint', argv, LINT_OPTIONS);
  const format = (values.format ?? 'stylish') as ReportFormat;
  if (!REPORT_FORMATS.includes(format)) {
    throw new UsageError(`unknown --format '${values.format}': use ${REPORT_FORMATS.join(', ')}`, 'lint');
  }
  if (values.fix && values['fix-dry-run']) throw new UsageError('--fix and --fix-dry-run exclude each other', 'lint');
  if (values.stdin && positionals.length > 0) throw new UsageError('--stdin lints standard input: give no files with it', 'lint');
  if (values['stdin-filename'] !== undefined && !values.stdin) throw new UsageError('--stdin-filename goes with --stdin', 'lint');
  if (!values.stdin && positionals.length === 0) throw new UsageError('no files to lint (give .sql, .oql or .json files, or directories)', 'lint');
  const maxWarnings = values['max-warnings'] === undefined ? undefined : nonNegativeInt(values['max-warnings']);
  const settings = await resolveSettings(values, cwd);

  const loaded: { file: LoadedReportFile; abs: string | null; json: boolean }[] = [];
  if (values.stdin) {
    if (!io.readStdin) throw new UsageError('standard input is not available', 'lint');
    const name = values['stdin-filename'] ?? '<stdin>';
    const json = extname(name).toLowerCase() === '.json';
    const path = values['stdin-filename'] === undefined ? name : displayPath(cwd, resolve(cwd, name));
    loaded.push({ file: parseReportSource(path, stripBom(await io.readStdin()), json, settings.slug), abs: null, json });
  } else {
    const paths = await findReportFiles(cwd, positionals);
    if (paths.length === 0) throw new UsageError(`no .sql, .oql or .json files in ${positionals.join(', ')}`, 'lint');
    for (const abs of paths) loaded.push({ file: await loadReportFile(cwd, abs, settings.slug), abs, json: extname(abs).toLowerCase() === '.json' });
  }

  const files: ReportFile[] = [];
  let unreadable = false;
  for (const entry of loaded) {
    let file = entry.file;
    if (values.fix || values['fix-dry-run']) {
      const source = fixFile(file, entry.json, settings);
      if (source !== file.source) {
        if (values['fix-dry-run']) io.stdout(unifiedDiff(file.path, file.source, source));
        else if (entry.abs) await writeFile(entry.abs, source, 'utf8');
        else io.stdout(source); // --fix with --stdin prints the fixed text, as eslint --fix-dry-run does
        file = parseReportSource(file.path, source, entry.json, settings.slug);
      }
    }
    for (const problem of file.problems) println(io.stderr, `${file.path}: ${problem}`);
    unreadable ||= file.problems.length > 0;
    files.push(lintFile(file, settings));
  }

  const shown = values.quiet ? files.map((f) => ({ ...f, diagnostics: f.diagnostics.filter((d) => d.severity === 'error') })) : files;
  if (!values['fix-dry-run'] && !(values.fix && values.stdin)) {
    const out = format === 'json' ? formatJson(shown)
      : format === 'sarif' ? formatSarif(shown, { toolVersion: VERSION, invocation: { arguments: ['lint', ...argv], workingDirectory: cwd } })
      : formatStylish(shown, { color: useColor(io) });
    io.stdout(out);
  }
  if (unreadable) return EXIT.usage;
  if (files.some((f) => f.diagnostics.some((d) => d.severity === 'error'))) return EXIT.failed;
  const warnings = files.reduce((n, f) => n + f.diagnostics.filter((d) => d.severity === 'warning').length, 0);
  if (maxWarnings !== undefined && warnings > maxWarnings) {
    println(io.stderr, `oql lint: ${warnings} warnings, more than --max-warnings ${maxWarnings}`);
    return EXIT.failed;
  }
  return EXIT.ok;
}

async function resolveSettings(values: { schema?: string | undefined; 'type-codes'?: string | undefined; 'time-zone'?: string | undefined; fanout?: string | undefined; slug?: string | undefined; rule?: string[] | undefined }, cwd: string): Promise<Settings> {
  const { config } = await findConfig(cwd);
  const { catalog } = await loadSchema({ schema: values.schema ?? config.schema, 'type-codes': values['type-codes'] ?? config.typeCodes }, cwd);
  return {
    catalog,
    rules: { ...(config.rules ?? {}), ...parseRuleFlags(values.rule) },
    timeZone: values['time-zone'] ?? config.timeZone,
    maxLimit: config.maxLimit,
    slug: values.slug ?? config.slug,
    fanout: fanoutFlag('lint', values.fanout) ?? config.fanout,
  };
}

function lintOptions(s: Settings, slug: string): LintOptions {
  return {
    catalog: s.catalog,
    slug,
    rules: s.rules,
    ...(s.timeZone === undefined ? {} : { timeZone: s.timeZone }),
    ...(s.maxLimit === undefined ? {} : { maxLimit: s.maxLimit }),
    ...(s.fanout === undefined ? {} : { fanout: s.fanout }),
  };
}

function nonNegativeInt(value: string): number {
  if (value.trim() === '0') return 0;
  return positiveInt('max-warnings', value)!;
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Applies the safe fixes of every query of a file, placed in the file's text (a JSON file's
 * replacement is escaped as a JSON string), pass after pass until none is left. Everything
 * outside the fixed ranges stays byte for byte.
 */
export function fixFile(file: LoadedReportFile, json: boolean, settings: Settings): string {
  let current = file;
  for (let pass = 0; pass < MAX_FIX_PASSES; pass++) {
    const fixes: Fix[] = [];
    for (const q of current.queries) {
      if (!q.exact) continue;
      for (const d of lint(q.text, lintOptions(settings, q.slug))) {
        if (!d.fix || !SAFE_FIX_CODES.has(d.code)) continue;
        const text = q.encoding === 'json' ? JSON.stringify(d.fix.text).slice(1, -1) : d.fix.text;
        fixes.push({ range: [q.toFile(d.fix.range[0]), q.toFile(d.fix.range[1])], text });
      }
    }
    if (fixes.length === 0) break;
    const next = applyFixes(current.source, fixes);
    if (next.text === current.source) break;
    current = parseReportSource(current.path, next.text, json, settings.slug);
  }
  return current.source;
}

function lintFile(file: LoadedReportFile, settings: Settings): ReportFile {
  const lines = new LineMap(file.source);
  const diagnostics: ReportDiagnostic[] = [];
  // A file that cannot be read as queries is a problem of the file, in every format.
  for (const problem of file.problems) {
    diagnostics.push({ code: 'INVALID_REPORT_FILE', severity: 'error', message: problem, span: lines.resolve({ start: 0, end: 0 }) });
  }
  for (const q of file.queries) {
    for (const d of lint(q.text, lintOptions(settings, q.slug))) {
      // Spans count in the query; re-place them in the file that holds it.
      const span = lines.resolve({ start: q.toFile(d.span.start), end: q.toFile(d.span.end) });
      const { fix, ...rest } = d;
      const placed = fix && q.exact ? { fix: { range: [q.toFile(fix.range[0]), q.toFile(fix.range[1])] as const, text: q.encoding === 'json' ? JSON.stringify(fix.text).slice(1, -1) : fix.text } } : {};
      diagnostics.push({ ...rest, span, ...placed, ...(q.name === undefined ? {} : { entry: q.name }) });
    }
  }
  return { path: file.path, source: file.source, diagnostics, queries: file.queries.length };
}
