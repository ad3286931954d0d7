import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureData, loadFixtureCatalog, loadIntoDatabase } from '../../fixtures/index.js';
import { Oracle } from '../support/oracle.js';
import { startPgDatabase } from '../support/pg-cluster.js';
import { pgServerAvailable, type PgServer } from '../support/pg-server.js';
import { cli } from './helpers.js';

const data = fixtureData('crm');
const oracle = new Oracle(data);

describe.skipIf(!pgServerAvailable())('oql run --database on a PostgreSQL 15 server', () => {
  let server: PgServer;

  beforeAll(async () => {
    server = await startPgDatabase();
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await loadIntoDatabase(client, loadFixtureCatalog('crm'), data);
    } finally {
      await client.end();
    }
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('runs on the server: virtual-relation count matches the fixture data', async () => {
    const q = "SELECT COUNT(DISTINCT id) AS accounts FROM account WHERE contacts.status = 'active' LIMIT 1";
    const r = await cli(['run', q, '--slug', 'account', '--database', server.url, '--org', 'org_initech', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const tenant = 'org_initech';
    const expected = oracle.live('account', tenant)
      .filter((a) => oracle.children(a, 'contact', 'account', tenant).some((c) => c['status'] === 'active')).length;
    expect(expected).toBeGreaterThan(0);
    expect(JSON.parse(r.stdout).records).toEqual([{ accounts: expected }]);
  });
});
