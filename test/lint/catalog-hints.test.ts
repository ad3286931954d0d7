import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/catalog/load.js';
import type { Catalog, ColumnDef, ObjectDef } from '../../src/catalog/types.js';
import { CODES, type DiagnosticCode } from '../../src/diagnostics/codes.js';
import type { Diagnostic } from '../../src/diagnostics/diagnostic.js';
import { lint, type LintOptions } from '../../src/lint/lint.js';
import { loadFixtureCatalog } from '../../fixtures/index.js';

/**
 * Hints and fixes speak the user's schema. Every diagnostic code about a query's text is raised
 * on four unrelated catalogs (the example CRM, the help desk, the benchmark's revenue CRM and a
 * shipping schema written here), from queries built out of each catalog's own names; no hint,
 * fix or message of any diagnostic may then name an object, column or option that exists in
 * one of the other catalogs but not in the one under test.
 */

const FLEET = {
  objects: {
    vessel: {
      columns: {
        hull_code: { type: 'text', primary: true },
        tonnage: 'number',
        flag_state: { type: 'enum', options: ['pa', 'lr', 'mt'] },
        crane_kinds: { type: 'multiselect', options: ['gantry', 'jib'] },
        commissioned_on: 'date',
        laid_up: 'boolean',
        skipper: { type: 'relation', object: 'mariner' },
        voyages: { type: 'virtual', object: 'voyage', via: 'ship' },
        berths: { type: 'virtual', object: 'berth', via: 'vessel' },
      },
    },
    voyage: { columns: { ship: { type: 'relation', object: 'vessel' }, departs_at: 'datetime', cargo_tons: 'number', lane: { type: 'enum', options: ['north', 'south'] }, manifest_ref: 'text' } },
    berth: { columns: { vessel: { type: 'relation', object: 'vessel' }, quay: 'text', moored_at: 'datetime' } },
    mariner: { columns: { legal_label: { type: 'text', primary: true }, grade: { type: 'enum', options: ['cadet', 'master'] } } },
  },
};

const CATALOGS: Record<string, Catalog> = {
  crm: loadFixtureCatalog('crm'),
  helpdesk: loadFixtureCatalog('helpdesk'),
  revenue: loadCatalog(JSON.parse(readFileSync(new URL('../../bench/schemas/revenue-crm.json', import.meta.url), 'utf8'))),
  fleet: loadCatalog(FLEET),
};

function namesOf(c: Catalog): Set<string> {
  const out = new Set<string>();
  for (const o of c.objects.values()) {
    out.add(o.slug);
    for (const col of o.columns.values()) {
      out.add(col.slug);
      for (const opt of col.options ?? []) out.add(opt);
    }
  }
  return out;
}

/** Names of the other catalogs that the one under test lacks. */
function foreignNames(name: string): Set<string> {
  const own = namesOf(CATALOGS[name]!);
  const out = new Set<string>();
  for (const [other, c] of Object.entries(CATALOGS)) if (other !== name) for (const n of namesOf(c)) if (!own.has(n)) out.add(n);
  return out;
}

/**
 * English words of the hints' prose that happen to be names (mostly options) in one of the
 * catalogs: `number`, `key`, `positive`. A name in an example fragment is still caught unless it
 * is one of these.
 */
const PROSE = new Set(['number', 'value', 'key', 'positive', 'repeat', 'analytics', 'note', 'id', 'name']);

// ---- queries built from a catalog's own names

interface Names {
  readonly slug: string;
  readonly other: string;
  readonly text: string;
  readonly num?: string;
  readonly date?: string;
  readonly bool?: string;
  readonly choice?: { column: string; option: string };
  readonly multi?: { column: string; option: string };
  readonly toOne?: { via: string; field: string; target: string };
  readonly children?: readonly { rel: string; object: string; via: string; text: string; num?: string }[];
  /** An object whose child has a column named like the object itself (EXISTS can then be ambiguous). */
  readonly namesake?: { parent: string; child: string };
}

const BARE = /^[a-z_][a-z0-9_]*$/;

