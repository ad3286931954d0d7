import { CODES, statusOf, type DiagnosticCode } from './codes.js';
import { LineMap, type SourceSpan, type Span } from './span.js';

export type Severity = 'error' | 'warning';

/**
 * One problem of a request body or a record, in the service's shape
 * (docs/rest.md#validation-codes). `field` is the column slug (or the body key); `meta_data` says
 * where in the body, e.g. the JSON path `query.filters.and[2].or[0].value`, or carries a value
 * that helps (the allowed options).
 */
export interface ValidationError {
  readonly object_slug: string;
  readonly field: string;
  readonly message: string;
  readonly error_code: string;
  readonly record_index: number | null;
  readonly meta_data: string | null;
}

/**
 * A machine-applicable correction, as ESLint's `fix`: replace `text.slice(range[0], range[1])`
 * with `text`. Only given where the replacement keeps what the user meant.
 */
export interface Fix {
  readonly range: readonly [number, number];
  readonly text: string;
}

export interface Diagnostic {
  readonly code: DiagnosticCode;
  readonly severity: Severity;
  readonly message: string;
  readonly span: SourceSpan;
  readonly hint?: string;
  readonly fix?: Fix;
}

/**
 * The longest one text's parse, checks, plan and lint may take by default, in milliseconds. The
 * largest texts of every construct found take at most about 100 ms of CPU (bench/RESULTS.md,
 * "Compile and lint against input size"); ten times that leaves room for a loaded machine while
 * still bounding what one request can take from the others.
 */
export const DEFAULT_MAX_COMPILE_MS = 1000;

const now = (): number => performance.now();

/**
 * Collects diagnostics for one source text. Stages report into a bag instead of throwing on
 * the first problem, so a user sees everything that is wrong at once.
 */
export class DiagnosticBag {
  readonly items: Diagnostic[] = [];
  private lines: LineMap | undefined;
  /**
   * `code start end` of every diagnostic so far: a repeat is found in one lookup, not a scan.
   * Made at the first diagnostic: most texts have none, and every compile made the set.
   */
  private seen: Set<string> | null = null;
  private errors = 0;
  private steps = 0;
  private readonly deadline: number;

  /**
   * `maxMs` bounds the time the stages reporting into this bag may hold the thread (see `step`);
   * Infinity for none.
   */
  constructor(readonly source: string, private readonly maxMs: number = DEFAULT_MAX_COMPILE_MS) {
    this.deadline = maxMs === Infinity ? Infinity : now() + maxMs;
  }

  /**
   * One unit of work of a stage (a node visited). Every 1,024th looks at the clock and throws
   * COMPILE_BUDGET_EXCEEDED past the deadline: compile and lint are linear in their text, so
   * this never fires for a text up to the length cap on the paths known; it is the bound for a
   * path nobody has found yet, which would otherwise hold the event loop, and every tenant's
   * requests with it, for as long as it runs. The clock and not the count decides, because the
   * count cannot see work between two steps; it is read rarely so the steps stay cheap.
   */
  step(): void {
    if ((++this.steps & 1023) === 0) this.checkTime();
  }

  /** Throws COMPILE_BUDGET_EXCEEDED when the deadline has passed (also called between stages). */
  checkTime(): void {
    if (now() <= this.deadline) return;
    const d: Diagnostic = {
      code: 'COMPILE_BUDGET_EXCEEDED',
      severity: 'error',
      message: `checking the query took longer than ${this.maxMs} ms and was stopped`,
      span: this.lineMap.resolve({ start: 0, end: 0 }),
      hint: 'split the report into smaller queries',
    };
    // First, so that it is the error's code; what was found until then follows.
    throw new OqlError([d, ...this.items], this.source);
  }

  get lineMap(): LineMap {
    return (this.lines ??= new LineMap(this.source));
  }

  error(code: DiagnosticCode, at: Span, message: string, hint?: string, fix?: Fix): void {
    this.add('error', code, at, message, hint, fix);
  }

  warning(code: DiagnosticCode, at: Span, message: string, hint?: string, fix?: Fix): void {
    this.add('warning', code, at, message, hint, fix);
  }

  get hasErrors(): boolean {
    return this.errors > 0;
  }

  /** Throws an OqlError carrying every diagnostic when any is an error. */
  throwIfErrors(): void {
    if (this.hasErrors) throw new OqlError(this.items, this.source);
  }

  private add(severity: Severity, code: DiagnosticCode, at: Span, message: string, hint?: string, fix?: Fix): void {
    // Two stages may notice the same problem (a date string in WHERE): report it once.
    const key = `${code} ${at.start} ${at.end}`;
    const seen = (this.seen ??= new Set());
    if (seen.has(key)) return;
    seen.add(key);
    const d: Diagnostic = { code, severity, message, span: this.lineMap.resolve(at), ...(hint === undefined ? {} : { hint }), ...(fix === undefined ? {} : { fix }) };
    this.items.push(d);
    if (severity === 'error') this.errors++;
  }
}

