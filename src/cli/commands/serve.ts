import type { Catalog } from '../../catalog/types.js';
import { createServer, type OqlServer } from '../../server/app.js';
import { parseCommand } from '../args.js';
import { EXIT, UsageError, println, type CliIo } from '../io.js';
import { loadSchema } from '../schema.js';

export const SERVE_OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  database: { type: 'string' },
  'data-dir': { type: 'string' },
  memory: { type: 'boolean' },
  schema: { type: 'string' },
  'type-codes': { type: 'string' },
  demo: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** --port: 0 (any free port) to 65535. */
function port(value: string | undefined): number {
  if (value === undefined) return 8080;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n > 65535) throw new UsageError(`--port must be a whole number from 0 to 65535, got '${value}'`, 'serve');
  return n;
}

/** A report the printed curl line can run on any catalog: the first object's primary column. */
function sampleQuery(catalog: Catalog): { query: string; slug: string } {
  const preferred = catalog.objects.get('opportunity');
  const obj = preferred ?? [...catalog.objects.values()][0]!;
  const primary = [...obj.columns.values()].find((c) => c.isPrimary && c.slug !== 'id');
  return { slug: obj.slug, query: `SELECT id${primary ? `, ${primary.slug}` : ''} FROM ${obj.slug} LIMIT 5` };
}

/** Single quotes for a POSIX shell. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * `oql serve`: the CRM data service until SIGTERM or SIGINT, which stop accepting connections,
 * let requests in flight finish, and close the database.
 */
export async function serveCommand(argv: readonly string[], io: CliIo, cwd: string): Promise<number> {
  const { values, positionals } = parseCommand('serve', argv, SERVE_OPTIONS);
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`, 'serve');
  const listenPort = port(values.port);
  const host = values.host ?? '127.0.0.1';
  if (values.database !== undefined && (values['data-dir'] !== undefined || values.memory)) {
    throw new UsageError('--database cannot be combined with --data-dir or --memory', 'serve');
  }
  if (values['data-dir'] !== undefined && values.memory) throw new UsageError('--data-dir and --memory exclude each other', 'serve');
  const { catalog, isFixture } = await loadSchema(values, cwd);
  const embedded = values.database === undefined;

  const server: OqlServer = await createServer({
    database: values.database,
    dataDir: values['data-dir'],
    memory: values.memory,
    ...(isFixture ? {} : { catalog }),
    demo: values.demo === true,
    createFirstKey: embedded,
    log: { level: io.env?.['OQL_LOG_LEVEL'] ?? 'info' },
    ...(io.env === undefined ? {} : { env: io.env }),
  });
  let address: string;
  try {
    address = await server.app.listen({ port: listenPort, host });
  } catch (e) {
    await server.close();
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new UsageError(`port ${listenPort} on ${host} is in use: pick another with --port`, 'serve');
    throw e;
  }
  const url = address.replace('://[::1]', '://localhost');
  println(io.stdout, `oql serve: listening on ${url}`, `database  ${server.db.label}`);
  if (server.demoRows > 0) println(io.stdout, `demo data ${server.demoRows} rows for org_demo`);
  if (server.firstKey !== undefined) {
    const sample = sampleQuery(server.catalog);
    println(io.stdout,
      '',
      'A superadmin API key for org_demo (shown once; it is stored only as a hash):',
      `  ${server.firstKey}`,
      '',
      'Try it:',
      `  curl -s -X POST ${url}/api/v1/org/objects/list -H 'Authorization: Bearer ${server.firstKey}'`,
      `  curl -s -X POST ${url}/api/v1/reports/execute -H 'Authorization: Bearer ${server.firstKey}' -H 'Content-Type: application/json' -d ${shellQuote(JSON.stringify(sample))}`,
      '');
  }
  println(io.stdout, `OpenAPI document: ${url}/openapi.json`);

  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      println(io.stderr, `oql serve: ${signal}, finishing requests in flight`);
      server.close().then(resolve, (e) => {
        println(io.stderr, `oql serve: closing failed: ${(e as Error).message}`);
        resolve();
      });
    };
    const onTerm = () => stop('SIGTERM');
    const onInt = () => stop('SIGINT');
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
  });
  return EXIT.ok;
}

