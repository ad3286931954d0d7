/**
 * The shapes the service answers with (its records, objects, entities and errors), as JSON
 * schemas with an `$id`: added to each app once (`addResponseSchemas`), referenced by the routes'
 * response schemas as `{ $ref: 'Name#' }`, and written to /openapi.json as
 * `#/components/schemas/Name`.
 *
 * Fixed shapes close their properties (`additionalProperties: false`), so a field the code adds
 * without saying so here fails the tests that check real answers against the document. Records,
 * rows and objects stay open: their fields are the catalog's columns.
 */

import { ROLES } from '../../service/types.js';
import { TOOL_LOG_SCHEMA } from '../../wire/tool-log.js';

const nullable = (type: string, description?: string) => ({ type: [type, 'null'], ...(description ? { description } : {}) });
const flag = (description: string) => ({ type: 'integer', enum: [0, 1], description });
const epochMs = (description: string) => ({ type: 'integer', description: `${description} (Unix epoch milliseconds)` });
export const ref = (id: string) => ({ $ref: `${id}#` });

const SOURCE_SPAN = {
  $id: 'SourceSpan',
  type: 'object',
  description: 'Where in the query text: UTF-16 offsets (end exclusive) and 1-based lines and columns of both ends.',
  required: ['start', 'end', 'line', 'column', 'endLine', 'endColumn'],
  additionalProperties: false,
  properties: {
    start: { type: 'integer', minimum: 0 },
    end: { type: 'integer', minimum: 0 },
    line: { type: 'integer', minimum: 1 },
    column: { type: 'integer', minimum: 1 },
    endLine: { type: 'integer', minimum: 1 },
    endColumn: { type: 'integer', minimum: 1 },
  },
} as const;

const DIAGNOSTIC = {
  $id: 'Diagnostic',
  type: 'object',
  description: 'One problem of a query text, error or warning, with its stable code.',
  required: ['code', 'severity', 'message', 'span'],
  additionalProperties: false,
  properties: {
    code: { type: 'string', description: 'stable diagnostic code, for example UNKNOWN_COLUMN (see docs/diagnostics.md)' },
    severity: { type: 'string', enum: ['error', 'warning'] },
    message: { type: 'string' },
    hint: { type: 'string', description: 'what to write instead' },
    span: ref('SourceSpan'),
    fix: {
      type: 'object',
      description: 'lint only, where a correction is known: replace query.slice(range[0], range[1]) with text, which keeps what the query means',
      required: ['range', 'text'],
      additionalProperties: false,
      properties: {
        range: { type: 'array', items: { type: 'integer', minimum: 0 }, minItems: 2, maxItems: 2, description: 'UTF-16 offsets, end exclusive' },
        text: { type: 'string' },
      },
    },
  },
} as const;

const VALIDATION_ERROR = {
  $id: 'ValidationError',
  type: 'object',
  description: 'One problem of a request body or of a record (docs/rest.md#validation-codes).',
  required: ['object_slug', 'field', 'message', 'error_code', 'record_index', 'meta_data'],
  additionalProperties: false,
  properties: {
    object_slug: { type: 'string', description: "the object of the request ('' when the path has none)" },
    field: { type: 'string', description: "the column slug or body key ('' for the element as a whole)" },
    message: { type: 'string' },
    error_code: { type: 'string', description: 'for example PARSE_INVALID_FORMAT, REQUIRED, UNKNOWN_FIELD, TYPE_MISMATCH' },
    record_index: nullable('integer', 'the position of the offending record in the body, or null'),
    meta_data: nullable('string', 'where in the body (a JSON path), or a value that helps'),
  },
} as const;

const ERROR_DATA = {
  $id: 'ErrorData',
  type: 'object',
  description: 'The error detail of the envelope (docs/rest.md#errors), plus what the service adds for query texts.',
  required: ['message', 'status_code', 'error_code', 'validation_errors', 'meta_data'],
  additionalProperties: false,
  properties: {
    message: { type: 'string' },
    status_code: { type: 'integer', description: 'the HTTP status, repeated' },
    error_code: { type: 'string', description: 'stable code: VALIDATION_FAILED, NOT_FOUND, INVALID_SLUG, UNAUTHENTICATED, TOO_MANY_REQUESTS, QUERY_TIMEOUT, or a diagnostic code of the query text' },
    validation_errors: { type: ['array', 'null'], items: ref('ValidationError'), description: 'VALIDATION_FAILED: every problem of the body or its records' },
    meta_data: nullable('string', 'NOT_FOUND: which record; INVALID_SLUG: the detailed reason behind the fixed message'),
    hint: { type: 'string', description: 'what to send or write instead, when known' },
    span: ref('SourceSpan'),
    diagnostics: { type: 'array', items: ref('Diagnostic'), description: 'errors about a query text: every diagnostic found, warnings included' },
  },
} as const;

