// The physical columns, beside the soft-delete column, that say when and by whom a record was
// deleted. They are not catalog columns: the service adds them to every table at start-up
// (records/lifecycle.ts, `addLifecycleColumns`); the connector's tombstones read them.

/** When a record was deleted: epoch ms, null while it is live. */
export const DELETED_AT = 'deleted_at';
/** Who deleted it. */
export const DELETED_BY = 'deleted_by';
