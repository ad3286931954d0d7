import type { Catalog } from '../../catalog/types.js';
import { compile, compileCount } from '../../compile.js';
import { codeFrame } from '../../diagnostics/frame.js';
import { lint } from '../../lint/lint.js';
import { count, execute } from '../../query/index.js';
import type { Queryable } from '../../demo/index.js';
import { loadFixtureCatalog } from '../../demo/index.js';
import { parseCommand } from '../args.js';
import { openEmbedded } from '../database.js';
import { reportFailure } from '../errors.js';
import { EXIT, UsageError, println, type CliIo } from '../io.js';
import { formatElapsed, formatParams, rowCount } from '../render.js';
import { DEFAULT_ORG } from '../schema.js';
import { formatSql } from '../sql-format.js';
import { formatTable } from '../table.js';

export const DEMO_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
} as const;

interface Report {
  readonly title: string;
  /** One line on what the compiler does for it. */
  readonly note: string;
  readonly slug: string;
  /** Rows, a count per query, or a query that does not compile. */
  readonly kind: 'rows' | 'count' | 'broken';
  readonly queries: readonly string[];
}

/** The reports of the demo, in the order they are shown. Exported for the tests. */
export const DEMO_REPORTS: readonly Report[] = [
  {
    title: "Biggest deals with their owner's manager",
    note: 'to-one chain: owner.manager.name becomes two LEFT JOINs on user, each carrying the tenant and soft-delete predicates',
    slug: 'opportunity',
    kind: 'rows',
    queries: [`SELECT name, amount, owner.name AS owner_name, owner.manager.name AS manager_name
FROM opportunity
WHERE owner.manager.name IS NOT NULL AND amount IS NOT NULL
ORDER BY amount DESC, name
LIMIT 5`],
  },
  {
    title: 'Accounts with an active contact, by industry',
    note: 'virtual relation: contacts.status filters accounts by a child field; as the result is a COUNT(DISTINCT id), it cannot depend on the fan-out, so the planner may test the children with a semi-join (EXISTS)',
    slug: 'account',
    kind: 'rows',
    queries: [`SELECT industry, COUNT(DISTINCT id) AS accounts
FROM account
WHERE contacts.status = 'active'
GROUP BY industry
ORDER BY accounts DESC, industry
LIMIT 10`],
  },
  {
    title: 'Pipeline created per day in India time, in lakh and crore',
    note: "epoch-ms datetimes bucketed by day in Asia/Kolkata; amounts converted in SQL (lakh = 1e5, crore = 1e7)",
    slug: 'opportunity',
    kind: 'rows',
    queries: [`SELECT date_trunc('day', to_timestamp(created_at/1000) AT TIME ZONE 'Asia/Kolkata') AS day_ist,
       COUNT(id) AS deals,
       ROUND(SUM(amount)/100000, 2) AS lakh,
       ROUND(SUM(amount)/10000000, 4) AS crore
FROM opportunity
WHERE created_at IS NOT NULL
GROUP BY 1
ORDER BY 1 DESC
LIMIT 7`],
  },
  {
    title: 'Deals sourced from the web or referrals, never cold calls',
    note: 'multiselect: && is array overlap (has any); NOT (x && ...) is has none',
    slug: 'opportunity',
    kind: 'rows',
    queries: [`SELECT name, stage, sources
FROM opportunity
WHERE sources && ARRAY['web', 'referral'] AND NOT (sources && ARRAY['cold_call'])
ORDER BY name
LIMIT 6`],
  },
  {
    title: 'How many open leads? (count respects LIMIT)',
    note: 'count() wraps the query as SELECT count(*) FROM (<query>) q, which stops at the LIMIT: a count equal to the LIMIT means "at least"',
    slug: 'lead',
    kind: 'count',
    queries: [
      "SELECT id FROM lead WHERE status IN ('new', 'working', 'nurturing') LIMIT 10",
      "SELECT id FROM lead WHERE status IN ('new', 'working', 'nurturing') LIMIT 1000",
    ],
  },
  {
    title: 'A broken query: every problem, where it is, and what to write instead',
    note: 'lint collects all diagnostics with stable codes, code frames and hints; nothing is run',
    slug: 'opportunity',
    kind: 'broken',
    queries: [`SELECT name, amout
FROM opportunity
WHERE stage = 'won'`],
  },
];