const ERROR_ENVELOPE = {
  $id: 'ErrorEnvelope',
  type: 'object',
  description: 'Every failure of the service, whatever refused it (auth, body parser, schema, library).',
  required: ['success', 'data'],
  additionalProperties: false,
  properties: { success: { type: 'boolean', const: false }, data: ref('ErrorData') },
} as const;

// ------------------------------------------------------------------ records

const RECORD = {
  $id: 'Record',
  type: 'object',
  description:
    'A record: its id, every stored column by slug — text, numbers, epoch milliseconds for dates, booleans, '
    + 'arrays of option slugs for multi-selects, objects for json columns, null when empty — then search_field, object_id and org_id.',
  required: ['id', 'created_at', 'updated_at', 'created_by', 'updated_by', 'search_field', 'object_id', 'org_id'],
  additionalProperties: true,
  properties: {
    id: { type: 'string', description: 'system-assigned, unique' },
    created_at: nullable('integer', 'epoch milliseconds; every object has the four audit fields'),
    updated_at: nullable('integer', 'epoch milliseconds'),
    created_by: nullable('string', 'the user id of the writer'),
    updated_by: nullable('string', 'the user id of the writer'),
    search_field: nullable('string', "the record's name, normalised for search"),
    object_id: { type: 'string' },
    org_id: { type: 'string' },
  },
} as const;

const CREATED_RECORD = {
  $id: 'CreatedRecord',
  description: 'A bulk upsert element that was created: the whole record.',
  allOf: [
    ref('Record'),
    {
      type: 'object',
      required: ['action', 'system_created_at'],
      properties: { action: { type: 'string', const: 'CREATED' }, system_created_at: epochMs('when it was created') },
    },
  ],
} as const;

const UPDATED_RECORD = {
  $id: 'UpdatedRecord',
  type: 'object',
  description: 'A bulk upsert element that was updated: its id, the fields it changed, and the system fields.',
  required: ['id', 'action', 'object_id', 'org_id', 'search_field', 'updated_at', 'updated_by'],
  additionalProperties: true,
  properties: {
    id: { type: 'string' },
    action: { type: 'string', const: 'UPDATED' },
    object_id: { type: 'string' },
    org_id: { type: 'string' },
    search_field: nullable('string'),
    updated_at: nullable('integer', 'epoch milliseconds'),
    updated_by: nullable('string', 'the user id of the writer'),
  },
} as const;

const FAILED_RECORD = {
  $id: 'FailedRecord',
  type: 'object',
  description: 'A bulk upsert element that failed: the fields sent, echoed, with why.',
  required: ['id', 'action', 'error_message'],
  additionalProperties: true,
  properties: {
    id: { description: 'the id as sent (null when none was)' },
    action: { type: 'string', const: 'FAILED' },
    error_message: { type: 'string' },
  },
} as const;

const UPSERT_RESULT = {
  $id: 'UpsertResult',
  type: 'object',
  description: 'The outcome of each element of a bulk upsert.',
  required: ['records_created', 'records_updated', 'failed_records', 'created_records', 'updated_records', 'records'],
  additionalProperties: false,
  properties: {
    records_created: { type: 'integer', minimum: 0 },
    records_updated: { type: 'integer', minimum: 0 },
    failed_records: { type: ['array', 'null'], items: ref('FailedRecord'), description: 'null when none failed' },
    created_records: { type: ['array', 'null'], items: ref('CreatedRecord'), description: 'null when none was created' },
    updated_records: { type: ['array', 'null'], items: ref('UpdatedRecord'), description: 'null when none was updated' },
    records: {
      type: 'array',
      description: 'every element, in request order',
      items: { oneOf: [ref('CreatedRecord'), ref('UpdatedRecord'), ref('FailedRecord')] },
    },
  },
} as const;

const ROW = {
  $id: 'Row',
  type: 'object',
  description: 'One result row: the requested fields (filter) or the select-list aliases (reports), null for empty values.',
  additionalProperties: true,
} as const;

