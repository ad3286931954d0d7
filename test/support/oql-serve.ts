import { spawn, type ChildProcess } from 'node:child_process';
import { BUILT_CLI } from './built-bundles.js';
import { NODE_FLAGS } from './node-flags.js';

/**
 * `oql serve` as a user runs it, in a child process: the built CLI (built once per run by the
 * global setup, as `npm start` runs it) with the suite's Node flags, on free ports of 127.0.0.1.
 * Its URLs once it has printed its last start-up line, what it printed, the request-log lines it
 * writes, and a signal with its exit code.
 */

export interface Served {
  readonly child: ChildProcess;
  /** The main host's address, http://127.0.0.1:<port>. */
  readonly url: string;
  /** The MCP host's address. */
  readonly mcpAddress: string;
  readonly pid: number;
  /** Its exit code, null when a signal ended it. */
  readonly exited: Promise<number | null>;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** Resolves when the request log shows a request of this route arriving (with OQL_LOG_LEVEL debug, the default here). */
  received(route: string): Promise<void>;
  /** SIGTERM (requests in flight finish), or SIGKILL at once; the exit code. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<number | null>;
}

export interface ServeOptions {
  /** How long it may take to start. Default 180 s. */
  readonly timeoutMs?: number;
  /**
   * The leader of a process group of its own, as a shell makes a command: `process.kill(-pid,
   * signal)` reaches the server and every process it started, as a terminal's Ctrl+C does.
   */
  readonly ownGroup?: boolean;
}

const children = new Set<ChildProcess>();
let hooked = false;

/** `oql serve --port 0 …flags`, with `env` over this process's (no API keys of its own, request logs on). */
export async function serve(flags: readonly string[], env: Readonly<Record<string, string>> = {}, options: ServeOptions = {}): Promise<Served> {
  const timeoutMs = options.timeoutMs ?? 180_000;
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const c of children) c.kill('SIGKILL');
    });
  }
  const child = spawn(process.execPath, [...NODE_FLAGS, BUILT_CLI, 'serve', '--port', '0', ...flags], {
    cwd: process.cwd(),
    env: { ...process.env, OQL_LOG_LEVEL: 'debug', OQL_API_KEYS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.ownGroup === true,
  });
  children.add(child);
  let out = '';
  let stdout = '';
  let stderr = '';
  let partial = '';
  const watchers: { route: string; resolve: () => void }[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    children.delete(child);
    resolve(code);
  }));
  const started = new Promise<{ url: string; mcp: string }>((resolve, reject) => {
    const onText = (text: string) => {
      out += text;
      stdout += text;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      const mcp = /MCP host {2}(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      // The last line it prints when it starts.
      if (m && mcp && /OpenAPI document/.test(out)) resolve({ url: m[1]!, mcp: mcp[1]! });
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
    child.stderr!.on('data', (c: Buffer) => {
      const text = c.toString('utf8');
      out += text;
      stderr += text;
    });
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
    stdout: () => stdout,
    stderr: () => stderr,
    received: (route) => new Promise<void>((resolve) => watchers.push({ route, resolve })),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(force);
      return code;
    },
  };
}
