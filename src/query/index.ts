export { execute, count, type QueryRequest, type RunOptions, type ExecuteResult, type CountResult } from './execute.js';
export { filterRecords, connectorRecords } from './filter.js';
export { toEnvelope, errorEnvelope, type SuccessEnvelope, type ErrorEnvelope, type ErrorData } from './envelope.js';
