/**
 * Every diagnostic code the library can produce. Codes are public and stable: lint output,
 * SARIF rules and server logs carry them. Add new codes; never rename one.
 */
export const CODES = {
  // Lexing and parsing
  EMPTY_QUERY: 'The query text is empty.',
  SYNTAX_ERROR: 'The text does not follow the grammar at this point.',
  UNEXPECTED_END: 'The query ends where more was expected.',
  UNTERMINATED_STRING: "A string literal has no closing quote.",
  UNTERMINATED_IDENTIFIER: 'A double-quoted identifier has no closing quote.',
  UNTERMINATED_COMMENT: 'A block comment has no closing */.',
  INVALID_CHARACTER: 'A character that cannot start any token.',
  MULTIPLE_STATEMENTS: 'More than one statement; only one SELECT is accepted.',
  NOT_SELECT: 'A statement other than SELECT.',
  UNSUPPORTED_JOIN: 'JOIN is not part of the dialect; relations are reached with dot notation or EXISTS.',
  UNSUPPORTED_SET_OPERATION: 'UNION, INTERSECT and EXCEPT are not part of the dialect.',
  UNSUPPORTED_WITH: 'Common table expressions (WITH) are not part of the dialect.',
  UNSUPPORTED_EXTRACT: 'EXTRACT is not part of the dialect; use date_part.',
  UNSUPPORTED_FILTER: 'Aggregate FILTER clauses are not part of the dialect; use a conditional aggregate.',
  UNSUPPORTED_CAST: 'Casts other than ::date are not part of the dialect.',
  UNSUPPORTED_SUBSCRIPT: 'Array subscripts are not part of the dialect.',
  UNSUPPORTED_WINDOW: 'Window functions (OVER) are not part of the dialect.',
  UNSUPPORTED_OPERATOR: 'An operator the dialect does not accept.',
  UNSUPPORTED_FUNCTION: 'A known PostgreSQL function the dialect deliberately does not accept.',
  UNSUPPORTED_SYSTEM_REFERENCE: 'A reference to a pg_* system object.',
  // Limits
  QUERY_TOO_LONG: 'The query text is longer than the configured maximum.',
  NESTING_TOO_DEEP: 'Expressions or subqueries are nested deeper than the configured maximum.',
  TOO_MANY_SELECT_ITEMS: 'The select list has more items than the configured maximum.',
  PATH_TOO_DEEP: 'A dot path has more relation hops than the configured maximum.',
  COMPILE_BUDGET_EXCEEDED: 'Checking or compiling the query took longer than the compile budget (1 s by default) and was stopped.',
  // Dialect rules that need no schema
  MISSING_LIMIT: 'The top-level query has no LIMIT.',
  INVALID_LIMIT: 'LIMIT or OFFSET is not a non-negative whole number (LIMIT must be positive).',
  LIMIT_TOO_LARGE: 'LIMIT is larger than the configured maximum.',
  MISSING_ALIAS: 'An aggregate or computed select item has no alias.',
  UNKNOWN_FUNCTION: 'A function outside the whitelist.',
  WRONG_ARGUMENT_COUNT: 'A function called with the wrong number of arguments.',
  INVALID_ARGUMENT: 'A function argument of the wrong form (for example a date_part field that is not a string).',
  NESTED_AGGREGATE: 'An aggregate inside another aggregate.',
  AGGREGATE_NOT_ALLOWED: 'An aggregate in WHERE, GROUP BY or another place aggregates cannot appear.',
  NUMBER_OUT_OF_RANGE: 'A number literal beyond what PostgreSQL and the results can carry exactly (beyond double precision, or an OFFSET beyond bigint).',
  UNSUPPORTED_DATE_KEYWORD: 'CURRENT_DATE, CURRENT_TIMESTAMP and similar; dates are epoch milliseconds.',
  DATE_STRING_COMPARISON: 'A date string compared in WHERE; dates are epoch milliseconds.',
  TO_TIMESTAMP_COMPARISON: 'A to_timestamp(...) comparison in WHERE; compare epoch milliseconds instead.',
  // Names and types, checked against the catalog
  INVALID_SLUG: 'The top-level FROM object is unknown or differs from the request slug.',
  UNKNOWN_OBJECT: 'A FROM object that the catalog does not have.',
  UNKNOWN_COLUMN: 'A name that is neither a column of the object nor an alias in scope.',
  NOT_A_RELATION: 'A dot path continues after a column that is not a relation.',
  VIRTUAL_NEEDS_FIELD: 'A virtual (one-to-many) relation used without a field of its children.',
  VIRTUAL_IN_SUBQUERY: 'IN (subquery) on a virtual-relation column; use EXISTS.',
  SUBQUERY_COLUMNS: 'A subquery used as a value selects other than exactly one column.',
  DUPLICATE_ALIAS: 'Two FROM items in one scope share a name.',
  AMBIGUOUS_NAME: 'A dot path whose first name is the name of an outer FROM object and also a column of an inner one.',
  DUPLICATE_KEY: 'Two select items produce the same output key.',
  TYPE_MISMATCH: 'An operator or function applied to values of types it does not accept.',
  MULTISELECT_EQUALITY: 'A multiselect compared with = or <> to something other than ARRAY[NULL].',
  UNKNOWN_OPTION: 'An enum or multiselect compared to an option slug the column does not have.',
  UNGROUPED_COLUMN: 'A column outside any aggregate that GROUP BY does not cover.',
  ORDER_NOT_SELECTED: 'ORDER BY of a SELECT DISTINCT query names something the select list does not have.',
  INVALID_ORDINAL: 'ORDER BY or GROUP BY names a select item by a position that does not exist.',
  // Report lint: valid queries that silently give a wrong or unstable answer
  FANOUT_AGGREGATE: 'A duplicate-sensitive aggregate (SUM, AVG, COUNT) over rows multiplied by a one-to-many relation.',
  FANOUT_CROSS_PRODUCT: 'Two one-to-many relations in one query: every child of one is paired with every child of the other.',
  FANOUT_OR: 'OR across two one-to-many relations in a query with duplicate-sensitive aggregates.',
  FANOUT_EXACT_UNSUPPORTED: "A query fanout: 'exact' cannot compute without multiplication, refused rather than guessed.",
  RELATIVE_DAY_ONE_ZONE: "A day start taken with one AT TIME ZONE: date_part('epoch', ...) then reads the local midnight as UTC.",
  EPOCH_SECONDS: 'A date column (epoch milliseconds) compared with a 10-digit number, which is epoch seconds.',
  TO_TIMESTAMP_MILLISECONDS: 'to_timestamp() of a date column without / 1000: it takes seconds, the column holds milliseconds.',
  LIMIT_WITHOUT_ORDER: 'LIMIT without ORDER BY on a non-aggregate query: which rows come back is up to the database.',
  RELATION_ID_COMPARISON: "A relation's .id compared with a value, where comparing the relation column itself needs no join.",
  // Report files (oql lint)
  INVALID_REPORT_FILE: 'A report file that cannot be read as queries (invalid JSON, an entry without a query or slug).',
  // Catalog loading
  CATALOG_INVALID: 'The catalog payload has the wrong shape.',
  CATALOG_UNKNOWN_TYPE: 'A column_data_type code the type map does not have.',
  CATALOG_DUPLICATE_SLUG: 'Two objects, or two columns of one object, share a slug.',
  CATALOG_MISSING_OBJECT: 'A relation points at an object the catalog does not have.',
  CATALOG_BAD_VIRTUAL: 'A virtual relation whose child column is missing or is not a to-one back to the parent.',
  // Running
  QUERY_TIMEOUT: 'The query ran longer than the statement timeout.',
  TOO_MANY_REQUESTS: 'The caller already has the maximum number of requests running, or its organization its share of the database.',
  SERVICE_UNAVAILABLE: 'The service is restarting its database or is short of memory; retry after the time Retry-After gives.',
  RESPONSE_TOO_LARGE: 'The result is larger than the response ceiling; ask for fewer fields, a smaller page, or shorter values.',
  QUERY_TOO_COSTLY: 'The database planner estimates the query above the cost ceiling; it was refused without running.',
  QUERY_FAILED: 'PostgreSQL rejected the query while running it (for example division by zero).',
  DATABASE_ERROR: 'The database could not be reached or failed for a reason unrelated to the query.',
  INVALID_OPTIONS: 'The options passed to the library are inconsistent.',
  // Request bodies and records (filter, connector, record writes)
  VALIDATION_FAILED: 'A request body or a record failed validation; every problem is listed in validation_errors.',
  NOT_FOUND: 'The record does not exist in the caller\'s organization.',
  INVALID_TOKEN: 'A pagination token or cursor is malformed, tampered with, expired or issued for another request.',
  TOO_MANY_RECORDS: 'A bulk create or upsert carries more records than the configured maximum.',
  // The change log
  INVALID_CURSOR: 'A change cursor that the service did not hand out.',
  CURSOR_EXPIRED: 'A change cursor older than the changes kept: resynchronise with a full sync, then follow the log from its head.',
  TOO_MANY_WAITING: 'The caller, or its organization, already has the maximum number of long-polls and change streams open.',
  // Webhooks
  INVALID_WEBHOOK_URL: 'A webhook URL that is not https, or that names an address the service never sends to (loopback, private, link-local, ...).',
  TOO_MANY_WEBHOOKS: 'The organization already has the maximum number of webhook endpoints.',
  MISSING_DEPENDENCY: 'An optional package the requested work needs (libphonenumber-js for phone columns) is not installed.',
  // The HTTP service
  UNAUTHENTICATED: 'The request has no bearer token, or one the service does not recognise.',
  PERMISSION_DENIED: 'The caller\'s role may not use this endpoint.',
  ROUTE_NOT_FOUND: 'No endpoint has this path.',
  METHOD_NOT_ALLOWED: 'The endpoint exists but not for this HTTP method.',
  MALFORMED_JSON: 'The request body is not valid JSON, or holds a __proto__ or constructor key.',
  UNSUPPORTED_MEDIA_TYPE: 'The request body has a content type other than application/json.',
  NOT_ACCEPTABLE: 'The Accept header takes none of the formats the endpoint answers in (application/json, and text/csv for reports and filter pages).',
  PAYLOAD_TOO_LARGE: 'The request body is larger than the configured limit.',
  TOO_MANY_KEYS: 'The user or the organization already has the most live API keys it may have; revoke one to make another.',
  SCHEMA_MISMATCH: 'An existing table does not match the catalog (a column is missing or has another type).',
} as const;

