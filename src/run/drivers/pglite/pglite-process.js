// The process of the embedded database (src/run/drivers/pglite/supervisor.ts starts it through
// process-client.ts). It opens PGlite on a data directory and runs one statement per
// message, in the order they come. A process of its own, not a thread of the service's: what ends
// it (its heap, or V8 aborting on a failed check of its own, docs/embedded-database.md) ends the
// database, which the service reopens, never the service.
//
// Plain JavaScript that imports no TypeScript (only ./initdb-template.js, plain too): it is loaded
// by Node itself from three places (src/run/drivers/pglite under vitest and tsx, dist/ in the
// package), none of which can give it a TypeScript loader. Keep it ASCII, like every built file.
//
// Its settings come as JSON in the environment variable OQL_PGLITE_PROCESS:
//   { dataDir: string | null, extensions: string[], rawOids: number[], sessionSql: string | undefined, parent: number }
//   parent: the service's process id, which the watchdog below compares with this process's parent.
//   dataDir null: a spare. It loads PGlite and compiles its WebAssembly ahead, warms that code up
//   on a throwaway database in memory (see warmUp), then waits for { op: 'open', dataDir } before
//   it opens anything: a restart then only pays for Postgres's own start, on code already hot.
//   rawOids: the types the service decodes itself (its parsers are functions, which cannot cross
//   to another process); their values are sent as the text Postgres wrote.
// Messages come and go over the IPC channel (serialization 'advanced': the structured clone).
// Messages in:  { op: 'open', dataDir } (a spare, once) | { id, op: 'query', sql, params, begin, commit } | { id, op: 'exec', sql, begin }
//               | { id, op: 'read', settings, sql, params, statement, close } | { id, op: 'close' }
//   read: a whole read in one message (one crossing instead of four): BEGIN, the settings, the
//   query, and ROLLBACK, run here in sequence; its result is the query's. The transaction is always
//   ended here, also when the query fails. A ROLLBACK that fails leaves the connection in an unknown
//   state: the reply says so (broken: true), and the service replaces the process.
//   statement: the name to read the query under, parsed the first time this process meets it
//   (see namedRead below); null reads it unnamed. close: names to close first.
//   begin: true on a query or exec runs BEGIN before it: a transaction's first statement.
//   commit: true on a query runs COMMIT after it: a transaction's last statement (one crossing
//   instead of two). When the query fails, ROLLBACK ends the transaction and the query's error is
//   the reply; a COMMIT that fails (a deferred constraint) has ended it too, and its error is the
//   reply. A ROLLBACK that fails answers broken: true, as a read's does.
// Messages out: { type: 'ready', openMs, warmStatements } | { type: 'open-failed', error }
//               | { type: 'warm', statements, ms } (a spare, once its warm-up is done)
//               | { id, ok: true, result } | { id, ok: false, error }
// A result is { rows: unknown[][], fields: {name, dataTypeID}[], affectedRows } (rows as arrays:
// smaller to copy than objects that repeat every key); exec answers a list of them.
//
// It never outlives the service: it exits when the channel closes, and a watchdog thread (which
// runs no WebAssembly) kills it when its parent changes, since a statement in progress keeps this
// thread from hearing the channel close.
import fs from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { createFromTemplate, createInMemory, isFresh } from './initdb-template.js';

const settings = JSON.parse(process.env.OQL_PGLITE_PROCESS ?? '{}');

// The directory holds every organization's records: its files are the service user's alone (0600,
// directories 0700). PGlite's file system layer sets each file's mode with an explicit chmod
// (0666), which no umask reaches, so the umask is applied to those calls as well.
const PRIVATE = 0o077;
process.umask(PRIVATE);
for (const name of ['chmodSync', 'fchmodSync']) {
  const chmod = fs[name];
  fs[name] = (target, mode, ...rest) => chmod(target, typeof mode === 'number' ? mode & ~PRIVATE : mode, ...rest);
}

// Text comes back byte for byte, as PostgreSQL sent it: PGlite decodes each value with a
// TextDecoder, which by default drops a leading U+FEFF (a byte-order mark) from every value.
const Decoder = globalThis.TextDecoder;
globalThis.TextDecoder = class ExactTextDecoder extends Decoder {
  constructor(label, options) {
    super(label, { ...options, ignoreBOM: true });
  }
};

