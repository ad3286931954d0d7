import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { OqlError } from '../../diagnostics/diagnostic.js';
import type { ServiceTx } from '../types.js';
import { SERVICE_SCHEMA } from '../migrations.js';
import { storableInput, storableResponse } from './tool-log-input.js';
import type { ToolLog } from '../../wire/tool-log.js';

export interface ToolCall {
  readonly orgId: string;
  readonly userId: string;
  readonly toolName: string;
  readonly inputParams: unknown;
  /** Milliseconds. */
  readonly responseTime: number;
  /** HTTP-style code of the call's outcome. */
  readonly responseCode: number;
  /** What the tool answered (the text of its result, an error's included); none when not known. */
  readonly response?: string | undefined;
  /** Epoch milliseconds. Default now. */
  readonly timestamp?: number;
}

/** A log entry as the listing returns it: one type with its schema, in src/wire/. */
export type { ToolLog } from '../../wire/tool-log.js';

/** Bytes of one entry's input_params (JSON), unless the service is configured otherwise (OQL_MAX_TOOL_LOG_ENTRY_BYTES). */
export const DEFAULT_MAX_ENTRY_BYTES = 64 * 1024;
/** Bytes of the input_params of one listing page (OQL_MAX_TOOL_LOG_PAGE_BYTES). */
export const DEFAULT_MAX_PAGE_BYTES = 4 * 1024 * 1024;

/**
 * Writes one tool call to the organization's log; returns its id (a UUID). Any arguments and any
 * answer can be written: what jsonb and text refuse is escaped, and more than `maxInputBytes`
 * of either is cut and marked (./tool-log-input.ts), so a call that ran is never left out for
 * what it was given or what it answered.
 */
export async function recordToolCall(db: ServiceTx, call: ToolCall, maxInputBytes: number = DEFAULT_MAX_ENTRY_BYTES): Promise<string> {
  const id = randomUUID();
  const input = storableInput(call.inputParams, maxInputBytes);
  const response = call.response === undefined ? null : storableResponse(call.response, maxInputBytes);
  await db.query(
    `INSERT INTO ${SERVICE_SCHEMA}.tool_logs
       (id, org_id, user_id, tool_name, input_params, input_truncated, response_time, response_code, tool_call_timestamp, response, response_truncated)
     VALUES ($1::uuid, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10, $11)`,
    [id, call.orgId, call.userId, call.toolName, input.json, input.truncated, call.responseTime, Math.trunc(call.responseCode), Math.trunc(call.timestamp ?? Date.now()),
      response?.text ?? null, response?.truncated === true],
  );
  return id;
}

/** Page sizes (docs/limits.md): 200 records first, then the previous page's size plus 200, at most 3000. */
export const FIRST_PAGE = 200;
export const PAGE_STEP = 200;
export const MAX_PAGE = 3000;

interface Cursor {
  /** The organization it was issued to. */
  readonly o: string;
  /** The last entry returned: its timestamp and id. */
  readonly t: number;
  readonly i: string;
  /** The size of the page it ends. */
  readonly n: number;
}

export interface ListToolLogsOptions {
  readonly orgId: string;
  /** The previous page's `next`, unchanged. */
  readonly pointer?: string | null | undefined;
  /** Signs and checks pointers. */
  readonly secret: string;
  /** Only calls of this tool. */
  readonly toolName?: string | undefined;
  /** Only calls by this user. */
  readonly userId?: string | undefined;
  /** Only calls at or after this time (epoch milliseconds). */
  readonly since?: number | undefined;
  /** Only calls before this time (epoch milliseconds). */
  readonly until?: number | undefined;
  /** Bytes of input_params and responses one page may hold; a page ends before the entry that would pass it (the first is always sent). */
  readonly maxPageBytes?: number | undefined;
}

/**
 * One page of an organization's tool calls, newest first (timestamp, then id, both descending),
 * optionally only those of one tool, one user or a time range.
 * The pointer carries where the last page ended and its size, signed with HMAC-SHA256 so a client
 * can neither build nor alter one, nor use one issued to another organization.
 */
