/**
 * oql: compiles the CRM data service's object query language into parameterized,
 * tenant-isolated PostgreSQL, checks and lints it, and runs it.
 */
export { compile, compileCount, check, planOf, clearCompileCache } from './compile.js';
export type { CheckOptions, CompileOptions, CompileResult, CompiledQuery, CompiledCount, RestrictedQuery, OutputColumn, Checked, FanoutMode } from './compile.js';
export { lint, LINT_CODES } from './lint/lint.js';
export type { LintOptions, RuleLevel } from './lint/lint.js';
export { fixQuery, applyFixes, SAFE_FIX_CODES } from './lint/fix.js';
export type { FixResult } from './lint/fix.js';
export { codePage, explainText, diagnosticsMarkdown } from './lint/docs.js';
export type { CodePage } from './lint/docs.js';
export { formatStylish, formatJson, formatSarif } from './lint/report.js';
export { loadCatalog, loadCatalogText, catalogDdl, catalogObject, quoteIdent, DEFAULT_TYPE_CODES, withAuditFields, AUDIT_FIELDS } from './catalog/index.js';
export type { Catalog, CatalogOptions, ObjectDef, ColumnDef, LogicalType, PhysicalMapping } from './catalog/index.js';
export { OqlError, isOqlError, codeFrame, CODES, describeCode } from './diagnostics/index.js';
export type { Diagnostic, DiagnosticCode, Fix, Severity, SourceSpan, Span, ValidationError } from './diagnostics/index.js';
export { parse } from './syntax/parse.js';
export { printQuery } from './syntax/print.js';
export type { Select as QueryAst } from './syntax/ast.js';
export type { LogicalPlan } from './plan/plan.js';
export { execute, count, toEnvelope, errorEnvelope } from './query/index.js';
export { ConcurrencyLimiter } from './run/index.js';
export type { QueryRequest, RunOptions, ExecuteResult, CountResult, SuccessEnvelope, ErrorEnvelope, ErrorData } from './query/index.js';
export type { Queryable } from './run/index.js';
export { compileFilter, compileConnectorPage, FILTER_ERROR_CODES, OPERATORS as FILTER_OPERATORS } from './filter/index.js';
export { filterRecords, connectorRecords } from './query/index.js';
export type { CompiledFilter, FilterOptions, ConnectorOptions } from './filter/index.js';
export { bulkCreate, bulkUpsert, getRecord, updateRecord, addMissingAuditColumns, RECORD_ERROR_CODES, DEFAULT_MAX_RECORDS } from './records/index.js';
export { deleteRecords, restoreRecord, purgeDeleted, addLifecycleColumns, CHANGE_OPERATIONS } from './records/index.js';
export type { Writable, WriteContext, ReadContext, UpsertResult, RecordErrorCode } from './records/index.js';
export type { DeletedRecord, PurgeOptions, ChangeDraft, ChangeOperation, ChangeSink } from './records/index.js';
export { entities, entitySchema } from './catalog/entities.js';
export { catalogPayload, objectPayload } from './catalog/payload-out.js';
export type { EntityListItem, EntitySchema, EntitySchemaOptions, EntityField } from './catalog/entities.js';
