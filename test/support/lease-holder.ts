/**
 * A process that holds leases until it is killed: `node --import tsx test/support/lease-holder.ts
 * <database url> <key> <count> <ttl ms>`. It prints `holding <n>` once it holds them, then renews
 * them as an instance serving long requests would, until SIGKILL.
 */
import { openDatabase } from '../../src/run/open.js';
import { PostgresLeaseStore } from '../../src/service/shared-state/leases-pg.js';

const [url, key, count, ttl] = process.argv.slice(2);
const db = await openDatabase({ database: url!, poolSize: 2 });
const store = new PostgresLeaseStore(db);
let n = 0;
for (let i = 0; i < Number(count); i++) if (await store.acquire(key!, Number(count), Number(ttl))) n++;
process.stdout.write(`holding ${n}\n`);
// Keeps the event loop alive (the store's own timer is unref'd, as a server's must be).
setInterval(() => {}, 1000);
