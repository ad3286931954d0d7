/**
 * Byte-identical output, checked apart from any timing: every text the corpora bench compiles
 * (bench/corpora.ts: per corpus, the check round and its warm-up and timed rounds, from the same
 * generators and seeds; 40,500 texts at its defaults) and the generated corpus of the unseen
 * bench (bench/unseen.ts: reports over random catalogs in rotation), compiled by this build and
 * by a baseline build, and every tenth corpora text broken twice (its LIMIT dropped, the first
 * name of its WHERE misspelt). The row query and the count query must give the same SQL,
 * parameters, columns and warnings, and a text one build refuses the other must refuse with the
 * same diagnostics (codes, spans, messages, hints, fixes). Made to change the compiler's speed
 * and nothing else.
 *
 *   npm run build && node --import tsx bench/identical.ts <baseline dist/index.js>
 *
 * The baseline is another build's dist/ copied inside the repository (bench/.data/ is ignored):
 * a copy outside it is not an ES module package, and tsx would rewrite it on import.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CORPORA, CorpusGenerator, corpusCatalogs, rngOf } from './corpus-families.js';
import { loadDist, progress, rng, type OqlModule } from './lib.js';
import { randomShapes } from './random-catalog.js';
import { ReportGenerator } from './random-reports.js';
import { SYNTHETIC_TYPE_CODES, compactPayload, servicePayloadOf } from './synthetic-catalog.js';

/** As bench/corpora.ts: texts per round, its rounds (warm-up included) and the check round. */
const CORPUS_TEXTS = Number(process.env.OQL_BENCH_CORPORA_TEXTS ?? 300);
const CORPUS_ROUNDS = Number(process.env.OQL_BENCH_ROUNDS ?? 12) + 2 + 1;
/** As bench/unseen.ts: its catalogs, and texts per round over its rounds (warm-up and check included). */
const UNSEEN_CATALOGS = Number(process.env.OQL_BENCH_UNSEEN_CATALOGS ?? 24);
const UNSEEN_TEXTS = Number(process.env.OQL_BENCH_UNSEEN_TEXTS ?? 2000) * 19;

type Catalog = ReturnType<OqlModule['loadCatalog']>;

/** What a compile answers, as one comparable string: the query or the refusal. */
function outcome(lib: OqlModule, text: string, catalog: Catalog, slug: string): string {
  const options = { catalog, slug, orgId: 'org_bench', cache: false as const };
  try {
    const rows = lib.compile(text, options);
    const count = lib.compileCount(text, options);
    return JSON.stringify({ rows, count });
  } catch (e) {
    if (!(e instanceof Error) || !('diagnostics' in e)) throw e;
    return JSON.stringify({ refused: (e as { diagnostics: unknown }).diagnostics });
  }
}

async function main(): Promise<void> {
  const baselinePath = process.argv[2];
  if (!baselinePath) throw new Error('usage: node --import tsx bench/identical.ts <baseline dist/index.js>');
  const self = await loadDist();
  const base = (await import(pathToFileURL(resolve(baselinePath)).href)) as OqlModule;
  let compared = 0;
  let refused = 0;
  const same = (source: string, text: string, slug: string, a: Catalog, b: Catalog): void => {
    const x = outcome(self, text, a, slug);
    const y = outcome(base, text, b, slug);
    if (x !== y) throw new Error(`the output differs from the baseline's on ${source}:\n${text}\n--- this build\n${x}\n--- baseline\n${y}`);
    if (x.startsWith('{"refused"')) refused++;
    compared++;
  };

  const selfCatalogs = corpusCatalogs(self, 6);
  const baseCatalogs = corpusCatalogs(base, 6);
  const at = new Map(selfCatalogs.map((c, i) => [c, i]));
  CORPORA.forEach((corpus, k) => {
    const g = new CorpusGenerator(corpus, selfCatalogs, rngOf(0xc0de + k));
    for (let i = 0; i < CORPUS_TEXTS * CORPUS_ROUNDS; i++) {
      const t = g.next();
      same(`${corpus} over ${t.source.name}`, t.text, t.slug, t.source.catalog, baseCatalogs[at.get(t.source)!]!.catalog);
      // Every tenth text also broken twice, so refusals (codes, spans, hints, fixes) are compared
      // too: without its LIMIT, and with the first name of its WHERE misspelt.
      if (i % 10 === 0) {
        for (const broken of [t.text.replace(/ LIMIT \d+$/, ''), t.text.replace(' WHERE ', ' WHERE zz')]) {
          if (broken !== t.text) same(`${corpus} over ${t.source.name}, broken`, broken, t.slug, t.source.catalog, baseCatalogs[at.get(t.source)!]!.catalog);
        }
      }
    }
    progress(`identical: ${corpus} done, ${compared.toLocaleString('en-US')} texts so far`);
  });

  const pool = Array.from({ length: UNSEEN_CATALOGS }, (_, k) => {
    const random = rng(0xca7a + k);
    const shapes = randomShapes(random);
    const load = (lib: OqlModule): Catalog => {
      const loaded = k % 2 === 0 ? lib.loadCatalog(compactPayload(shapes)) : lib.loadCatalog(servicePayloadOf(shapes), { typeCodes: SYNTHETIC_TYPE_CODES });
      return k % 4 < 2 ? lib.withAuditFields(loaded) : loaded;
    };
    return { self: load(self), base: load(base), generator: new ReportGenerator(shapes, random) };
  });
  const pick = rng(0x5eed);
  for (let i = 0; i < UNSEEN_TEXTS; i++) {
    const c = pool[Math.floor(pick() * pool.length)]!;
    const q = c.generator.next();
    same('the unseen corpus', q.text, q.slug, c.self, c.base);
  }
  progress(`identical: unseen corpus done`);
  console.log(`identical: ${compared.toLocaleString('en-US')} texts (${refused.toLocaleString('en-US')} refused by both alike) gave the same SQL, parameters, columns and warnings as ${baselinePath}`);
}

await main();