function pickNames(c: Catalog): Names {
  const cols = (o: ObjectDef, ok: (c: ColumnDef) => boolean): ColumnDef[] => [...o.columns.values()].filter((x) => x.slug !== 'id' && BARE.test(x.slug) && ok(x));
  const score = (o: ObjectDef): number => cols(o, (x) => x.type === 'virtual').length * 10 + cols(o, () => true).length;
  const o = [...c.objects.values()].sort((a, b) => score(b) - score(a))[0]!;
  const one = (ok: (x: ColumnDef) => boolean) => cols(o, ok)[0];
  const text = one((x) => x.type === 'text');
  const choice = one((x) => x.type === 'enum');
  const multi = one((x) => x.type === 'multiselect');
  const rel = one((x) => x.type === 'relation');
  const target = rel ? c.objects.get(rel.relation!.object)! : undefined;
  const children = cols(o, (x) => x.type === 'virtual').map((v) => {
    const child = c.objects.get(v.relation!.object)!;
    return { rel: v.slug, object: child.slug, via: (v.relation as { via: string }).via, text: cols(child, (x) => x.type === 'text')[0]?.slug ?? 'id', num: cols(child, (x) => x.type === 'number' || x.type === 'currency' || x.type === 'integer')[0]?.slug };
  });
  return {
    slug: o.slug,
    other: [...c.objects.keys()].find((k) => k !== o.slug)!,
    text: text?.slug ?? 'id',
    num: one((x) => x.type === 'number' || x.type === 'currency' || x.type === 'integer')?.slug,
    date: one((x) => x.type === 'date' || x.type === 'datetime')?.slug,
    bool: one((x) => x.type === 'boolean')?.slug,
    choice: choice ? { column: choice.slug, option: choice.options![0]! } : undefined,
    multi: multi ? { column: multi.slug, option: multi.options![0]! } : undefined,
    toOne: rel && target ? { via: rel.slug, field: cols(target, (x) => x.type === 'text')[0]?.slug ?? 'id', target: target.slug } : undefined,
    children,
    namesake: [...c.objects.values()].flatMap((p) => [...p.columns.values()].flatMap((v) => (v.relation?.kind === 'virtual' && c.objects.get(v.relation.object)?.columns.has(p.slug) ? [{ parent: p.slug, child: v.relation.object }] : [])))[0],
  };
}

interface Case { readonly query: string; readonly slug?: string; readonly options?: Partial<LintOptions> }
type Template = (n: Names) => Case | string | null;

