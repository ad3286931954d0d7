export type {
  Catalog, ColumnDef, LogicalType, ObjectDef, PhysicalMapping, ToOneRelation, VirtualRelation,
} from './types.js';
export {
  DEFAULT_TYPE_CODES, LOGICAL_TYPES, catalogObject, loadCatalog, loadCatalogText, type CatalogOptions,
} from './load.js';
export { catalogDdl, columnSqlType, type DdlOptions } from './ddl.js';
export { MAX_IDENTIFIER_BYTES, identifierProblem, quoteIdent, quoteQualified } from './quote.js';
export { AUDIT_FIELDS, withAuditFields, type AuditField } from './audit-fields.js';