const watchdog = new Worker(
  "const { workerData: parent } = require('node:worker_threads');\n" +
    "setInterval(() => { if (process.ppid !== parent) process.kill(process.pid, 'SIGKILL'); }, 100);",
  // The service's id as the service gave it: read here, a parent that died while this process
  // was still loading would already have been replaced by init, and the watchdog would watch init.
  { eval: true, workerData: settings.parent ?? process.ppid },
);
watchdog.unref();
process.on('disconnect', () => process.exit(0));
// The service decides when its database ends. A terminal's Ctrl+C sends SIGINT to the whole
// process group, and a supervisor (systemd, docker stop) may send SIGTERM to every process of the
// service: ended here, the database would be gone before the service could close it cleanly, and
// the clean stop would report a failure. The service closes it, or its end ends this process.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});

let started = Date.now();
const raw = (text) => text;
// The parsers are the instance's, given to PGlite.create: given with each query instead, PGlite
// merges them with its own for every statement, which cost a third of a read by id's CPU here
// (360 against 233 us a query, measured side by side).
const parsers = Object.fromEntries(settings.rawOids.map((oid) => [oid, raw]));
const options = { rowMode: 'array' };

// The fields of a Postgres error that callers look at (code, constraint, ...): an Error copied to
// another process keeps only its message and stack.
const ERROR_FIELDS = ['name', 'message', 'severity', 'code', 'detail', 'hint', 'position', 'internalPosition', 'internalQuery',
  'where', 'schema', 'table', 'column', 'dataType', 'constraint', 'file', 'line', 'routine'];

function plainError(e) {
  const out = {};
  if (e === null || typeof e !== 'object') return { message: String(e) };
  for (const key of ERROR_FIELDS) {
    const value = e[key];
    if (typeof value === 'string' || typeof value === 'number') out[key] = value;
  }
  if (out.message === undefined) out.message = String(e);
  return out;
}

function resultOf(r) {
  return { rows: r.rows, fields: r.fields, affectedRows: r.affectedRows };
}

// What does not depend on the directory: the module, its extensions, the compiled WebAssembly and
// the file-system bundle, which PGlite would otherwise load and compile at every create.
async function load() {
  const { PGlite, types, protocol, parse } = await import('@electric-sql/pglite');
  const extensions = {};
  for (const name of settings.extensions) {
    const mod = await import(`@electric-sql/pglite/contrib/${name}`);
    extensions[name] = mod[name];
  }
  const dist = new URL('.', import.meta.resolve('@electric-sql/pglite'));
  const [wasm, data] = await Promise.all([readFile(new URL('pglite.wasm', dist)), readFile(new URL('pglite.data', dist))]);
  return { PGlite, types, protocol, parse, extensions, pgliteWasmModule: await WebAssembly.compile(wasm), fsBundle: new Blob([data]) };
}

