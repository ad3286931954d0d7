#!/usr/bin/env node
// The floor of bench/fleet.mjs: the least an HTTP service can do for each workload. A bare
// Fastify with four routes, each running the SQL oql serve emits for the same request (compiled
// by the bench and handed over in a file) with one pg Pool query, and sending the rows back as
// JSON; bulk_create is the same 100 records written by one hand-made INSERT in a transaction. No
// authentication, no validation, no compilation, no decoding, no envelope.
//
//   node bench/fleet/floor.mjs <statements.json>   (DATABASE_URL, POOL_SIZE in the environment)
//
// Prints `listening on <url>` once it listens on 127.0.0.1 at a free port; stops on SIGTERM.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import pg from 'pg';
import { floorInsert } from '../server/floor-insert.mjs';

const statements = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE ?? 10) });
pool.on('error', () => {});
const app = Fastify({ logger: false });

app.get('/get/:id', async (request) => {
  const { rows } = await pool.query(statements.getOne, [statements.org, [request.params.id]]);
  return rows[0];
});
app.post('/filter', async (request) => {
  const s = statements.filters[request.body.n % statements.filters.length];
  return (await pool.query(s.sql, s.params)).rows;
});
app.post('/report', async (request) => {
  const s = statements.reports[request.body.n % statements.reports.length];
  return (await pool.query(s.sql, s.params)).rows;
});
let written = 0;
/** The records oql's bulk_create takes, written by one hand-made multi-row INSERT (floor-insert.mjs). */
const insertOf = (records) => floorInsert(statements.org, records, () => `floor_${process.pid}_${written++}`);

app.post('/bulk', async (request) => {
  const insert = insertOf(request.body);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(insert.sql, insert.params);
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    client.release();
  }
  return { ok: true };
});

const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`listening on ${url}\n`);
process.on('SIGTERM', () => {
  app.close().then(() => pool.end()).then(() => process.exit(0), () => process.exit(1));
});
