import type { BoundQuery } from '../bind/bound.js';
import type { Catalog } from '../catalog/types.js';
import { OqlError, type DiagnosticBag } from '../diagnostics/diagnostic.js';
import { exactAggregates } from './exact.js';
import { maxScope } from './plan.js';

/**
 * How aggregates treat one-to-many relations. 'service' (the default) keeps the service's
 * documented fan-out: one row per child, so SUM and COUNT over two relations multiply each
 * other. 'exact' counts each record once per group (./exact.ts) and refuses, with
 * FANOUT_EXACT_UNSUPPORTED, the queries that have no exact reading.
 */
export type FanoutMode = 'service' | 'exact';

export interface FanoutOptions {
  readonly catalog: Catalog;
  readonly fanout?: FanoutMode;
}

/** The fanout option, checked: a caller's typo is an INVALID_OPTIONS error, not the default. */
export function fanoutOf(options: { readonly fanout?: FanoutMode }): FanoutMode {
  const mode = options.fanout ?? 'service';
  if (mode !== 'service' && mode !== 'exact') {
    throw OqlError.plain('INVALID_OPTIONS', `fanout must be 'service' or 'exact', not ${JSON.stringify(mode)}`, "leave it out for the service's fan-out, or pass fanout: 'exact'");
  }
  return mode;
}

/** The bound query under the fanout option: as bound, or with exact aggregates (reports into `bag`). */
export function withFanout(bound: BoundQuery, bag: DiagnosticBag, options: FanoutOptions): BoundQuery {
  if (fanoutOf(options) === 'service') return bound;
  let next = maxScope(bound) + 1;
  return exactAggregates(bound, options.catalog, bag, () => next++);
}
