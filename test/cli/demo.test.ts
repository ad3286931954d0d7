import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_REPORTS } from '../../src/cli/commands/demo.js';
import { cli, STACK_LINE, type CliRun, embeddedDemoOracle } from './helpers.js';

// The demo loads the believable demo data (fixtures/demo.ts), not the test data.
const oracle = await embeddedDemoOracle();
const TENANT = 'org_acme';

/** The lines of one demo section, by its number. */
function section(out: string, n: number): string[] {
  const lines = out.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`== ${n}. `));
  const end = lines.findIndex((l, i) => i > start && l.startsWith('== '));
  return lines.slice(start, end < 0 ? undefined : end);
}

describe('oql demo', () => {
  let run: CliRun;
  beforeAll(async () => {
    run = await cli(['demo']);
  });

  it('exits 0 and prints every section: title, query, SQL, rows or diagnostics', () => {
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(STACK_LINE);
    expect(DEMO_REPORTS.map((r) => r.kind)).toEqual(['rows', 'rows', 'rows', 'rows', 'count', 'broken']);
    for (const [i, report] of DEMO_REPORTS.entries()) {
      const lines = section(run.stdout, i + 1);
      expect(lines[0]).toBe(`== ${i + 1}. ${report.title} ==`);
      const text = lines.join('\n');
      for (const q of report.queries) expect(text).toContain(q.split('\n').map((l) => `    ${l}`).join('\n'));
      if (report.kind === 'broken') {
        expect(text).not.toContain('  sql:');
      } else {
        expect(text).toContain('  sql:');
        expect(text).toContain('    FROM "public".');
        expect(text).toContain("    -- $1 = 'org_acme'");
      }
      if (report.kind === 'rows') expect(text).toMatch(/^ {4}\(\d+ rows?, \d+(\.\d+)? m?s\)$/m);
    }
  });

  it('shows the features it names in the SQL', () => {
    expect(section(run.stdout, 1).filter((l) => l.startsWith('    LEFT JOIN "public"."user"'))).toHaveLength(2);
    // A fan-out join with COUNT(DISTINCT), or a semi-join: the planner picks; the rows are checked below.
    expect(section(run.stdout, 2).join('\n')).toMatch(/(LEFT JOIN|EXISTS \(\n\s+SELECT [^\n]+\n\s+FROM) "public"\."contact"/);
    expect(section(run.stdout, 3).join('\n')).toContain("-- $4 = 'Asia/Kolkata'");
    expect(section(run.stdout, 4).join('\n')).toContain("-- $2 = ARRAY['web', 'referral']");
    expect(section(run.stdout, 5).join('\n')).toContain('SELECT count(*) AS "count"');
  });

  it('the virtual-relation report matches the fixture data', () => {
    const counts = new Map<string, number>();
    for (const a of oracle.live('account', TENANT)) {
      if (!oracle.children(a, 'contact', 'account', TENANT).some((c) => c['status'] === 'active')) continue;
      const key = (a['industry'] as string | null) ?? 'NULL';
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const lines = section(run.stdout, 2);
    const header = lines.findIndex((l) => /^ {4}industry +\| accounts$/.test(l));
    const rows = lines.slice(header + 2, header + 2 + counts.size).map((l) => l.trim().split(/\s*\|\s*/));
    expect(new Map(rows.map(([k, v]) => [k!, Number(v)]))).toEqual(counts);
    // ORDER BY accounts DESC
    const values = rows.map(([, v]) => Number(v));
    expect(values).toEqual(values.slice().sort((a, b) => b - a));
  });

  it('the to-one chain report matches the fixture data', () => {
    const expected = oracle.live('opportunity', TENANT)
      .map((o) => {
        const owner = oracle.follow(o, 'owner', 'user', TENANT);
        const manager = oracle.follow(owner, 'manager', 'user', TENANT);
        return { name: o['name'] as string, amount: o['amount'] as number | null, owner: owner?.['name'], manager: manager?.['name'] };
      })
      .filter((o) => o.manager != null && o.amount !== null)
      .sort((a, b) => b.amount! - a.amount! || (a.name < b.name ? -1 : 1))
      .slice(0, 5);
    const lines = section(run.stdout, 1);
    const header = lines.findIndex((l) => l.trim().startsWith('name '));
    const rows = lines.slice(header + 2, header + 7).map((l) => l.trim().split(/\s*\|\s*/));
    expect(rows).toEqual(expected.map((e) => [e.name, String(e.amount), e.owner, e.manager]));
  });

  it('count respects LIMIT: capped at 10, then exact', () => {
    const open = oracle.live('lead', TENANT).filter((l) => ['new', 'working', 'nurturing'].includes(l['status'] as string)).length;
    expect(open).toBeGreaterThan(10);
    const text = section(run.stdout, 5).join('\n');
    expect(text).toMatch(/count: 10 {2}\(equals the LIMIT: at least 10 rows match; /);
    expect(text).toContain(`count: ${open}  (below the LIMIT (1000): exactly ${open} rows match; `);
  });

  it('the broken query shows each diagnostic with its code frame and hint', () => {
    const text = section(run.stdout, 6).join('\n');
    expect(text).toContain('diagnostics (2):');
    expect(text).toContain([
      "    error UNKNOWN_COLUMN: unknown column 'amout' on object 'opportunity' (1:14)",
      '      1 | SELECT name, amout',
      '        |              ^^^^^',
      "      hint: did you mean 'amount'?",
    ].join('\n'));
    expect(text).toContain('    error MISSING_LIMIT: ');
    expect(text).toContain('hint: add LIMIT 100');
  });
});