// What a spare runs on its throwaway database: the kinds of statement the service sends (a table
// of several types with an index, inserts and an upsert, an update, reads by key, filtered and
// sorted pages, aggregates, JSON built from rows, a PL/pgSQL function, a transaction).
const WARM_UP = [
  `CREATE TABLE warm (id uuid PRIMARY KEY, org uuid NOT NULL, name text, amount numeric, n int8, at timestamptz,
     day date, flag boolean, tags text[], doc jsonb, deleted boolean NOT NULL DEFAULT false)`,
  'CREATE INDEX warm_org_name ON warm (org, lower(name))',
  `CREATE FUNCTION warm_count(o uuid) RETURNS int8 LANGUAGE plpgsql AS $$
     DECLARE c int8; BEGIN SELECT count(*) INTO c FROM warm WHERE org = o; RETURN c; END $$`,
  `INSERT INTO warm SELECT md5(g::text)::uuid, md5((g % 3)::text)::uuid, 'name ' || g, g * 1.25, g, now() - g * interval '1 hour',
     current_date - g, g % 2 = 0, ARRAY['a' || g % 5], jsonb_build_object('k', g, 's', md5(g::text)) FROM generate_series(1, 2000) g`,
  `INSERT INTO warm (id, org, name) SELECT md5(g::text)::uuid, md5('1')::uuid, 'upserted ' || g FROM generate_series(1, 200) g
     ON CONFLICT (id) DO UPDATE SET name = excluded.name, n = warm.n + 1`,
  "BEGIN; SET TRANSACTION READ ONLY; SELECT * FROM warm WHERE id = md5('7')::uuid AND org = md5('1')::uuid AND NOT deleted; ROLLBACK",
  `SELECT id, name, amount, doc->>'s' FROM warm WHERE org = md5('1')::uuid AND lower(name) LIKE '%1%' AND (amount > 10 OR flag)
     ORDER BY at DESC, id LIMIT 50 OFFSET 10`,
  `SELECT org, date_trunc('month', at) AS month, count(*), count(DISTINCT day), sum(amount), avg(n), max(name) FROM warm
     WHERE at > now() - interval '1 year' GROUP BY 1, 2 HAVING count(*) > 1 ORDER BY 3 DESC`,
  `SELECT coalesce(json_agg(row_to_json(r)), '[]') FROM (SELECT w.id, w.name, w.tags, o.name AS other
     FROM warm w LEFT JOIN warm o ON o.id = w.id WHERE w.n < 300 AND EXISTS (SELECT 1 FROM warm x WHERE x.org = w.org AND x.n = w.n + 1)) r`,
  "BEGIN; UPDATE warm SET name = name || '!', at = now() WHERE n % 7 = 0; SELECT warm_count(md5('1')::uuid); COMMIT",
];

/** The statements of the warm-up that ran before the directory was opened, told with 'ready'. */
let warmStatements = 0;

/**
 * Makes the WebAssembly hot before the spare is needed. PGlite's code is compiled function by
 * function as it is first called, and the hot ones again, optimised, as they run; compiled code
 * belongs to the module, which every instance made from it shares. A new process that opened the
 * directory cold ran its first requests at about half speed, just when the tenants that waited
 * through the restart are served. Stops early when the spare is called to open.
 */
async function warmUp({ PGlite, pgliteWasmModule, fsBundle }, wanted) {
  const began = Date.now();
  // Small shared buffers: the code warmed up is the same, and the spare's memory peak smaller.
  const pg = await createInMemory((o) => PGlite.create({ ...o, pgliteWasmModule, fsBundle, postgresqlconf: 'shared_buffers = 16MB' }));
  try {
    for (const sql of WARM_UP) {
      if (wanted()) return;
      await pg.exec(sql);
      warmStatements++;
    }
  } finally {
    await pg.close();
    // The throwaway database's memory goes now, also when an open cut the warm-up short: nothing
    // else would make an idle spare collect it.
    globalThis.gc?.();
  }
  // V8 frees a WebAssembly heap's pages a moment after the collection that finds it unreachable,
  // so a second collection follows. Measured: the spare's RSS 492 MB without them; 368 MB with the
  // second right after the first, 266 MB with it 300 ms later, 248 MB 1 s later (a spare that
  // never warmed up: 94 MB).
  await new Promise((r) => setTimeout(r, 500));
  globalThis.gc?.();
  process.send({ type: 'warm', statements: warmStatements, ms: Date.now() - began });
}

function openMessage() {
  return new Promise((resolve) => {
    const take = (message) => {
      if (message?.op !== 'open') return;
      process.off('message', take);
      resolve(message.dataDir);
    };
    process.on('message', take);
  });
}

