import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnosticsMarkdown } from '../../src/lint/docs.js';
import { cli, STACK_LINE, tempTree } from './helpers.js';

/**
 * `oql lint --fix` / `--fix-dry-run` on .sql, .oql and JSON report files, and the ESLint-style
 * conventions: stdin, config discovery, --max-warnings, --quiet, --rule, file-level problems in
 * every format, SARIF metadata, `oql explain`, and JSON errors of `compile --json`.
 */

const SQL = [
  '-- slug: opportunity',
  '-- Won deals this year, by owner (keep this comment)',
  "SELECT owner,  SUM(amount)",
  '  FROM opportunity',
  "  WHERE stage = 'Won' AND close_date >= '2024-01-01'",
  '  GROUP BY owner',
  '',
].join('\n');
const SQL_FIXED = [
  '-- slug: opportunity',
  '-- Won deals this year, by owner (keep this comment)',
  "SELECT owner,  SUM(amount) AS sum_amount",
  '  FROM opportunity',
  "  WHERE stage = 'won' AND close_date >= 1704067200000",
  '  GROUP BY owner LIMIT 100',
  '',
].join('\n');

const OQL = "/* slug: opportunity */\r\nSELECT id FROM opportunity\r\nWHERE owner.id = 'usr_1' AND created_at >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata'))*1000\r\nORDER BY id LIMIT 20\r\n";
const OQL_FIXED = "/* slug: opportunity */\r\nSELECT id FROM opportunity\r\nWHERE owner.id = 'usr_1' AND created_at >= date_part('epoch', date_trunc('day', NOW() AT TIME ZONE 'Asia/Kolkata') AT TIME ZONE 'Asia/Kolkata')*1000\r\nORDER BY id LIMIT 20\r\n";

// Hand-written JSON: odd spacing, escapes and a key order a re-serialiser would change.
const JSON_REPORT = `[
  {"slug": "account",   "name": "retail \\u0041ccounts",
   "query": "SELECT id FROM account WHERE industry = \\u0027Retail\\u0027 ORDER BY id"},
  { "name": "fine", "slug": "lead", "query": "SELECT status, COUNT(*) AS n FROM lead GROUP BY status LIMIT 5" },
  { "name": "created", "slug": "lead", "query": "SELECT id FROM lead WHERE created_at = '2024-02-29'\\nORDER BY id LIMIT 5" }
]
`;
const JSON_FIXED = `[
  {"slug": "account",   "name": "retail \\u0041ccounts",
   "query": "SELECT id FROM account WHERE industry = 'retail' ORDER BY id LIMIT 100"},
  { "name": "fine", "slug": "lead", "query": "SELECT status, COUNT(*) AS n FROM lead GROUP BY status LIMIT 5" },
  { "name": "created", "slug": "lead", "query": "SELECT id FROM lead WHERE (created_at >= ${Date.UTC(2024, 1, 29)} AND created_at < ${Date.UTC(2024, 2, 1)})\\nORDER BY id LIMIT 5" }
]
`;

function tree(extra: Record<string, string> = {}): string {
  return tempTree({ 'reports/won.sql': SQL, 'reports/today.oql': OQL, 'reports/saved.json': JSON_REPORT, ...extra });
}

const read = (dir: string, path: string): string => readFileSync(join(dir, path), 'utf8');

