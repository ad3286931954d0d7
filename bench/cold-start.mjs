// One cold start, run in a fresh `node` by bench/compile.ts:
//   node bench/cold-start.mjs <dist/index.js> <objects-list.json> <type-codes.json> [--first-error]
// Prints the phases (ms since the process started) as JSON; the parent measures wall time.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [dist, objectsList, typeCodes, then] = process.argv.slice(2);
const t0 = performance.now();
const { compile, loadCatalog, parse } = await import(pathToFileURL(dist).href);
const t1 = performance.now();
const catalog = loadCatalog(JSON.parse(readFileSync(objectsList, 'utf8')), { typeCodes: JSON.parse(readFileSync(typeCodes, 'utf8')) });
const t2 = performance.now();
// The first parse of a valid query: the hand-written parser (the Chevrotain one is built only for an invalid text).
parse('SELECT id FROM account LIMIT 1');
const t2b = performance.now();
const result = compile(
  "SELECT id, name, amount, account.name AS account_name FROM opportunity WHERE stage = 'won' AND amount > 1000 ORDER BY amount DESC LIMIT 100",
  { catalog, slug: 'opportunity', orgId: 'org_cold' },
);
const t3 = performance.now();
if (result.kind !== 'query') throw new Error('expected a query');
// A second, different query: what a compile costs once the parser exists.
compile("SELECT name, owner.name FROM contact WHERE status = 'active' LIMIT 50", { catalog, slug: 'contact', orgId: 'org_cold' });
const t4 = performance.now();
const cpu = process.cpuUsage();
const phases = { import: t1 - t0, catalog: t2 - t1, parser: t2b - t2, compile: t3 - t2b, second: t4 - t3, toCompiled: t3, cpuMs: (cpu.user + cpu.system) / 1000 };
if (then === '--first-error') {
  // Not part of the cold start: the first invalid text reads dist/grammar.cjs and builds the
  // Chevrotain parser for its diagnostic.
  let code;
  try {
    compile('SELECT id FROM opportunity WHERE LIMIT 5', { catalog, slug: 'opportunity', orgId: 'org_cold' });
  } catch (e) {
    code = e.code;
  }
  phases.firstError = performance.now() - t4;
  if (code !== 'SYNTAX_ERROR') throw new Error(`expected a syntax error, got ${code}`);
}
process.stdout.write(JSON.stringify(phases));
