import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { BUILT_CLI } from './built-bundles.js';
import { NODE_FLAGS } from './node-flags.js';

/** `oql serve` as a user runs it: its own process, the built CLI (as `npm start` runs it), on free ports of 127.0.0.1. */
export interface ServeProcess {
  readonly child: ChildProcess;
  /** The main host's URL, as printed. */
  readonly url: string;
  /** The MCP host's URL, as printed. */
  readonly mcpUrl: string;
  /** Everything printed on stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Sends the signal and waits for the exit code (null when a signal ended it). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * Starts `oql serve --port 0 …args` (with `ownGroup`, as the leader of a process group of its
 * own, which `process.kill(-child.pid, signal)` signals whole) and resolves once it has printed its last start-up line. A
 * process that exits first rejects with what it printed.
 */
export async function startServe(args: readonly string[], env: Record<string, string> = {}, options: { readonly ownGroup?: boolean } = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [...NODE_FLAGS, BUILT_CLI, 'serve', '--port', '0', ...args], {
    cwd: ROOT,
    env: { ...process.env, OQL_LOG_LEVEL: 'warn', OQL_API_KEYS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A process group of its own, as a shell gives a command: a signal to the group reaches the
    // server and every process it started, as a terminal's Ctrl+C does.
    detached: options.ownGroup === true,
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => void (out += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => void (err += chunk.toString('utf8')));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  await new Promise<void>((ready, fail) => {
    const check = () => {
      if (/OpenAPI document/.test(out)) {
        child.stdout!.off('data', check);
        ready();
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => fail(new Error(`oql serve exited (${code}) before it was ready:\n${out}\n${err}`)));
  });
  const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1]!;
  const mcpUrl = /MCP host {2}(http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1]!;
  return {
    child,
    url,
    mcpUrl,
    stdout: () => out,
    stderr: () => err,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
