import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/run/open.js';
import { verifyAccessToken } from '../../src/oauth/index.js';
import { createApiKey } from '../../src/service/store/api-keys.js';
import { migrate } from '../../src/service/migrations.js';
import { createWorkspace } from '../../src/service/store/workspaces.js';
import type { ServiceDb } from '../../src/service/types.js';
import { startPgDatabase } from '../support/pg-cluster.js';
import { type PgServer } from '../support/pg-server.js';
import { MCP_URL, exchange, obtainCode, startAuthServer, tokenRequest, type Running, type Tenant } from './support.js';

/**
 * Single use under real concurrency: a PostgreSQL server and a pg Pool, so that simultaneous
 * redemptions of one code or one refresh token really race (PGlite runs one statement at a time).
 */

let pg: PgServer;
let db: ServiceDb;
let server: Running;
let acme: Tenant;

beforeAll(async () => {
  pg = await startPgDatabase();
  db = await openDatabase({ database: pg.url, poolSize: 12 });
  await migrate(db);
  await createWorkspace(db, { subdomain: 'acme', orgId: 'org_acme' });
  await createWorkspace(db, { subdomain: 'globex', orgId: 'org_globex' });
  acme = {
    subdomain: 'acme', orgId: 'org_acme', resource: `${MCP_URL}/acme/mcp`,
    adminKey: await createApiKey(db, { orgId: 'org_acme', role: 'superadmin' }),
    memberKey: await createApiKey(db, { orgId: 'org_acme', role: 'member' }),
  };
  server = await startAuthServer(db);
});
afterAll(async () => {
  await server?.close();
  await db?.close();
  await pg?.stop();
});

const RACERS = 10;

describe('single use on a PostgreSQL server', () => {
  it.each([1, 2, 3])('lets exactly one of simultaneous redemptions of a code through, and the replays revoke its tokens (round %i)', async (_round) => {
    const got = await obtainCode(server.baseUrl, acme);
    const results = await Promise.all(Array.from({ length: RACERS }, () => exchange(server.baseUrl, acme, got)));
    const winners = results.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => r.status === 400 && r.body.error === 'invalid_grant')).toHaveLength(RACERS - 1);
    expect(await verifyAccessToken(db, winners[0]!.body.access_token)).toBeNull();
  });

  it.each([1, 2, 3])('rotates a refresh token once (round %i) among simultaneous uses, and the reuses end the family', async (_round) => {
    const got = await obtainCode(server.baseUrl, acme);
    const first = await exchange(server.baseUrl, acme, got);
    expect(first.status).toBe(200);
    const results = await Promise.all(Array.from({ length: RACERS }, () => tokenRequest(server.baseUrl, 'acme', {
      grant_type: 'refresh_token', client_id: got.clientId, refresh_token: first.body.refresh_token,
    })));
    const winners = results.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => r.body.error === 'invalid_grant')).toHaveLength(RACERS - 1);
    expect(await verifyAccessToken(db, winners[0]!.body.access_token)).toBeNull();
    expect(await verifyAccessToken(db, first.body.access_token)).toBeNull();
  });

  it('issues working tokens through the pool when nobody races', async () => {
    const got = await obtainCode(server.baseUrl, acme);
    const tokens = await exchange(server.baseUrl, acme, got);
    expect(tokens.status).toBe(200);
    expect(await verifyAccessToken(db, tokens.body.access_token, { resource: acme.resource })).toMatchObject({ orgId: 'org_acme', via: 'oauth' });
    expect(await verifyAccessToken(db, tokens.body.access_token, { resource: `${MCP_URL}/globex/mcp` })).toBeNull();
  });
});