async function open() {
  const loaded = load();
  // Not left unhandled while a spare waits: the error is rethrown below when the open comes.
  loaded.catch(() => {});
  let dataDir = settings.dataDir;
  if (dataDir === null || dataDir === undefined) {
    const opening = openMessage().then((dir) => (dataDir = dir));
    // A warm-up that fails leaves the code as cold as it was; the open goes on.
    const warm = loaded.then((l) => warmUp(l, () => dataDir !== null && dataDir !== undefined)).catch(() => {});
    await opening;
    await warm;
  }
  started = Date.now();
  const { PGlite, types, protocol, parse, extensions, pgliteWasmModule, fsBundle } = await loaded;
  wire = { serialize: protocol.serialize, parseResults: parse.parseResults, parseDescribeStatementResults: parse.parseDescribeStatementResults };
  const create = () => PGlite.create({ dataDir, extensions, pgliteWasmModule, fsBundle, parsers });
  // An empty directory starts as a copy of the first initdb (./initdb-template.js).
  const pg = isFresh(dataDir) ? await createFromTemplate(dataDir, create) : await create();
  // PGlite reads an array's elements with the instance's parser of their type, now the text one
  // for these types; their arrays keep PGlite's own element parsers, as with per-query parsers.
  const arrays = await pg.query('SELECT oid::int AS oid, typarray::int AS typarray FROM pg_type WHERE typarray <> 0 AND oid = ANY($1::int[])', [settings.rawOids]);
  for (const { oid, typarray } of arrays.rows) pg.parsers[typarray] = (text) => types.arrayParser(text, types.parsers[oid], typarray);
  // Session settings, run again by every new process: a restart must not lose them.
  if (settings.sessionSql) await pg.exec(settings.sessionSql);
  return pg;
}

async function read(id, message) {
  if (typeof message.statement === 'string') return namedRead(id, message);
  const { settings: setup, sql, params } = message;
  let reply;
  try {
    await db.exec(setup ? `BEGIN; ${setup}` : 'BEGIN');
    reply = { id, ok: true, result: resultOf(await db.query(sql, params, options)) };
  } catch (e) {
    reply = { id, ok: false, error: plainError(e) };
  }
  try {
    await db.exec('ROLLBACK');
  } catch (e) {
    return { id, ok: false, error: plainError(e), broken: true };
  }
  return reply;
}

/** PGlite's protocol serializer and result parsers, set once PGlite is loaded (open). */
let wire;

/**
 * The named statements this process has parsed for reads, by name, each with its parameters'
 * types. The service names them and decides which to keep (src/run/drivers/prepared.ts, one
 * name per organization and text, the least recently read let go past its share): a read brings
 * its statement's name and the names to close.
 */
const statements = new Map();

/**
 * The messages PGlite answered `parts` with, sent as one buffer: the statements run in order, and
 * an error stops the extended-protocol messages before the next Sync (PostgreSQL skips them), not
 * the simple queries after it. Reads write nothing, so nothing is synced to the file system.
 */
async function exchange(parts) {
  return (await db.execProtocol(Buffer.concat(parts), { syncToFs: false, throwOnError: false })).messages;
}

const errorIn = (messages) => messages.find((m) => m?.name === 'error');
/** Whether the exchange ended outside a transaction: its last message is ReadyForQuery, idle. */
const idle = (messages) => messages.at(-1)?.name === 'readyForQuery' && messages.at(-1).status === 'I';

/**
 * The parameters' types of the statement `name`, closing the statements in `close` first and
 * parsing `name` with `sql` when this process has not: { types } or { error } (the text does not
 * parse). Throws when PGlite itself failed or the session was left in a transaction: the
 * connection's state is then unknown.
 */
async function prepared(name, sql, close) {
  const { serialize } = wire;
  const parts = [];
  for (const old of close) if (statements.delete(old)) parts.push(serialize.close({ type: 'S', name: old }));
  const kept = statements.get(name);
  if (kept === undefined) parts.push(serialize.parse({ name, text: sql }), serialize.describe({ type: 'S', name }));
  if (parts.length === 0) return { types: kept };
  parts.push(serialize.sync());
  const messages = await exchange(parts);
  const error = errorIn(messages);
  if (!idle(messages)) throw error ?? new Error('parsing a statement left the session in a transaction');
  if (error !== undefined) return { error };
  if (kept !== undefined) return { types: kept };
  const types = wire.parseDescribeStatementResults(messages);
  statements.set(name, types);
  return { types };
}

/** A statement's parameters as text, by its parameters' types, as PGlite's own query() writes them. */
function bindValues(params, types) {
  return params.map((param, i) => {
    if (param === null || param === undefined) return null;
    const serializer = db.serializers[types[i]];
    return serializer ? serializer(param) : param.toString();
  });
}

