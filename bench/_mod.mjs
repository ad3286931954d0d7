import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
const tar = new Blob([readFileSync(process.argv[2])]);
const shared = process.argv[3] === 'shared';
let mod, fsBundle;
if (shared) {
  const dir = new URL('../node_modules/@electric-sql/pglite/dist/', import.meta.url);
  mod = await WebAssembly.compile(readFileSync(new URL('pglite.wasm', dir)));
  fsBundle = new Blob([readFileSync(new URL('pglite.data', dir))]);
}
for (let i = 0; i < 4; i++) {
  const c0 = cpu(); const t0 = Date.now();
  const pg = await PGlite.create({ loadDataDir: tar, ...(shared ? { pgliteWasmModule: mod, fsBundle } : {}) });
  await pg.exec('CREATE TABLE t (id int primary key, name text, n numeric); INSERT INTO t SELECT g, md5(g::text), g FROM generate_series(1,2000) g; ANALYZE t;');
  for (let k = 0; k < 30; k++) await pg.query('SELECT count(*), sum(n) FROM t WHERE name LIKE $1', [`%${k}%`]);
  await pg.close();
  console.log(shared ? 'shared' : 'own   ', i, 'cpu', (cpu() - c0).toFixed(2), 'wall', Date.now() - t0);
}
