import { parseCommand, requireFlag } from '../args.js';
import { EXIT, UsageError, println, type CliIo } from '../io.js';
import { openServiceAccess } from '../service-access.js';

export const WORKSPACES_OPTIONS = {
  subdomain: { type: 'string' },
  org: { type: 'string' },
  database: { type: 'string' },
  'data-dir': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const WORKSPACES_USAGE = `Usage: oql workspaces create --subdomain <name> --org <org> [options]
       oql workspaces list [options]

A workspace maps the subdomain of the OAuth and MCP URLs ({mcp_url}/<subdomain>/mcp) to the
organization whose data its tokens reach. Creating an existing workspace for the same
organization changes nothing; a workspace never moves to another organization.

Options:
  --subdomain <name>    lower-case letters, digits and '-' (a DNS label), for example acme
  --org <id>            the organization, for example org_acme
  --database <url>      a PostgreSQL server, postgres://user:password@host:5432/db
  --data-dir <dir>      the embedded database's directory (default ./.oql-data); while
                        oql serve runs on it, that server does the work
  --json                list as JSON
  -h, --help            show this help

Environment:
  OQL_WORKSPACES        oql serve creates these at start: acme=org_acme,globex=org_globex

Example:
  oql workspaces create --subdomain acme --org org_acme
`;

/** `oql workspaces create|list`: the subdomain → organization map of the OAuth and MCP endpoints. */
export async function workspacesCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand('workspaces', argv, WORKSPACES_OPTIONS);
  if (values.help) {
    io.stdout(WORKSPACES_USAGE);
    return EXIT.ok;
  }
  const [action, ...extra] = positionals;
  if (action !== 'create' && action !== 'list') {
    throw new UsageError(action === undefined ? 'missing action: oql workspaces create --subdomain <name> --org <org>' : `unknown action '${action}' (create or list)`, 'workspaces');
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`, 'workspaces');
  if (values.database !== undefined && values['data-dir'] !== undefined) throw new UsageError('--database and --data-dir exclude each other', 'workspaces');
  const subdomain = action === 'create' ? requireFlag('workspaces', 'subdomain', values.subdomain, 'acme') : undefined;
  const orgId = action === 'create' ? requireFlag('workspaces', 'org', values.org, 'org_acme') : undefined;
  const db = await openServiceAccess({ database: values.database, dataDir: values['data-dir'], argv: ['workspaces', ...argv] });
  try {
    if (action === 'create') {
      const { created } = await db.createWorkspace({ subdomain: subdomain!, orgId: orgId! });
      println(io.stdout, `${subdomain}=${orgId}`);
      println(io.stderr, `oql workspaces: ${created ? 'created' : 'already present:'} ${subdomain} → ${orgId} in ${db.label}`);
      return EXIT.ok;
    }
    const all = await db.listWorkspaces();
    if (values.json) println(io.stdout, JSON.stringify(all.map((w) => ({ subdomain: w.subdomain, org_id: w.orgId }))));
    else for (const w of all) println(io.stdout, `${w.subdomain}=${w.orgId}`);
    return EXIT.ok;
  } finally {
    await db.close();
  }
}
