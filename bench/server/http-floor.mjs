// The HTTP floor: the least a Node HTTP server adds to the floor's bare query. node:http and a pg
// Pool, no framework: each request's body is read, the floor's own statement for the workload is
// run (workloads.mjs, `floorRunner`), and its rows are answered as JSON. No key, no validation, no
// limits. bench/server.mjs runs it as a child process beside `oql serve`, on the same database and
// Node, with the same connections, so `oql / HTTP floor` is what oql's own work costs, and
// `HTTP floor / floor` what any HTTP server in Node costs on this machine.
// Env: OQL_HTTP_FLOOR_DATABASE (URL), OQL_HTTP_FLOOR_POOL (size), OQL_HTTP_FLOOR_DATA (a JSON file
// of the bench's data), OQL_HTTP_FLOOR_WORKLOAD (its name). Prints "listening on <url>".
import http from 'node:http';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { WORKLOADS, floorRunner } from './workloads.mjs';

const pool = new pg.Pool({ connectionString: process.env.OQL_HTTP_FLOOR_DATABASE, max: Number(process.env.OQL_HTTP_FLOOR_POOL ?? 10) });
pool.on('error', () => {});
const data = JSON.parse(readFileSync(process.env.OQL_HTTP_FLOOR_DATA, 'utf8'));
const workload = WORKLOADS.find((w) => w.name === process.env.OQL_HTTP_FLOOR_WORKLOAD);
if (!workload) throw new Error(`no workload ${process.env.OQL_HTTP_FLOOR_WORKLOAD}`);
const run = floorRunner({ kind: 'postgres', db: pool }, workload, data);
let n = 0;

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (chunks.length > 0) JSON.parse(Buffer.concat(chunks).toString('utf8'));
    run(n++).then((rows) => {
      const body = JSON.stringify({ data: rows });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    }, (e) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(e?.message ?? e));
    });
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
const stop = () => server.close(() => void pool.end().then(() => process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
