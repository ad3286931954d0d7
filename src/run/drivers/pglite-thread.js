// The worker thread of the embedded database (src/run/drivers/pglite-worker.ts starts it). It opens PGlite
// on a data directory and runs one statement per message, in the order they come.
//
// Plain JavaScript that imports nothing from src/: it is loaded by Node itself from three places
// (src/run/drivers under vitest and tsx, dist/ in the package), none of which can give a worker thread a
// TypeScript loader. Keep it ASCII, like every built file.
//
// workerData: { dataDir: string | null, extensions: string[], rawOids: number[], sessionSql: string | undefined }
//   dataDir null: a spare thread. It loads PGlite and compiles its WebAssembly ahead, then waits
//   for { op: 'open', dataDir } before it opens anything: a restart then only pays for Postgres's
//   own start.
//   rawOids: the types the main thread decodes itself (its parsers are functions, which cannot
//   cross threads); their values are sent as the text Postgres wrote.
// Messages in:  { op: 'open', dataDir } (a spare, once) | { id, op: 'query', sql, params } | { id, op: 'exec', sql } | { id, op: 'close' }
// Messages out: { type: 'ready', openMs } | { type: 'open-failed', error }
//               | { id, ok: true, result } | { id, ok: false, error }
// A result is { rows: unknown[][], fields: {name, dataTypeID}[], affectedRows } (rows as arrays:
// smaller to copy than objects that repeat every key); exec answers a list of them.
import { readFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';

let started = Date.now();
const raw = (text) => text;
const parsers = Object.fromEntries(workerData.rawOids.map((oid) => [oid, raw]));
const options = { parsers, rowMode: 'array' };

// The fields of a Postgres error that callers look at (code, constraint, ...): an Error copied to
// another thread keeps only its message and stack.
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
  const { PGlite } = await import('@electric-sql/pglite');
  const extensions = {};
  for (const name of workerData.extensions) {
    const mod = await import(`@electric-sql/pglite/contrib/${name}`);
    extensions[name] = mod[name];
  }
  const dist = new URL('.', import.meta.resolve('@electric-sql/pglite'));
  const [wasm, data] = await Promise.all([readFile(new URL('pglite.wasm', dist)), readFile(new URL('pglite.data', dist))]);
  return { PGlite, extensions, pgliteWasmModule: await WebAssembly.compile(wasm), fsBundle: new Blob([data]) };
}

function openMessage() {
  return new Promise((resolve) => {
    const take = (message) => {
      if (message?.op !== 'open') return;
      parentPort.off('message', take);
      resolve(message.dataDir);
    };
    parentPort.on('message', take);
  });
}

async function open() {
  const loaded = load();
  // Not left unhandled while a spare waits: the error is rethrown below when the open comes.
  loaded.catch(() => {});
  const dataDir = workerData.dataDir ?? (await openMessage());
  started = Date.now();
  const { PGlite, extensions, pgliteWasmModule, fsBundle } = await loaded;
  const pg = await PGlite.create({ dataDir, extensions, pgliteWasmModule, fsBundle });
  // Session settings, run again by every new thread: a restart must not lose them.
  if (workerData.sessionSql) await pg.exec(workerData.sessionSql);
  return pg;
}

let db;
try {
  db = await open();
} catch (e) {
  parentPort.postMessage({ type: 'open-failed', error: plainError(e) });
  // Nothing else keeps the thread alive: it ends once the message is out.
  parentPort.close();
}

if (db !== undefined) {
  parentPort.on('message', async (message) => {
    const { id, op } = message;
    let reply;
    try {
      if (op === 'query') reply = { id, ok: true, result: resultOf(await db.query(message.sql, message.params, options)) };
      else if (op === 'exec') reply = { id, ok: true, result: (await db.exec(message.sql, options)).map(resultOf) };
      else if (op === 'close') {
        await db.close();
        reply = { id, ok: true, result: null };
      } else reply = { id, ok: false, error: { message: `unknown operation ${String(op)}` } };
    } catch (e) {
      reply = { id, ok: false, error: plainError(e) };
    }
    try {
      parentPort.postMessage(reply);
    } catch (e) {
      // A value that cannot be copied to the main thread (DataCloneError).
      parentPort.postMessage({ id, ok: false, error: plainError(e) });
    }
    if (op === 'close') parentPort.close();
  });
  parentPort.postMessage({ type: 'ready', openMs: Date.now() - started });
}