export type DiagnosticCode = keyof typeof CODES;

/** HTTP-style status for each code family; everything about the query text is 400. */
export function statusOf(code: DiagnosticCode): number {
  switch (code) {
    case 'QUERY_TIMEOUT':
      return 504;
    case 'TOO_MANY_REQUESTS':
    case 'TOO_MANY_WAITING':
      return 429;
    case 'CURSOR_EXPIRED':
      return 410;
    case 'DATABASE_ERROR':
    case 'SERVICE_UNAVAILABLE':
      return 503;
    case 'UNAUTHENTICATED':
      return 401;
    case 'PERMISSION_DENIED':
      return 403;
    case 'ROUTE_NOT_FOUND':
      return 404;
    case 'METHOD_NOT_ALLOWED':
      return 405;
    case 'PAYLOAD_TOO_LARGE':
      return 413;
    case 'NOT_ACCEPTABLE':
      return 406;
    case 'UNSUPPORTED_MEDIA_TYPE':
      return 415;
    case 'SCHEMA_MISMATCH':
    case 'MISSING_DEPENDENCY':
      return 500;
    case 'CATALOG_INVALID':
    case 'CATALOG_UNKNOWN_TYPE':
    case 'CATALOG_DUPLICATE_SLUG':
    case 'CATALOG_MISSING_OBJECT':
    case 'CATALOG_BAD_VIRTUAL':
    case 'INVALID_OPTIONS':
      return 500;
    default:
      return 400;
  }
}
