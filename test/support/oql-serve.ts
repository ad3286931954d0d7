import { spawn, type ChildProcess } from 'node:child_process';
import { BUILT_CLI } from './built-bundles.js';
import { NODE_FLAGS } from './node-flags.js';

/**
 * `oql serve` as a user runs it, in a child process (the built CLI, built once per run by the global
 * setup): its URLs once it listens, the request-log lines it writes, and SIGTERM or SIGKILL.
 */

export interface Served {
  readonly child: ChildProcess;
  /** The main host's address, http://127.0.0.1:<port>. */
  readonly url: string;
  /** The MCP host's address. */
  readonly mcpAddress: string;
  readonly pid: number;
  readonly exited: Promise<void>;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Resolves when the request log shows a request of this route arriving. */
  received(route: string): Promise<void>;
  /** SIGTERM (requests in flight finish), or SIGKILL at once. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
}

const children = new Set<ChildProcess>();
let hooked = false;

export async function serve(flags: readonly string[], env: Readonly<Record<string, string>>, timeoutMs = 180_000): Promise<Served> {
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const c of children) c.kill('SIGKILL');
    });
  }
  const child = spawn(process.execPath, [...NODE_FLAGS, BUILT_CLI, 'serve', '--port', '0', ...flags], {
    cwd: process.cwd(),
    env: { ...process.env, OQL_LOG_LEVEL: 'debug', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  let partial = '';
  const watchers: { route: string; resolve: () => void }[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => {
    children.delete(child);
    resolve();
  }));
  const started = new Promise<{ url: string; mcp: string }>((resolve, reject) => {
    const onText = (text: string) => {
      out += text;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      const mcp = /MCP host {2}(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m && mcp) resolve({ url: m[1]!, mcp: mcp[1]! });
      const lines = (partial + text).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (!line.includes('"msg":"request received"')) continue;
        for (const w of [...watchers]) {
          if (line.includes(`"route":"${w.route}"`)) {
            watchers.splice(watchers.indexOf(w), 1);
            w.resolve();
          }
        }
      }
    };
    child.stdout!.on('data', (c: Buffer) => onText(c.toString('utf8')));
    child.stderr!.on('data', (c: Buffer) => void (out += c.toString('utf8')));
    child.once('exit', (code, signal) => reject(new Error(`oql serve exited (${code ?? signal}) before listening:\n${out.slice(-3000)}`)));
  });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`oql serve did not listen within ${timeoutMs} ms:\n${out.slice(-3000)}`)), timeoutMs);
  });
  let urls: { url: string; mcp: string };
  try {
    urls = await Promise.race([started, late]);
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  } finally {
    clearTimeout(timer);
  }
  return {
    child,
    url: urls.url,
    mcpAddress: urls.mcp,
    pid: child.pid!,
    exited,
    output: () => out,
    received: (route) => new Promise<void>((resolve) => watchers.push({ route, resolve })),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(force);
    },
  };
}
