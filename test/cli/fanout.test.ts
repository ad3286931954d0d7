import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadFixtureCatalog } from '../../fixtures/index.js';
import { compile } from '../../src/index.js';
import { cli, tempTree, embeddedDemoOracle } from './helpers.js';

/** `--fanout exact` on compile, run and lint, and `fanout` in the config file. */

// oql run loads the example CRM with its demo data: the oracle reads the same rows.
const oracle = await embeddedDemoOracle();
const catalog = loadFixtureCatalog('crm');
const TWO = 'SELECT COUNT(contacts.id) AS contacts_n, SUM(opportunities.amount) AS pipeline FROM account LIMIT 1';

describe('--fanout exact', () => {
  it('oql run gives the true totals of the default tenant, where the default multiplies them', async () => {
    const accounts = oracle.live('account', 'org_acme');
    const contacts = accounts.flatMap((a) => oracle.children(a, 'contact', 'account', 'org_acme')).length;
    const pipeline = accounts.flatMap((a) => oracle.children(a, 'opportunity', 'account', 'org_acme')).reduce((s, o) => s + (typeof o.amount === 'number' ? o.amount : 0), 0);
    const exact = await cli(['run', TWO, '--slug', 'account', '--fanout', 'exact', '--json']);
    expect(exact.code, exact.stderr).toBe(0);
    const [row] = JSON.parse(exact.stdout).records;
    expect(row.contacts_n).toBe(contacts);
    expect(row.pipeline).toBeCloseTo(pipeline, 2);
    const fanned = JSON.parse((await cli(['run', TWO, '--slug', 'account', '--json'])).stdout).records[0];
    expect(fanned.contacts_n).toBeGreaterThan(contacts);
  }, 120_000);

  it('oql compile prints the SQL of compile() with the option', async () => {
    const r = await cli(['compile', TWO, '--slug', 'account', '--fanout', 'exact', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const expected = compile(TWO, { catalog, slug: 'account', orgId: 'org_acme', fanout: 'exact' });
    expect(JSON.parse(r.stdout).sql).toBe(expected.sql);
    expect(expected.sql).not.toBe(compile(TWO, { catalog, slug: 'account', orgId: 'org_acme' }).sql);
  });

  it('an unknown value is a usage error naming the two modes', async () => {
    for (const command of ['compile', 'run', 'lint']) {
      const args = command === 'lint' ? ['lint', '--stdin', '--slug', 'account', '--fanout', 'exactly'] : [command, TWO, '--slug', 'account', '--fanout', 'exactly'];
      const r = await cli(args, { stdin: TWO });
      expect(r.code, command).toBe(2);
      expect(r.stderr).toContain("--fanout must be service or exact, got 'exactly'");
    }
  });

  it('oql lint drops the fan-out warnings the option corrects, from the flag or from the config file', async () => {
    const plain = await cli(['lint', '--stdin', '--slug', 'account', '--format', 'json'], { stdin: TWO });
    expect(plain.stdout).toContain('FANOUT_AGGREGATE');
    const flagged = await cli(['lint', '--stdin', '--slug', 'account', '--format', 'json', '--fanout', 'exact'], { stdin: TWO });
    expect(flagged.stdout).not.toContain('FANOUT_');
    const dir = tempTree({ 'oql.config.json': JSON.stringify({ fanout: 'exact' }) });
    const configured = await cli(['lint', '--stdin', '--slug', 'account', '--format', 'json'], { stdin: TWO, cwd: dir });
    expect(configured.code, configured.stderr).toBe(0);
    expect(configured.stdout).not.toContain('FANOUT_');
    writeFileSync(join(dir, 'oql.config.json'), JSON.stringify({ fanout: 'precise' }));
    const bad = await cli(['lint', '--stdin', '--slug', 'account'], { stdin: TWO, cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`'fanout' must be "service" or "exact", not 'precise'`);
  });
});
