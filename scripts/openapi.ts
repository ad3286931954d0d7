/**
 * Writes docs/openapi.json: the document `oql serve` answers at /openapi.json, from a server on
 * an empty in-memory database with the default settings (the environment is not read), named
 * with the relative server `/` so the file describes any deployment. `npm run openapi` runs it,
 * then generates test/support/openapi-types.ts from the file and lints it;
 * test/server/openapi.test.ts fails while either file differs from what the code gives.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { createServer, databaseOf } from '../src/server/index.js';

export const DOCUMENT_FILE = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));

/** The document as the file holds it: two-space JSON and a final newline. */
export function documentText(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

async function main(): Promise<void> {
  const pglite = await PGlite.create();
  try {
    const server = await createServer({ db: databaseOf(pglite), env: {} });
    try {
      // Through inject(): nothing listens, so the document names its server `/`.
      const answer = await server.app.inject({ method: 'GET', url: '/openapi.json' });
      if (answer.statusCode !== 200) throw new Error(`/openapi.json answered ${answer.statusCode}: ${answer.body.slice(0, 500)}`);
      await writeFile(DOCUMENT_FILE, documentText(answer.json()));
      console.log(`wrote ${DOCUMENT_FILE}`);
    } finally {
      await server.close();
    }
  } finally {
    await pglite.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
