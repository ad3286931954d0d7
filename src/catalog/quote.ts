import { OqlError } from '../diagnostics/diagnostic.js';

/** Postgres silently truncates longer identifiers, so two long names could collide. */
export const MAX_IDENTIFIER_BYTES = 63;

const encoder = new TextEncoder();

/** Why `name` cannot be a Postgres identifier, or undefined when it can. */
export function identifierProblem(name: string): string | undefined {
  if (name.length === 0) return 'is empty';
  if (name.includes('\0')) return 'contains a NUL character';
  if (encoder.encode(name).length > MAX_IDENTIFIER_BYTES) return `is longer than ${MAX_IDENTIFIER_BYTES} bytes`;
  return undefined;
}

/**
 * The one way an identifier reaches SQL: always double-quoted, embedded quotes doubled, so
 * any physical name (mixed case, spaces, keywords, quotes) is taken literally.
 */
export function quoteIdent(name: string): string {
  const problem = identifierProblem(name);
  if (problem !== undefined) {
    throw OqlError.plain('INVALID_OPTIONS', `identifier ${JSON.stringify(name.slice(0, 80))} ${problem}`);
  }
  return `"${name.replaceAll('"', '""')}"`;
}

/** `"schema"."name"`. */
export function quoteQualified(schema: string, name: string): string {
  return `${quoteIdent(schema)}.${quoteIdent(name)}`;
}
