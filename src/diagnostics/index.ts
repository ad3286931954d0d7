export { CODES, statusOf, type DiagnosticCode } from './codes.js';
export { DiagnosticBag, OqlError, isOqlError, describeCode, type Diagnostic, type Fix, type Severity, type ValidationError } from './diagnostic.js';
export { codeFrame, type FrameOptions } from './frame.js';
export { closest, didYouMean, editDistance } from './suggest.js';
export { LineMap, cover, span, type SourceSpan, type Span } from './span.js';
