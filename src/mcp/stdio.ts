import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport, type StdioServerHandle } from '@modelcontextprotocol/server/stdio';
import { buildMcpServer, type ToolContext } from './tools.js';

export interface StdioOptions {
  /** Another transport than the process's stdin and stdout (a socket, or a test's pipe). */
  readonly transport?: Transport | undefined;
  /** Out-of-band errors of the connection (malformed lines); stdout is the protocol, so never there. */
  readonly onError?: ((error: Error) => void) | undefined;
}

export interface StdioService {
  readonly handle: StdioServerHandle;
  /**
   * Settles once the connection is over by itself: the input ended and every request read before
   * it was answered (or the output failed). A signal's stop does not wait for it.
   */
  readonly ended: Promise<void>;
}

type RequestId = string | number;

/**
 * The SDK's stdio transport closes the moment stdin ends and drops the calls still running, so a
 * client that writes its requests and closes its end (`printf … | oql mcp --stdio`) loses every
 * answer but the quick ones. This one reads the same way, but when the input ends it closes only
 * after each request it read has been answered (a tool call's answer comes after its log entry is
 * written) or cancelled by the client.
 */
export class AnsweringStdioTransport extends StdioServerTransport {
  private readonly unanswered = new Map<RequestId, number>();
  private whenIdle: (() => void)[] = [];
  private markEnded: () => void = () => {};
  readonly ended = new Promise<void>((resolve) => {
    this.markEnded = resolve;
  });

  constructor() {
    super();
    this._onstdinclose = () => {
      void this.allAnswered().then(() => this.close()).catch(() => {});
    };
  }

  override async start(): Promise<void> {
    const deliver = this.onmessage;
    this.onmessage = (message: JSONRPCMessage) => {
      if ('method' in message && 'id' in message) this.unanswered.set(message.id, (this.unanswered.get(message.id) ?? 0) + 1);
      else if ('method' in message && message.method === 'notifications/cancelled') {
        const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
        if (id !== undefined) this.settle(id);
      }
      deliver?.(message);
    };
    await super.start();
  }

  override send(message: JSONRPCMessage): Promise<void> {
    const sent = super.send(message);
    if (!('method' in message) && 'id' in message && message.id !== undefined) {
      const id = message.id;
      return sent.finally(() => this.settle(id));
    }
    return sent;
  }

  override async close(): Promise<void> {
    await super.close();
    this.unanswered.clear();
    this.releaseIdle();
    this.markEnded();
  }

  private allAnswered(): Promise<void> {
    if (this.unanswered.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.whenIdle.push(resolve));
  }

  private settle(id: RequestId): void {
    const left = (this.unanswered.get(id) ?? 0) - 1;
    if (left > 0) this.unanswered.set(id, left);
    else this.unanswered.delete(id);
    if (this.unanswered.size === 0) this.releaseIdle();
  }

  private releaseIdle(): void {
    const waiting = this.whenIdle;
    this.whenIdle = [];
    for (const resolve of waiting) resolve();
  }
}

/**
 * The same tools as the hosted endpoint over stdio, for an agent that starts `oql mcp --stdio` as
 * a child process. One connection, one caller: the principal of the API key the process was
 * given, fixed for the connection's lifetime. The SDK's entry negotiates the protocol revision.
 */
export function serveToolsOverStdio(ctx: ToolContext, options: StdioOptions = {}): StdioService {
  const own = options.transport === undefined ? new AnsweringStdioTransport() : undefined;
  const handle = serveStdio(() => buildMcpServer(ctx), {
    transport: options.transport ?? own!,
    ...(options.onError === undefined ? {} : { onerror: options.onError }),
  });
  return { handle, ended: own?.ended ?? new Promise<void>(() => {}) };
}
