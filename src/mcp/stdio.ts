import type { Transport } from '@modelcontextprotocol/server';
import { serveStdio, type StdioServerHandle } from '@modelcontextprotocol/server/stdio';
import { buildMcpServer, type ToolContext } from './tools.js';

export interface StdioOptions {
  /** Another transport than the process's stdin and stdout (a socket, or a test's pipe). */
  readonly transport?: Transport | undefined;
  /** Out-of-band errors of the connection (malformed lines); stdout is the protocol, so never there. */
  readonly onError?: ((error: Error) => void) | undefined;
}

/**
 * The same tools as the hosted endpoint over stdio, for an agent that starts `oql mcp --stdio` as
 * a child process. One connection, one caller: the principal of the API key the process was
 * given, fixed for the connection's lifetime. The SDK's entry negotiates the protocol revision.
 */
export function serveToolsOverStdio(ctx: ToolContext, options: StdioOptions = {}): StdioServerHandle {
  return serveStdio(() => buildMcpServer(ctx), {
    ...(options.transport === undefined ? {} : { transport: options.transport }),
    ...(options.onError === undefined ? {} : { onerror: options.onError }),
  });
}
