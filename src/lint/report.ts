import { CODES, type DiagnosticCode } from '../diagnostics/codes.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { codeFrame } from '../diagnostics/frame.js';
import { codePage } from './docs.js';

/**
 * A diagnostic placed in a report file: its span counts in the file's text (not the query's),
 * so a JSON report file's diagnostics point into the JSON string that holds the query.
 */
export interface ReportDiagnostic extends Diagnostic {
  /** The report entry (a JSON file's `name`) the query came from, when the file has several. */
  readonly entry?: string;
}

/** One linted file: its path as shown (relative), its text, and what lint found in it. */
export interface ReportFile {
  readonly path: string;
  readonly source: string;
  readonly diagnostics: readonly ReportDiagnostic[];
  /** How many queries the file held. */
  readonly queries: number;
}

export interface ReportSummary {
  readonly errors: number;
  readonly warnings: number;
  readonly files: number;
  readonly queries: number;
}

export type ReportFormat = 'stylish' | 'json' | 'sarif';

export const REPORT_FORMATS: readonly ReportFormat[] = ['stylish', 'json', 'sarif'];

export function summarize(files: readonly ReportFile[]): ReportSummary {
  let errors = 0;
  let warnings = 0;
  let queries = 0;
  for (const f of files) {
    queries += f.queries;
    for (const d of f.diagnostics) {
      if (d.severity === 'error') errors++;
      else warnings++;
    }
  }
  return { errors, warnings, files: files.length, queries };
}

function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

/** `N errors, M warnings`, the last line of the stylish report. */
export function summaryLine(s: ReportSummary): string {
  return `${plural(s.errors, 'error')}, ${plural(s.warnings, 'warning')} (${plural(s.queries, 'query', 'queries')} in ${plural(s.files, 'file')})`;
}

export interface StylishOptions {
  /** ANSI colours, for a terminal. Default false. */
  readonly color?: boolean;
}

const ANSI = { red: '\u001b[31m', yellow: '\u001b[33m', dim: '\u001b[2m', bold: '\u001b[1m', reset: '\u001b[0m' } as const;

/**
 * Human report: per file, every diagnostic as `file:line:col  severity  CODE  message`, then
 * its code frame and hint, then one summary line.
 */
export function formatStylish(files: readonly ReportFile[], options: StylishOptions = {}): string {
  const paint = (style: keyof typeof ANSI, text: string): string => (options.color ? `${ANSI[style]}${text}${ANSI.reset}` : text);
  const out: string[] = [];
  for (const f of files) {
    if (f.diagnostics.length === 0) continue;
    out.push(paint('bold', f.path));
    for (const d of f.diagnostics) {
      const severity = d.severity === 'error' ? paint('red', 'error') : paint('yellow', 'warning');
      const entry = d.entry === undefined ? '' : paint('dim', `  [${d.entry}]`);
      out.push(`  ${f.path}:${d.span.line}:${d.span.column}  ${severity}  ${d.code}  ${d.message}${entry}`);
      // codeFrame's first line repeats the header above; keep the frame and hint.
      for (const line of codeFrame(f.source, d).split('\n').slice(1)) out.push(`  ${line}`);
    }
    out.push('');
  }
  const s = summarize(files);
  const line = summaryLine(s);
  out.push(s.errors > 0 ? paint('red', line) : s.warnings > 0 ? paint('yellow', line) : line);
  return out.join('\n') + '\n';
}

/** Machine report: every diagnostic with its file, entry, and file-relative position. */
export function formatJson(files: readonly ReportFile[]): string {
  const s = summarize(files);
  const results = files.flatMap((f) => f.diagnostics.map((d) => ({
    file: f.path,
    ...(d.entry === undefined ? {} : { entry: d.entry }),
    code: d.code,
    severity: d.severity,
    message: d.message,
    ...(d.hint === undefined ? {} : { hint: d.hint }),
    ...(d.fix === undefined ? {} : { fix: { range: d.fix.range, text: d.fix.text } }),
    line: d.span.line,
    column: d.span.column,
    endLine: d.span.endLine,
    endColumn: d.span.endColumn,
  })));
  return JSON.stringify({ errorCount: s.errors, warningCount: s.warnings, fileCount: s.files, queryCount: s.queries, results }, null, 2) + '\n';
}

export interface SarifOptions {
  /** The oql version (package.json). */
  readonly toolVersion: string;
  /** The command line and directory of this run (SARIF `invocations`); paths are relative to the directory. */
  readonly invocation?: { readonly arguments: readonly string[]; readonly workingDirectory: string };
}

const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json';

/** SARIF 2.1.0, for code-scanning dashboards: one rule per code used, one result per diagnostic. */
export function formatSarif(files: readonly ReportFile[], options: SarifOptions): string {
  const ruleIds: DiagnosticCode[] = [];
  for (const f of files) for (const d of f.diagnostics) if (!ruleIds.includes(d.code)) ruleIds.push(d.code);
  ruleIds.sort();
  const rules = ruleIds.map((id) => {
    const page = codePage(id);
    const full = [page.meaning, page.detail, page.wrong !== undefined ? `Wrong: ${page.wrong}` : undefined, page.right !== undefined ? `Right: ${page.right}` : undefined].filter((x) => x !== undefined).join('\n');
    // The page itself rather than a link: the package has no web address of its own.
    return { id, shortDescription: { text: CODES[id] }, fullDescription: { text: full }, help: { text: full } };
  });
  const results = files.flatMap((f) => f.diagnostics.map((d) => ({
    ruleId: d.code,
    ruleIndex: ruleIds.indexOf(d.code),
    level: d.severity,
    message: { text: d.hint === undefined ? d.message : `${d.message}\nhint: ${d.hint}` },
    locations: [{
      physicalLocation: {
        artifactLocation: { uri: toUri(f.path), uriBaseId: SRCROOT },
        region: { startLine: d.span.line, startColumn: d.span.column, endLine: d.span.endLine, endColumn: d.span.endColumn },
      },
    }],
    ...(d.entry === undefined ? {} : { properties: { entry: d.entry } }),
  })));
  const errors = files.some((f) => f.diagnostics.some((d) => d.severity === 'error'));
  const cwd = options.invocation?.workingDirectory;
  const log = {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [{
      tool: { driver: { name: 'oql', version: options.toolVersion, rules } },
      ...(cwd === undefined ? {} : { originalUriBaseIds: { [SRCROOT]: { uri: directoryUri(cwd) } } }),
      invocations: [{
        executionSuccessful: true,
        exitCode: errors ? 1 : 0,
        ...(options.invocation ? { arguments: [...options.invocation.arguments] } : {}),
        ...(cwd === undefined ? {} : { workingDirectory: { uri: directoryUri(cwd) } }),
      }],
      results,
    }],
  };
  return JSON.stringify(log, null, 2) + '\n';
}

/** The base the relative artifact URIs resolve against: the directory oql lint ran in. */
const SRCROOT = '%SRCROOT%';

/** `file:///work/reports/` for a directory (SARIF wants a trailing slash on base URIs). */
function directoryUri(dir: string): string {
  const path = dir.split(/[\\/]/).map(encodeURIComponent).join('/');
  return `file://${path.startsWith('/') ? '' : '/'}${path}${path.endsWith('/') ? '' : '/'}`;
}

/** A relative path as a SARIF URI reference: forward slashes, each segment percent-encoded. */
function toUri(path: string): string {
  return path.split(/[\\/]/).map(encodeURIComponent).join('/');
}
