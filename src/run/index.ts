export { execute, count, type QueryRequest, type RunOptions, type ExecuteResult, type CountResult } from './execute.js';
export { ConcurrencyLimiter, sharedLimiter, DEFAULT_MAX_CONCURRENT, DEFAULT_CLIENT_ID } from './limiter.js';
export { toEnvelope, errorEnvelope, type SuccessEnvelope, type ErrorEnvelope, type ErrorData } from './envelope.js';
export { runReadOnly, DEFAULT_TIMEOUT_MS, type Queryable, type TransactionOptions, type ReadOnlyResult } from './transaction.js';
export { decodeValue, decodeRows, TEXT_PARSERS } from './decode.js';