const CONNECTOR_RECORD = {
  $id: 'ConnectorRecord',
  type: 'object',
  description: 'A connector record: id and the requested fields; dates and datetimes as ISO 8601 UTC strings. With include_deleted, a deleted record is a tombstone {id, is_deleted: true, deleted_at, updated_at} and a live one ends with is_deleted false and deleted_at null.',
  required: ['id'],
  additionalProperties: true,
  properties: {
    id: { type: 'string' },
    updated_at: { type: ['string', 'null'], format: 'date-time', description: 'when requested; always on a tombstone' },
    is_deleted: { type: 'boolean', description: 'with include_deleted only: true on a tombstone' },
    deleted_at: { type: ['string', 'null'], format: 'date-time', description: 'with include_deleted only: when the record was deleted; null on a live record' },
  },
} as const;

// ------------------------------------------------------------------ objects and entities

const USER_REF = {
  $id: 'UserRef',
  type: 'object',
  required: ['id', 'name', 'avatar'],
  properties: { id: { type: 'string' }, name: { type: 'string' }, avatar: nullable('string') },
} as const;

const ENUM_GROUP = {
  $id: 'EnumGroup',
  type: 'object',
  description: 'The options of an enum or multi-select column, ordered by rank.',
  required: ['slug', 'values'],
  properties: {
    id: { type: 'string' },
    org_id: nullable('string'),
    slug: { type: 'string' },
    is_global: flag('1: shared by every object'),
    enum_group_type: { type: 'string', description: 'for example normal' },
    properties: nullable('object'),
    values: {
      type: 'array',
      items: {
        type: 'object',
        required: ['slug'],
        properties: {
          org_id: nullable('string'),
          slug: { type: 'string', description: 'the value records hold' },
          display_name: { type: 'string' },
          rank: { type: 'integer' },
          is_active: flag('1: offered'),
          is_system_field: flag('1: part of the system'),
          color: nullable('string'),
          badge_config: {},
          category: { type: 'integer' },
          dependent_enum_slugs: {},
        },
      },
    },
  },
} as const;

const texts = (...names: string[]) => Object.fromEntries(names.map((n) => [n, nullable('string')]));

const COLUMN = {
  $id: 'Column',
  type: 'object',
  description: 'A column of an object.',
  required: ['slug'],
  properties: {
    id: { type: 'string' },
    org_id: nullable('string'),
    org_object_id: { type: 'string' },
    display_name: { type: 'string' },
    slug: { type: 'string', description: 'the field name in records, filters and queries' },
    ...texts('description', 'default_value', 'help_text', 'placeholder', 'constraints', 'expression', 'parent_column_slug'),
    column_data_type: { type: 'integer', description: 'type code: 1 text, 5 email, 7 phone, 9 boolean, 11 number, 15 enum, 17 multi-select, 19 datetime, 21 date, 25 relation' },
    data_type: { type: 'string', description: "the type, where no code says it: 'url', 'json', 'integer', 'currency' or 'number'" },
    column_type: { type: 'string', enum: ['standard', 'system'] },
    is_indexed: flag('1: indexed'),
    is_visible: flag('1: visible'),
    is_unique: flag('1: unique per organization'),
    is_required: flag('1: required on create'),
    is_primary: flag("1: the record's name"),
    is_archived: flag('1: archived'),
    is_history_field: flag('1: history'),
    is_formula_type: flag('1: formula'),
    is_json_column: flag('1: holds JSON'),
    is_dependent_field: flag('1: dependent'),
    is_primary_relation: flag('1: primary relation'),
    relationship_type: { type: 'integer', description: '0 none; 1 to-one; 2 one-to-many (virtual: no stored value); 6 to-one to the user object' },
    relation: {
      type: ['object', 'null'],
      required: ['column_slug', 'object_slug', 'is_virtual'],
      properties: {
        column_slug: { type: 'string' },
        object_slug: { type: 'string', description: 'the related object' },
        associated_col_name: nullable('string'),
        is_virtual: flag('1: one-to-many, no stored value'),
      },
    },
    enum_group: { oneOf: [ref('EnumGroup'), { type: 'null' }] },
    properties: nullable('object', 'icon_data, currency, phone_number {restricted_length, country_code}, format, timezone, …'),
    created_at: nullable('integer', 'epoch milliseconds'),
    updated_at: nullable('integer', 'epoch milliseconds'),
    created_by: { oneOf: [ref('UserRef'), { type: 'null' }] },
    updated_by: { oneOf: [ref('UserRef'), { type: 'null' }] },
  },
} as const;

