import type { FastifyReply, FastifyRequest } from 'fastify';
import { OqlError } from '../diagnostics/diagnostic.js';
import { Readable } from 'node:stream';
import { csvPieces, toCsv } from '../query/csv.js';
import { toEnvelope } from '../query/envelope.js';

/**
 * Reports and filter pages as CSV (the encoding: src/query/csv.ts): `Accept: text/csv`, or
 * `"format": "csv"` in the body. The rows are those the JSON answer would carry, read under the
 * same byte ceiling; any error is still the JSON envelope with its status.
 */

export type AnswerFormat = 'json' | 'csv';

export const CSV_TYPE = 'text/csv; charset=utf-8';

/**
 * The format a request asks for: its body's `format` when given ('json' or 'csv'), else the best
 * of JSON and CSV its Accept header takes (JSON on a tie, and when there is no header).
 * NOT_ACCEPTABLE (406) when the header takes neither.
 */
export function answerFormat(request: FastifyRequest, bodyFormat: unknown): AnswerFormat {
  if (bodyFormat !== undefined) {
    if (bodyFormat === 'json' || bodyFormat === 'csv') return bodyFormat;
    throw OqlError.plain('VALIDATION_FAILED', `format must be "json" or "csv", not ${JSON.stringify(typeof bodyFormat === 'string' ? bodyFormat.slice(0, 40) : bodyFormat)}`,
      'send "format": "csv" for CSV, or leave format out for JSON');
  }
  const accept = request.headers.accept;
  if (accept === undefined || accept.trim() === '') return 'json';
  const json = quality(accept, 'application', 'json');
  const csv = quality(accept, 'text', 'csv');
  if (json === 0 && csv === 0) {
    throw OqlError.plain('NOT_ACCEPTABLE', `this endpoint answers application/json or text/csv, and the Accept header takes neither (${JSON.stringify(accept.slice(0, 100))})`,
      'send Accept: application/json, Accept: text/csv, or no Accept header');
  }
  return csv > json ? 'csv' : 'json';
}

/** The q-value the Accept header gives `type/subtype`: its most specific matching range wins (RFC 9110, 12.5.1). */
function quality(accept: string, type: string, subtype: string): number {
  let best = -1;
  let q = 0;
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const [t, s] = range.split('/');
    const specificity = t === type && s === subtype ? 2 : t === type && s === '*' ? 1 : t === '*' && s === '*' ? 0 : -1;
    if (specificity < best || specificity < 0) continue;
    const qParam = params.find((p) => p.startsWith('q='));
    const value = qParam === undefined ? 1 : Number(qParam.slice(2));
    best = specificity;
    q = Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
  }
  return q;
}

/** A body without its `format` key, for the operations, which take no such key. */
export function withoutFormat(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !('format' in body)) return body;
  const { format: _format, ...rest } = body as Record<string, unknown>;
  return rest;
}

/**
 * Runs an operation and answers in `format`: its envelope, or its records as a CSV attachment named
 * `name`.csv under the output keys the operation reports through `onColumns`. The CSV is streamed,
 * a few hundred rows a chunk, so the answer starts at once and is never held whole as one string;
 * the rows themselves were read under the same byte ceiling as the JSON answer.
 */
export async function answerIn<T extends { readonly records: readonly Record<string, unknown>[] }>(
  format: AnswerFormat, reply: FastifyReply, name: string, run: (onColumns?: (keys: readonly string[]) => void) => Promise<T>,
): Promise<unknown> {
  if (format === 'json') return toEnvelope(await run());
  let columns: readonly string[] = [];
  const { records } = await run((keys) => (columns = keys));
  return reply.type(CSV_TYPE).header('content-disposition', `attachment; filename="${name}.csv"`).send(Readable.from(csvPieces(columns, records)));
}

/** The CSV an OpenAPI example's records make, keyed by the first record's keys. */
export function csvExample(example: unknown): string {
  const records = (example as { records?: Record<string, unknown>[] }).records ?? [];
  return toCsv(Object.keys(records[0] ?? {}), records);
}
