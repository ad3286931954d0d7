import type { Examples } from '../syntax/examples.js';

/**
 * The function whitelist (docs/query-language.md#rules) with arities. `if` and `now` are part of
 * the dialect although the service lists only the first; `case` is syntax, not a function.
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
    fn('left', 2, 2, 'left(text, n)'),
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

/** What a hint of an unsupported function may say: example names of the catalog, and the zone (quoted). */
export interface FunctionHintContext {
  readonly examples: Examples;
  readonly zone: string;
}

const dateOf = (c: FunctionHintContext): string => c.examples.date ?? '<date column>';
const emptiness = (c: FunctionHintContext): string => {
  const col = c.examples.multiselect?.column ?? '<multiselect column>';
  return `test emptiness with ${col} = ARRAY[NULL] (or ${col} <> ARRAY[NULL] for non-empty)`;
};
const membership = (c: FunctionHintContext): string => {
  const m = c.examples.multiselect;
  return m ? `test membership with ${m.column} && ARRAY['${m.option}']` : "test membership of a multiselect with && ARRAY['option']";
};
const inClient = (): string => 'select the rows and aggregate them in the client';

/**
 * PostgreSQL functions people reach for that the dialect rejects, with what to write instead,
 * in the names of the catalog in hand.
 */
export const UNSUPPORTED_FUNCTIONS: ReadonlyMap<string, (c: FunctionHintContext) => string> = new Map([
  ['array_length', emptiness],
  ['cardinality', emptiness],
  ['unnest', membership],
  ['array_agg', inClient],
  ['string_agg', inClient],
  ['extract', (c) => `use date_part('year', to_timestamp(${dateOf(c)} / 1000) AT TIME ZONE ${c.zone})`],
  ['to_char', (c) => `group with date_trunc('month', to_timestamp(${dateOf(c)} / 1000) AT TIME ZONE ${c.zone})`],
  ['to_date', (c) => `dates are epoch milliseconds: compare ${c.examples.date ?? 'the date column'} with a number such as 1704067200000`],
  ['current_date', (c) => `use date_part('epoch', date_trunc('day', NOW() AT TIME ZONE ${c.zone}) AT TIME ZONE ${c.zone})*1000`],
  ['length', (c) => `compare strings with LIKE/ILIKE, e.g. ${c.examples.text} ILIKE '%acme%'`],
  ['nullif', () => 'write CASE WHEN a = b THEN NULL ELSE a END'],
  ['greatest', () => 'write CASE WHEN a > b THEN a ELSE b END'],
  ['least', () => 'write CASE WHEN a < b THEN a ELSE b END'],
  ['cast', (c) => `the only cast is ::date, e.g. to_timestamp(${dateOf(c)} / 1000)::date`],
  ['sleep', () => 'queries run only the whitelisted functions'],
]);