const OBJECT = {
  $id: 'CrmObject',
  type: 'object',
  description: 'An object with its columns; an object read from a service payload comes back as it was given, every key included.',
  required: ['slug', 'org_object_columns'],
  properties: {
    id: { type: 'string' },
    slug: { type: 'string', description: 'the object slug of every other endpoint' },
    display_singular_name: { type: 'string' },
    display_plural_name: { type: 'string' },
    sys_object_id: { type: 'string' },
    state: { type: 'integer' },
    org_object_columns: { type: 'array', items: ref('Column') },
  },
} as const;

const ENTITY_PROPERTIES = {
  entity_identifier: { type: 'string', description: 'the object slug' },
  label: { type: 'string' },
  description: { type: 'string' },
  has_nested_entities: { type: 'boolean' },
  is_writable: { type: 'boolean' },
} as const;

const ENTITY = {
  $id: 'Entity',
  type: 'object',
  description: 'An object as a connector entity.',
  required: Object.keys(ENTITY_PROPERTIES),
  additionalProperties: false,
  properties: ENTITY_PROPERTIES,
} as const;

const ENTITY_FIELD = {
  $id: 'EntityField',
  type: 'object',
  required: ['field_name', 'data_type', 'data_type_label', 'label', 'description', 'is_primary_key', 'is_deprecated', 'read_properties'],
  additionalProperties: false,
  properties: {
    field_name: { type: 'string' },
    data_type: { type: 'string', enum: ['String', 'Boolean', 'DateTime', 'Integer', 'Float'] },
    data_type_label: { type: 'string', description: 'varchar, email, phone, url, float, integer, currency, bool, date, timestamp, enum, multiselect, relation, json' },
    label: { type: 'string' },
    description: { type: 'string' },
    is_primary_key: { type: 'boolean' },
    is_deprecated: { type: 'boolean' },
    read_properties: {
      type: 'object',
      required: ['is_retrievable', 'is_nullable', 'is_queryable', 'is_timestamp_field_for_incremental_queries'],
      additionalProperties: false,
      properties: {
        is_retrievable: { type: 'boolean' },
        is_nullable: { type: 'boolean' },
        is_queryable: { type: 'boolean' },
        is_timestamp_field_for_incremental_queries: { type: 'boolean' },
      },
    },
  },
} as const;

const ENTITY_SCHEMA = {
  $id: 'EntitySchema',
  type: 'object',
  description: 'An entity with its fields: every stored column, the id first.',
  required: [...Object.keys(ENTITY_PROPERTIES), 'fields'],
  additionalProperties: false,
  properties: { ...ENTITY_PROPERTIES, fields: { type: 'array', items: ref('EntityField') } },
} as const;

const TOOL_LOG = TOOL_LOG_SCHEMA;

// ------------------------------------------------------------------ API keys and lint

const API_KEY = {
  $id: 'ApiKey',
  type: 'object',
  description: 'An API key as its listing shows it: never the key itself, which only the answer that made it holds.',
  required: ['id', 'name', 'role', 'user_id', 'prefix', 'last4', 'created_at', 'created_by', 'expires_at', 'last_used_at', 'revoked_at', 'revoked_by', 'rolled_from', 'status', 'can_manage'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'names the key in roll and revoke' },
    name: nullable('string', 'what the key is for; null for keys stored before keys had names'),
    role: { type: 'string', enum: [...ROLES], description: 'what the key may do; its organization is the caller\'s' },
    user_id: { type: 'string', description: 'the user the key acts as (its owner)' },
    prefix: nullable('string', "the key's first 8 characters; null for keys stored before they were kept"),
    last4: nullable('string', "the key's last 4 characters"),
    created_at: epochMs('when it was created'),
    created_by: nullable('string', 'the user who created it; null for keys made on the server (oql keys create, OQL_API_KEYS)'),
    expires_at: { type: ['integer', 'null'], description: 'when it stops working (Unix epoch milliseconds); null: never' },
    last_used_at: { type: ['integer', 'null'], description: 'its latest request, to the minute (Unix epoch milliseconds); null: never used' },
    revoked_at: { type: ['integer', 'null'], description: 'when it was revoked (Unix epoch milliseconds); null: not revoked' },
    revoked_by: nullable('string', 'the user who revoked it'),
    rolled_from: nullable('string', 'the id of the key this one replaced by a roll'),
    status: { type: 'string', enum: ['active', 'expired', 'revoked'] },
    can_manage: { type: 'boolean', description: 'whether the caller may roll and revoke it: an active key of a role no higher than the caller\'s' },
  },
} as const;

