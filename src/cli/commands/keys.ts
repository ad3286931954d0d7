import { aRole, isRole } from '../../service/types.js';
import { parseCommand, requireFlag } from '../args.js';
import { EXIT, UsageError, println, type CliIo } from '../io.js';
import { openServiceAccess, type ServiceAccess } from '../service-access.js';
import { formatTable } from '../table.js';

export const KEYS_OPTIONS = {
  org: { type: 'string' },
  role: { type: 'string' },
  user: { type: 'string' },
  name: { type: 'string' },
  database: { type: 'string' },
  'data-dir': { type: 'string' },
  revoked: { type: 'boolean' },
  'new-org': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const ACTIONS = 'create, list or revoke';

/** The name of a key made without --name: where it came from and what it may do. */
function defaultKeyName(role: string): string {
  return `CLI ${role} key`;
}

/**
 * `oql keys create`: a new API key for one organization, user and role, printed once with its
 * id, named by --name (or after the command and role). `oql keys list`: the keys (ids, never the keys). `oql keys revoke <id>`: the key stops
 * authenticating, and the OAuth tokens approved with it die with it. On an embedded directory
 * that a running `oql serve` holds, that server does the work (see ../service-access.ts).
 */
export async function keysCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand('keys', argv, KEYS_OPTIONS);
  const [action, ...rest] = positionals;
  if (action !== 'create' && action !== 'list' && action !== 'revoke') {
    throw new UsageError(action === undefined ? `missing action: ${ACTIONS} (oql keys create --org <org> --role <role>)` : `unknown action '${action}' (${ACTIONS})`, 'keys');
  }
  const wanted = action === 'revoke' ? 1 : 0;
  if (rest.length > wanted) throw new UsageError(`unexpected argument '${rest[wanted]}'`, 'keys');
  if (action === 'revoke' && rest.length === 0) throw new UsageError('which key? oql keys revoke <key id> (the ids are in oql keys list)', 'keys');
  if (values.database !== undefined && values['data-dir'] !== undefined) throw new UsageError('--database and --data-dir exclude each other', 'keys');
  const run = async (fn: (db: ServiceAccess) => Promise<number>): Promise<number> => {
    const db = await openServiceAccess({ database: values.database, dataDir: values['data-dir'], argv: ['keys', ...argv] });
    try {
      return await fn(db);
    } finally {
      await db.close();
    }
  };

  if (action === 'create') {
    const orgId = requireFlag('keys', 'org', values.org, 'org_acme');
    const role = requireFlag('keys', 'role', values.role, 'member');
    if (!isRole(role)) throw new UsageError(`--role must be member, admin or superadmin, not '${role}'`, 'keys');
    return run(async (db) => {
      // Named, so that the console and `oql keys list` tell it apart from the keys made there.
      const name = values.name ?? defaultKeyName(role);
      const { id, key } = await db.issueKey({ orgId, role, userId: values.user, name, newOrg: values['new-org'] === true });
      println(io.stdout, key);
      println(io.stderr, `oql keys: ${id}, ${aRole(role)} key for ${orgId} in ${db.label}; the key is shown only now`);
      return EXIT.ok;
    });
  }
  if (action === 'list') {
    return run(async (db) => {
      const keys = await db.listKeys({ orgId: values.org, revoked: values.revoked === true });
      if (values.json) {
        println(io.stdout, JSON.stringify(keys, null, 2));
        return EXIT.ok;
      }
      if (keys.length === 0) {
        println(io.stderr, `oql keys: no ${values.revoked ? '' : 'live '}keys${values.org === undefined ? '' : ` for ${values.org}`} in ${db.label}`);
        return EXIT.ok;
      }
      const at = (ms: number | null): string => (ms === null ? '' : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z'));
      const head = ['id', 'name', 'org', 'user', 'role', 'created', ...(values.revoked ? ['revoked'] : [])];
      const rows = keys.map((k) => ({ id: k.id, name: k.name ?? '', org: k.orgId, user: k.userId, role: k.role, created: at(k.createdAt), revoked: at(k.revokedAt) }));
      println(io.stdout, formatTable(head, rows));
      return EXIT.ok;
    });
  }
  const id = rest[0]!;
  return run(async (db) => {
    const org = await db.revokeKey(id);
    if (org === null) {
      println(io.stderr, `oql keys: no live key has the id '${id.slice(0, 80)}' in ${db.label} (oql keys list shows them)`);
      return EXIT.failed;
    }
    println(io.stderr, `oql keys: revoked ${id} of ${org} in ${db.label}; ${db.revocationReach}`);
    return EXIT.ok;
  });
}