describe('oql lint --fix', () => {
  it('applies the safe fixes, keeps everything else byte for byte, and the files then lint clean of errors', async () => {
    const dir = tree();
    const r = await cli(['lint', '--fix', 'reports'], { cwd: dir });
    expect(r.stderr).toBe('');
    expect(read(dir, 'reports/won.sql')).toBe(SQL_FIXED);
    expect(read(dir, 'reports/today.oql')).toBe(OQL_FIXED);
    expect(read(dir, 'reports/saved.json')).toBe(JSON_FIXED);
    expect(JSON.parse(read(dir, 'reports/saved.json'))[0].query).toBe("SELECT id FROM account WHERE industry = 'retail' ORDER BY id LIMIT 100");
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/\berror\b/);
  });

  it('is idempotent: a second run changes nothing', async () => {
    const dir = tree();
    await cli(['lint', '--fix', 'reports'], { cwd: dir });
    const first = ['reports/won.sql', 'reports/today.oql', 'reports/saved.json'].map((p) => read(dir, p));
    await cli(['lint', '--fix', 'reports'], { cwd: dir });
    expect(['reports/won.sql', 'reports/today.oql', 'reports/saved.json'].map((p) => read(dir, p))).toEqual(first);
  });

  it('leaves unsafe fixes (fan-out rewrites) to a person', async () => {
    const q = '-- slug: account\nSELECT name, COUNT(contacts.id) AS c, SUM(opportunities.amount) AS s FROM account GROUP BY name LIMIT 10\n';
    const dir = tempTree({ 'fan.sql': q });
    const r = await cli(['lint', '--fix', 'fan.sql'], { cwd: dir });
    expect(read(dir, 'fan.sql')).toBe(q);
    expect(r.stdout).toContain('FANOUT_AGGREGATE');
  });
});

describe('oql lint --fix-dry-run', () => {
  it('prints a unified diff and writes nothing', async () => {
    const dir = tree();
    const r = await cli(['lint', '--fix-dry-run', 'reports/won.sql'], { cwd: dir });
    expect(read(dir, 'reports/won.sql')).toBe(SQL);
    expect(r.stdout).toBe([
      '--- a/reports/won.sql',
      '+++ b/reports/won.sql',
      '@@ -1,6 +1,6 @@',
      ' -- slug: opportunity',
      ' -- Won deals this year, by owner (keep this comment)',
      '-SELECT owner,  SUM(amount)',
      '+SELECT owner,  SUM(amount) AS sum_amount',
      '   FROM opportunity',
      "-  WHERE stage = 'Won' AND close_date >= '2024-01-01'",
      '-  GROUP BY owner',
      "+  WHERE stage = 'won' AND close_date >= 1704067200000",
      '+  GROUP BY owner LIMIT 100',
      '',
    ].join('\n'));
  });

  it('prints nothing for a file without safe fixes, and excludes --fix', async () => {
    const dir = tempTree({ 'ok.sql': '-- slug: lead\nSELECT id FROM lead ORDER BY id LIMIT 5\n' });
    expect((await cli(['lint', '--fix-dry-run', 'ok.sql'], { cwd: dir })).stdout).toBe('');
    const both = await cli(['lint', '--fix', '--fix-dry-run', 'ok.sql'], { cwd: dir });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--fix and --fix-dry-run exclude each other');
  });
});