const SECRET = { type: 'string', description: 'the whole key, to send as `Authorization: Bearer <key>`: in this answer only, stored only as a hash' } as const;

const ISSUED_KEY = {
  $id: 'IssuedKey',
  type: 'object',
  description: 'A key just created: as the listing will show it, and the key itself, once.',
  required: ['key', 'secret'],
  additionalProperties: false,
  properties: { key: ref('ApiKey'), secret: SECRET },
} as const;

const ROLLED_KEY = {
  $id: 'RolledKey',
  type: 'object',
  description: 'A roll: the new key (the key itself, once) and the old one, which now expires at the end of the grace period.',
  required: ['key', 'secret', 'previous'],
  additionalProperties: false,
  properties: { key: ref('ApiKey'), secret: SECRET, previous: ref('ApiKey') },
} as const;

const LINT_RESULT = {
  $id: 'LintResult',
  type: 'object',
  description: 'Every diagnostic of a query text, errors and warnings, in source order, and how many of each.',
  required: ['slug', 'diagnostics', 'error_count', 'warning_count'],
  additionalProperties: false,
  properties: {
    slug: nullable('string', "the object the query was checked against: the request's slug, or the query's top-level FROM; null when the text does not parse that far"),
    diagnostics: { type: 'array', items: ref('Diagnostic') },
    error_count: { type: 'integer', minimum: 0, description: 'reports/execute and reports/count refuse the query while this is above 0' },
    warning_count: { type: 'integer', minimum: 0 },
  },
} as const;

/** Every shared schema, in the order /openapi.json lists them. */
// ------------------------------------------------------------------ the record lifecycle and the change log

const DELETED_RECORD = {
  $id: 'DeletedRecord',
  type: 'object',
  description: 'A record that was deleted: it reads as absent everywhere until it is restored, and is purged after OQL_PURGE_AFTER_DAYS.',
  required: ['id', 'is_deleted', 'deleted_at'],
  additionalProperties: false,
  properties: { id: { type: 'string' }, is_deleted: { type: 'boolean', const: true }, deleted_at: epochMs('when it was deleted') },
} as const;

const CHANGE = {
  $id: 'Change',
  type: 'object',
  description: 'One committed change of one record (docs/changes.md).',
  required: ['cursor', 'event_id', 'object_slug', 'record_id', 'operation', 'changed_fields', 'record', 'previous', 'actor', 'committed_at'],
  additionalProperties: false,
  properties: {
    cursor: { type: 'string', description: 'the position just after this change: pass it as after to read on from here' },
    event_id: { type: 'string', format: 'uuid', description: 'unique and stable: the same change has the same event_id on every read, and webhooks send it as webhook-id' },
    object_slug: { type: 'string' },
    record_id: { type: 'string' },
    operation: { type: 'string', enum: ['created', 'updated', 'deleted', 'restored', 'purged'] },
    changed_fields: { type: ['array', 'null'], items: { type: 'string' }, description: 'updated: the fields whose values changed; null otherwise' },
    record: {
      type: ['object', 'null'], additionalProperties: true,
      description: 'the record after the change as get-one returns it; deleted: with is_deleted, deleted_at and deleted_by; purged: null',
    },
    previous: { type: ['object', 'null'], additionalProperties: true, description: 'updated: the values the changed fields had before; null otherwise' },
    actor: {
      type: 'object', required: ['user_id', 'surface'], additionalProperties: false,
      properties: {
        user_id: nullable('string', 'the user whose credential made the change; null for the service\'s own purges'),
        surface: { type: 'string', enum: ['rest', 'mcp', 'console', 'cli', 'system'] },
      },
    },
    committed_at: epochMs('when the change was recorded, just before its commit'),
  },
} as const;

const CHANGE_PAGE = {
  $id: 'ChangePage',
  type: 'object',
  required: ['changes', 'next_cursor', 'has_more'],
  additionalProperties: false,
  properties: {
    changes: { type: 'array', items: ref('Change') },
    next_cursor: { type: 'string', description: 'pass as after for the next read; the same cursor when there was no change' },
    has_more: { type: 'boolean', description: 'more changes are there already: read again at once' },
  },
} as const;

