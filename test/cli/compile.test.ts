import { describe, expect, it } from 'vitest';
import { catalogDdl, compile } from '../../src/index.js';
import { loadFixtureCatalog, fixturePayload } from '../../fixtures/index.js';
import pkg from '../../package.json' with { type: 'json' };
import { cli, compiledQuery, STACK_LINE, tempTree } from './helpers.js';

const catalog = loadFixtureCatalog('crm');
const CHAIN = "SELECT name, owner.manager.name AS manager FROM opportunity WHERE sources && ARRAY['web','referral'] LIMIT 10";

describe('oql compile', () => {
  it('prints the SQL one clause per line, then the parameters as SQL comments', async () => {
    const r = await cli(['compile', CHAIN, '--slug', 'opportunity']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const expected = compiledQuery(CHAIN, { catalog, slug: 'opportunity', orgId: 'org_acme' });
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^SELECT /);
    expect(lines.filter((l) => l.startsWith('FROM '))).toHaveLength(1);
    expect(lines.filter((l) => l.startsWith('LEFT JOIN '))).toHaveLength(2);
    expect(lines.some((l) => l.startsWith('WHERE '))).toBe(true);
    expect(lines.some((l) => /^LIMIT \$\d+::int8;$/.test(l))).toBe(true);
    // Only whitespace differs from the compiled text.
    const sql = lines.filter((l) => !l.startsWith('--')).join(' ').replace(/;$/, '');
    expect(sql).toBe(expected.sql);
    expect(lines).toContain("-- $1 = 'org_acme'");
    expect(lines).toContain("-- $2 = ARRAY['web', 'referral']");
    expect(lines).toContain('-- $3 = 10');
    expect(lines).toContain('-- columns: name (text), manager (text)');
  });

  it('--json prints {sql, params, columns} exactly as compile() gives them', async () => {
    const r = await cli(['compile', CHAIN, '--slug', 'opportunity', '--org', 'org_globex', '--json']);
    expect(r.code).toBe(0);
    const expected = compiledQuery(CHAIN, { catalog, slug: 'opportunity', orgId: 'org_globex' });
    expect(JSON.parse(r.stdout)).toEqual({ sql: expected.sql, params: expected.params, columns: expected.columns });
  });

  it('--now pins NOW()', async () => {
    const q = "SELECT id FROM opportunity WHERE created_at < date_part('epoch', NOW() AT TIME ZONE 'UTC')*1000 LIMIT 5";
    const r = await cli(['compile', q, '--slug', 'opportunity', '--now', '2025-03-01T00:00:00Z', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).params).toContain('2025-03-01T00:00:00.000Z');
  });

  it('prints warnings with their code frame on stderr and still succeeds', async () => {
    const r = await cli(['compile', "SELECT id FROM opportunity WHERE stage = 'wonn' LIMIT 5", '--slug', 'opportunity']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('warning UNKNOWN_OPTION');
    expect(r.stderr).toContain("did you mean 'won'?");
    expect(r.stdout).toMatch(/^SELECT /);
  });

  it('a broken query: exit 1, every error with its code frame and hint, no stack trace', async () => {
    const q = 'SELECT name, amout FROM opportunity';
    const r = await cli(['compile', q, '--slug', 'opportunity']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain("error UNKNOWN_COLUMN: unknown column 'amout' on object 'opportunity' (1:14)");
    expect(r.stderr).toContain(`  1 | ${q}`);
    expect(r.stderr).toContain(`    | ${' '.repeat(13)}^^^^^`);
    expect(r.stderr).toContain("hint: did you mean 'amount'?");
    expect(r.stderr).toContain('error MISSING_LIMIT');
    expect(r.stderr).not.toMatch(STACK_LINE);
  });

  it('a slug that differs from FROM is INVALID_SLUG', async () => {
    const r = await cli(['compile', 'SELECT id FROM account LIMIT 1', '--slug', 'opportunity']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('INVALID_SLUG');
  });

  it('--schema takes the compact form, and the service payload with --type-codes', async () => {
    const dir = tempTree({
      'compact.json': JSON.stringify({ objects: { ticket: { columns: { subject: 'text', priority: { type: 'enum', options: ['low', 'high'] } } } } }),
      'payload.json': JSON.stringify(fixturePayload('crm')),
      'codes.json': JSON.stringify({ 1: 'text', 5: 'email', 7: 'phone', 9: 'boolean', 11: 'number', 15: 'enum', 17: 'multiselect', 19: 'datetime', 21: 'date', 25: 'relation' }),
    });
    const compact = await cli(['compile', "SELECT subject FROM ticket WHERE priority = 'high' LIMIT 3", '--slug', 'ticket', '--schema', 'compact.json', '--json'], { cwd: dir });
    expect(compact.code).toBe(0);
    expect(JSON.parse(compact.stdout).sql).toContain('FROM "public"."ticket"');
    const payload = await cli(['compile', CHAIN, '--slug', 'opportunity', '--schema', 'payload.json', '--type-codes', 'codes.json', '--json'], { cwd: dir });
    expect(payload.code).toBe(0);
    expect(JSON.parse(payload.stdout).sql).toBe(compile(CHAIN, { catalog, slug: 'opportunity', orgId: 'org_acme' }).sql);
  });

  it('an unreadable or invalid schema is a usage error (2)', async () => {
    const dir = tempTree({ 'bad.json': '{"objects": ', 'wrong.json': '{"objects": {"t": {"columns": {"x": "texty"}}}}' });
    const missing = await cli(['compile', 'SELECT id FROM t LIMIT 1', '--slug', 't', '--schema', 'nope.json'], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("cannot read schema file 'nope.json': no such file");
    const bad = await cli(['compile', 'SELECT id FROM t LIMIT 1', '--slug', 't', '--schema', 'bad.json'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error CATALOG_INVALID: catalog is not valid JSON/);
    const wrong = await cli(['compile', 'SELECT id FROM t LIMIT 1', '--slug', 't', '--schema', 'wrong.json'], { cwd: dir });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('error CATALOG_');
    for (const r of [missing, bad, wrong]) expect(r.stderr).not.toMatch(STACK_LINE);
  });

  it('usage errors exit 2 with a pointer to --help', async () => {
    const cases: [string[], RegExp][] = [
      [['compile', 'SELECT 1 AS one LIMIT 1'], /missing --slug: the query names no object after FROM/],
      [['compile', '--slug', 'lead'], /missing query/],
      [['compile', 'SELECT id FROM lead LIMIT 1', '--slug', 'lead', '--slugg', 'x'], /unknown option '--slugg': did you mean '--slug'\?/],
      [['compile', 'SELECT', 'id', '--slug', 'lead'], /expected one query, got 2 arguments/],
      [['compile', 'SELECT id FROM lead LIMIT 1', '--slug'], /option '--slug <value>' argument missing/],
      [['compile', 'SELECT id FROM lead LIMIT 1', '--slug', 'lead', '--json=yes'], /does not take an argument/],
    ];
    for (const [argv, message] of cases) {
      const r = await cli(argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toContain("Run 'oql compile --help' for usage.");
      expect(r.stderr).not.toMatch(STACK_LINE);
    }
  });
});

describe('oql ddl', () => {
  it('prints the catalog DDL, one statement per paragraph', async () => {
    const r = await cli(['ddl']);
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split('\n\n')).toEqual(catalogDdl(catalog).map((s) => `${s};`));
    for (const slug of catalog.objects.keys()) expect(r.stdout).toContain(`CREATE TABLE "public"."${slug}"`);
  });

  it('--schema and --if-not-exists', async () => {
    const dir = tempTree({ 's.json': JSON.stringify({ objects: { ticket: { columns: { subject: 'text', opened: 'datetime', tags: { type: 'multiselect', options: ['a', 'b'] } } } } }) });
    const r = await cli(['ddl', '--schema', 's.json', '--if-not-exists'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('CREATE TABLE IF NOT EXISTS "public"."ticket"');
    expect(r.stdout).toMatch(/"opened" bigint/);
    expect(r.stdout).toMatch(/"tags" text\[\]/);
  });

  it('rejects stray arguments', async () => {
    const r = await cli(['ddl', 'schema.json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unexpected argument 'schema.json'");
  });
});

describe('help and version', () => {
  it('--version prints the package version', async () => {
    for (const flag of ['--version', '-v']) {
      const r = await cli([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${pkg.version}\n`);
    }
  });

  it('--help lists the commands; no arguments prints it on stderr with exit 2', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    for (const c of ['compile', 'lint', 'run', 'ddl', 'demo']) expect(help.stdout).toContain(`  ${c} `);
    const none = await cli([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe(help.stdout);
  });

  it('each command has its own --help, which wins over other problems', async () => {
    for (const c of ['compile', 'lint', 'run', 'ddl', 'demo']) {
      const r = await cli([c, '--bogus', '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Usage: oql ${c}`));
      expect((await cli(['help', c])).stdout).toBe(r.stdout);
    }
  });

  it('an unknown command suggests the closest', async () => {
    const r = await cli(['complie', 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'complie': did you mean 'compile'?");
  });
});
