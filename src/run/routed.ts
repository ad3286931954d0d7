import { asDatabase, type Database } from './database.js';

/**
 * The service's database for read-only paths that may lag the primary (reports, filters): reads
 * go to `reader` (a read role's pool, on the primary or on a streaming replica), everything else
 * (writes, the service's own tables, pings) to `primary`. `close` closes the reader; the primary
 * belongs to whoever opened it.
 */
export function routeReads(primary: Database, reader: Database): Database {
  return asDatabase({
    kind: primary.kind,
    label: `${primary.label}; reads from ${reader.label}`,
    query: primary.query.bind(primary),
    read: reader.read.bind(reader),
    transaction: primary.transaction.bind(primary),
    ping: primary.ping.bind(primary),
    close: () => reader.close(),
  });
}