export async function listToolLogs(db: ServiceTx, o: ListToolLogsOptions): Promise<{ logs: ToolLog[]; next: string | null }> {
  const after = o.pointer === undefined || o.pointer === null ? null : readPointer(o.pointer, o.secret, o.orgId);
  const size = after === null ? FIRST_PAGE : Math.min(after.n + PAGE_STEP, MAX_PAGE);
  const params: unknown[] = [o.orgId];
  let where = '';
  const and = (condition: (n: string) => string, value: unknown): void => {
    params.push(value);
    where += ` AND ${condition(`$${params.length}`)}`;
  };
  if (after !== null) {
    params.push(after.t, after.i);
    where += ` AND (tool_call_timestamp, id) < ($2::int8, $3::uuid)`;
  }
  // Filters narrow the same keyset: a pointer issued under one filter still ends where it ended.
  if (o.toolName !== undefined) and((n) => `tool_name = ${n}`, o.toolName);
  if (o.userId !== undefined) and((n) => `user_id = ${n}`, o.userId);
  if (o.since !== undefined) and((n) => `tool_call_timestamp >= ${n}::int8`, o.since);
  if (o.until !== undefined) and((n) => `tool_call_timestamp < ${n}::int8`, o.until);
  params.push(size + 1);
  // Bytes are summed inside the database, so entries past the page's bytes are never sent here:
  // only those that begin under it (the last of them ends the page unsent, telling there is more).
  params.push(o.maxPageBytes ?? DEFAULT_MAX_PAGE_BYTES);
  const { rows } = await db.query<{
    id: string; user_id: string; tool_name: string; input_params: unknown; input_truncated: boolean; response_time: number | string; response_code: number | string;
    response: string | null; response_truncated: boolean; ts: string; upto: string | number;
  }>(
    `SELECT id, user_id, tool_name, input_params, input_truncated, response_time, response_code, response, response_truncated, ts, upto FROM (
       SELECT id::text AS id, user_id, tool_name, input_params, input_truncated, response_time, response_code, response, response_truncated,
              tool_call_timestamp::text AS ts,
              sum(octet_length(input_params::text) + coalesce(octet_length(response), 0)) OVER (ORDER BY tool_call_timestamp DESC, id DESC ROWS UNBOUNDED PRECEDING) AS upto,
              octet_length(input_params::text) + coalesce(octet_length(response), 0) AS own
         FROM ${SERVICE_SCHEMA}.tool_logs
        WHERE org_id = $1${where}
        ORDER BY tool_call_timestamp DESC, id DESC
        LIMIT $${params.length - 1}) AS page
      WHERE upto - own < $${params.length}::int8
      ORDER BY ts::int8 DESC, id DESC`,
    params,
  );
  const maxBytes = o.maxPageBytes ?? DEFAULT_MAX_PAGE_BYTES;
  let end = Math.min(rows.length, size);
  for (let i = 1; i < end; i++) {
    if (Number(rows[i]!.upto) > maxBytes) {
      end = i;
      break;
    }
  }
  const page = rows.slice(0, end);
  const logs = page.map((r) => ({
    id: r.id,
    user_id: r.user_id,
    tool_name: r.tool_name,
    input_params: typeof r.input_params === 'string' ? JSON.parse(r.input_params) : r.input_params,
    response_time: Number(r.response_time),
    response_code: Number(r.response_code),
    tool_call_timestamp: Number(r.ts),
    truncated: r.input_truncated === true,
    response: r.response,
    response_truncated: r.response_truncated === true,
  }));
  const last = logs[logs.length - 1];
  const next = rows.length > page.length && last !== undefined
    ? writePointer({ o: o.orgId, t: last.tool_call_timestamp, i: last.id, n: size }, o.secret)
    : null;
  return { logs, next };
}

function sign(body: string, secret: string): Buffer {
  return createHmac('sha256', secret).update(`oql tool-log pointer\0${body}`).digest();
}

function writePointer(cursor: Cursor, secret: string): string {
  const body = Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');
  return `${body}.${sign(body, secret).toString('base64url')}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function readPointer(pointer: unknown, secret: string, orgId: string): Cursor {
  const invalid = (): never => {
    throw OqlError.plain('INVALID_TOKEN', 'the pointer is not one this service issued for this organization', "pass the previous response's data.next unchanged, or omit pointer for the first page");
  };
  if (typeof pointer !== 'string' || pointer.length > 1024) return invalid();
  const dot = pointer.indexOf('.');
  if (dot <= 0) return invalid();
  const body = pointer.slice(0, dot);
  const mac = Buffer.from(pointer.slice(dot + 1), 'base64url');
  const expected = sign(body, secret);
  if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) return invalid();
  let cursor: Cursor;
  try {
    cursor = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Cursor;
  } catch {
    return invalid();
  }
  if (cursor?.o !== orgId || !Number.isSafeInteger(cursor.t) || typeof cursor.i !== 'string' || !UUID.test(cursor.i) || !Number.isSafeInteger(cursor.n) || cursor.n < 1) {
    return invalid();
  }
  return cursor;
}
