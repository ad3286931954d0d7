// bench/cold-start.mjs through CommonJS: `require` of dist/index.cjs, the example catalog, one
// compile. Run by bench/compile.ts:
//   node bench/cold-start.cjs <dist/index.cjs> <objects-list.json> <type-codes.json>
'use strict';
const { readFileSync } = require('node:fs');

const [dist, objectsList, typeCodes] = process.argv.slice(2);
const t0 = performance.now();
const { compile, loadCatalog } = require(dist);
const t1 = performance.now();
const catalog = loadCatalog(JSON.parse(readFileSync(objectsList, 'utf8')), { typeCodes: JSON.parse(readFileSync(typeCodes, 'utf8')) });
const t2 = performance.now();
const result = compile(
  "SELECT id, name, amount, account.name AS account_name FROM opportunity WHERE stage = 'won' AND amount > 1000 ORDER BY amount DESC LIMIT 100",
  { catalog, slug: 'opportunity', orgId: 'org_cold' },
);
const t3 = performance.now();
if (result.kind !== 'query') throw new Error('expected a query');
const cpu = process.cpuUsage();
process.stdout.write(JSON.stringify({ import: t1 - t0, catalog: t2 - t1, compile: t3 - t2, cpuMs: (cpu.user + cpu.system) / 1000 }));
