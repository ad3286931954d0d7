import { SERVICE_DATA_OPTIONS, parseCommand } from '../args.js';
import { EXIT, UsageError, println, type CliIo } from '../io.js';
import { serviceDataOf } from '../service-data.js';

export const MCP_OPTIONS = {
  stdio: { type: 'boolean' },
  ...SERVICE_DATA_OPTIONS,
} as const;

/**
 * `oql mcp --stdio`: the MCP tools over stdin and stdout for a local agent, as the organization,
 * user and role of the API key in OQL_API_KEY. stdout carries the protocol only; every message of
 * ours goes to stderr. Stops when the agent closes stdin and every request read has its answer, or
 * at once on SIGTERM or SIGINT.
 */
export async function mcpCommand(argv: readonly string[], io: CliIo, cwd: string): Promise<number> {
  const { values, positionals } = parseCommand('mcp', argv, MCP_OPTIONS);
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`, 'mcp');
  if (!values.stdio) throw new UsageError('say how to serve: --stdio (the hosted endpoint runs with oql serve)', 'mcp');
  const env = io.env ?? process.env;
  const key = env['OQL_API_KEY'];
  if (key === undefined || key.trim() === '') {
    throw new UsageError('set OQL_API_KEY to an API key of the organization to serve (oql keys create, or OQL_API_KEYS at start)', 'mcp');
  }
  const data = await serviceDataOf(values, 'mcp', cwd);

  // Loaded here: `oql compile` and friends never load the server or the SDK.
  // Only what the tools need: the service (database, policy point, operations), no HTTP host.
  const [{ openService }, { requestContext }, { serveToolsOverStdio }] = await Promise.all([
    import('../../service/open.js'),
    import('../../service/policy.js'),
    import('../../mcp/stdio.js'),
  ]);
  const server = await openService({
    ...data,
    log: false,
    env,
  });
  const principal = await server.ops.principalOfKey(key.trim(), Date.now());
  if (!principal) {
    await server.close();
    println(io.stderr, `oql mcp: OQL_API_KEY is not an API key of ${server.db.label}`);
    return EXIT.failed;
  }
  const { handle, ended } = serveToolsOverStdio({
    ops: server.ops,
    catalog: server.catalog,
    request: requestContext(principal),
    onLogError: () => println(io.stderr, 'oql mcp: a tool call could not be logged'),
  }, { onError: (e) => println(io.stderr, `oql mcp: ${e.message.slice(0, 300)}`) });
  println(io.stderr, `oql mcp: serving ${principal.orgId} (${principal.role}) over stdio from ${server.db.label}`);

  // The end of stdin waits for the answers to what was read before it (the transport sees to
  // that); a signal stops at once.
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      void handle.close().catch(() => {}).then(() => server.close()).catch(() => {}).then(resolve);
    };
    void ended.then(stop);
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  return EXIT.ok;
}
