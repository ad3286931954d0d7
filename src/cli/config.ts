import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { CODES, type DiagnosticCode } from '../diagnostics/codes.js';
import { isZone } from '../diagnostics/dates.js';
import type { RuleLevel } from '../lint/lint.js';
import { UsageError } from './io.js';

/**
 * Project settings for `oql lint` and `oql compile`, as ESLint finds its config: the nearest
 * `oql.config.json`, or the `oql` key of the nearest `package.json` that has one, walking up
 * from the working directory. Paths in it are relative to the file. Flags win over the file.
 */
export interface OqlConfig {
  /** The catalog file (service payload or compact JSON). */
  readonly schema?: string;
  /** The column_data_type code map file. */
  readonly typeCodes?: string;
  /** The zone of date hints and fixes (default UTC). */
  readonly timeZone?: string;
  /** Per-code levels: off, warn or error. */
  readonly rules?: Readonly<Partial<Record<DiagnosticCode, RuleLevel>>>;
  /** The largest LIMIT a query may have. */
  readonly maxLimit?: number;
  /** The slug of report files that name none. */
  readonly slug?: string;
  /** How aggregates treat one-to-many relations: 'service' (default) or 'exact'. */
  readonly fanout?: 'service' | 'exact';
}

export interface FoundConfig {
  readonly config: OqlConfig;
  /** The file it came from, or null when there is none. */
  readonly path: string | null;
}

const LEVELS = new Set(['off', 'warn', 'error']);

export async function findConfig(cwd: string): Promise<FoundConfig> {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const own = await readJson(join(dir, 'oql.config.json'));
    if (own !== undefined) return { config: checkConfig(own, join(dir, 'oql.config.json'), dir), path: join(dir, 'oql.config.json') };
    const pkg = await readJson(join(dir, 'package.json'));
    if (pkg !== undefined && typeof pkg === 'object' && pkg !== null && 'oql' in pkg) {
      return { config: checkConfig((pkg as Record<string, unknown>)['oql'], `${join(dir, 'package.json')}#oql`, dir), path: join(dir, 'package.json') };
    }
    if (dirname(dir) === dir) return { config: {}, path: null };
  }
}

async function readJson(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`config file '${path}' is not valid JSON: ${(e as Error).message}`);
  }
}

function checkConfig(raw: unknown, where: string, dir: string): OqlConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new UsageError(`${where}: the config must be an object`);
  const c = raw as Record<string, unknown>;
  const known = ['schema', 'typeCodes', 'timeZone', 'rules', 'maxLimit', 'slug', 'fanout'];
  for (const k of Object.keys(c)) if (!known.includes(k)) throw new UsageError(`${where}: unknown key '${k}' (the keys are ${known.join(', ')})`);
  const str = (k: string): string | undefined => {
    if (c[k] === undefined) return undefined;
    if (typeof c[k] !== 'string' || c[k] === '') throw new UsageError(`${where}: '${k}' must be a non-empty string`);
    return c[k] as string;
  };
  const timeZone = str('timeZone');
  if (timeZone !== undefined && !isZone(timeZone)) throw new UsageError(`${where}: '${timeZone}' is not a time zone name (for example 'Asia/Kolkata')`);
  const maxLimit = c['maxLimit'];
  if (maxLimit !== undefined && (!Number.isSafeInteger(maxLimit) || (maxLimit as number) <= 0)) throw new UsageError(`${where}: 'maxLimit' must be a positive whole number`);
  const schema = str('schema');
  const typeCodes = str('typeCodes');
  const slug = str('slug');
  const fanout = str('fanout');
  if (fanout !== undefined && fanout !== 'service' && fanout !== 'exact') throw new UsageError(`${where}: 'fanout' must be "service" or "exact", not '${fanout}'`);
  return {
    ...(schema === undefined ? {} : { schema: resolve(dir, schema) }),
    ...(typeCodes === undefined ? {} : { typeCodes: resolve(dir, typeCodes) }),
    ...(timeZone === undefined ? {} : { timeZone }),
    ...(c['rules'] === undefined ? {} : { rules: parseRules(c['rules'], where) }),
    ...(maxLimit === undefined ? {} : { maxLimit: maxLimit as number }),
    ...(slug === undefined ? {} : { slug }),
    ...(fanout === undefined ? {} : { fanout: fanout as 'service' | 'exact' }),
  };
}

function parseRules(raw: unknown, where: string): Partial<Record<DiagnosticCode, RuleLevel>> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new UsageError(`${where}: 'rules' must be an object of CODE: "off" | "warn" | "error"`);
  const out: Partial<Record<DiagnosticCode, RuleLevel>> = {};
  for (const [code, level] of Object.entries(raw)) out[ruleCode(code, where)] = ruleLevel(level, code, where);
  return out;
}

export function ruleCode(code: string, where: string): DiagnosticCode {
  if (!Object.hasOwn(CODES, code)) throw new UsageError(`${where}: unknown diagnostic code '${code}'`);
  return code as DiagnosticCode;
}

export function ruleLevel(level: unknown, code: string, where: string): RuleLevel {
  if (typeof level !== 'string' || !LEVELS.has(level)) throw new UsageError(`${where}: the level of ${code} must be off, warn or error`);
  return level as RuleLevel;
}

/** `--rule CODE:off` flags, merged over the config's rules. */
export function parseRuleFlags(flags: readonly string[] | undefined): Partial<Record<DiagnosticCode, RuleLevel>> {
  const out: Partial<Record<DiagnosticCode, RuleLevel>> = {};
  for (const f of flags ?? []) {
    const m = /^([A-Z_]+):(\w+)$/.exec(f.trim());
    if (!m) throw new UsageError(`--rule takes CODE:off|warn|error, got '${f}'`, 'lint');
    out[ruleCode(m[1]!, '--rule')] = ruleLevel(m[2], m[1]!, '--rule');
  }
  return out;
}
