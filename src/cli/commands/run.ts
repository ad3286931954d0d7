import { compile, compileCount } from '../../compile.js';
import { isOqlError } from '../../diagnostics/diagnostic.js';
import { count, execute } from '../../query/index.js';
import { fanoutFlag, instant, onePositional, parseCommand, positiveInt, slugFlag } from '../args.js';
import { openEmbedded, openPostgres, type OpenDatabase } from '../database.js';
import { formatDiagnostic } from '../errors.js';
import { EXIT, println, UsageError, type CliIo } from '../io.js';
import { toCsv } from '../../query/csv.js';
import { formatElapsed, rowCount } from '../render.js';
import { DEFAULT_ORG, loadSchema } from '../schema.js';
import { formatTable } from '../table.js';

export const RUN_OPTIONS = {
  slug: { type: 'string' },
  database: { type: 'string' },
  schema: { type: 'string' },
  'type-codes': { type: 'string' },
  org: { type: 'string' },
  now: { type: 'string' },
  fanout: { type: 'string' },
  timeout: { type: 'string' },
  count: { type: 'boolean' },
  json: { type: 'boolean' },
  format: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function runCommand(argv: readonly string[], io: CliIo, cwd: string): Promise<number> {
  try {
    return await runQuery(argv, io, cwd);
  } catch (e) {
    // With --json a script reads the outcome from stdout either way: a query's error as JSON
    // too. (Catalog and option errors stay usage errors on stderr: nothing was run.)
    const json = argv.includes('--json') || argv.some((a, i) => a === '--format=json' || (a === '--format' && argv[i + 1] === 'json'));
    if (!json || !isOqlError(e) || e.code.startsWith('CATALOG_') || e.code === 'INVALID_OPTIONS') throw e;
    println(io.stdout, JSON.stringify({ error: e.toJSON() }, null, 2));
    return EXIT.failed;
  }
}

async function runQuery(argv: readonly string[], io: CliIo, cwd: string): Promise<number> {
  const { values, positionals } = parseCommand('run', argv, RUN_OPTIONS);
  const query = onePositional('run', positionals, 'query');
  const slug = slugFlag('run', values.slug, query);
  const timeoutMs = positiveInt('timeout', values.timeout);
  const now = instant('now', values.now);
  const fanout = fanoutFlag('run', values.fanout);
  const format = values.json ? 'json' : values.format ?? 'table';
  if (format !== 'table' && format !== 'json' && format !== 'csv') throw new UsageError(`--format must be table, json or csv, got '${format}'`, 'run');
  if (format === 'csv' && values.count) throw new UsageError('--format csv writes rows: leave out --count, or use --format json', 'run');
  const schema = await loadSchema(values, cwd);
  const options = {
    catalog: schema.catalog,
    orgId: values.org ?? DEFAULT_ORG,
    ...(now === undefined ? {} : { now }),
    ...(fanout === undefined ? {} : { fanout }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };

  // Compile before loading anything: a broken query fails in milliseconds, not after PGlite starts.
  let columns: string[] = [];
  let types: string[] = [];
  if (values.count) {
    for (const w of compileCount(query, { ...options, slug }).warnings) println(io.stderr, formatDiagnostic(w, query));
  } else {
    const compiled = compile(query, { ...options, slug });
    for (const w of compiled.warnings) println(io.stderr, formatDiagnostic(w, query));
    columns = compiled.columns.map((c) => c.key);
    types = compiled.columns.map((c) => c.type);
  }

  const database: OpenDatabase = values.database !== undefined
    ? await openPostgres(values.database)
    : await openEmbedded({ catalog: schema.catalog, isFixture: schema.isFixture, io });
  try {
    const started = performance.now();
    if (values.count) {
      const result = await count(database.db, { query, slug }, options);
      const elapsedMs = performance.now() - started;
      if (format === 'json') println(io.stdout, JSON.stringify({ count: result.count, elapsedMs: round(elapsedMs) }));
      else println(io.stdout, `count: ${result.count}`, `(${formatElapsed(elapsedMs)})`);
      return EXIT.ok;
    }
    const result = await execute(database.db, { query, slug }, options);
    const elapsedMs = performance.now() - started;
    const { records } = result;
    if (format === 'csv') {
      if (result.message !== undefined) println(io.stderr, result.message);
      io.stdout(toCsv(columns, records));
      return EXIT.ok;
    }
    if (format === 'json') {
      println(io.stdout, JSON.stringify({ records, ...(result.message === undefined ? {} : { message: result.message }), elapsedMs: round(elapsedMs) }, null, 2));
      return EXIT.ok;
    }
    if (result.message !== undefined) println(io.stdout, result.message);
    println(io.stdout, formatTable(columns, records, undefined, types), `(${rowCount(records.length)}, ${formatElapsed(elapsedMs)})`);
    return EXIT.ok;
  } finally {
    await database.close();
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