/**
 * Marks every OqlError, whichever copy of the library made it. A program holds more than one
 * copy when it loads both builds (dist/index.js and dist/index.cjs) or `oql` beside `oql/server`,
 * which bundles its own: `instanceof` and `isOqlError` look for this mark, not for the class
 * of one copy, so the service answers an OqlError from `oql` with its own code and status.
 */
const OQL_ERROR = Symbol.for('oql.OqlError');

/**
 * The one error type of the library. `code`, `message`, `span` and `hint` are those of the
 * first error; `diagnostics` holds all that were found, warnings included.
 */
export class OqlError extends Error {
  static {
    Object.defineProperty(this.prototype, OQL_ERROR, { value: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as { [OQL_ERROR]?: unknown })[OQL_ERROR] === true;
  }

  override readonly name = 'OqlError';
  readonly code: DiagnosticCode;
  readonly status: number;
  readonly span: SourceSpan | undefined;
  readonly hint: string | undefined;
  readonly diagnostics: readonly Diagnostic[];
  /** The query text the spans point into, when there is one. */
  readonly source: string | undefined;
  /** Every problem of a request body or record (VALIDATION_FAILED), in the service's shape. */
  readonly validationErrors: readonly ValidationError[] | undefined;
  /** The service's `meta_data` (NOT_FOUND: which record was not found). */
  readonly metaData: string | undefined;
  /** For refusals that pass (429, 503): seconds after which the same request may succeed (HTTP Retry-After). */
  readonly retryAfterSeconds: number | undefined;

  constructor(diagnostics: readonly Diagnostic[], source?: string) {
    const first = diagnostics.find((d) => d.severity === 'error') ?? diagnostics[0];
    if (!first) throw new TypeError('OqlError needs at least one diagnostic');
    super(first.message);
    this.code = first.code;
    this.status = statusOf(first.code);
    this.span = first.span;
    this.hint = first.hint;
    this.diagnostics = diagnostics;
    this.source = source;
    this.validationErrors = undefined;
    this.metaData = undefined;
    this.retryAfterSeconds = undefined;
  }

  /** A refusal that passes with time (429, 503): `retryAfterSeconds` becomes the HTTP Retry-After header. */
  static retryLater(code: DiagnosticCode, message: string, retryAfterSeconds: number, hint?: string): OqlError {
    const err = plainError(code, message, hint);
    Object.defineProperty(err, 'retryAfterSeconds', { value: Math.max(1, Math.ceil(retryAfterSeconds)), enumerable: true });
    return err;
  }

  /**
   * A request body or records failed validation: one error carrying every problem
   * (`VALIDATION_FAILED`, docs/rest.md#errors). `message` is the call-level message ('Failed to
   * create records'); the first problem's message becomes the hint so a plain `err.message` user
   * still learns what was wrong.
   */
  static validation(message: string, errors: readonly ValidationError[], code: DiagnosticCode = 'VALIDATION_FAILED'): OqlError {
    if (errors.length === 0) throw new TypeError('OqlError.validation needs at least one validation error');
    const first = errors[0]!;
    const err = plainError(code, message, `${first.field ? `${first.field}: ` : ''}${first.message}`);
    Object.defineProperty(err, 'validationErrors', { value: Object.freeze(errors.slice()), enumerable: true });
    return err;
  }

  /** A record that does not exist for the caller (`NOT_FOUND`). */
  static notFound(message: string, metaData: string): OqlError {
    const err = plainError('NOT_FOUND', message);
    Object.defineProperty(err, 'metaData', { value: metaData, enumerable: true });
    return err;
  }

  /** An error with no position in a query text (runtime, catalog and option errors). */
  static plain(code: DiagnosticCode, message: string, hint?: string): OqlError {
    return plainError(code, message, hint);
  }

  toJSON(): object {
    return {
      name: this.name,
      code: this.code,
      status: this.status,
      message: this.message,
      span: this.span,
      hint: this.hint,
      diagnostics: this.diagnostics,
      ...(this.validationErrors ? { validationErrors: this.validationErrors } : {}),
      ...(this.metaData !== undefined ? { metaData: this.metaData } : {}),
    };
  }
}

/**
 * The body of `OqlError.plain`, outside the class: a class whose body names itself is bundled
 * as `class _OqlError`, and that is the name Node prints on an uncaught error.
 */
function plainError(code: DiagnosticCode, message: string, hint?: string): OqlError {
  const d: Diagnostic = {
    code,
    severity: 'error',
    message,
    span: { start: 0, end: 0, line: 1, column: 1, endLine: 1, endColumn: 1 },
    ...(hint === undefined ? {} : { hint }),
  };
  return new OqlError([d]);
}

export function isOqlError(e: unknown): e is OqlError {
  return e instanceof OqlError;
}

export function describeCode(code: DiagnosticCode): string {
  return CODES[code];
}
