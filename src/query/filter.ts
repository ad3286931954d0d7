import { connectorRequest, type ConnectorOptions } from '../filter/connector.js';
import { compileFilter, type FilterOptions } from '../filter/filter.js';
import { tooLarge } from '../run/bounds.js';
import { bodyTimeout } from '../run/errors.js';
import type { Database } from '../run/database.js';
import { decodeRows } from '../run/decode.js';
import { readBounded, type ReadLimits } from '../run/read.js';
import { syncCutoff } from './sync-cutoff.js';
import { checkTimeout, type Queryable } from '../run/transaction.js';

/**
 * Running what the record filter and the connector front ends build (src/filter/): they return a
 * statement and the step that finishes its answer; reading, bounding and decoding happen here,
 * between the two, so nothing calls back into the front end.
 */

/**
 * Runs a filter body read-only (statement timeout, default 20 s) and returns decoded records. A
 * page over `maxBytes` is refused (RESPONSE_TOO_LARGE) unless `truncate` asks for what fits.
 */
export async function filterRecords(
  db: Queryable | Database, body: unknown,
  options: FilterOptions & Omit<ReadLimits, 'catalog'> & { truncate?: boolean; onColumns?: ((keys: readonly string[]) => void) | undefined },
): Promise<{ records: Record<string, unknown>[]; truncated?: 'bytes' | 'rows' }> {
  const compiled = compileFilter(body, options);
  options.onColumns?.(compiled.columns.map((c) => c.key));
  const statement = { sql: compiled.sql, params: compiled.params, columnCount: compiled.columns.length };
  const { rows, overflow } = await readBounded(db, statement, { ...options, tenant: options.tenant ?? options.orgId, rowsThatFit: options.truncate === true })
    .catch((e: unknown) => Promise.reject(bodyTimeout(e, 'filter')));
  if (overflow === 'bytes' && !options.truncate) throw tooLarge(options.maxBytes!, 'page');
  const records = compiled.finish(decodeRows(rows, compiled.columns));
  return overflow === null ? { records } : { records, truncated: overflow };
}

/** One connector page and the token of the next one (null after the last page). */
export async function connectorRecords(
  db: Queryable | Database, body: unknown, options: ConnectorOptions & Omit<ReadLimits, 'catalog' | 'maxRows'>,
): Promise<{ records: Record<string, unknown>[]; next_token: string | null }> {
  const request = connectorRequest(body, options);
  const tenant = options.tenant ?? options.orgId;
  const timeoutMs = checkTimeout(options.timeoutMs);
  const cutoff = request.needsCutoff ? await syncCutoff(db, { lag: request.lag, now: request.now }, { timeoutMs, tenant }) : request.fixedCutoff;
  const page = request.page(cutoff);
  const statement = { sql: page.compiled.sql, params: page.compiled.params, columnCount: page.compiled.columns.length };
  const { rows, overflow } = await readBounded(db, statement, { ...options, tenant }).catch((e: unknown) => Promise.reject(bodyTimeout(e, 'connector')));
  // A page over the byte ceiling ends early: the next token continues after its last record.
  if (overflow === 'bytes' && rows.length === 0) throw tooLarge(options.maxBytes!, 'record');
  return page.finish(decodeRows(rows, page.compiled.columns), overflow === 'bytes');
}
