import { OqlError } from '../diagnostics/diagnostic.js';

/** Postgres silently truncates longer identifiers, so two long names could collide. */
export const MAX_IDENTIFIER_BYTES = 63;

const encoder = new TextEncoder();

/** Why `name` cannot be a Postgres identifier, or undefined when it can. */
export function identifierProblem(name: string): string | undefined {
  if (name.length === 0) return 'is empty';
  // A UTF-16 unit is at most 3 UTF-8 bytes: short names need no encoding to be measured.
  if (name.length <= MAX_IDENTIFIER_BYTES / 3 && !name.includes('\0')) return undefined;
  if (name.includes('\0')) return 'contains a NUL character';
  if (encoder.encode(name).length > MAX_IDENTIFIER_BYTES) return `is longer than ${MAX_IDENTIFIER_BYTES} bytes`;
  return undefined;
}

/**
 * The one way an identifier reaches SQL: always double-quoted, embedded quotes doubled, so
 * any physical name (mixed case, spaces, keywords, quotes) is taken literally.
 */
const quoted = new Map<string, string>();

export function quoteIdent(name: string): string {
  // Most names (catalog slugs, the emitter's aliases) are short and hold no quote and no NUL:
  // quoting one is a concatenation, cheaper than the lookup below, which is for the rest.
  const n = name.length;
  if (n > 0 && n <= MAX_IDENTIFIER_BYTES / 3 && !name.includes('"') && !name.includes('\0')) return `"${name}"`;
  const hit = quoted.get(name);
  if (hit !== undefined) return hit;
  const problem = identifierProblem(name);
  if (problem !== undefined) {
    throw OqlError.plain('INVALID_OPTIONS', `identifier ${JSON.stringify(name.slice(0, 80))} ${problem}`);
  }
  const q = `"${name.replaceAll('"', '""')}"`;
  // Identifiers come from catalogs and the emitter's own aliases: a bounded set, worth caching.
  if (quoted.size < 10_000) quoted.set(name, q);
  return q;
}

/** `"schema"."name"`. */
export function quoteQualified(schema: string, name: string): string {
  return `${quoteIdent(schema)}.${quoteIdent(name)}`;
}
