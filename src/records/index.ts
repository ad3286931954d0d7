export { bulkCreate, bulkUpsert, getRecord, updateRecord, DEFAULT_MAX_RECORDS, type WriteContext, type ReadContext, type UpsertResult } from './write.js';
export type { Writable } from './db.js';
export { RECORD_ERROR_CODES, SYSTEM_FIELDS, type RecordErrorCode } from './values.js';
export { idPrefix } from './ids.js';
export { searchText } from './shape.js';
export { addMissingAuditColumns } from './audit-columns.js';
export { deleteRecords, restoreRecord, purgeDeleted, addLifecycleColumns, type DeletedRecord, type PurgeOptions } from './lifecycle.js';
export { CHANGE_OPERATIONS, type ChangeDraft, type ChangeOperation, type ChangeSink } from './changes.js';