/**
 * A read as one exchange with PGlite: BEGIN and the settings, the named statement bound, described
 * and run, Sync, then ROLLBACK, in one buffer. PGlite's query() makes six calls into PostgreSQL for
 * a statement and exec() two, so a read of three was ten. A read by primary key through this process
 * took 0.51 ms at the median in three calls and 0.33 ms in one exchange (bench/pglite-read-path.mjs,
 * bench/RESULTS.md). A statement whose result's shape changed under it (a column's type altered:
 * PostgreSQL refuses to run its cached plan) is parsed again, once.
 */
async function namedRead(id, message, again = true) {
  const { settings: setup, sql, params, statement: name } = message;
  const { serialize } = wire;
  let found;
  try {
    found = await prepared(name, sql, message.close ?? []);
  } catch (e) {
    return { id, ok: false, error: plainError(e), broken: true };
  }
  if (found.error !== undefined) return { id, ok: false, error: plainError(found.error) };
  let values;
  try {
    values = bindValues(params, found.types);
  } catch (e) {
    // A value its type's writer refuses: nothing was sent, the error is this call's alone.
    return { id, ok: false, error: plainError(e) };
  }
  let messages;
  try {
    messages = await exchange([
      serialize.query(setup ? `BEGIN; ${setup}` : 'BEGIN'),
      serialize.bind({ statement: name, values }),
      serialize.describe({ type: 'P' }),
      serialize.execute({}),
      serialize.sync(),
      serialize.query('ROLLBACK'),
    ]);
  } catch (e) {
    // PGlite itself failed (not a statement): whether the transaction ended is unknown.
    return { id, ok: false, error: plainError(e), broken: true };
  }
  const error = errorIn(messages);
  if (!idle(messages)) return { id, ok: false, error: plainError(error ?? new Error('the read did not end its transaction')), broken: true };
  if (error !== undefined) {
    if (again && error.code === '0A000' && /cached plan must not change result type/.test(error.message)) {
      // Closed here and parsed again under its name: the service's count of its statements holds.
      return namedRead(id, { ...message, close: [name] }, false);
    }
    return { id, ok: false, error: plainError(error) };
  }
  // One result per statement: BEGIN, each setting, the query, ROLLBACK.
  const results = wire.parseResults(messages, db.parsers, options);
  return { id, ok: true, result: resultOf(results.at(-2)) };
}

async function last(id, { sql, params }) {
  let result;
  try {
    result = await db.query(sql, params, options);
  } catch (e) {
    try {
      await db.exec('ROLLBACK');
    } catch (rollbackError) {
      return { id, ok: false, error: plainError(rollbackError), broken: true };
    }
    return { id, ok: false, error: plainError(e) };
  }
  try {
    await db.exec('COMMIT');
  } catch (e) {
    return { id, ok: false, error: plainError(e) };
  }
  return { id, ok: true, result: resultOf(result) };
}

let db;
try {
  db = await open();
} catch (e) {
  process.send({ type: 'open-failed', error: plainError(e) });
  // Nothing else keeps the process alive: it ends once the message is out.
}

if (db !== undefined) {
  process.on('message', async (message) => {
    const { id, op } = message;
    let reply;
    try {
      // begin: the first statement of a transaction brings its BEGIN along.
      if (message.begin === true) await db.exec('BEGIN');
      if (op === 'query' && message.commit === true) reply = await last(id, message);
      else if (op === 'query') reply = { id, ok: true, result: resultOf(await db.query(message.sql, message.params, options)) };
      else if (op === 'read') reply = await read(id, message);
      else if (op === 'exec') reply = { id, ok: true, result: (await db.exec(message.sql, options)).map(resultOf) };
      else if (op === 'close') {
        await db.close();
        reply = { id, ok: true, result: null };
      } else reply = { id, ok: false, error: { message: `unknown operation ${String(op)}` } };
    } catch (e) {
      reply = { id, ok: false, error: plainError(e) };
    }
    try {
      process.send(reply);
    } catch (e) {
      // A value that cannot be copied to the service (DataCloneError: process.send throws it).
      process.send({ id, ok: false, error: plainError(e) });
    }
  });
  process.send({ type: 'ready', openMs: Date.now() - started, warmStatements });
}
