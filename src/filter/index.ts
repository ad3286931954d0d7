export { compileFilter, filterRecords, type CompiledFilter, type FilterOptions } from './filter.js';
export { OPERATORS, type Operator } from './conditions.js';
export { FILTER_ERROR_CODES } from './problems.js';
