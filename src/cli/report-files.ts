import { readdir, stat } from 'node:fs/promises';
import { extname, relative, resolve, sep } from 'node:path';
import { readTextFile } from './schema.js';
import { UsageError } from './io.js';
import { fromSlug } from '../syntax/from-slug.js';

/** One query of a report file, with the way back from its offsets to the file's. */
export interface ReportQuery {
  /** The JSON entry's name (or its index), for files holding several queries. */
  readonly name?: string;
  readonly slug: string;
  readonly text: string;
  /** Maps an offset in `text` to an offset in the file. */
  readonly toFile: (offset: number) => number;
  /** How the file writes the query: as is (.sql/.oql), or as a JSON string (escaped). */
  readonly encoding: 'text' | 'json';
  /** Every offset maps exactly (false: the JSON string was not found, offsets point at its entry). */
  readonly exact: boolean;
}

export interface LoadedReportFile {
  /** As shown in reports: relative to the working directory, with forward slashes. */
  readonly path: string;
  readonly source: string;
  readonly queries: readonly ReportQuery[];
  /** What made queries of this file unreadable (no slug, bad JSON...). */
  readonly problems: readonly string[];
}

const EXTENSIONS = new Set(['.sql', '.oql', '.json']);

/** The report files named on the command line, directories walked in name order. */
export async function findReportFiles(cwd: string, args: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const arg of args) {
    const abs = resolve(cwd, arg);
    let kind;
    try {
      kind = await stat(abs);
    } catch {
      throw new UsageError(`no such file or directory: '${arg}'`, 'lint');
    }
    if (kind.isDirectory()) await walk(abs, found);
    else if (EXTENSIONS.has(extname(abs).toLowerCase())) found.push(abs);
    else throw new UsageError(`'${arg}' is not a report file (.sql, .oql or .json)`, 'lint');
  }
  return [...new Set(found)];
}

async function walk(dir: string, found: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (e.name.startsWith('.') || e.name === 'node_modules') continue;
    const path = resolve(dir, e.name);
    if (e.isDirectory()) await walk(path, found);
    else if (e.isFile() && EXTENSIONS.has(extname(e.name).toLowerCase())) found.push(path);
  }
}

export function displayPath(cwd: string, abs: string): string {
  return relative(cwd, abs).split(sep).join('/') || abs;
}

export async function loadReportFile(cwd: string, abs: string, defaultSlug: string | undefined): Promise<LoadedReportFile> {
  const path = displayPath(cwd, abs);
  const source = stripBom(await readTextFile(cwd, abs, 'report file'));
  return parseReportSource(path, source, extname(abs).toLowerCase() === '.json', defaultSlug);
}

/** A report file's queries from its text (after a fix, the file is read again from memory). */
export function parseReportSource(path: string, source: string, json: boolean, defaultSlug: string | undefined): LoadedReportFile {
  return json ? jsonReport(path, source, defaultSlug) : textReport(path, source, defaultSlug);
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * The slug a query is checked against: the one its file gives, else --slug (or the config's),
 * else the object its FROM names.
 */
function slugOf(given: string | undefined, defaultSlug: string | undefined, query: string): string | undefined {
  return given ?? defaultSlug ?? fromSlug(query);
}

// ---------------------------------------------------------------------------------------------
// .sql / .oql: the whole file is the query; its slug comes from a header comment, --slug or FROM.

function textReport(path: string, source: string, defaultSlug: string | undefined): LoadedReportFile {
  const slug = slugOf(headerSlug(source), defaultSlug, source);
  if (slug === undefined) {
    return { path, source, queries: [], problems: ["no slug: the query names no object after FROM; start the file with a comment such as '-- slug: opportunity', or pass --slug"] };
  }
  return { path, source, queries: [{ slug, text: source, toFile: (o) => o, encoding: 'text', exact: true }], problems: [] };
}

/** `-- slug: x` (or `/* slug: x *\/`) among the comments before the query. */
export function headerSlug(source: string): string | undefined {
  let i = 0;
  let header = '';
  for (;;) {
    while (i < source.length && /\s/.test(source[i]!)) i++;
    if (source.startsWith('--', i)) {
      const end = source.indexOf('\n', i);
      const stop = end < 0 ? source.length : end;
      header += `${source.slice(i + 2, stop)}\n`;
      i = stop;
    } else if (source.startsWith('/*', i)) {
      const end = source.indexOf('*/', i + 2);
      const stop = end < 0 ? source.length : end;
      header += `${source.slice(i + 2, stop)}\n`;
      i = stop + 2;
    } else {
      break;
    }
  }
  return /(?:^|[\s*])slug\s*:\s*([A-Za-z_][A-Za-z0-9_]*)/im.exec(header)?.[1];
}

// ---------------------------------------------------------------------------------------------
// .json: the body one POSTs to /reports/execute ({"query", "slug"}), or an array of such entries
// with names ({"name", "slug", "query"}); spans in a query map into the JSON string holding it.

const JSON_SHAPES = 'a JSON report file is the body of a report request, {"query": "SELECT ...", "slug": "opportunity"}, or an array of {"name", "slug", "query"} entries';

function jsonReport(path: string, source: string, defaultSlug: string | undefined): LoadedReportFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(source);
  } catch (e) {
    return { path, source, queries: [], problems: [`not valid JSON: ${(e as Error).message}`] };
  }
  const single = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
  if (!Array.isArray(parsed) && !single) return { path, source, queries: [], problems: [JSON_SHAPES] };
  const entries: unknown[] = single ? [parsed] : (parsed as unknown[]);
  const located = single ? locateBody(source) : locateEntries(source);
  const queries: ReportQuery[] = [];
  const problems: string[] = [];
  entries.forEach((entry: unknown, index) => {
    const e = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    const name = typeof e['name'] === 'string' ? e['name'] : single ? undefined : `#${index + 1}`;
    const what = name === undefined ? 'the body' : `entry ${name}`;
    if (typeof e['query'] !== 'string') {
      problems.push(`${what}: "query" is missing or not a string${single ? ` (${JSON_SHAPES})` : ''}`);
      return;
    }
    const text = e['query'];
    const slug = slugOf(typeof e['slug'] === 'string' && e['slug'] !== '' ? e['slug'] : undefined, defaultSlug, text);
    if (slug === undefined) {
      problems.push(`${what}: no "slug", and the query names no object after FROM (add one, or pass --slug)`);
      return;
    }
    const where = located?.[index];
    let toFile: (offset: number) => number;
    const exact = where?.query !== undefined && where.query.value === text;
    if (where?.query && where.query.value === text) {
      const offsets = where.query.offsets;
      toFile = (o) => offsets[Math.max(0, Math.min(o, offsets.length - 1))]!;
    } else {
      // The string could not be found where expected: point at the entry.
      const at = where?.start ?? 0;
      toFile = () => at;
    }
    queries.push({ ...(name === undefined ? {} : { name }), slug, text, toFile, encoding: 'json', exact });
  });
  return { path, source, queries, problems };
}

