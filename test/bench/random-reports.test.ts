import { loadModule, parseSync } from 'libpg-query';
import { beforeAll, describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import { loadCatalog } from '../../src/catalog/load.js';
import { withAuditFields } from '../../src/catalog/audit-fields.js';
import type { Catalog } from '../../src/catalog/types.js';
import { rng } from '../../bench/lib.js';
import { randomShapes } from '../../bench/random-catalog.js';
import { ReportGenerator, type ReportQuery } from '../../bench/random-reports.js';
import { SYNTHETIC_TYPE_CODES, compactPayload, servicePayloadOf, type Shape } from '../../bench/synthetic-catalog.js';

/**
 * The unseen-texts benchmark (bench/unseen.ts) times report queries generated over random
 * catalogs. Its figures mean something only if every text is a valid query of its catalog, of
 * the kinds people write: here each generated text compiles without an error or a warning, the
 * SQL it compiles to and the text itself both parse with PostgreSQL's parser (libpg-query), and
 * the texts cover the language's report features in all three size classes.
 */

const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];
const PER_CATALOG = 200;

interface Generated {
  readonly shapes: Shape[];
  readonly catalog: Catalog;
  readonly queries: ReportQuery[];
}

function generate(seed: number): Generated {
  const random = rng(seed);
  const shapes = randomShapes(random);
  // Both payload forms, with and without the audit fields, as the benchmark loads them.
  const loaded = seed % 2 === 0 ? loadCatalog(compactPayload(shapes)) : loadCatalog(servicePayloadOf(shapes), { typeCodes: SYNTHETIC_TYPE_CODES });
  const catalog = seed % 4 < 2 ? withAuditFields(loaded) : loaded;
  const g = new ReportGenerator(shapes, random);
  return { shapes, catalog, queries: Array.from({ length: PER_CATALOG }, () => g.next()) };
}

let generated: Generated[] = [];

beforeAll(async () => {
  await loadModule();
  generated = SEEDS.map(generate);
});

describe('random report queries', () => {
  it('compile on their catalog without errors or warnings, to SQL PostgreSQL parses; the texts parse too', () => {
    let compiled = 0;
    for (const { catalog, queries } of generated) {
      for (const q of queries) {
        let result;
        try {
          result = compile(q.text, { catalog, slug: q.slug, orgId: 'org_test', cache: false });
        } catch (e) {
          throw new Error(`${(e as Error).message}\nin: ${q.text}`);
        }
        expect(result.kind).toBe('query');
        expect(result.warnings, q.text).toEqual([]);
        expect(() => parseSync(result.sql!), result.sql).not.toThrow();
        expect(() => parseSync(q.text), q.text).not.toThrow();
        compiled++;
      }
    }
    expect(compiled).toBe(SEEDS.length * PER_CATALOG);
  });

  it('cover the report features, in three size classes', () => {
    const texts = generated.flatMap((g) => g.queries.map((q) => q.text));
    const features: Record<string, RegExp> = {
      'GROUP BY': /\bGROUP BY\b/i, HAVING: /\bHAVING\b/i, 'ORDER BY': /\bORDER BY\b/i, DISTINCT: /SELECT DISTINCT/i, 'SELECT *': /SELECT \*/i,
      OR: /\bOR\b/i, 'NOT (': /\bNOT \(/i, EXISTS: /\bEXISTS \(SELECT 1\b/i, 'NOT EXISTS': /\bNOT EXISTS\b/i, 'IN (SELECT': /\bIN \(SELECT\b/i,
      'IN (list)': /\bIN \('/i, BETWEEN: /\bBETWEEN\b/i, ILIKE: /\bILIKE\b/i, 'IS NULL': /\bIS NULL\b/i, '&& ARRAY': /&& ARRAY\[/i,
      'ARRAY[NULL]': /ARRAY\[NULL\]/i, date_trunc: /date_trunc\('/i, to_timestamp: /to_timestamp\(/i, '::date': /::date\b/i, date_part: /date_part\('/i,
      'NOW()': /\bnow\(\)/i, CASE: /\bCASE WHEN\b/i, 'if(': /\bif\(/i, concat: /\bconcat\(/i, coalesce: /\bcoalesce\(/i, round: /\bround\(/i, left: /\bleft\(/i,
      'count(DISTINCT': /\bcount\(DISTINCT\b/i, sum: /\bsum\(/i, avg: /\bavg\(/i, arithmetic: /[a-z_] \* [a-z0-9]/i, 'multi-line': /\n/,
      'lower-case keywords': /^select /, OFFSET: /\bOFFSET \d/i, 'FROM alias': /\bFROM [a-z_]+ [a-z]\b/,
    };
    const missing = Object.entries(features).filter(([, re]) => !texts.some((t) => re.test(t))).map(([name]) => name);
    expect(missing).toEqual([]);

    // Paths: through to-one relations, two hops deep, and through one-to-many relations.
    const pathsOf = (g: Generated) => g.queries.map((q) => ({ q, virtual: g.shapes.find((s) => s.slug === q.slug)!.columns.filter((c) => c.kind === 'virtual').map((c) => c.slug) }));
    expect(texts.some((t) => /\b[a-z_]+\.[a-z_]+\.[a-z_]+\b/.test(t.replace(/'[^']*'/g, '')))).toBe(true);
    const oneToMany = generated.flatMap(pathsOf).filter(({ q, virtual }) => virtual.some((v) => new RegExp(`(^|[ (.])${v}\\.[a-z_]`).test(q.text)));
    expect(oneToMany.length).toBeGreaterThan(20);

    const all = generated.flatMap((g) => g.queries);
    for (const size of ['short', 'typical', 'long'] as const) expect(all.filter((q) => q.size === size).length).toBeGreaterThan(100);
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
    const chars = (size: string) => median(all.filter((q) => q.size === size).map((q) => q.text.length));
    expect(chars('short')).toBeLessThan(chars('typical'));
    expect(chars('long')).toBeGreaterThan(1000);
  });

  it('are the same for the same seed, and differ between catalogs', () => {
    expect(generate(3).queries.map((q) => q.text)).toEqual(generated[2]!.queries.map((q) => q.text));
    const slugSets = generated.map((g) => g.shapes.map((s) => s.slug).sort().join(','));
    expect(new Set(slugSets).size).toBe(SEEDS.length);
  });
});
