import { describe, expect, it } from 'vitest';
import { CODES } from '../../src/index.js';
import pkg from '../../package.json' with { type: 'json' };
import { cli, lineColumn, STACK_LINE, tempTree } from './helpers.js';

const CLEAN = '-- slug: opportunity\n-- Deals by stage\nSELECT stage, COUNT(id) AS deals FROM opportunity GROUP BY stage LIMIT 100\n';
const WARN = "/* slug: opportunity */\nSELECT id FROM opportunity WHERE stage = 'wonn' ORDER BY id LIMIT 5\n";
const BROKEN = '-- slug: opportunity\nSELECT name,\n       amout\nFROM opportunity\nLIMIT 10\n';
// Written by hand so the escapes before the typo are exactly these: \n and \u0027 shift offsets.
const SAVED = `[
  {
    "name": "open leads",
    "slug": "lead",
    "query": "SELECT id FROM lead ORDER BY id LIMIT 10"
  },
  {
    "name": "typo after escapes",
    "slug": "opportunity",
    "query": "SELECT name,\\n  \\u0027x\\u0027 AS tag, amout\\nFROM opportunity LIMIT 5"
  },
  { "name": "uses --slug", "query": "SELECT nme FROM account LIMIT 1" }
]
`;

function tree(): string {
  return tempTree({
    'reports/clean.sql': CLEAN,
    'reports/warn.oql': WARN,
    'reports/nested/broken.sql': BROKEN,
    'reports/notes.txt': 'not a report',
    'reports/.hidden/ignored.sql': 'SELECT nothing',
    'saved.json': SAVED,
  });
}

function at(text: string, needle: string, nth = 0): { line: number; column: number } {
  let i = -1;
  for (let k = 0; k <= nth; k++) i = text.indexOf(needle, i + 1);
  return lineColumn(text, i);
}