const TEMPLATES: Partial<Record<DiagnosticCode, readonly Template[]>> = {
  EMPTY_QUERY: [() => '', () => '  -- nothing'],
  SYNTAX_ERROR: [
    (n) => `SELECT ${n.text} ${n.slug} LIMIT 10`,
    (n) => `SELECT id FROM ${n.slug} WHERE ${n.text} = $1 LIMIT 10`,
    (n) => `SELECT id FORM ${n.slug} LIMIT 10`,
    (n) => `SELECT id, FROM ${n.slug} LIMIT 10`,
    (n) => (n.date ? `SELECT id FROM ${n.slug} WHERE ${n.date} > NOW() - INTERVAL '3 days' LIMIT 10` : null),
    (n) => `SELECT id FROM ${n.slug} WHERE ${n.text} > INTERVAL '1 month' LIMIT 10`,
    (n) => `(SELECT id FROM ${n.slug} LIMIT 10)`,
    (n) => `SELEC id FROM ${n.slug} LIMIT 10`,
    (n) => `SELECT id LIMIT 10 FROM ${n.slug}`,
  ],
  UNEXPECTED_END: [(n) => `SELECT ${n.text} FROM`, (n) => `SELECT id FROM ${n.slug} WHERE`],
  UNTERMINATED_STRING: [(n) => `SELECT id FROM ${n.slug} WHERE ${n.text} = 'x LIMIT 10`],
  UNTERMINATED_IDENTIFIER: [(n) => `SELECT "${n.text} FROM ${n.slug} LIMIT 10`],
  UNTERMINATED_COMMENT: [(n) => `SELECT id /* note FROM ${n.slug} LIMIT 10`],
  INVALID_CHARACTER: [(n) => `SELECT id FROM ${n.slug} WHERE ${n.text} = ¤ LIMIT 10`],
  MULTIPLE_STATEMENTS: [(n) => `SELECT id FROM ${n.slug} LIMIT 1; SELECT id FROM ${n.slug} LIMIT 1`],
  NOT_SELECT: [(n) => `UPDATE ${n.slug} SET ${n.text} = 'x'`, (n) => `DELETE FROM ${n.slug}`],
  UNSUPPORTED_JOIN: [
    (n) => `SELECT a.id FROM ${n.slug} a JOIN ${n.other} b ON b.id = a.id LIMIT 10`,
    (n) => `SELECT a.id FROM ${n.slug} a, ${n.other} b LIMIT 10`,
    (n) => `SELECT a.id FROM ${n.slug} a LEFT JOIN ${n.other} b ON b.id = a.id LIMIT 10`,
  ],
  UNSUPPORTED_SET_OPERATION: [(n) => `SELECT id FROM ${n.slug} UNION SELECT id FROM ${n.slug} LIMIT 10`],
  UNSUPPORTED_WITH: [(n) => `WITH w AS (SELECT id FROM ${n.slug}) SELECT id FROM w LIMIT 10`],
  UNSUPPORTED_EXTRACT: [(n) => (n.date ? `SELECT EXTRACT(year FROM ${n.date}) AS y FROM ${n.slug} LIMIT 10` : null), (n) => `SELECT EXTRACT(year FROM NOW()) AS y FROM ${n.slug} LIMIT 10`],
  UNSUPPORTED_FILTER: [(n) => `SELECT COUNT(*) FILTER (WHERE ${n.text} = 'x') AS k FROM ${n.slug} LIMIT 1`, (n) => `SELECT COUNT(*) FILTER (${n.text} = 'x') AS k FROM ${n.slug} LIMIT 1`],
  UNSUPPORTED_CAST: [(n) => `SELECT ${n.num ?? 'id'}::text AS a FROM ${n.slug} LIMIT 10`, (n) => `SELECT ${n.text}::timestamp AS a FROM ${n.slug} LIMIT 10`],
  UNSUPPORTED_SUBSCRIPT: [(n) => `SELECT ${n.multi?.column ?? n.text}[1] AS s FROM ${n.slug} LIMIT 10`],
  UNSUPPORTED_WINDOW: [(n) => `SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS k FROM ${n.slug} LIMIT 10`],
  UNSUPPORTED_OPERATOR: [
    (n) => `SELECT id FROM ${n.slug} WHERE ${n.text} ~ 'x' LIMIT 10`,
    (n) => `SELECT ${n.text} || 'x' AS t FROM ${n.slug} LIMIT 10`,
    (n) => `SELECT id FROM ${n.slug} WHERE ${n.multi?.column ?? n.text} @> ARRAY['x'] LIMIT 10`,
    (n) => `SELECT ${n.num ?? 'id'} ^ 2 AS p FROM ${n.slug} LIMIT 10`,
  ],
  UNSUPPORTED_FUNCTION: ['array_length', 'cardinality', 'unnest', 'array_agg', 'string_agg', 'to_char', 'to_date', 'length', 'nullif', 'greatest', 'least', 'cast', 'sleep']
    .map((f): Template => (n) => `SELECT ${f}(${n.text}) AS v FROM ${n.slug} LIMIT 10`),
  UNSUPPORTED_SYSTEM_REFERENCE: [() => 'SELECT usename FROM pg_user LIMIT 10', (n) => `SELECT pg_sleep(1) AS s FROM ${n.slug} LIMIT 1`],
  QUERY_TOO_LONG: [(n) => ({ query: `SELECT id FROM ${n.slug} LIMIT 10`, options: { maxLength: 10 } })],
  NESTING_TOO_DEEP: [(n) => ({ query: `SELECT id FROM ${n.slug} WHERE ((((${n.text} = 'x')))) LIMIT 10`, options: { maxNesting: 2 } }), (n) => ({ query: `SELECT id FROM ${n.slug} WHERE ${n.num ?? 'id'} = ${Array(30).fill('1').join(' + ')} LIMIT 10`, options: { maxTreeDepth: 20 } })],
  TOO_MANY_SELECT_ITEMS: [(n) => ({ query: `SELECT id, ${n.text} FROM ${n.slug} LIMIT 10`, options: { maxSelectItems: 1 } })],
  COMPILE_BUDGET_EXCEEDED: [(n) => ({ query: `SELECT id FROM ${n.slug} WHERE ${n.text} = 'x' LIMIT 10`, options: { maxCompileMs: 0 } })],
  PATH_TOO_DEEP: [(n) => (n.toOne ? { query: `SELECT ${n.toOne.via}.${n.toOne.field} AS f FROM ${n.slug} LIMIT 10`, options: { maxPathDepth: 0 } } : null)],
  MISSING_LIMIT: [(n) => `SELECT id FROM ${n.slug}`],
  INVALID_LIMIT: [(n) => `SELECT id FROM ${n.slug} LIMIT 0`, (n) => `SELECT id FROM ${n.slug} ORDER BY id LIMIT 10 OFFSET 1.5`],
  LIMIT_TOO_LARGE: [(n) => `SELECT id FROM ${n.slug} LIMIT 50000`],
  NUMBER_OUT_OF_RANGE: [(n) => `SELECT id FROM ${n.slug} WHERE ${n.num ?? 'id'} < 1e400 LIMIT 10`, (n) => `SELECT id FROM ${n.slug} ORDER BY id LIMIT 10 OFFSET 99999999999999999999`],
  MISSING_ALIAS: [(n) => `SELECT ${n.text}, COUNT(*) FROM ${n.slug} GROUP BY ${n.text} LIMIT 10`, (n) => `SELECT lower(${n.text}) FROM ${n.slug} LIMIT 10`],
  UNKNOWN_FUNCTION: [(n) => `SELECT frobnicate(${n.text}) AS v FROM ${n.slug} LIMIT 10`, (n) => (n.multi ? `SELECT id FROM ${n.slug} WHERE '${n.multi.option}' = ANY(${n.multi.column}) LIMIT 10` : null)],
  WRONG_ARGUMENT_COUNT: [(n) => `SELECT round(${n.num ?? 'id'}, 2, 3) AS r FROM ${n.slug} LIMIT 10`, (n) => `SELECT date_part('year') AS r FROM ${n.slug} LIMIT 10`],
  INVALID_ARGUMENT: [(n) => `SELECT date_part(year, NOW()) AS y FROM ${n.slug} LIMIT 1`, (n) => `SELECT date_trunc('fortnight', NOW()) AS y FROM ${n.slug} LIMIT 1`, (n) => `SELECT lower(DISTINCT ${n.text}) AS y FROM ${n.slug} LIMIT 1`, (n) => `SELECT left(${n.text}, -1) AS y FROM ${n.slug} LIMIT 1`],
  NESTED_AGGREGATE: [(n) => `SELECT SUM(COUNT(id)) AS s FROM ${n.slug} LIMIT 10`],
  AGGREGATE_NOT_ALLOWED: [(n) => `SELECT ${n.text} FROM ${n.slug} WHERE COUNT(id) > 5 GROUP BY ${n.text} LIMIT 10`, (n) => `SELECT COUNT(*) AS k FROM ${n.slug} GROUP BY COUNT(id) LIMIT 10`],
  UNSUPPORTED_DATE_KEYWORD: [(n) => `SELECT id FROM ${n.slug} WHERE ${n.date ?? 'id'} >= CURRENT_DATE LIMIT 10`, (n) => `SELECT id FROM ${n.slug} WHERE ${n.date ?? 'id'} < CURRENT_TIMESTAMP LIMIT 10`],
  DATE_STRING_COMPARISON: [(n) => (n.date ? `SELECT id FROM ${n.slug} WHERE ${n.date} < '2024-01-01' LIMIT 10` : null), (n) => (n.date ? `SELECT id FROM ${n.slug} WHERE ${n.date} = '2024-01-01' LIMIT 10` : null)],
  TO_TIMESTAMP_COMPARISON: [
    (n) => (n.date ? `SELECT id FROM ${n.slug} WHERE to_timestamp(${n.date} / 1000) > NOW() LIMIT 10` : null),
    (n) => `SELECT id FROM ${n.slug} WHERE to_timestamp(${n.num ?? 'id'}) > NOW() LIMIT 10`,
    (n) => `SELECT id FROM ${n.slug} WHERE to_timestamp(${n.num ?? 'id'} / 1000) BETWEEN NOW() AND NOW() LIMIT 10`,
  ],
  INVALID_SLUG: [(n) => ({ query: `SELECT id FROM ${n.other} LIMIT 10`, slug: n.slug }), (n) => ({ query: `SELECT id FROM ${n.slug}s LIMIT 10`, slug: n.slug })],
  UNKNOWN_OBJECT: [(n) => `SELECT id FROM ${n.slug} WHERE EXISTS (SELECT 1 FROM ${n.other}s x WHERE x.id = ${n.slug}.id) LIMIT 10`],
  UNKNOWN_COLUMN: [
    (n) => `SELECT ${n.text}x FROM ${n.slug} LIMIT 10`,
    (n) => `SELECT id FROM ${n.slug} WHERE ${n.text} = "x" LIMIT 10`,
    (n) => `SELECT ${n.text}, COUNT(id) AS k FROM ${n.slug} GROUP BY ${n.text} HAVING k > 5 LIMIT 10`,
    (n) => `SELECT id FROM ${n.slug} ORDER BY nonsense LIMIT 10`,
    (n) => `SELECT q.* FROM ${n.slug} LIMIT 10`,
  ],
  NOT_A_RELATION: [(n) => `SELECT ${n.text}.first AS f FROM ${n.slug} LIMIT 10`],
  VIRTUAL_NEEDS_FIELD: [(n) => (n.children?.[0] ? `SELECT id FROM ${n.slug} WHERE ${n.children[0].rel} IS NOT NULL LIMIT 10` : null)],
  VIRTUAL_IN_SUBQUERY: [(n) => (n.children?.[0] ? `SELECT id FROM ${n.slug} WHERE ${n.children[0].rel} IN (SELECT id FROM ${n.children[0].object} LIMIT 5) LIMIT 10` : null)],
  SUBQUERY_COLUMNS: [(n) => `SELECT id FROM ${n.slug} WHERE id IN (SELECT id, ${n.text} FROM ${n.slug} LIMIT 5) LIMIT 10`],
  AMBIGUOUS_NAME: [(n) => (n.namesake ? { query: `SELECT id FROM ${n.namesake.parent} WHERE EXISTS (SELECT 1 FROM ${n.namesake.child} x WHERE x.${n.namesake.parent} = ${n.namesake.parent}.id) LIMIT 10`, slug: n.namesake.parent } : null)],
  DUPLICATE_KEY: [(n) => `SELECT ${n.text}, id AS ${n.text} FROM ${n.slug} ORDER BY id LIMIT 10`],
  TYPE_MISMATCH: [
    (n) => `SELECT id FROM ${n.slug} WHERE ${n.text} LIMIT 10`,
    (n) => (n.date ? `SELECT id FROM ${n.slug} WHERE ${n.date} > now() - 86400000 LIMIT 10` : null),
    (n) => `SELECT ${n.text} + 1 AS v FROM ${n.slug} LIMIT 10`,
    (n) => `SELECT id FROM ${n.slug} WHERE ${n.text} = 5 LIMIT 10`,
    (n) => `SELECT if(${n.text}, 1, 0) AS v FROM ${n.slug} LIMIT 10`,
    (n) => `SELECT id FROM ${n.slug} WHERE ${n.text} && ARRAY['x'] LIMIT 10`,
    (n) => `SELECT ARRAY[1] AS v FROM ${n.slug} LIMIT 10`,
    (n) => (n.date ? `SELECT date_trunc('day', ${n.date}) AS v FROM ${n.slug} LIMIT 10` : null),
    (n) => (n.date ? `SELECT ${n.date} AT TIME ZONE 'UTC' AS v FROM ${n.slug} LIMIT 10` : null),
    (n) => `SELECT CASE WHEN id = 'x' THEN 1 ELSE 'y' END AS v FROM ${n.slug} LIMIT 10`,
    (n) => (n.bool ? `SELECT MAX(${n.bool}) AS v FROM ${n.slug} LIMIT 10` : null),
    (n) => `SELECT to_timestamp(${n.text}) AS v FROM ${n.slug} LIMIT 10`,
    (n) => `SELECT (${n.text})::date AS v FROM ${n.slug} LIMIT 10`,
  ],
  MULTISELECT_EQUALITY: [(n) => (n.multi ? `SELECT id FROM ${n.slug} WHERE ${n.multi.column} = '${n.multi.option}' LIMIT 10` : null)],
  UNKNOWN_OPTION: [(n) => (n.choice ? `SELECT id FROM ${n.slug} WHERE ${n.choice.column} = '${n.choice.option.toUpperCase()}' LIMIT 10` : null), (n) => (n.choice ? `SELECT id FROM ${n.slug} WHERE ${n.choice.column} = 'zzz' LIMIT 10` : null)],
  UNGROUPED_COLUMN: [(n) => `SELECT ${n.text}, id, COUNT(*) AS k FROM ${n.slug} GROUP BY ${n.text} LIMIT 10`],
  ORDER_NOT_SELECTED: [(n) => `SELECT DISTINCT ${n.text} FROM ${n.slug} ORDER BY id LIMIT 10`],
  INVALID_ORDINAL: [(n) => `SELECT ${n.text}, COUNT(*) AS k FROM ${n.slug} GROUP BY 3 LIMIT 10`],
  FANOUT_AGGREGATE: [
    (n) => (n.children?.[0] ? `SELECT ${n.text}, COUNT(*) AS k, COUNT(${n.children[0].rel}.id) AS c FROM ${n.slug} GROUP BY ${n.text} LIMIT 10` : null),
    (n) => (n.children && n.children.length > 1 ? `SELECT ${n.text}, COUNT(${n.children[0]!.rel}.id) AS a, COUNT(${n.children[1]!.rel}.id) AS b FROM ${n.slug} GROUP BY ${n.text} LIMIT 10` : null),
  ],
  FANOUT_CROSS_PRODUCT: [(n) => (n.children && n.children.length > 1 ? `SELECT ${n.text}, ${n.children[0]!.rel}.${n.children[0]!.text} AS a, ${n.children[1]!.rel}.${n.children[1]!.text} AS b FROM ${n.slug} ORDER BY id LIMIT 100` : null)],
  FANOUT_OR: [(n) => (n.children && n.children.length > 1 ? `SELECT COUNT(*) AS k FROM ${n.slug} WHERE ${n.children[0]!.rel}.${n.children[0]!.text} = 'x' OR ${n.children[1]!.rel}.${n.children[1]!.text} = 'y' LIMIT 10` : null)],
  FANOUT_EXACT_UNSUPPORTED: [(n) => (n.children?.[0] ? { query: `SELECT ${n.children[0].rel}.${n.children[0].text} AS s, COUNT(*) AS k FROM ${n.slug} GROUP BY 1 LIMIT 10`, options: { fanout: 'exact' } } : null)],
  RELATIVE_DAY_ONE_ZONE: [(n) => (n.date ? `SELECT id FROM ${n.slug} WHERE ${n.date} >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata'))*1000 ORDER BY id LIMIT 10` : null)],
  EPOCH_SECONDS: [(n) => (n.date ? `SELECT id FROM ${n.slug} WHERE ${n.date} >= 1704067200 ORDER BY id LIMIT 10` : null)],
  TO_TIMESTAMP_MILLISECONDS: [(n) => (n.date ? `SELECT to_timestamp(${n.date}) AS t FROM ${n.slug} ORDER BY id LIMIT 10` : null)],
  LIMIT_WITHOUT_ORDER: [(n) => `SELECT id, ${n.text} FROM ${n.slug} LIMIT 10`],
  RELATION_ID_COMPARISON: [(n) => (n.toOne ? `SELECT id FROM ${n.slug} WHERE ${n.toOne.via}.id = 'x1' ORDER BY id LIMIT 10` : null)],
};

