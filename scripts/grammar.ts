import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GRAMMAR_FILES, grammarEbnf, grammarHtml } from './grammar-gen.js';

// `npm run grammar`: regenerates the reference grammar from the parser.
const root = fileURLToPath(new URL('..', import.meta.url));
const outputs: [path: string, text: string][] = [
  [GRAMMAR_FILES.ebnf, grammarEbnf()],
  [GRAMMAR_FILES.html, grammarHtml()],
];
for (const [path, text] of outputs) {
  mkdirSync(dirname(`${root}${path}`), { recursive: true });
  writeFileSync(`${root}${path}`, text);
  console.log(`wrote ${path} (${text.length.toLocaleString('en-US')} characters)`);
}
