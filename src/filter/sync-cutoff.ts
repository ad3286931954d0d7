
/**
 * The cutoff when nothing but the clock is known (no open transactions to look at, as in
 * `compileConnectorPage`): records stamped before now − lag.
 */
export function clockCutoff(now: number, lag: number): number {
  return now - lag - 1;
}
