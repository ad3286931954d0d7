import type { Catalog } from '../../catalog/types.js';
import { startAdminHost, type AdminHost } from '../../server/admin.js';
import { createServer, type OqlServer } from '../../server/app.js';
import { DEFAULT_DATA_DIR } from '../../run/open.js';
import { Operator } from '../../service/operator.js';
import { SERVICE_DATA_OPTIONS, parseCommand } from '../args.js';
import { EXIT, UsageError, println, shellWord, type CliIo } from '../io.js';
import { serviceDataOf } from '../service-data.js';

export const SERVE_OPTIONS = {
  port: { type: 'string' },
  'mcp-port': { type: 'string' },
  'base-url': { type: 'string' },
  'mcp-url': { type: 'string' },
  only: { type: 'string' },
  host: { type: 'string' },
  'read-database': { type: 'string' },
  'trust-proxy': { type: 'string' },
  'webhook-allow-private': { type: 'boolean' },
  ...SERVICE_DATA_OPTIONS,
} as const;

/** --port, --mcp-port: 0 (any free port) to 65535. */
function port(value: string | undefined, fallback = 8080, flag = '--port'): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n > 65535) throw new UsageError(`${flag} must be a whole number from 0 to 65535, got '${value}'`, 'serve');
  return n;
}

/** Which hosts this process runs: both by default; either alone against a shared database. */
function hostsOf(only: string | undefined, baseUrl: string | undefined): { api: boolean; mcp: boolean } {
  if (only === undefined) return { api: true, mcp: true };
  if (only === 'api') return { api: true, mcp: false };
  if (only === 'mcp') {
    // The metadata names the authorization server, which another process serves.
    if (baseUrl === undefined) throw new UsageError('--only mcp needs --base-url: the public URL of the main host, where the OAuth endpoints are', 'serve');
    return { api: false, mcp: true };
  }
  throw new UsageError(`--only must be api or mcp, not '${only}'`, 'serve');
}

async function listenOn(app: OqlServer['app'], listenPort: number, host: string, flag: string): Promise<string> {
  try {
    return (await app.listen({ port: listenPort, host })).replace('://[::1]', '://localhost');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new UsageError(`port ${listenPort} on ${host} is in use: pick another with ${flag}`, 'serve');
    throw e;
  }
}

/** A report the printed curl line can run on any catalog: the first object's primary column. */
function sampleQuery(catalog: Catalog): { query: string; slug: string } {
  const preferred = catalog.objects.get('opportunity');
  const obj = preferred ?? [...catalog.objects.values()][0]!;
  const primary = [...obj.columns.values()].find((c) => c.isPrimary && c.slug !== 'id');
  return { slug: obj.slug, query: `SELECT id${primary ? `, ${primary.slug}` : ''} FROM ${obj.slug} LIMIT 5` };
}

/**
 * A start that created no key says what there is and how to make another: the command runs as
 * printed while this server runs (it asks this server) and after it stops.
 */
async function keysLine(operator: Operator, dataDirFlag: string | undefined): Promise<string[]> {
  const keys = await operator.listKeys();
  const dir = dataDirFlag === undefined ? '' : ` --data-dir ${shellWord(dataDirFlag)}`;
  const org = keys[0]?.orgId ?? 'org_demo';
  // Never empty here: an embedded start with no live key has just made one and printed it.
  const n = keys.length;
  return [
    `API keys  ${n} live key${n === 1 ? '' : 's'} already exist${n === 1 ? 's' : ''}; a key is shown only when it is made (oql keys list${dir} shows their ids)`,
    `          make another: oql keys create --org ${org} --role superadmin${dir}`,
  ];
}

/**
 * `oql serve`: the CRM data service until SIGTERM or SIGINT, which stop accepting connections,
 * let requests in flight finish, and close the database.
 */