/** Codes no query text raises: catalog loading, running, request bodies, the HTTP service, report files. */
const NOT_ABOUT_QUERIES = new Set<DiagnosticCode>([
  'DUPLICATE_ALIAS', 'INVALID_REPORT_FILE', 'CATALOG_INVALID', 'CATALOG_UNKNOWN_TYPE', 'CATALOG_DUPLICATE_SLUG', 'CATALOG_MISSING_OBJECT',
  'CATALOG_BAD_VIRTUAL', 'QUERY_TIMEOUT', 'TOO_MANY_REQUESTS', 'QUERY_FAILED', 'DATABASE_ERROR', 'INVALID_OPTIONS', 'VALIDATION_FAILED',
  'NOT_FOUND', 'INVALID_TOKEN', 'TOO_MANY_RECORDS', 'MISSING_DEPENDENCY', 'UNAUTHENTICATED', 'PERMISSION_DENIED', 'ROUTE_NOT_FOUND',
  'METHOD_NOT_ALLOWED', 'MALFORMED_JSON', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE', 'SCHEMA_MISMATCH', 'TOO_MANY_KEYS',
  // Raised while running, by the database or the service's limits, not by reading the text.
  'SERVICE_UNAVAILABLE', 'RESPONSE_TOO_LARGE', 'QUERY_TOO_COSTLY',
  // The change log's cursors and waiting readers.
  'INVALID_CURSOR', 'CURSOR_EXPIRED', 'TOO_MANY_WAITING', 'NOT_ACCEPTABLE',
  // Webhook endpoints.
  'INVALID_WEBHOOK_URL', 'TOO_MANY_WEBHOOKS',
]);

