import { codeFrame } from '../diagnostics/frame.js';
import { isOqlError, type Diagnostic, type OqlError } from '../diagnostics/diagnostic.js';
import { EXIT, UsageError, println, type CliIo } from './io.js';

/** Every diagnostic of an OqlError: code frames when there is query text, else one line each. */
export function formatOqlError(e: OqlError): string {
  return e.diagnostics.map((d) => formatDiagnostic(d, e.source)).join('\n');
}

export function formatDiagnostic(d: Diagnostic, source: string | undefined): string {
  if (source !== undefined && source.length > 0) return codeFrame(source, d);
  return `${d.severity} ${d.code}: ${d.message}${d.hint ? `\n  hint: ${d.hint}` : ''}`;
}

/**
 * Reports a failure on stderr and gives the exit code: library errors with their frames and
 * hints, usage errors with a pointer to --help, anything else as one line. Never a stack trace
 * (OQL_DEBUG=1 adds it, for bug reports).
 */
export function reportFailure(io: CliIo, e: unknown): number {
  if (e instanceof UsageError) {
    println(io.stderr, `oql${e.command ? ` ${e.command}` : ''}: ${e.message}`, `Run 'oql ${e.command ? `${e.command} ` : ''}--help' for usage.`);
    return EXIT.usage;
  }
  if (isOqlError(e)) {
    println(io.stderr, formatOqlError(e));
    // A bad --schema or --type-codes file, or option, is misuse like a missing file: nothing was checked.
    return e.code.startsWith('CATALOG_') || e.code === 'INVALID_OPTIONS' ? EXIT.usage : EXIT.failed;
  }
  const missing = missingPackage(e);
  if (missing) {
    // An optional peer dependency (the server, MCP, demo data) that was not installed.
    println(io.stderr, `oql: this command needs the package '${missing}', which is not installed`, `  hint: npm install ${missing}`);
    return EXIT.failed;
  }
  const message = e instanceof Error ? e.message : String(e);
  println(io.stderr, `oql: ${message.split('\n')[0]}`);
  if (io.env?.['OQL_DEBUG'] && e instanceof Error && e.stack) println(io.stderr, e.stack);
  return EXIT.failed;
}

/** The package a failed import could not find, when that is what `e` is. */
export function missingPackage(e: unknown): string | null {
  const err = e as { code?: string; message?: string } | null;
  if (!err || (err.code !== 'ERR_MODULE_NOT_FOUND' && err.code !== 'MODULE_NOT_FOUND')) return null;
  return /Cannot find (?:package|module) '((?:@[^/']+\/)?[a-z0-9][^/']*)/.exec(err.message ?? '')?.[1] ?? null;
}
