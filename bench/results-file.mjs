// One owner for writing bench/RESULTS.md by section: each standalone benchmark (server, fleet,
// embedded database, hostile neighbour) replaces the text between its own markers, or appends it
// when the file has none yet, and leaves every other section as it was.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const FILE = join(dirname(fileURLToPath(import.meta.url)), 'RESULTS.md');

/** Replaces the section `<!-- name: begin -->…<!-- name: end -->` of RESULTS.md with `text`, or appends it. */
export function writeSection(name, text) {
  const begin = `<!-- ${name}: begin -->`;
  const end = `<!-- ${name}: end -->`;
  const block = `${begin}\n${text}${end}\n`;
  const current = existsSync(FILE) ? readFileSync(FILE, 'utf8') : '# Benchmark results\n';
  const at = current.indexOf(begin);
  const stop = current.indexOf(end);
  const next = at >= 0 && stop > at
    ? current.slice(0, at) + block + current.slice(stop + end.length + 1)
    : `${current.replace(/\n*$/, '\n\n')}${block}`;
  writeFileSync(FILE, next);
}