function cases(catalogName: string): { code: DiagnosticCode; c: Case }[] {
  const n = pickNames(CATALOGS[catalogName]!);
  const out: { code: DiagnosticCode; c: Case }[] = [];
  for (const [code, templates] of Object.entries(TEMPLATES) as [DiagnosticCode, Template[]][]) {
    for (const t of templates) {
      const made = t(n);
      if (made === null) continue;
      out.push({ code, c: typeof made === 'string' ? { query: made, slug: n.slug } : { slug: n.slug, ...made } });
    }
  }
  return out;
}

function words(s: string | undefined): string[] {
  return s ? (s.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []) : [];
}

function foreignIn(d: Diagnostic, query: string, foreign: ReadonlySet<string>): string[] {
  const fromQuery = new Set(words(query));
  const found: string[] = [];
  for (const [part, text] of [['hint', d.hint], ['fix', d.fix?.text], ['message', d.message]] as const) {
    for (const w of words(text)) if (foreign.has(w) && !PROSE.has(w) && !fromQuery.has(w)) found.push(`${part}: ${w}`);
  }
  return found;
}

describe('hints and fixes name only what the catalog in hand has', () => {
  const raisedOn = new Map<DiagnosticCode, Set<string>>();

  for (const name of Object.keys(CATALOGS)) {
    it(`every query-text code on the ${name} catalog`, () => {
      const catalog = CATALOGS[name]!;
      const foreign = foreignNames(name);
      const problems: string[] = [];
      for (const { code, c } of cases(name)) {
        const diagnostics = lint(c.query, { catalog, slug: c.slug!, ...c.options });
        if (!diagnostics.some((d) => d.code === code)) {
          problems.push(`${code} not raised by: ${c.query}\n   got ${diagnostics.map((d) => d.code).join(', ')}`);
          continue;
        }
        let set = raisedOn.get(code);
        if (!set) raisedOn.set(code, (set = new Set()));
        set.add(name);
        for (const d of diagnostics) {
          const bad = foreignIn(d, c.query, foreign);
          if (bad.length) problems.push(`${d.code} for ${c.query}\n   ${bad.join(', ')}\n   hint: ${d.hint}\n   fix: ${d.fix?.text}`);
        }
      }
      expect(problems).toEqual([]);
    });
  }

  it('every code about query text is raised on at least two of the catalogs', () => {
    const missing = (Object.keys(CODES) as DiagnosticCode[]).filter((c) => !NOT_ABOUT_QUERIES.has(c) && (raisedOn.get(c)?.size ?? 0) < 2);
    expect(missing).toEqual([]);
  });
});
