import { describe, expect, it } from 'vitest';
import { loadFixtureCatalog } from '../../fixtures/index.js';
import { bind } from '../../src/bind/bind.js';
import type { BExpr, BoundQuery } from '../../src/bind/bound.js';
import { DiagnosticBag } from '../../src/diagnostics/diagnostic.js';
import { mapQuery } from '../../src/plan/rewrites.js';
import { parse } from '../../src/syntax/parse.js';

/**
 * The planner's rewrite walk (mapQuery): a rewrite sees every expression node exactly once (a
 * rewrite may number new scopes as it goes, so a second call is not harmless), and a walk that
 * changes nothing returns the very same query, sharing every unchanged node when something does.
 * The node count comes from a walk written here, over the tree's own fields.
 */

const catalog = loadFixtureCatalog('crm');

const QUERIES: readonly [string, string][] = [
  ['opportunity', "SELECT name, amount * 2 AS double, owner.name FROM opportunity WHERE stage IN ('won', 'lost') AND amount BETWEEN 1 AND 100 ORDER BY amount + 1 DESC, name LIMIT 5"],
  ['opportunity', "SELECT stage, COUNT(id) AS n, SUM(amount) AS total FROM opportunity GROUP BY stage HAVING COUNT(id) > 1 ORDER BY n DESC LIMIT 10"],
  ['account', "SELECT name, CASE WHEN industry = 'tech' THEN 1 WHEN industry IS NULL THEN 0 ELSE 2 END AS rank FROM account WHERE name ILIKE 'a%' LIMIT 20"],
  ['account', 'SELECT a.name FROM account a WHERE EXISTS (SELECT 1 FROM contact c WHERE c.account = a.id AND c.name IS NOT NULL) ORDER BY a.name LIMIT 5'],
  ['contact', "SELECT name, if(email IS NULL, 'none', email) AS mail FROM contact WHERE account IN (SELECT id FROM account WHERE name <> 'x') LIMIT 5"],
];

const EXPRESSION_KINDS = new Set(['Column', 'Value', 'Null', 'Now', 'Call', 'Unary', 'Binary', 'Logical', 'IsNull', 'IsEmpty', 'Between', 'Like', 'InList', 'InSubquery', 'Exists', 'Subquery', 'Case', 'Array', 'Cast', 'AtTimeZone', 'RowCompare', 'OutputRef']);

/** Expression nodes in the parts of a query a rewrite walk covers, subqueries included. */
function countNodes(q: BoundQuery): number {
  let n = 0;
  const visit = (x: unknown): void => {
    if (Array.isArray(x)) return x.forEach(visit);
    if (typeof x !== 'object' || x === null) return;
    const kind = (x as { kind?: unknown }).kind;
    if (kind === 'Query') {
      const sub = x as BoundQuery;
      sub.outputs.forEach((o) => visit(o.expr));
      visit(sub.where);
      visit(sub.groupBy);
      visit(sub.having);
      sub.orderBy.forEach((o) => visit(o.expr));
      return;
    }
    if (typeof kind === 'string' && EXPRESSION_KINDS.has(kind)) n++;
    for (const [key, value] of Object.entries(x)) if (key !== 'span' && key !== 'type') visit(value);
  };
  visit(q);
  return n;
}

function bound(slug: string, text: string): BoundQuery {
  const bag = new DiagnosticBag(text);
  const q = bind(parse(text), bag, { catalog, slug });
  expect(bag.items.filter((d) => d.severity === 'error'), text).toEqual([]);
  return q!;
}

describe('mapQuery', () => {
  it.each(QUERIES)('calls the rewrite once per expression node, changed or not (%s)', (slug, text) => {
    const q = bound(slug, text);
    for (const changes of [false, true]) {
      let calls = 0;
      mapQuery(q, (e) => {
        calls++;
        // Copying every value changes every select item and ORDER BY term that holds one.
        return changes && e.kind === 'Value' ? { ...e } : e;
      });
      expect(calls, `rewrite changes values: ${changes}`).toBe(countNodes(q));
    }
    expect(countNodes(q)).toBeGreaterThan(5);
  });

  it.each(QUERIES)('returns the same query when nothing changes (%s)', (slug, text) => {
    const q = bound(slug, text);
    expect(mapQuery(q, (e) => e)).toBe(q);
  });

  it('copies only the path to a changed node', () => {
    const q = bound('opportunity', QUERIES[0]![1]);
    const out = mapQuery(q, (e: BExpr) => (e.kind === 'Value' && e.value === 100 ? { ...e, value: 200 } : e));
    expect(out).not.toBe(q);
    // The select list and ORDER BY hold no 100: they are the same arrays.
    expect(out.outputs).toBe(q.outputs);
    expect(out.orderBy).toBe(q.orderBy);
    expect(out.where).not.toBe(q.where);
    expect(JSON.stringify(out.where)).toBe(JSON.stringify(q.where).replace('"value":100', '"value":200'));
  });
});