export async function demoCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { positionals } = parseCommand('demo', argv, DEMO_OPTIONS);
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`, 'demo');
  const catalog = loadFixtureCatalog('crm');
  const orgId = DEFAULT_ORG;

  const started = performance.now();
  const database = await openEmbedded({ catalog, isFixture: true, io });
  const loadTime = performance.now() - started;
  let failed = false;
  try {
    const total = [...database.rows.values()].reduce((n, rows) => n + rows.length, 0);
    const tenants = new Set([...database.rows.values()].flatMap((rows) => rows.map((r) => r[catalog.mapping.tenantColumn])));
    println(io.stdout,
      'oql demo: the object query language, compiled to PostgreSQL and run',
      '',
      `catalog   the example CRM: ${[...catalog.objects.keys()].join(', ')}`,
      `database  ${database.label}, ${total} generated rows for ${tenants.size} tenants (loaded in ${formatElapsed(loadTime)})`,
      `tenant    ${orgId}: every table reference is restricted to it, and soft-deleted rows are left out`);
    for (const [i, report] of DEMO_REPORTS.entries()) {
      println(io.stdout, '', `== ${i + 1}. ${report.title} ==`, report.note);
      try {
        await showReport(io, database.db, catalog, orgId, report);
      } catch (e) {
        failed = true;
        reportFailure(io, e);
      }
    }
  } finally {
    await database.close();
  }
  return failed ? EXIT.failed : EXIT.ok;
}

function indent(text: string): string {
  return text.split('\n').map((l) => (l.length > 0 ? `    ${l}` : l)).join('\n');
}

async function showReport(io: CliIo, db: Queryable, catalog: Catalog, orgId: string, report: Report): Promise<void> {
  const { slug } = report;
  for (const query of report.queries) {
    println(io.stdout, '', `  query (slug ${slug}):`, indent(query));
    switch (report.kind) {
      case 'broken': {
        const diagnostics = lint(query, { catalog, slug });
        println(io.stdout, '', `  diagnostics (${diagnostics.length}):`, ...diagnostics.map((d) => indent(codeFrame(query, d))));
        break;
      }
      case 'count': {
        showSql(io, compileCount(query, { catalog, slug, orgId }));
        const started = performance.now();
        const { count: n } = await count(db, { query, slug }, { catalog, orgId });
        const limit = Number(/LIMIT\s+(\d+)\s*$/i.exec(query)?.[1]);
        const meaning = n === limit ? `equals the LIMIT: at least ${n} rows match` : `below the LIMIT (${limit}): exactly ${n} rows match`;
        println(io.stdout, '', `  count: ${n}  (${meaning}; ${formatElapsed(performance.now() - started)})`);
        break;
      }
      case 'rows': {
        const compiled = compile(query, { catalog, slug, orgId });
        showSql(io, compiled);
        const started = performance.now();
        const { records } = await execute(db, { query, slug }, { catalog, orgId });
        const elapsed = performance.now() - started;
        const table = formatTable(compiled.columns.map((c) => c.key), records, undefined, compiled.columns.map((c) => c.type));
        println(io.stdout, '', '  rows:', indent(table), `    (${rowCount(records.length)}, ${formatElapsed(elapsed)})`);
        break;
      }
      default: {
        const never: never = report.kind;
        throw new TypeError(`unknown report kind ${String(never)}`);
      }
    }
  }
}

function showSql(io: CliIo, compiled: { readonly sql?: string | undefined; readonly params?: readonly unknown[]; readonly message?: string }): void {
  // The demo reads every object, so nothing is restricted.
  if (compiled.sql === undefined) throw new Error(compiled.message ?? 'restricted');
  println(io.stdout, '', '  sql:', indent(`${formatSql(compiled.sql)};\n${formatParams(compiled.params ?? [])}`));
}
