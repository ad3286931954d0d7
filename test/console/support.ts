import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { buildConsole } from '../../scripts/build-console.js';
import { loadIntoDatabase } from '../../fixtures/index.js';
import type { CreateServerOptions } from '../../src/server/index.js';
import { startPgDatabase } from '../support/pg-cluster.js';
import { type PgServer } from '../support/pg-server.js';
import { API_KEYS_ENV, call, crm, listen, type Answer, type CallOptions, type Running } from '../server/support.js';

/**
 * The console's tests: a throwaway PostgreSQL 15 server holding the crm fixture (org_acme and
 * org_globex), the front end built into a directory of the test's own, and servers on it, each
 * listening on 127.0.0.1 and called over real HTTP. The test keys are those of
 * test/server/support.ts; workspaces acme and globex map to the two organizations.
 */

export const WORKSPACES = 'acme=org_acme,globex=org_globex';

export interface ConsoleWorld {
  readonly pg: PgServer;
  readonly assetsDir: string;
  /** Direct access to the database, for oracles and for what no endpoint does (expiring a key now). */
  readonly pool: pg.Pool;
  /** A server on the shared database with the console and the test keys. */
  start(options?: Partial<CreateServerOptions>): Promise<Running>;
  close(): Promise<void>;
}

export async function openWorld(): Promise<ConsoleWorld> {
  const assetsDir = mkdtempSync(join(tmpdir(), 'oql-console-'));
  const server = await startPgDatabase();
  const pool = new pg.Pool({ connectionString: server.url, max: 3 });
  const running: Running[] = [];
  try {
    await Promise.all([buildConsole(assetsDir), loadIntoDatabase(pool, crm.catalog, crm.data)]);
  } catch (e) {
    await pool.end();
    await server.stop();
    throw e;
  }
  return {
    pg: server,
    assetsDir,
    pool,
    async start(options = {}) {
      const r = await listen({ database: server.url, apiKeys: API_KEYS_ENV, env: {}, workspaces: WORKSPACES, console: { assetsDir }, ...options } as CreateServerOptions);
      running.push(r);
      return r;
    },
    async close() {
      await Promise.allSettled(running.map((r) => r.close()));
      await pool.end();
      await server.stop();
      rmSync(assetsDir, { recursive: true, force: true });
    },
  };
}

/** A browser's side of a console session, by hand: the cookie it holds and the CSRF token the page read. */
export interface Browserish {
  readonly cookie: string;
  readonly csrf: string;
  readonly session: any;
}

/** The session cookie (name=value) of a Set-Cookie header. */
export function sessionCookieOf(answer: Answer): string {
  const header = answer.headers.get('set-cookie') ?? '';
  const pair = header.split(';')[0] ?? '';
  if (!/^(__Host-)?oql_session=oqls_/.test(pair)) throw new Error(`no session cookie in '${header}' (status ${answer.status}: ${answer.text.slice(0, 300)})`);
  return pair;
}

export async function signIn(url: string, apiKey: string, headers: Record<string, string> = {}): Promise<Browserish> {
  const answer = await call(url, 'POST', '/console/session', { body: { api_key: apiKey }, headers });
  if (answer.status !== 200) throw new Error(`sign-in: ${answer.status} ${answer.text}`);
  return { cookie: sessionCookieOf(answer), csrf: answer.json.data.csrf_token, session: answer.json.data };
}

/** A call as the console makes it: the cookie, and the CSRF token unless `csrf: false`. */
export function asSession(url: string, s: Browserish, method: string, path: string, o: CallOptions & { csrf?: boolean | string } = {}): Promise<Answer> {
  const token: Record<string, string> = o.csrf === false ? {} : { 'x-csrf-token': typeof o.csrf === 'string' ? o.csrf : s.csrf };
  return call(url, method, path, { ...o, headers: { cookie: s.cookie, ...token, ...o.headers } });
}

/** Where the console's screenshots are kept, for docs/console.md. */
const SHOTS = join(process.cwd(), 'docs/console');

/**
 * Writes the page as docs/console/<name> when the run is asked for screenshots
 * (`npm run screenshots`, OQL_SCREENSHOTS=1); otherwise nothing, so that a test run leaves the
 * clone's files as they were.
 */
export async function screenshot(page: { screenshot(options: { path: string }): Promise<unknown> }, name: string): Promise<void> {
  if (process.env['OQL_SCREENSHOTS'] !== '1') return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, name) });
}
