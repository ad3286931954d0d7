// PostGraphile v5 (the amber preset) serving a PostgreSQL database over HTTP: the peer that
// bench/server.mjs runs beside `oql serve`. Run from the folder PostGraphile is installed in
// (bench/server/peer.mjs copies this file there), on Node 22 or later, with DATABASE_URL and
// POOL_SIZE set; prints "listening on <url>" once it answers.
import http from 'node:http';
import pg from 'pg';
import { postgraphile } from 'postgraphile';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafserv } from 'postgraphile/grafserv/node';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE ?? 10) });
pool.on('error', () => {});
const pgl = postgraphile({
  extends: [PostGraphileAmberPreset],
  // Every column may be a condition or a sort key, not only indexed ones (the page sorts by amount).
  disablePlugins: ['PgIndexBehaviorsPlugin'],
  pgServices: [makePgService({ pool, schemas: ['public'] })],
  grafserv: { graphiql: false, watch: false },
  grafast: { explain: false },
});
const serv = pgl.createServ(grafserv);
const server = http.createServer();
serv.addTo(server);
await pgl.getSchema();
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
const stop = () => server.close(() => void Promise.resolve(pgl.release()).then(() => pool.end()).then(() => process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
