import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fromSlug } from '../../src/syntax/from-slug.js';
import { cli, lineColumn, tempTree } from './helpers.js';

/**
 * Every input `oql lint` (and `oql compile`, `oql run`) accepts, each without anything it does
 * not need: plain SQL without a slug comment, the request body one POSTs to /reports/execute, the
 * array of named entries. The slug comes from the file, else --slug, else the query's FROM.
 */

interface Problem {
  file: string;
  entry?: string;
  code: string;
  line: number;
  column: number;
}

async function lintJson(dir: string, ...args: string[]): Promise<{ code: number; problems: Problem[]; stderr: string }> {
  const r = await cli(['lint', ...args, '--format', 'json'], { cwd: dir });
  const problems = r.stdout.trim() === '' ? [] : (JSON.parse(r.stdout) as { results: Problem[] }).results;
  return { code: r.code, problems, stderr: r.stderr };
}

function at(text: string, needle: string): { line: number; column: number } {
  return lineColumn(text, text.indexOf(needle));
}

describe('the slug of a query that does not give one', () => {
  it('is the object its top-level FROM names, read past subqueries, quotes and other mistakes', () => {
    expect(fromSlug('SELECT id FROM opportunity LIMIT 1')).toBe('opportunity');
    expect(fromSlug('select (SELECT max(amount) FROM opportunity o WHERE o.account = a.id) AS top\nFROM Account a LIMIT 1')).toBe('account');
    expect(fromSlug('SELECT id FROM "Lead" LIMIT 1')).toBe('Lead');
    expect(fromSlug("SELECT amout, 'unterminated FROM lead")).toBeUndefined();
    expect(fromSlug('SELECT amout,, FROM user WHERE LIMIT')).toBe('user');
    expect(fromSlug('SELECT 1 AS one')).toBeUndefined();
    expect(fromSlug('-- FROM lead\nSELECT id FROM contact LIMIT 1')).toBe('contact');
  });
});

describe('oql lint on each accepted format', () => {
  const SQL = 'SELECT name, amout FROM opportunity LIMIT 10\n';
  const BODY = '{"query": "SELECT name,\\n  amout FROM opportunity LIMIT 10", "slug": "opportunity"}\n';
  const BODY_NO_SLUG = '{"query": "SELECT nme FROM account LIMIT 5"}\n';
  const ENTRIES = '[{"name": "by FROM", "query": "SELECT emial FROM lead LIMIT 5"}, {"name": "given", "slug": "contact", "query": "SELECT id FROM contact ORDER BY id LIMIT 5"}]\n';

  it('plain SQL without a slug comment is checked against the object of its FROM', async () => {
    const dir = tempTree({ 'q.sql': SQL, 'ok.sql': 'SELECT stage, COUNT(id) AS n FROM opportunity GROUP BY stage LIMIT 10\n' });
    const r = await lintJson(dir, 'q.sql', 'ok.sql');
    expect(r.code, r.stderr).toBe(1);
    expect(r.problems).toHaveLength(1);
    // 'amout' is unknown on opportunity: the query was bound to the object its FROM names.
    expect(r.problems[0]).toMatchObject({ code: 'UNKNOWN_COLUMN', ...at(SQL, 'amout') });
    expect((await cli(['lint', 'ok.sql'], { cwd: dir })).code).toBe(0);
  });

  it('--slug still wins over FROM, and a FROM that differs from it is the error the service gives', async () => {
    const dir = tempTree({ 'q.sql': 'SELECT id FROM lead LIMIT 3\n' });
    const r = await lintJson(dir, 'q.sql', '--slug', 'account');
    expect(r.code).toBe(1);
    expect(r.problems.map((p) => p.code)).toEqual(['INVALID_SLUG']);
  });

  it('the body one POSTs to /reports/execute, with positions inside its JSON string', async () => {
    const dir = tempTree({ 'body.json': BODY, 'noslug.json': BODY_NO_SLUG });
    const r = await lintJson(dir, 'body.json');
    expect(r.code, r.stderr).toBe(1);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toMatchObject({ code: 'UNKNOWN_COLUMN', ...at(BODY, 'amout') });
    expect(r.problems[0]!.entry).toBeUndefined();
    const n = await lintJson(dir, 'noslug.json');
    expect(n.problems.map((p) => [p.code, p.line, p.column])).toEqual([['UNKNOWN_COLUMN', ...Object.values(at(BODY_NO_SLUG, 'nme'))]]);
  });

  it('an array of named entries, each with its slug or its FROM', async () => {
    const dir = tempTree({ 'saved.json': ENTRIES });
    const r = await lintJson(dir, 'saved.json');
    expect(r.code, r.stderr).toBe(1);
    expect(r.problems.map((p) => [p.entry, p.code])).toEqual([['by FROM', 'UNKNOWN_COLUMN']]);
    expect(r.problems[0]).toMatchObject(at(ENTRIES, 'emial'));
  });

  it('--fix writes the fix inside the body\'s JSON string and leaves the rest of the file as it was', async () => {
    const dir = tempTree({ 'body.json': '{ "slug": "lead",\n  "query": "SELECT COUNT(id) FROM lead" }\n' });
    const r = await cli(['lint', 'body.json', '--fix'], { cwd: dir });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(readFileSync(join(dir, 'body.json'), 'utf8')).toBe('{ "slug": "lead",\n  "query": "SELECT COUNT(id) AS count_id FROM lead LIMIT 100" }\n');
  });

  it('names the accepted shapes when a file is none of them', async () => {
    const dir = tempTree({ 'n.json': '42\n', 'noq.json': '{"slug": "lead"}\n', 'nofrom.json': '{"query": "SELECT 1 AS one LIMIT 1"}\n' });
    const shapes = 'a JSON report file is the body of a report request, {"query": "SELECT ...", "slug": "opportunity"}, or an array of {"name", "slug", "query"} entries';
    const n = await cli(['lint', 'n.json'], { cwd: dir });
    expect(n.code).toBe(2);
    expect(n.stderr).toContain(shapes);
    const q = await cli(['lint', 'noq.json'], { cwd: dir });
    expect(q.stderr).toContain('the body: "query" is missing or not a string');
    const f = await cli(['lint', 'nofrom.json'], { cwd: dir });
    expect(f.stderr).toContain('the body: no "slug", and the query names no object after FROM (add one, or pass --slug)');
  });
});

describe('oql compile without --slug', () => {
  it('compiles exactly what it compiles with the slug of its FROM', async () => {
    const q = "SELECT name, owner.name AS owner FROM opportunity WHERE stage = 'won' LIMIT 5";
    const inferred = await cli(['compile', q, '--json']);
    const given = await cli(['compile', q, '--slug', 'opportunity', '--json']);
    expect(inferred.code, inferred.stderr).toBe(0);
    expect(inferred.stdout).toBe(given.stdout);
    expect(JSON.parse(inferred.stdout).sql).toContain('"public"."opportunity"');
  });
});
