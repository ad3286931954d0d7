import { describe, expect, it } from 'vitest';
import { cli, STACK_LINE, embeddedDemoOracle } from './helpers.js';

// oql run loads the example CRM with its demo data: the oracle reads the same rows.
const oracle = await embeddedDemoOracle();
const STAGES = ['won', 'negotiation'];

function byId(a: { id: unknown }, b: { id: unknown }): number {
  return String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0;
}

// Each test opens the embedded database and loads the example's data: a minute or more on a busy 2-core machine.
describe('oql run on the embedded example CRM', { timeout: 180_000 }, () => {
  it('--json: aggregates match the demo data of the default tenant (org_acme)', async () => {
    const q = `SELECT COUNT(id) AS n, ROUND(SUM(amount), 2) AS total, MAX(amount) AS top
      FROM opportunity WHERE stage IN ('won', 'negotiation') LIMIT 1`;
    const r = await cli(['run', q, '--slug', 'opportunity', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    const rows = oracle.live('opportunity', 'org_acme').filter((o) => STAGES.includes(o['stage'] as string));
    const amounts = rows.map((o) => o['amount']).filter((a): a is number => typeof a === 'number');
    expect(rows.length).toBeGreaterThan(5);
    expect(out.records).toHaveLength(1);
    expect(out.records[0].n).toBe(rows.length);
    expect(out.records[0].total).toBeCloseTo(amounts.reduce((s, a) => s + a, 0), 6);
    expect(out.records[0].top).toBe(Math.max(...amounts));
    expect(typeof out.elapsedMs).toBe('number');
  });

  it('--org and a to-one chain, the slug read from FROM: rows match the data of that tenant, NULL where the chain ends', async () => {
    const q = 'SELECT id, name, manager.name AS manager_name, manager.manager.name AS skip_name FROM user LIMIT 500';
    const r = await cli(['run', q, '--org', 'org_globex', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const tenant = 'org_globex';
    const expected = oracle.live('user', tenant).map((u) => {
      const manager = oracle.follow(u, 'manager', 'user', tenant);
      const skip = oracle.follow(manager, 'manager', 'user', tenant);
      return { id: u['id'], name: u['name'], manager_name: manager?.['name'] ?? null, skip_name: skip?.['name'] ?? null };
    });
    expect(expected.some((e) => e.manager_name === null)).toBe(true);
    expect(expected.some((e) => e.skip_name === null && e.manager_name !== null)).toBe(true);
    expect(expected.some((e) => e.skip_name !== null)).toBe(true);
    const records = JSON.parse(r.stdout).records as { id: string }[];
    expect(records.slice().sort(byId)).toEqual(expected.sort(byId));
  });

  it('prints an aligned table and the elapsed time; progress goes to stderr on a terminal', async () => {
    const q = 'SELECT stage, COUNT(id) AS deals FROM opportunity GROUP BY stage LIMIT 10';
    const r = await cli(['run', q, '--slug', 'opportunity'], { tty: true });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('loading opportunity');
    const lines = r.stdout.trimEnd().split('\n');
    const groups = new Map<string, number>();
    for (const o of oracle.live('opportunity', 'org_acme')) {
      const key = (o['stage'] as string | null) ?? 'NULL';
      groups.set(key, (groups.get(key) ?? 0) + 1);
    }
    const width = Math.max('stage'.length, ...[...groups.keys()].map((k) => k.length));
    const countWidth = Math.max('deals'.length, ...[...groups.values()].map((n) => String(n).length));
    expect(lines[0]).toBe(`${'stage'.padEnd(width)} | deals`);
    expect(lines[1]).toBe(`${'-'.repeat(width)}-+-${'-'.repeat(countWidth)}`);
    const body = lines.slice(2, -1);
    expect(body.sort()).toEqual([...groups].map(([k, n]) => `${k.padEnd(width)} | ${String(n).padStart(countWidth)}`).sort());
    expect(lines.at(-1)).toMatch(new RegExp(`^\\(${groups.size} rows, \\d+(\\.\\d+)? m?s\\)$`));
  });

  it('--count gives the number of rows, respecting LIMIT', async () => {
    const r = await cli(['run', "SELECT id FROM lead WHERE status = 'new' LIMIT 1000", '--slug', 'lead', '--count', '--json']);
    expect(r.code).toBe(0);
    const expected = oracle.live('lead', 'org_acme').filter((l) => l['status'] === 'new').length;
    expect(expected).toBeGreaterThan(0);
    expect(JSON.parse(r.stdout).count).toBe(expected);
  });
});

describe('oql run failures', () => {
  it('a broken query fails before any database is opened', async () => {
    const r = await cli(['run', 'SELECT amout FROM opportunity LIMIT 1', '--slug', 'opportunity'], { tty: true });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("error UNKNOWN_COLUMN: unknown column 'amout'");
    expect(r.stderr).toContain("hint: did you mean 'amount'?");
    expect(r.stderr).not.toContain('loading');
    expect(r.stderr).not.toMatch(STACK_LINE);
  });

  it('--format csv: a header row and the rows of the tenant as RFC 4180 text; csv with --count or an unknown format is a usage error', async () => {
    const r = await cli(['run', 'SELECT id, name FROM user ORDER BY id LIMIT 500', '--org', 'org_globex', '--format', 'csv']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.endsWith('\r\n')).toBe(true);
    const lines = r.stdout.slice(0, -2).split('\r\n');
    expect(lines[0]).toBe('id,name');
    // Names hold no comma, quote or line end here, so each line is its two fields as they are.
    const users = oracle.live('user', 'org_globex').map((u) => ({ id: u['id'], name: u['name'] })).sort(byId);
    expect(users.every((u) => !/[",\r\n]/.test(String(u.name)) && !/^[=+\-@]/.test(String(u.name)))).toBe(true);
    expect(lines.slice(1)).toEqual(users.map((u) => `${String(u.id)},${String(u.name)}`));
    const counted = await cli(['run', 'SELECT id FROM user LIMIT 5', '--count', '--format', 'csv']);
    expect(counted.code).toBe(2);
    expect(counted.stderr).toContain('--format csv writes rows');
    const unknown = await cli(['run', 'SELECT id FROM user LIMIT 5', '--format', 'xml']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("--format must be table, json or csv, got 'xml'");
  });

  it('usage errors: bad --timeout, no --slug and no FROM to read it from', async () => {
    const t = await cli(['run', 'SELECT id FROM lead LIMIT 1', '--slug', 'lead', '--timeout', '2s']);
    expect(t.code).toBe(2);
    expect(t.stderr).toContain("--timeout must be a positive whole number, got '2s'");
    const s = await cli(['run', 'SELECT 1 AS one LIMIT 1']);
    expect(s.code).toBe(2);
    expect(s.stderr).toContain('missing --slug: the query names no object after FROM');
  });

  it('an unreachable database is one line, with the password hidden, and no stack trace', async () => {
    const r = await cli(['run', 'SELECT id FROM lead LIMIT 1', '--slug', 'lead', '--database', 'postgres://u:secret@127.0.0.1:1/crm']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error DATABASE_ERROR: cannot connect to postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/crm/);
    expect(r.stderr).not.toContain('secret');
    expect(r.stderr).not.toMatch(STACK_LINE);
  });
});