interface LocatedString {
  readonly value: string;
  /** File offset of each UTF-16 unit of the decoded value, then of the closing quote. */
  readonly offsets: number[];
}

interface LocatedEntry {
  readonly start: number;
  readonly query?: LocatedString;
}

/** Where a top-level JSON object's "query" string lies, as the one entry of locateEntries. */
export function locateBody(text: string): LocatedEntry[] | null {
  const s = new JsonScanner(text);
  try {
    s.space();
    const start = s.pos;
    let query: LocatedString | undefined;
    s.members((key) => {
      if (key === 'query' && s.peek() === '"') { query = s.string(); return; }
      s.value();
    });
    return [query ? { start, query } : { start }];
  } catch {
    return null;
  }
}

/**
 * Where each element of a top-level JSON array starts, and for object elements where their
 * "query" string lies. Runs only on text JSON.parse accepted; null if it finds anything else.
 */
export function locateEntries(text: string): LocatedEntry[] | null {
  const s = new JsonScanner(text);
  try {
    s.space();
    s.expect('[');
    const entries: LocatedEntry[] = [];
    s.space();
    if (s.peek() === ']') return entries;
    for (;;) {
      s.space();
      const start = s.pos;
      if (s.peek() === '{') {
        let query: LocatedString | undefined;
        s.members((key) => {
          if (key === 'query' && s.peek() === '"') { query = s.string(); return; }
          s.value();
        });
        entries.push(query ? { start, query } : { start });
      } else {
        s.value();
        entries.push({ start });
      }
      s.space();
      if (s.peek() === ',') { s.pos++; continue; }
      s.expect(']');
      return entries;
    }
  } catch {
    return null;
  }
}

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

class JsonScanner {
  pos = 0;
  constructor(private readonly text: string) {}

  peek(): string | undefined {
    return this.text[this.pos];
  }

  space(): void {
    while (this.pos < this.text.length && ' \t\r\n'.includes(this.text[this.pos]!)) this.pos++;
  }

  expect(c: string): void {
    if (this.text[this.pos] !== c) throw new SyntaxError(`expected ${c} at ${this.pos}`);
    this.pos++;
  }

  /** An object; `onValue` is called with the scanner at each member's value and must consume it. */
  members(onValue: (key: string) => void): void {
    this.expect('{');
    this.space();
    if (this.peek() === '}') { this.pos++; return; }
    for (;;) {
      this.space();
      const key = this.string().value;
      this.space();
      this.expect(':');
      this.space();
      onValue(key);
      this.space();
      if (this.peek() === ',') { this.pos++; continue; }
      this.expect('}');
      return;
    }
  }

  string(): LocatedString {
    this.expect('"');
    const t = this.text;
    const offsets: number[] = [];
    let value = '';
    while (this.pos < t.length && t[this.pos] !== '"') {
      offsets.push(this.pos);
      if (t[this.pos] === '\\') {
        const e = t[this.pos + 1]!;
        if (e === 'u') {
          value += String.fromCharCode(parseInt(t.slice(this.pos + 2, this.pos + 6), 16));
          this.pos += 6;
        } else {
          const c = ESCAPES[e];
          if (c === undefined) throw new SyntaxError(`bad escape at ${this.pos}`);
          value += c;
          this.pos += 2;
        }
      } else {
        value += t[this.pos];
        this.pos++;
      }
    }
    offsets.push(this.pos);
    this.expect('"');
    return { value, offsets };
  }

  value(): void {
    const c = this.peek();
    if (c === '"') { this.string(); return; }
    if (c === '{') { this.members(() => this.value()); return; }
    if (c === '[') {
      this.pos++;
      this.space();
      if (this.peek() === ']') { this.pos++; return; }
      for (;;) {
        this.space();
        this.value();
        this.space();
        if (this.peek() === ',') { this.pos++; continue; }
        this.expect(']');
        return;
      }
    }
    // Number, true, false, null: everything up to the next delimiter.
    const start = this.pos;
    while (this.pos < this.text.length && !',]} \t\r\n'.includes(this.text[this.pos]!)) this.pos++;
    if (this.pos === start) throw new SyntaxError(`unexpected ${c ?? 'end'} at ${start}`);
  }
}
