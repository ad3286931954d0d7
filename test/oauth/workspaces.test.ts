import { migrate } from '../../src/service/migrations.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/cli.js';
import { workspacesCommand } from '../../src/cli/commands/workspaces.js';
import type { CliIo } from '../../src/cli/io.js';
import { databaseOf } from '../../src/run/database-of.js';
import {
  bootstrapWorkspaces, createWorkspace, listWorkspaces, parseWorkspacesEnv, resolveWorkspace,
} from '../../src/service/store/workspaces.js';
import { emptyPglite } from '../support/pglite-template.js';

/** The subdomain → organization map: its store, OQL_WORKSPACES, and `oql workspaces`. */

// Every `oql workspaces` run opens the embedded database in its directory (seconds each, many more
// on a busy machine): these tests get room beyond the default minute.
const SLOW = 240_000;

const dir = mkdtempSync(join(tmpdir(), 'oql-workspaces-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function io(): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t), cwd: dir } as CliIo & { out: string[]; err: string[] };
}

describe('OQL_WORKSPACES', () => {
  it('reads subdomain=org pairs, trimming spaces and empty entries', () => {
    expect(parseWorkspacesEnv(' acme=org_acme, ,globex=org.globex-2 ')).toEqual([
      { subdomain: 'acme', orgId: 'org_acme' },
      { subdomain: 'globex', orgId: 'org.globex-2' },
    ]);
    expect(parseWorkspacesEnv('')).toEqual([]);
  });

  it.each([
    ['acme', 'entry 1: expected subdomain=org'],
    ['acme=org_a,globex', 'entry 2: expected subdomain=org'],
    ['a=b=c', 'entry 1: expected subdomain=org'],
    ['Acme=org_a', "entry 1: subdomain 'Acme'"],
    ['-acme=org_a', "entry 1: subdomain '-acme'"],
    ['acme.corp=org_a', "entry 1: subdomain 'acme.corp'"],
    ['acme=org a', "entry 1: organization id 'org a'"],
  ])('refuses %s naming the entry', (text, message) => {
    expect(() => parseWorkspacesEnv(text)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining(message) }));
  });
});

describe('workspace store', () => {
  it('creates, resolves, keeps tenants apart and never moves a workspace to another organization', async () => {
    const pg = await emptyPglite();
    try {
      const db = databaseOf(pg);
      await migrate(db);
      await migrate(db);
      expect(await createWorkspace(db, { subdomain: 'acme', orgId: 'org_acme' })).toEqual({ created: true });
      expect(await createWorkspace(db, { subdomain: 'acme', orgId: 'org_acme' })).toEqual({ created: false });
      await expect(createWorkspace(db, { subdomain: 'acme', orgId: 'org_globex' })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
      await bootstrapWorkspaces(db, [{ subdomain: 'globex', orgId: 'org_globex' }, { subdomain: 'acme', orgId: 'org_acme' }]);
      expect(await resolveWorkspace(db, 'acme')).toEqual({ subdomain: 'acme', orgId: 'org_acme' });
      expect(await resolveWorkspace(db, 'globex')).toEqual({ subdomain: 'globex', orgId: 'org_globex' });
      for (const unknown of ['initech', 'ACME', "acme' OR '1'='1", '', 'a'.repeat(64)]) expect(await resolveWorkspace(db, unknown)).toBeNull();
      // A bootstrap with one bad entry stores none of its entries.
      await expect(bootstrapWorkspaces(db, [{ subdomain: 'initech', orgId: 'org_initech' }, { subdomain: 'acme', orgId: 'org_other' }])).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
      expect(await resolveWorkspace(db, 'initech')).toBeNull();
      expect(await listWorkspaces(db)).toEqual([{ subdomain: 'acme', orgId: 'org_acme' }, { subdomain: 'globex', orgId: 'org_globex' }]);
    } finally {
      await pg.close();
    }
  }, SLOW);
});

describe('oql workspaces', () => {
  it('creates workspaces in a data directory and lists them', async () => {
    const dataDir = join(dir, 'data');
    const first = io();
    expect(await workspacesCommand(['create', '--subdomain', 'acme', '--org', 'org_acme', '--data-dir', dataDir], first)).toBe(0);
    expect(first.out.join('')).toBe('acme=org_acme\n');
    expect(first.err.join('')).toContain('created acme → org_acme');
    const second = io();
    expect(await workspacesCommand(['create', '--subdomain', 'globex', '--org', 'org_globex', '--data-dir', dataDir], second)).toBe(0);
    const again = io();
    expect(await workspacesCommand(['create', '--subdomain', 'acme', '--org', 'org_acme', '--data-dir', dataDir], again)).toBe(0);
    expect(again.err.join('')).toContain('already present');
    const list = io();
    expect(await workspacesCommand(['list', '--json', '--data-dir', dataDir], list)).toBe(0);
    expect(JSON.parse(list.out.join(''))).toEqual([{ subdomain: 'acme', org_id: 'org_acme' }, { subdomain: 'globex', org_id: 'org_globex' }]);
    await expect(workspacesCommand(['create', '--subdomain', 'acme', '--org', 'org_globex', '--data-dir', dataDir], io()))
      .rejects.toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringContaining("already belongs to organization 'org_acme'") });
  }, SLOW);

  it('refuses missing flags and unknown actions as usage errors', async () => {
    await expect(workspacesCommand(['create', '--org', 'org_acme'], io())).rejects.toThrow(/missing --subdomain/);
    await expect(workspacesCommand(['create', '--subdomain', 'acme'], io())).rejects.toThrow(/missing --org/);
    await expect(workspacesCommand(['delete'], io())).rejects.toThrow(/unknown action 'delete'/);
    await expect(workspacesCommand([], io())).rejects.toThrow(/missing action/);
    await expect(workspacesCommand(['list', '--database', 'postgres://x@y/z', '--data-dir', dir], io())).rejects.toThrow(/exclude each other/);
  });

  it('runs through the oql command line with its usage and exit codes', async () => {
    const help = io();
    expect(await main(['workspaces', '--help'], help)).toBe(0);
    expect(help.out.join('')).toContain('oql workspaces create --subdomain <name> --org <org>');
    const usage = io();
    expect(await main(['workspaces', 'create', '--org', 'org_acme'], usage)).toBe(2);
    expect(usage.err.join('')).toContain("oql workspaces: missing --subdomain");
    expect(usage.err.join('')).toContain("Run 'oql workspaces --help'");
    const bad = io();
    expect(await main(['workspaces', 'create', '--subdomain', 'Not Valid', '--org', 'org_acme', '--data-dir', join(dir, 'data')], bad)).toBe(2);
    expect(bad.err.join('')).toContain("subdomain 'Not Valid'");
    const list = io();
    expect(await main(['workspaces', 'list', '--data-dir', join(dir, 'data')], list)).toBe(0);
    expect(list.out.join('')).toBe('acme=org_acme\nglobex=org_globex\n');
  }, SLOW);
});
