/**
 * Where the CLI writes. `main` takes one, so tests run the CLI in process and read what it
 * printed; the real entry passes the process streams.
 */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Progress is shown only on a terminal. */
  readonly stderrIsTTY?: boolean;
  /** Colours only on a terminal (and never with NO_COLOR). */
  readonly stdoutIsTTY?: boolean;
  /** Relative paths resolve against it, and lint reports show paths relative to it. Default process.cwd(). */
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Reads all of standard input (`oql compile -`, `oql lint --stdin`). */
  readonly readStdin?: () => Promise<string>;
}

/** Bad command-line use (unknown flag, missing argument or file): exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(message: string, readonly command?: string) {
    super(message);
  }
}

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

export function processIo(): CliIo {
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    stderrIsTTY: process.stderr.isTTY === true,
    stdoutIsTTY: process.stdout.isTTY === true,
    cwd: process.cwd(),
    env: process.env,
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

/** Writes lines, each ending in a newline. */
export function println(write: (text: string) => void, ...lines: string[]): void {
  write(lines.map((l) => `${l}\n`).join(''));
}

export function useColor(io: CliIo): boolean {
  return io.stdoutIsTTY === true && !io.env?.['NO_COLOR'];
}

/** A word of a command line as a POSIX shell needs it written: as is when it can be, else in single quotes. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