describe('oql lint exit codes', () => {
  it('0 when clean, warnings allowed', async () => {
    const dir = tree();
    const r = await cli(['lint', 'reports/clean.sql', 'reports/warn.oql'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('reports/warn.oql:2:42  warning  UNKNOWN_OPTION');
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('0 errors, 1 warning (2 queries in 2 files)');
  });

  it('1 when any file has an error; directories are walked for .sql, .oql and .json', async () => {
    const dir = tree();
    const r = await cli(['lint', 'reports'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('1 error, 1 warning (3 queries in 3 files)');
    expect(r.stdout).not.toContain('ignored.sql');
    expect(r.stderr).toBe('');
  });

  it('2 for usage errors: missing file, unknown format, no paths, unknown flag, not a report file', async () => {
    const dir = tree();
    const cases: [string[], string][] = [
      [['lint', 'nope.sql'], "no such file or directory: 'nope.sql'"],
      [['lint', 'reports', '--format', 'xml'], "unknown --format 'xml': use stylish, json, sarif"],
      [['lint'], 'no files to lint'],
      [['lint', 'reports', '--fromat', 'json'], "unknown option '--fromat': did you mean '--format'?"],
      [['lint', 'reports/notes.txt'], "'reports/notes.txt' is not a report file (.sql, .oql or .json)"],
    ];
    for (const [argv, message] of cases) {
      const r = await cli(argv, { cwd: dir });
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stderr).not.toMatch(STACK_LINE);
    }
  });

  it('2 when a file names no slug, no FROM and --slug is not given; --slug supplies it', async () => {
    const dir = tempTree({ 'q.sql': 'SELECT 1 AS one LIMIT 3\n' });
    const r = await cli(['lint', 'q.sql'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("q.sql: no slug: the query names no object after FROM; start the file with a comment such as '-- slug: opportunity', or pass --slug");
  });

  it('the header slug wins over --slug', async () => {
    const dir = tempTree({ 'q.sql': '-- Leads\n-- slug: lead\nSELECT id FROM lead LIMIT 3\n' });
    expect((await cli(['lint', 'q.sql', '--slug', 'account'], { cwd: dir })).code).toBe(0);
  });
});

describe('oql lint stylish', () => {
  it('groups by file: file:line:col, severity, code, message, code frame, hint, summary', async () => {
    const dir = tree();
    const r = await cli(['lint', 'reports/nested/broken.sql'], { cwd: dir });
    expect(r.code).toBe(1);
    const { line, column } = at(BROKEN, 'amout');
    expect([line, column]).toEqual([3, 8]);
    expect(r.stdout).toBe([
      'reports/nested/broken.sql',
      "  reports/nested/broken.sql:3:8  error  UNKNOWN_COLUMN  unknown column 'amout' on object 'opportunity'",
      '    3 |        amout',
      '      |        ^^^^^',
      "    hint: did you mean 'amount'?",
      '',
      '1 error, 0 warnings (1 query in 1 file)',
      '',
    ].join('\n'));
  });

  it('colours only on a terminal', async () => {
    const dir = tree();
    expect((await cli(['lint', 'reports'], { cwd: dir })).stdout).not.toContain('\u001b[');
    expect((await cli(['lint', 'reports'], { cwd: dir, tty: true })).stdout).toContain('\u001b[31m');
  });
});

describe('JSON report files', () => {
  it('maps spans inside the query string to the file, through escapes', async () => {
    const dir = tree();
    const r = await cli(['lint', 'saved.json', '--slug', 'account', '--format', 'json'], { cwd: dir });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout);
    expect(report.errorCount).toBe(2);
    const [typo, nme] = report.results;
    const amout = at(SAVED, 'amout');
    expect(typo).toMatchObject({ file: 'saved.json', entry: 'typo after escapes', code: 'UNKNOWN_COLUMN', line: amout.line, column: amout.column, endLine: amout.line, endColumn: amout.column + 5 });
    const n = at(SAVED, 'nme');
    expect(nme).toMatchObject({ entry: 'uses --slug', code: 'UNKNOWN_COLUMN', line: n.line, column: n.column, endColumn: n.column + 3 });
  });

  it('stylish shows the JSON line with the caret under the name', async () => {
    const dir = tree();
    const r = await cli(['lint', 'saved.json', '--slug', 'account'], { cwd: dir });
    const { line, column } = at(SAVED, 'amout');
    const lines = r.stdout.split('\n');
    const head = lines.findIndex((l) => l.startsWith(`  saved.json:${line}:${column}  error  UNKNOWN_COLUMN`));
    expect(head).toBeGreaterThan(0);
    expect(lines[head]).toContain('[typo after escapes]');
    const jsonLine = SAVED.split('\n')[line - 1]!;
    expect(lines[head + 1]).toBe(`    ${line} | ${jsonLine}`);
    expect(lines[head + 2]).toBe(`    ${' '.repeat(String(line).length)} | ${' '.repeat(column - 1)}^^^^^`);
  });

  it('an entry without slug or FROM, a bad entry, and a file that is neither a body nor an array are exit 2', async () => {
    const dir = tempTree({
      'a.json': SAVED.replace('"query": "SELECT nme FROM account LIMIT 1"', '"query": "SELECT 1 AS nme LIMIT 1"'),
      'b.json': '[{"name": "x", "slug": "lead"}]',
      'c.json': '"SELECT id FROM lead LIMIT 1"',
      'd.json': '[{"name": "x", "slug": "lead", "query": "SELECT id FROM lead LIMIT 1"',
    });
    const r = await cli(['lint', '.'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('a.json: entry uses --slug: no "slug", and the query names no object after FROM (add one, or pass --slug)');
    expect(r.stderr).toContain('b.json: entry x: "query" is missing or not a string');
    expect(r.stderr).toContain('c.json: a JSON report file is the body of a report request, {"query": "SELECT ...", "slug": "opportunity"}, or an array of {"name", "slug", "query"} entries');
    expect(r.stderr).toMatch(/d\.json: not valid JSON/);
    // The readable entries are still linted.
    expect(r.stdout).toContain('UNKNOWN_COLUMN');
  });
});

describe('oql lint --format json and sarif', () => {
  it('json: counts and one result per diagnostic', async () => {
    const dir = tree();
    const r = await cli(['lint', 'reports', '--format', 'json'], { cwd: dir });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ errorCount: 1, warningCount: 1, fileCount: 3, queryCount: 3 });
    expect(report.results).toEqual([
      expect.objectContaining({ file: 'reports/nested/broken.sql', code: 'UNKNOWN_COLUMN', severity: 'error', line: 3, column: 8, endLine: 3, endColumn: 13, hint: "did you mean 'amount'?" }),
      expect.objectContaining({ file: 'reports/warn.oql', code: 'UNKNOWN_OPTION', severity: 'warning', line: 2, column: 42 }),
    ]);
  });

  it('sarif: SARIF 2.1.0 with rules from CODES and file-relative regions', async () => {
    const dir = tree();
    const r = await cli(['lint', 'reports', 'saved.json', '--slug', 'account', '--format', 'sarif'], { cwd: dir });
    expect(r.code).toBe(1);
    const log = JSON.parse(r.stdout);
    expect(log.$schema).toMatch(/sarif-2\.1\.0/);
    expect(log.version).toBe('2.1.0');
    expect(log.runs).toHaveLength(1);
    const { driver } = log.runs[0].tool;
    expect(driver.name).toBe('oql');
    expect(driver.version).toBe(pkg.version);
    expect(driver.rules).toEqual([
      expect.objectContaining({ id: 'UNKNOWN_COLUMN', shortDescription: { text: CODES.UNKNOWN_COLUMN }, help: { text: expect.stringContaining(CODES.UNKNOWN_COLUMN) } }),
      expect.objectContaining({ id: 'UNKNOWN_OPTION', shortDescription: { text: CODES.UNKNOWN_OPTION }, fullDescription: { text: expect.stringContaining(CODES.UNKNOWN_OPTION) } }),
    ]);
    const results = log.runs[0].results;
    expect(results).toHaveLength(4);
    for (const res of results) {
      expect(driver.rules[res.ruleIndex].id).toBe(res.ruleId);
      expect(['error', 'warning']).toContain(res.level);
      expect(typeof res.message.text).toBe('string');
      const loc = res.locations[0].physicalLocation;
      expect(loc.artifactLocation.uri).not.toMatch(/^\//);
      expect(Object.keys(loc.region).sort()).toEqual(['endColumn', 'endLine', 'startColumn', 'startLine']);
    }
    const broken = results.find((x: { locations: { physicalLocation: { artifactLocation: { uri: string } } }[] }) => x.locations[0].physicalLocation.artifactLocation.uri === 'reports/nested/broken.sql');
    expect(broken).toMatchObject({
      ruleId: 'UNKNOWN_COLUMN',
      level: 'error',
      message: { text: "unknown column 'amout' on object 'opportunity'\nhint: did you mean 'amount'?" },
      locations: [{ physicalLocation: { region: { startLine: 3, startColumn: 8, endLine: 3, endColumn: 13 } } }],
    });
    const amout = at(SAVED, 'amout');
    const inJson = results.filter((x: { locations: { physicalLocation: { artifactLocation: { uri: string } } }[] }) => x.locations[0].physicalLocation.artifactLocation.uri === 'saved.json');
    expect(inJson[0].locations[0].physicalLocation.region).toEqual({ startLine: amout.line, startColumn: amout.column, endLine: amout.line, endColumn: amout.column + 5 });
    expect(results.find((x: { level: string }) => x.level === 'warning').ruleId).toBe('UNKNOWN_OPTION');
  });

  it('sarif of a clean run has no rules and no results', async () => {
    const dir = tree();
    const r = await cli(['lint', 'reports/clean.sql', '--format', 'sarif'], { cwd: dir });
    expect(r.code).toBe(0);
    const log = JSON.parse(r.stdout);
    expect(log.runs[0].tool.driver.rules).toEqual([]);
    expect(log.runs[0].results).toEqual([]);
  });
});