export async function serveCommand(argv: readonly string[], io: CliIo, cwd: string): Promise<number> {
  const { values, positionals } = parseCommand('serve', argv, SERVE_OPTIONS);
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`, 'serve');
  const listenPort = port(values.port);
  // --port 0 (tests, scripts) asks for free ports: the MCP host then takes a free one too.
  const mcpPort = port(values['mcp-port'], listenPort === 0 ? 0 : 8081, '--mcp-port');
  const hosts = hostsOf(values.only, values['base-url']);
  if (hosts.api && hosts.mcp && listenPort === mcpPort && listenPort !== 0) throw new UsageError(`--port and --mcp-port are both ${listenPort}: the two hosts need two ports`, 'serve');
  const host = values.host ?? '127.0.0.1';
  const data = await serviceDataOf(values, 'serve', cwd);
  if (values['read-database'] !== undefined && data.database === undefined) {
    throw new UsageError('--read-database needs --database: reads may go to a replica, writes go to the primary', 'serve');
  }

  const server: OqlServer = await createServer({
    ...data,
    createFirstKey: data.database === undefined,
    log: { level: io.env?.['OQL_LOG_LEVEL'] ?? 'info' },
    baseUrl: values['base-url'],
    mcpUrl: values['mcp-url'],
    ...(values['read-database'] === undefined ? {} : { readDatabase: values['read-database'] }),
    ...(values['trust-proxy'] === undefined ? {} : { trustProxy: values['trust-proxy'] }),
    ...(values['webhook-allow-private'] === true ? { webhookAllowPrivate: true } : {}),
    ...(io.env === undefined ? {} : { env: io.env }),
  });
  // The operator's door to this server's tables, with its key cache: a revocation is in force at once.
  const operator = new Operator(server.db, server.keys, server.catalog.mapping.tenantColumn);
  let url = '';
  let mcpAddress = '';
  // The embedded directory is this process's alone: oql keys and oql workspaces ask it here.
  const dataDir = data.database === undefined && !data.memory ? data.dataDir ?? DEFAULT_DATA_DIR : undefined;
  let admin: AdminHost | undefined;
  try {
    if (hosts.api) url = await listenOn(server.app, listenPort, host, '--port');
    if (hosts.mcp) mcpAddress = await listenOn(server.mcpApp, mcpPort, host, '--mcp-port');
    if (dataDir !== undefined) admin = await startAdminHost({ operator, dataDir });
  } catch (e) {
    await server.close();
    throw e;
  }
  // Installed before the first line that says the server listens: from then on a signal is a clean
  // stop, never the default action that ends the process with the database still open.
  const stopped = new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      // A supervisor may signal the whole group more than once, and a terminal's Ctrl+C comes
      // with the SIGTERM of a script's trap: the handlers stay until the close is done, so a
      // repeated signal cannot cut the database's close short.
      if (stopping) return;
      stopping = true;
      println(io.stderr, `oql serve: ${signal}, finishing requests in flight`);
      // The admin host first: a key command arriving now is told the server is stopping, not lost.
      Promise.resolve(admin?.close()).then(() => server.close()).then(() => resolve(EXIT.ok), (e) => {
        println(io.stderr, `oql serve: closing failed: ${(e as Error).message}`);
        resolve(EXIT.failed);
      });
    };
    const onTerm = () => stop('SIGTERM');
    const onInt = () => stop('SIGINT');
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
  });
  if (hosts.api) println(io.stdout, `oql serve: listening on ${url}`);
  if (hosts.mcp) println(io.stdout, `MCP host  ${mcpAddress}; endpoint ${server.mcpUrl()}/<workspace>/mcp`);
  println(io.stdout, `database  ${server.db.label}${server.db.readTrips === undefined ? '' : ` (${tripsPerRead(server.db.readTrips)})`}`);
  if (server.config.webhookAllowPrivate) {
    println(io.stderr, 'oql serve: webhooks may go to http URLs and to loopback and private addresses (--webhook-allow-private, OQL_WEBHOOK_ALLOW_PRIVATE): for development only, never in production');
  }
  const sessions = server.readSessions;
  if (sessions?.db) println(io.stdout, 'reads     read-only sessions of the same database (one statement per read)');
  else if (sessions?.refused !== undefined) {
    println(io.stdout, `reads     the same pool, BEGIN READ ONLY and ROLLBACK around each statement: read-only sessions were not had (${sessions.refused})`);
  }
  if (server.reads !== undefined) {
    const { label, role } = server.reads;
    println(io.stdout, `reads     ${label} (${role.standby ? 'a streaming replica' : 'the primary'}; ${role.missing.length === 0 ? 'one statement per read' : 'BEGIN/SET around each read'})`);
    if (role.missing.length > 0) {
      println(io.stderr, `oql serve: reads from --read-database run BEGIN READ ONLY, SET LOCAL and ROLLBACK around each statement: its role lacks ${role.missing.join(', ')}. On the primary, run:`);
      for (const line of role.fix) println(io.stderr, `  ${line}`);
    }
  }
  if (server.demoRows > 0) println(io.stdout, `demo data ${server.demoRows} rows for org_demo`);
  if (server.firstKey !== undefined && hosts.api) {
    const sample = sampleQuery(server.catalog);
    println(io.stdout,
      '',
      'A superadmin API key for org_demo (shown once; it is stored only as a hash):',
      `  ${server.firstKey}`,
      '',
      'Try it:',
      `  curl -s -X POST ${url}/api/v1/org/objects/list -H 'Authorization: Bearer ${server.firstKey}'`,
      `  curl -s -X POST ${url}/api/v1/reports/execute -H 'Authorization: Bearer ${server.firstKey}' -H 'Content-Type: application/json' -d ${shellWord(JSON.stringify(sample))}`,
      '');
  } else if (dataDir !== undefined && hosts.api) {
    println(io.stdout, ...(await keysLine(operator, values['data-dir'])));
  }
  if (hosts.api) println(io.stdout, `Console: ${url}/ (sign in with an API key)`, `OpenAPI document: ${url}/openapi.json`);

  return stopped;
}

/** "one round trip per read", "3 round trips per read". */
function tripsPerRead(trips: number): string {
  return trips === 1 ? 'one round trip per read' : `${trips} round trips per read`;
}