describe('ESLint-style flags', () => {
  const WARN2 = "-- slug: opportunity\nSELECT id FROM opportunity WHERE stage = 'wonn' LIMIT 5\n";

  it('--max-warnings fails the run above the limit; --quiet shows errors only', async () => {
    const dir = tempTree({ 'w.sql': WARN2 });
    expect((await cli(['lint', 'w.sql', '--max-warnings', '2'], { cwd: dir })).code).toBe(0);
    const over = await cli(['lint', 'w.sql', '--max-warnings', '1'], { cwd: dir });
    expect(over.code).toBe(1);
    expect(over.stderr).toContain('2 warnings, more than --max-warnings 1');
    const quiet = await cli(['lint', 'w.sql', '--quiet'], { cwd: dir });
    expect(quiet.stdout).not.toContain('UNKNOWN_OPTION');
    expect((await cli(['lint', 'w.sql', '--max-warnings', 'x'], { cwd: dir })).code).toBe(2);
  });

  it('--rule sets a level: off drops it, error fails the run', async () => {
    const dir = tempTree({ 'w.sql': WARN2 });
    const off = await cli(['lint', 'w.sql', '--rule', 'LIMIT_WITHOUT_ORDER:off', '--format', 'json'], { cwd: dir });
    expect(JSON.parse(off.stdout).results.map((x: { code: string }) => x.code)).toEqual(['UNKNOWN_OPTION']);
    const err = await cli(['lint', 'w.sql', '--rule', 'UNKNOWN_OPTION:error'], { cwd: dir });
    expect(err.code).toBe(1);
    const bad = await cli(['lint', 'w.sql', '--rule', 'NOPE:off'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown diagnostic code 'NOPE'");
  });

  it('--stdin with --stdin-filename lints standard input, JSON by the name', async () => {
    const dir = tempTree({});
    const r = await cli(['lint', '--stdin', '--stdin-filename', 'reports/x.sql', '--slug', 'opportunity', '--format', 'json'], { cwd: dir, stdin: 'SELECT amout FROM opportunity LIMIT 5' });
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.results[0]).toMatchObject({ file: 'reports/x.sql', code: 'UNKNOWN_COLUMN', line: 1, column: 8 });
    const json = await cli(['lint', '--stdin', '--stdin-filename', 'saved.json'], { cwd: dir, stdin: '[{"name": "a", "slug": "lead", "query": "SELECT id FROM lead ORDER BY id LIMIT 3"}]' });
    expect(json.code).toBe(0);
    expect(json.stdout).toContain('(1 query in 1 file)');
  });

  it('--fix with --stdin prints the fixed text', async () => {
    const r = await cli(['lint', '--stdin', '--fix', '--slug', 'lead'], { cwd: tempTree({}), stdin: 'SELECT COUNT(*) FROM lead' });
    expect(r.stdout).toBe('SELECT COUNT(*) AS count FROM lead LIMIT 100');
  });
});

describe('config file discovery', () => {
  it('oql.config.json found by walking up: rules, timeZone and slug', async () => {
    const dir = tempTree({
      'oql.config.json': JSON.stringify({ timeZone: 'Asia/Kolkata', slug: 'opportunity', rules: { LIMIT_WITHOUT_ORDER: 'off' } }),
      'team/reports/q.sql': "SELECT id FROM opportunity WHERE created_at < '2024-01-01' LIMIT 5\n",
    });
    const r = await cli(['lint', '--fix', 'q.sql'], { cwd: join(dir, 'team/reports') });
    // Midnight in Kolkata is 18:30 UTC the day before.
    expect(read(dir, 'team/reports/q.sql')).toBe(`SELECT id FROM opportunity WHERE created_at < ${Date.UTC(2023, 11, 31, 18, 30)} LIMIT 5\n`);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('0 errors, 0 warnings (1 query in 1 file)\n');
  });

  it('package.json#oql, and flags win over it', async () => {
    const dir = tempTree({
      'package.json': JSON.stringify({ name: 'reports', oql: { slug: 'lead', rules: { UNKNOWN_OPTION: 'error' } } }),
      'q.sql': "SELECT id FROM lead WHERE status = 'New' ORDER BY id LIMIT 5\n",
    });
    expect((await cli(['lint', 'q.sql'], { cwd: dir })).code).toBe(1);
    expect((await cli(['lint', 'q.sql', '--rule', 'UNKNOWN_OPTION:warn'], { cwd: dir })).code).toBe(0);
  });

  it('a broken config is a usage error that names the file', async () => {
    const dir = tempTree({ 'oql.config.json': '{"rules": {"X": "on"}}', 'q.sql': '-- slug: lead\nSELECT id FROM lead LIMIT 1\n' });
    const r = await cli(['lint', 'q.sql'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('oql.config.json');
    expect(r.stderr).not.toMatch(STACK_LINE);
  });
});

describe('file-level problems in every format', () => {
  const files = { 'bad.json': '[{"name": "x", "slug": "lead", "query": 1}', 'noslug.sql': 'SELECT 1 AS one LIMIT 1\n' };

  it('json and sarif carry INVALID_REPORT_FILE results', async () => {
    const dir = tempTree(files);
    const json = await cli(['lint', 'bad.json', 'noslug.sql', '--format', 'json'], { cwd: dir });
    expect(json.code).toBe(2);
    const results = JSON.parse(json.stdout).results as { file: string; code: string }[];
    expect(results.map((x) => [x.file, x.code])).toEqual([['bad.json', 'INVALID_REPORT_FILE'], ['noslug.sql', 'INVALID_REPORT_FILE']]);
    const sarif = JSON.parse((await cli(['lint', 'bad.json', '--format', 'sarif'], { cwd: dir })).stdout);
    expect(sarif.runs[0].results[0].ruleId).toBe('INVALID_REPORT_FILE');
    expect(sarif.runs[0].results[0].message.text).toContain('not valid JSON');
  });
});

describe('SARIF metadata', () => {
  it('rules have fullDescription and help (the page, not a link); an invocation; relative URIs with a base', async () => {
    const dir = tempTree({ 'r/q.sql': "-- slug: opportunity\nSELECT id FROM opportunity WHERE stage = 'wonn' LIMIT 5\n" });
    const r = await cli(['lint', 'r', '--format', 'sarif'], { cwd: dir });
    const run = JSON.parse(r.stdout).runs[0];
    const rule = run.tool.driver.rules.find((x: { id: string }) => x.id === 'UNKNOWN_OPTION');
    expect(rule.fullDescription.text).toContain("Right: SELECT id FROM account WHERE industry = 'retail'");
    expect(rule.help.text).toBe(rule.fullDescription.text);
    expect(JSON.stringify(run)).not.toMatch(/https?:\/\/(?!json\.schemastore)/);
    expect(run.invocations).toEqual([expect.objectContaining({ executionSuccessful: true, arguments: ['lint', 'r', '--format', 'sarif'] })]);
    const loc = run.results[0].locations[0].physicalLocation.artifactLocation;
    expect(loc).toEqual({ uri: 'r/q.sql', uriBaseId: '%SRCROOT%' });
    expect(run.originalUriBaseIds['%SRCROOT%'].uri).toMatch(/^file:\/\/\/.*\/$/);
  });
});

describe('oql explain', () => {
  it('prints the page of a code, case-insensitively, with wrong and right examples', async () => {
    const r = await cli(['explain', 'fanout_aggregate']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^FANOUT_AGGREGATE \(status 400\)\n/);
    expect(r.stdout).toContain('Wrong (slug account):');
    expect(r.stdout).toContain('Right:');
    // It points at the pages it has, not at a web page that does not exist.
    expect(r.stdout).not.toMatch(/https?:/);
    expect(r.stdout).toContain('oql explain --markdown (docs/diagnostics.md in the repository)');
  });
  it('suggests the code meant', async () => {
    const r = await cli(['explain', 'FANOUT_AGGREGAT']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("did you mean 'FANOUT_AGGREGATE'?");
  });
  it('--markdown is docs/diagnostics.md', async () => {
    const r = await cli(['explain', '--markdown']);
    expect(r.stdout).toBe(diagnosticsMarkdown());
    expect(r.stdout).toBe(readFileSync(new URL('../../docs/diagnostics.md', import.meta.url), 'utf8'));
  });
});

describe('oql compile with stdin and --json errors', () => {
  it('compile - reads the query from standard input', async () => {
    const r = await cli(['compile', '-', '--slug', 'lead', '--json'], { stdin: 'SELECT id FROM lead ORDER BY id LIMIT 3' });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).sql).toContain('LIMIT');
  });
  it('run --json: an invalid query is a JSON error object on stdout, nothing is started', async () => {
    const r = await cli(['run', "SELECT id FROM lead WHERE created_at < '2024-01-01' LIMIT 3", '--slug', 'lead', '--json']);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.error).toMatchObject({ code: 'DATE_STRING_COMPARISON', status: 400 });
    expect(out.error.diagnostics[0].fix).toEqual({ range: [39, 51], text: String(Date.UTC(2024, 0, 1)) });
  });
  it('an invalid query with --json prints a JSON error object on stdout', async () => {
    const r = await cli(['compile', 'SELECT amout FROM lead LIMIT 3', '--slug', 'lead', '--json']);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.error).toMatchObject({ code: 'UNKNOWN_COLUMN', status: 400 });
    expect(out.error.diagnostics[0].hint).toBeDefined();
  });
});

