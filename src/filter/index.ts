export { compileFilter, type CompiledFilter, type FilterOptions } from './filter.js';
export { OPERATORS, type Operator } from './conditions.js';
export { FILTER_ERROR_CODES } from './problems.js';
export { compileConnectorPage, connectorRequest, DEFAULT_SYNC_LAG_MS, MAX_CONNECTOR_PAGE_SIZE, type ConnectorOptions } from './connector.js';
export { TOKEN_TTL_MS } from './token.js';
