export { ConcurrencyLimiter, sharedLimiter, DEFAULT_MAX_CONCURRENT, DEFAULT_CLIENT_ID } from './limiter.js';
export { runReadOnly, DEFAULT_TIMEOUT_MS, type Queryable, type TransactionOptions, type ReadOnlyResult } from './transaction.js';
export { decodeValue, decodeRows, TEXT_PARSERS } from './decode.js';
