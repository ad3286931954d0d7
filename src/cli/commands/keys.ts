import { openServiceDb } from '../../server/database.js';
import { createApiKey } from '../../server/store/api-keys.js';
import { createServiceSchema } from '../../server/store/schema.js';
import { isRole } from '../../server/types.js';
import { parseCommand, requireFlag } from '../args.js';
import { EXIT, UsageError, println, type CliIo } from '../io.js';

export const KEYS_OPTIONS = {
  org: { type: 'string' },
  role: { type: 'string' },
  user: { type: 'string' },
  database: { type: 'string' },
  'data-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** `oql keys create`: a new API key for one organization, user and role, printed once. */
export async function keysCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand('keys', argv, KEYS_OPTIONS);
  const [action, ...extra] = positionals;
  if (action !== 'create') throw new UsageError(action === undefined ? 'missing action: oql keys create --org ORG --role ROLE' : `unknown action '${action}' (only create)`, 'keys');
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`, 'keys');
  const orgId = requireFlag('keys', 'org', values.org, 'org_acme');
  const role = requireFlag('keys', 'role', values.role, 'member');
  if (!isRole(role)) throw new UsageError(`--role must be member, admin or superadmin, not '${role}'`, 'keys');
  if (values.database !== undefined && values['data-dir'] !== undefined) throw new UsageError('--database and --data-dir exclude each other', 'keys');
  const db = await openServiceDb({ database: values.database, dataDir: values['data-dir'] });
  try {
    await createServiceSchema(db);
    const key = await createApiKey(db, { orgId, role, userId: values.user });
    println(io.stdout, key);
    println(io.stderr, `oql keys: a ${role} key for ${orgId} in ${db.label}; it is shown only now`);
  } finally {
    await db.close();
  }
  return EXIT.ok;
}
