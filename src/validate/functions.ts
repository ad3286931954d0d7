/**
 * The function whitelist (service rule 4.10.9) with arities. `if` and `now` are part of the
 * dialect although the service lists only the first; `case` is syntax, not a function.
 */
export interface FunctionSpec {
  readonly name: string;
  readonly minArgs: number;
  readonly maxArgs: number;
  readonly aggregate: boolean;
  readonly signature: string;
}

function fn(name: string, minArgs: number, maxArgs: number, signature: string, aggregate = false): FunctionSpec {
  return { name, minArgs, maxArgs, aggregate, signature };
}

export const FUNCTIONS: ReadonlyMap<string, FunctionSpec> = new Map(
  [
    fn('count', 1, 1, 'count(*) | count([DISTINCT] x)', true),
    fn('sum', 1, 1, 'sum([DISTINCT] x)', true),
    fn('avg', 1, 1, 'avg([DISTINCT] x)', true),
    fn('min', 1, 1, 'min(x)', true),
    fn('max', 1, 1, 'max(x)', true),
    fn('lower', 1, 1, 'lower(text)'),
    fn('upper', 1, 1, 'upper(text)'),
    fn('concat', 1, 100, 'concat(a, b, ...)'),
    fn('trim', 1, 1, 'trim(text)'),
    fn('abs', 1, 1, 'abs(x)'),
    fn('round', 1, 2, 'round(x [, digits])'),
    fn('coalesce', 1, 100, 'coalesce(a, b, ...)'),
    fn('date_trunc', 2, 3, "date_trunc('day', timestamp [, 'zone'])"),
    fn('to_timestamp', 1, 1, 'to_timestamp(epoch_ms / 1000)'),
    fn('date_part', 2, 2, "date_part('field', timestamp)"),
    fn('if', 3, 3, 'if(condition, then, else)'),
    fn('now', 0, 0, 'now()'),
  ].map((f) => [f.name, f]),
);

/**
 * PostgreSQL functions people reach for that the dialect rejects, with what to write instead.
 * `{zone}` stands for the zone the hint speaks in (the query's, or the timeZone option).
 */
export const UNSUPPORTED_FUNCTIONS: ReadonlyMap<string, string> = new Map([
  ['array_length', 'test emptiness with field = ARRAY[NULL] (or field <> ARRAY[NULL] for non-empty)'],
  ['cardinality', 'test emptiness with field = ARRAY[NULL] (or field <> ARRAY[NULL] for non-empty)'],
  ['unnest', "test membership with field && ARRAY['a']"],
  ['array_agg', 'select the rows and aggregate them in the client'],
  ['string_agg', 'select the rows and aggregate them in the client'],
  ['extract', "use date_part('year', to_timestamp(field / 1000) AT TIME ZONE {zone})"],
  ['to_char', "group with date_trunc('month', to_timestamp(field / 1000) AT TIME ZONE {zone})"],
  ['to_date', 'dates are epoch milliseconds: compare the column with a number such as 1704067200000'],
  ['current_date', "use date_part('epoch', date_trunc('day', NOW() AT TIME ZONE {zone}) AT TIME ZONE {zone})*1000"],
  ['length', "compare strings with LIKE/ILIKE, e.g. name ILIKE '%acme%'"],
  ['nullif', 'write CASE WHEN a = b THEN NULL ELSE a END'],
  ['greatest', 'write CASE WHEN a > b THEN a ELSE b END'],
  ['least', 'write CASE WHEN a < b THEN a ELSE b END'],
  ['cast', 'the only cast is ::date, e.g. to_timestamp(close_date / 1000)::date'],
  ['sleep', 'the analytics endpoints run only whitelisted functions'],
]);
