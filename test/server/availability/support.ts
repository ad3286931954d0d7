import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/client';
import pg from 'pg';
import { expect } from 'vitest';
import { createServer, type CreateServerOptions, type OqlServer } from '../../../src/server/app.js';
import { connect } from '../../mcp/support.js';
import { call, type Answer } from '../support.js';

/**
 * The service as the availability tests run it (issue 19, F1–F9): both hosts listening on
 * 127.0.0.1 at free ports, two organizations with their own keys and workspaces — A, the
 * neighbour, with one user; B, the attacker, with six users, and three keys for its first user —
 * and what every test checks the same way. Expected values are written here by hand.
 */

export const A_KEY = 'avail-org-a-user-a-key-000001';
/** One key for each of B's six users u_b0…u_b5. */
export const B_KEYS = Array.from({ length: 6 }, (_, i) => `avail-org-b-user-${i}-key-00000${i}`);
/** Two more keys of B's first user, u_b0: its budget is the user's, not the key's. */
export const B0_MORE_KEYS = ['avail-org-b-user-0-second-key-1', 'avail-org-b-user-0-third-key-02'];

const API_KEYS = [
  `${A_KEY}=org_a:superadmin:u_a`,
  ...B_KEYS.map((k, i) => `${k}=org_b:superadmin:u_b${i}`),
  ...B0_MORE_KEYS.map((k) => `${k}=org_b:superadmin:u_b0`),
].join(',');

/** The workspaces (MCP endpoints, consent forms) of the two organizations. */
export const WORKSPACE_A = 'alpha';
export const WORKSPACE_B = 'beta';

/** A's accounts, written through the API: what A must see, and all it may see. */
export const A_ACCOUNTS = Array.from({ length: 12 }, (_, i) => ({ name: `Alpha ${String(i + 1).padStart(2, '0')}`, city: `Pune ${i % 3}` }));
export const A_NAMES = A_ACCOUNTS.map((a) => a.name).sort();

export interface Service {
  readonly server: OqlServer;
  readonly url: string;
  readonly mcpUrl: string;
  call(key: string | undefined, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  /** An MCP SDK client of the workspace, with a static bearer (an API key or an access token). */
  mcp(workspace: string, bearer: string): Promise<Client>;
  close(): Promise<void>;
}

export async function startService(options: CreateServerOptions): Promise<Service> {
  const server = await createServer({ apiKeys: API_KEYS, ...options, env: { OQL_WORKSPACES: `${WORKSPACE_A}=org_a,${WORKSPACE_B}=org_b`, ...options.env }, log: false });
  const clients: Client[] = [];
  try {
    await server.app.listen({ port: 0, host: '127.0.0.1' });
    await server.mcpApp.listen({ port: 0, host: '127.0.0.1' });
  } catch (e) {
    await server.close();
    throw e;
  }
  const url = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
  const mcpUrl = `http://127.0.0.1:${(server.mcpApp.server.address() as AddressInfo).port}`;
  return {
    server, url, mcpUrl,
    call: (key, method, path, body, headers) => call(url, method, path, { ...(key === undefined ? {} : { key }), ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) }),
    async mcp(workspace, bearer) {
      const client = await connect(`${mcpUrl}/${workspace}/mcp`, bearer);
      clients.push(client);
      return client;
    },
    async close() {
      await Promise.allSettled(clients.map((c) => c.close()));
      await server.close();
    },
  };
}

/** Writes A's accounts through the API. */
export async function seedA(svc: Service): Promise<void> {
  const answer = await svc.call(A_KEY, 'POST', '/api/v1/org/objects/account/record/bulk_create', A_ACCOUNTS);
  expect(answer.status, answer.text.slice(0, 300)).toBe(200);
}

/** A's requests while B attacks: each must be answered in full with A's rows and nothing else. */
export async function neighbourReport(svc: Service): Promise<Answer> {
  return svc.call(A_KEY, 'POST', '/api/v1/reports/execute', { slug: 'account', query: 'SELECT name, city FROM account ORDER BY name LIMIT 100' });
}

export function expectNeighbourRows(answer: Answer): void {
  expect(answer.status, answer.text.slice(0, 300)).toBe(200);
  const records = answer.json.data.records as { name: string }[];
  expect(records.map((r) => r.name)).toEqual(A_NAMES);
}

/** The JSON a tool returned as its first text block, and whether it was a tool error. */
export function toolText(result: unknown): { text: string; isError: boolean } {
  const r = result as { content?: { type: string; text?: string }[]; isError?: boolean };
  const first = r.content?.[0];
  expect(first?.type).toBe('text');
  return { text: first!.text!, isError: r.isError === true };
}

/**
 * Waits until PostgreSQL shows `count` statements matching `pattern` as active (or waiting), or
 * until `done` says the requests already ended; bounded, for a request to be seen running before
 * the neighbour's is sent.
 */
export async function untilRunning(admin: pg.Client, pattern: string, count = 1, done: () => boolean = () => false): Promise<number> {
  let seen = 0;
  for (let i = 0; i < 600 && !done(); i++) {
    const { rows } = await admin.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE $1", [pattern]);
    seen = rows[0]!.n;
    if (seen >= count) return seen;
    await new Promise((r) => setTimeout(r, 100));
  }
  return seen;
}

/** The records of a successful REST answer. */
export function records(answer: Answer): Record<string, unknown>[] {
  expect(answer.status, answer.text.slice(0, 300)).toBe(200);
  return answer.json.data.records as Record<string, unknown>[];
}
