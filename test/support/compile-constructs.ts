/**
 * The constructs whose compile and lint must grow linearly with their count (issue 35's finding and
 * its relatives): each a report text from account of n repetitions. The scaling test
 * (test/lint/scaling.test.ts) and the bench (bench/compile-scaling.mjs) grow the same texts.
 */

/** n items made by `item`, joined by `sep`. */
export const list = (n: number, item: (i: number) => string, sep = ', '): string => Array.from({ length: n }, (_, i) => item(i)).join(sep);

export const COMPILE_CONSTRUCTS: Record<string, (n: number) => string> = {
  // The finding's payload: 80 KB of unknown functions, each also missing its alias.
  'unknown functions': (n) => `SELECT ${list(n, () => 'f(1)')} FROM account LIMIT 10`,
  'unknown columns': (n) => `SELECT id FROM account WHERE ${list(n, () => 'nme = 1', ' OR ')} LIMIT 10`,
  'repeated aliases (a free alias for each)': (n) => `SELECT ${list(n, () => 'count(*)')} FROM account LIMIT 10`,
  'repeated aliases (the same output key)': (n) => `SELECT ${list(n, () => 'id AS x')} FROM account LIMIT 10`,
  'an output alias in HAVING': (n) => `SELECT name, count(*) AS c FROM account GROUP BY name HAVING ${list(n, () => 'c > 1', ' AND ')} LIMIT 10`,
  'one long dot chain': (n) => `SELECT owner${'.manager'.repeat(n)}.name AS m FROM account LIMIT 10`,
  'many dot chains': (n) => `SELECT id FROM account WHERE ${list(n, () => "owner.manager.manager.name = 'x'", ' OR ')} ORDER BY id LIMIT 10`,
  ORs: (n) => `SELECT id FROM account WHERE ${list(n, (i) => `name = 'a${i}'`, ' OR ')} ORDER BY id LIMIT 10`,
  'IN lists': (n) => `SELECT id FROM account WHERE name IN (${list(n, (i) => `'a${i}'`)}) ORDER BY id LIMIT 10`,
  'CASE branches': (n) => `SELECT CASE ${list(n, (i) => `WHEN name = 'a${i}' THEN ${i}`, ' ')} END AS c FROM account ORDER BY id LIMIT 10`,
  'concat arguments': (n) => `SELECT concat(${list(n, () => 'name')}) AS c FROM account ORDER BY id LIMIT 10`,
  'virtual relations': (n) => `SELECT id FROM account WHERE ${list(n, (i) => `contacts.name = 'a${i}'`, ' OR ')} ORDER BY id LIMIT 10`,
  'virtual relations under an aggregate': (n) => `SELECT sum(annual_revenue) AS r FROM account WHERE ${list(n, (i) => (i % 2 ? `opportunities.amount > ${i}` : `contacts.name = 'a${i}'`), ' OR ')} LIMIT 10`,
  'unknown options': (n) => `SELECT id FROM account WHERE ${list(n, (i) => `industry = 'zz${i}'`, ' OR ')} ORDER BY id LIMIT 10`,
  'date strings': (n) => `SELECT id FROM account WHERE ${list(n, () => "created_at > '2024-01-01'", ' OR ')} ORDER BY id LIMIT 10`,
  // Linear, but each misspelt name searched the 200 output names for a did-you-mean: 2 s of CPU.
  'misspelt ORDER BY names beside 200 outputs': (n) => `SELECT ${list(200, (i) => `id AS alias_number_${i}`)} FROM account ORDER BY ${list(n, (i) => `zzalias_numbr_${i}`)} LIMIT 10`,
  'GROUP BY against HAVING': (n) => `SELECT count(*) AS c FROM account GROUP BY ${list(n, (i) => `name = 'a${i}'`)} HAVING ${list(n, (i) => `min(name) <> 'b${i}'`, ' AND ')} LIMIT 10`,
};
