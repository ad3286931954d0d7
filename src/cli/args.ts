import { parseArgs, type ParseArgsConfig } from 'node:util';
import { didYouMean } from '../diagnostics/suggest.js';
import { fromSlug } from '../syntax/from-slug.js';
import { UsageError } from './io.js';

type Options = NonNullable<ParseArgsConfig['options']>;
type Parsed<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>>;

/** Where the service's data is and what catalog it serves: the flags `serve` and `mcp` share. */
export const SERVICE_DATA_OPTIONS = {
  database: { type: 'string' },
  'data-dir': { type: 'string' },
  memory: { type: 'boolean' },
  schema: { type: 'string' },
  'type-codes': { type: 'string' },
  demo: { type: 'boolean' },
  'search-indexes': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/**
 * node:util parseArgs in strict mode, with its errors turned into usage errors that name the
 * command and suggest the flag that was probably meant.
 */
export function parseCommand<const O extends Options>(command: string, argv: readonly string[], options: O): Parsed<O> {
  try {
    return parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(describeParseError(e, options), command);
  }
}

function describeParseError(e: unknown, options: Options): string {
  const err = e as { code?: string; message?: string };
  const message = String(err.message ?? e);
  const flag = /'(-{1,2}[^'\s]*)/.exec(message)?.[1];
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const names = Object.keys(options).map((n) => `--${n}`);
      const hint = flag ? didYouMean(flag, names) : undefined;
      return `unknown option '${flag ?? '?'}'${hint ? `: ${hint}` : ''}`;
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      // "Option '--slug <value>' argument missing" or "Option '--json' does not take an argument".
      return message.replace(/^Option/, 'option').replace(/\.$/, '');
    default:
      return message;
  }
}

/** A positive whole number flag, such as --timeout. */
export function positiveInt(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n <= 0) {
    throw new UsageError(`--${name} must be a positive whole number, got '${value}'`);
  }
  return n;
}

/** Exactly one positional argument (the query text). */
export function onePositional(command: string, positionals: readonly string[], what: string): string {
  if (positionals.length === 0) throw new UsageError(`missing ${what}`, command);
  if (positionals.length > 1) {
    throw new UsageError(`expected one ${what}, got ${positionals.length} arguments (quote the query: oql ${command} "SELECT ...")`, command);
  }
  return positionals[0]!;
}

export function requireFlag(command: string, name: string, value: string | undefined, example: string): string {
  if (value === undefined || value === '') throw new UsageError(`missing --${name} (for example --${name} ${example})`, command);
  return value;
}

/** --slug, else the object the query's FROM names (the request slug a caller would send). */
export function slugFlag(command: string, value: string | undefined, query: string): string {
  if (value !== undefined && value !== '') return value;
  const slug = fromSlug(query);
  if (slug === undefined) throw new UsageError('missing --slug: the query names no object after FROM (for example --slug opportunity)', command);
  return slug;
}

/** --fanout: how aggregates treat one-to-many relations (see CompileOptions.fanout). */
export function fanoutFlag(command: string, value: string | undefined): 'service' | 'exact' | undefined {
  if (value === undefined || value === 'service' || value === 'exact') return value;
  throw new UsageError(`--fanout must be service or exact, got '${value}'`, command);
}

/** --now: an ISO 8601 instant or epoch milliseconds. */
export function instant(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = /^-?\d+$/.test(value.trim()) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms) || Number.isNaN(new Date(ms).getTime())) {
    throw new UsageError(`--${name} must be an ISO 8601 instant or epoch milliseconds (for example 2025-03-31T18:30:00Z), got '${value}'`);
  }
  return ms;
}
