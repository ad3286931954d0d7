// One instance of the service for bench/changes.mjs: `createServer` on OQL_BENCH_DATABASE, listening
// on 127.0.0.1, answering its parent over IPC with how many readers wait on it and with its memory
// after a full collection (run with --expose-gc).
import { createServer } from '../../src/server/app.ts';

const server = await createServer({ database: process.env.OQL_BENCH_DATABASE, env: process.env, log: false });
await server.app.listen({ host: '127.0.0.1', port: 0 });
process.send({ url: `http://127.0.0.1:${server.app.server.address().port}` });
process.on('message', (m) => {
  if (m === 'waiting') process.send({ waiting: server.service.ops.feed.watcher.waiting });
  else if (m === 'memory') {
    globalThis.gc();
    globalThis.gc();
    process.send({ memory: process.memoryUsage() });
  } else if (m === 'stop') void server.close().finally(() => process.exit(0));
});
