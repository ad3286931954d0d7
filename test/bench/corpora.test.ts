import { loadModule, parseSync } from 'libpg-query';
import { beforeAll, describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import { loadCatalog } from '../../src/catalog/load.js';
import { withAuditFields } from '../../src/catalog/audit-fields.js';
import { CORPORA, CorpusGenerator, corpusCatalogs, rngOf, type CorpusCatalog, type CorpusName } from '../../bench/corpus-families.js';

/**
 * The corpora benchmark (bench/corpora.ts) times families of report queries over several
 * catalogs. Its figures mean something only if every text is a valid query of its catalog: here
 * each family writes texts on each catalog on its own, every one compiles without an error or a
 * warning, and PostgreSQL's parser (libpg-query) reads both the text and the SQL it compiles to.
 * Then the families hold what their names say (three-hop chains, two virtual relations in one
 * WHERE, relative day starts in a zone...).
 */

const PER_CATALOG = 24;

let catalogs: CorpusCatalog[] = [];
const texts = new Map<CorpusName, { catalog: string; text: string }[]>();

beforeAll(async () => {
  await loadModule();
  catalogs = corpusCatalogs({ loadCatalog, withAuditFields });
});

describe('corpora of report queries', () => {
  it('are valid on every catalog: no error, no warning, SQL and text PostgreSQL parses', () => {
    let compiled = 0;
    for (const corpus of CORPORA) {
      const out: { catalog: string; text: string }[] = [];
      for (const [k, source] of catalogs.entries()) {
        const g = new CorpusGenerator(corpus, [source], rngOf(1000 + k));
        for (let i = 0; i < PER_CATALOG; i++) {
          const t = g.next();
          let result;
          try {
            result = compile(t.text, { catalog: source.catalog, slug: t.slug, orgId: 'org_test', cache: false });
          } catch (e) {
            throw new Error(`${corpus} on ${source.name}: ${(e as Error).message}\nin: ${t.text}`);
          }
          expect(result.kind).toBe('query');
          expect(result.warnings, t.text).toEqual([]);
          expect(() => parseSync(result.sql!), result.sql).not.toThrow();
          expect(() => parseSync(t.text), t.text).not.toThrow();
          out.push({ catalog: t.catalog, text: t.text });
          compiled++;
        }
      }
      texts.set(corpus, out);
    }
    expect(compiled).toBe(CORPORA.length * catalogs.length * PER_CATALOG);
    expect(catalogs.map((c) => c.name)).toEqual(expect.arrayContaining(['crm', 'helpdesk', 'real-estate', 'random 1']));
  });

  it('hold what their names say', () => {
    const all = (c: CorpusName) => texts.get(c)!.map((t) => t.text);
    const share = (c: CorpusName, re: RegExp) => all(c).filter((t) => re.test(t.replace(/'[^']*'/g, "''"))).length / all(c).length;
    const threeHops = /\b[a-z_]+\.[a-z_]+\.[a-z_]+\.[a-z_]+\b/;
    // select-chains: three-hop chains in the select list.
    expect(all('select-chains').filter((t) => threeHops.test(t.slice(0, t.indexOf(' FROM '))))).not.toHaveLength(0);
    expect(share('where-chains', / WHERE .*\b[a-z_]+\.[a-z_]+\.[a-z_]+\b/)).toBeGreaterThan(0.3);
    expect(share('group-chains', /GROUP BY [a-z_]+\.[a-z_]+/)).toBeGreaterThan(0.5);
    // Two virtual relations in one WHERE, on the real-estate CRM: a listing's offers and showings.
    expect(texts.get('virtual')!.some((t) => t.catalog === 'real-estate' && /\boffers\.[a-z_]+.* AND showings\.|\bshowings\.[a-z_]+.* AND offers\./.test(t.text))).toBe(true);
    expect(share('exists', /\bEXISTS \(SELECT 1 FROM [a-z_]+ [a-z] WHERE [a-z]\.[a-z_]+ = [a-z]\.id\b/)).toBe(1);
    expect(all('exists').some((t) => /\bNOT EXISTS\b/.test(t))).toBe(true);
    expect(share('case', /\bCASE (WHEN|[a-z0-9_.]+ WHEN)\b|\bif\(/)).toBe(1);
    // dates: relative day starts with AT TIME ZONE twice, date columns shown with ::date.
    expect(all('dates').some((t) => /date_part\('epoch', date_trunc\('day', NOW\(\) AT TIME ZONE '[^']+'\) AT TIME ZONE '[^']+'\)\*1000/.test(t))).toBe(true);
    expect(all('dates').some((t) => /to_timestamp\([a-z_.]+\/1000\)::date/.test(t))).toBe(true);
    expect(share('multiselect', /&& ARRAY\[|= ARRAY\[NULL\]/)).toBe(1);
    expect(all('multiselect').some((t) => /NOT \([a-z_.]+ && ARRAY/.test(t))).toBe(true);
  });

  it('never give the same text twice, and are the same for the same seed', () => {
    const g = new CorpusGenerator('where-chains', catalogs.slice(0, 2), rngOf(5));
    const seen = Array.from({ length: 500 }, () => g.next()).map((t) => `${t.catalog}\u0000${t.text}`);
    expect(new Set(seen).size).toBe(seen.length);
    const again = new CorpusGenerator('where-chains', catalogs.slice(0, 2), rngOf(5));
    expect(Array.from({ length: 20 }, () => again.next().text)).toEqual(seen.slice(0, 20).map((s) => s.split('\u0000')[1]));
  });
});