// ------------------------------------------------------------------ webhooks

const WEBHOOK_PROPERTIES = {
  id: { type: 'string' },
  url: { type: 'string', description: 'where deliveries are POSTed' },
  description: nullable('string'),
  objects: { type: ['array', 'null'], items: { type: 'string' }, description: 'only changes of these objects; null: every object' },
  operations: { type: ['array', 'null'], items: { type: 'string', enum: ['created', 'updated', 'deleted', 'restored', 'purged'] }, description: 'only these operations; null: all' },
  status: { type: 'string', enum: ['active', 'paused', 'disabled'] },
  disabled_reason: nullable('string', 'why the service disabled it (410 Gone, or changes dead-lettered in a row)'),
  cursor: { type: 'string', description: 'the last change it is done with (delivered or dead-lettered); the next delivery is the next change after it' },
  next_attempt_at: { type: ['integer', 'null'], description: 'while a change waits to be retried: when (Unix epoch milliseconds)' },
  failing_since: { type: ['integer', 'null'], description: 'since when the change it waits on has failed (Unix epoch milliseconds)' },
  created_at: epochMs('when it was made'),
  created_by: { type: 'string' },
  updated_at: epochMs('when it last changed'),
} as const;
const WEBHOOK_REQUIRED = Object.keys(WEBHOOK_PROPERTIES);

const WEBHOOK = {
  $id: 'Webhook', type: 'object', description: 'A webhook endpoint; its secret is shown only when it is made or rotated.',
  required: WEBHOOK_REQUIRED, additionalProperties: false, properties: WEBHOOK_PROPERTIES,
} as const;

const WEBHOOK_WITH_SECRET = {
  $id: 'WebhookWithSecret', type: 'object', description: 'A webhook endpoint and its signing secret, shown in this answer only.',
  required: [...WEBHOOK_REQUIRED, 'secret'], additionalProperties: false,
  properties: {
    ...WEBHOOK_PROPERTIES,
    secret: { type: 'string', pattern: '^whsec_', description: 'the Standard Webhooks signing secret: whsec_ and base64' },
    previous_secret_expires_at: epochMs('after a rotation: until when the old secret still signs beside the new one'),
  },
} as const;

const WEBHOOK_DELIVERY = {
  $id: 'WebhookDelivery', type: 'object', description: 'One attempt to deliver one change.',
  required: ['id', 'event_id', 'cursor', 'attempted_at', 'outcome', 'http_status', 'latency_ms', 'error', 'next_attempt_at'], additionalProperties: false,
  properties: {
    id: { type: 'string' },
    event_id: { type: 'string', description: 'the change delivered, sent as webhook-id' },
    cursor: { type: 'string', description: 'the change\'s cursor: replay from the cursor before it to send it again' },
    attempted_at: epochMs('when'),
    outcome: { type: 'string', enum: ['succeeded', 'failed', 'dead_lettered'] },
    http_status: nullable('integer', 'what the receiver answered; null when it did not'),
    latency_ms: nullable('integer'),
    error: nullable('string', 'why it failed'),
    next_attempt_at: { type: ['integer', 'null'], description: 'a failed attempt: when the next is due (Unix epoch milliseconds)' },
  },
} as const;

export const RESPONSE_SCHEMAS = [
  ERROR_ENVELOPE, ERROR_DATA, VALIDATION_ERROR, DIAGNOSTIC, SOURCE_SPAN,
  RECORD, CREATED_RECORD, UPDATED_RECORD, FAILED_RECORD, UPSERT_RESULT, ROW, CONNECTOR_RECORD,
  OBJECT, COLUMN, ENUM_GROUP, USER_REF, ENTITY, ENTITY_SCHEMA, ENTITY_FIELD, TOOL_LOG,
  API_KEY, ISSUED_KEY, ROLLED_KEY, LINT_RESULT, DELETED_RECORD, CHANGE, CHANGE_PAGE, WEBHOOK, WEBHOOK_WITH_SECRET, WEBHOOK_DELIVERY,
] as const;

/** Adds the shared schemas to an app, before its routes refer to them. */
export function addResponseSchemas(app: { addSchema(schema: unknown): unknown }): void {
  for (const schema of RESPONSE_SCHEMAS) app.addSchema(schema);
}
