/**
 * One MCP tool call as the tool-log listing answers it: the JSON schema the
 * OpenAPI document and the response check use, and the type the store returns and the console's
 * page reads. One module for all three, which imports nothing, so the browser bundle may share it.
 */

export const TOOL_LOG_SCHEMA = {
  $id: 'ToolLog',
  type: 'object',
  description: 'One MCP tool call, as the tool-log listing answers it.',
  required: ['id', 'user_id', 'tool_name', 'input_params', 'response_time', 'response_code', 'tool_call_timestamp', 'truncated', 'response', 'response_truncated'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', format: 'uuid' },
    user_id: { type: 'string' },
    tool_name: { type: 'string' },
    input_params: {
      type: 'object', additionalProperties: true,
      description: 'the arguments the tool was called with; a NUL or a lone surrogate is written as its escape (\\u0000), and past the entry cap the longest strings are cut (or, when the structure alone is too big, the entry is {"input_prefix": the beginning of the JSON text})',
    },
    response_time: { type: 'number', description: 'milliseconds' },
    response_code: { type: 'integer', description: 'HTTP-style outcome of the call' },
    tool_call_timestamp: { type: 'integer', description: 'when it was called (Unix epoch milliseconds)' },
    truncated: { type: 'boolean', description: 'whether input_params were cut to the entry cap (OQL_MAX_TOOL_LOG_ENTRY_BYTES, 64 KiB by default): the call had more than the entry shows' },
    response: {
      type: ['string', 'null'],
      description: 'what the tool answered: the text of its result, an error\'s included (a NUL or a lone surrogate written as its escape); past the entry cap, its beginning. null for calls logged before answers were kept',
    },
    response_truncated: { type: 'boolean', description: 'whether response was cut to the entry cap: the tool answered more than the entry shows' },
  },
} as const;

/** A log entry as the listing returns it. */
export interface ToolLog {
  readonly id: string;
  readonly user_id: string;
  readonly tool_name: string;
  readonly input_params: unknown;
  /** Milliseconds. */
  readonly response_time: number;
  /** HTTP-style code of the call's outcome. */
  readonly response_code: number;
  /** Epoch milliseconds. */
  readonly tool_call_timestamp: number;
  /** Whether input_params were cut to the entry cap: the call had more than the entry shows. */
  readonly truncated: boolean;
  /** What the tool answered (the text of its result), cut to the entry cap; null for calls logged before answers were kept. */
  readonly response: string | null;
  /** Whether response was cut to the entry cap. */
  readonly response_truncated: boolean;
}

// The type and the schema name the same fields, every one required: a field added to one and not
// the other fails to compile.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const SAME_FIELDS: Same<keyof ToolLog, (typeof TOOL_LOG_SCHEMA.required)[number]> & Same<keyof ToolLog, keyof typeof TOOL_LOG_SCHEMA.properties> = true;
void SAME_FIELDS;
