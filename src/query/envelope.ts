import { OqlError, type Diagnostic, type ValidationError } from '../diagnostics/diagnostic.js';
import type { SourceSpan } from '../diagnostics/span.js';
import type { CountResult, ExecuteResult } from './execute.js';

/** The service's response envelope (docs/rest.md). */
export interface SuccessEnvelope<T> {
  readonly success: true;
  readonly data: T;
}

export interface ErrorData {
  readonly message: string;
  readonly status_code: number;
  readonly error_code: string;
  /** VALIDATION_FAILED: every problem of the body or records, in the service's shape. */
  readonly validation_errors: readonly ValidationError[] | null;
  /** INVALID_SLUG: the detailed reason behind the service's fixed 'Invalid slug'; NOT_FOUND: which record. */
  readonly meta_data: string | null;
  /** What to write instead, when known. */
  readonly hint?: string;
  /** Where in the query text, for errors about the text. */
  readonly span?: SourceSpan;
  /** Every diagnostic of a compile error (errors and warnings), for tools that show them all. */
  readonly diagnostics?: readonly { code: string; severity: string; message: string; hint?: string; span: SourceSpan }[];
}

export interface ErrorEnvelope {
  readonly success: false;
  readonly data: ErrorData;
}

export function toEnvelope<T extends ExecuteResult | CountResult | object>(result: T): SuccessEnvelope<T> {
  return { success: true, data: result };
}

const INTERNAL: ErrorData = Object.freeze({
  message: 'internal server error',
  status_code: 500,
  error_code: 'INTERNAL_ERROR',
  validation_errors: null,
  meta_data: null,
});

/**
 * The error envelope for anything `execute` or `count` threw. OqlErrors keep their code, status,
 * message and hint (an invalid slug reads 'Invalid slug', as the service says); anything else is
 * a bug or a driver failure and becomes a generic 500 that says nothing of its internals.
 */
export function errorEnvelope(err: unknown): ErrorEnvelope {
  if (!(err instanceof OqlError)) return { success: false, data: INTERNAL };
  const data: {
    -readonly [K in keyof ErrorData]: ErrorData[K];
  } = {
    message: err.code === 'INVALID_SLUG' ? 'Invalid slug' : err.message,
    status_code: err.status,
    error_code: err.code,
    validation_errors: err.validationErrors ?? null,
    meta_data: err.code === 'INVALID_SLUG' ? err.message : err.metaData ?? null,
  };
  if (err.hint !== undefined) data.hint = err.hint;
  // Runtime errors carry a placeholder span; only errors about a query text point into it.
  if (err.source !== undefined && err.span) {
    data.span = err.span;
    data.diagnostics = err.diagnostics.map(diagnosticData);
  }
  return { success: false, data };
}

function diagnosticData(d: Diagnostic): NonNullable<ErrorData['diagnostics']>[number] {
  return d.hint === undefined
    ? { code: d.code, severity: d.severity, message: d.message, span: d.span }
    : { code: d.code, severity: d.severity, message: d.message, hint: d.hint, span: d.span };
}
