import { randomBytes } from 'node:crypto';
import type { ServiceTx } from '../types.js';
import { SERVICE_SCHEMA } from '../migrations.js';

/**
 * A setting's value, created with `make()` on first use. Two servers starting at once on one
 * database agree on the value: the insert does nothing when the other was first, and both read
 * back the stored one.
 */
export async function settingOrCreate(db: ServiceTx, name: string, make: () => string): Promise<string> {
  await db.query(`INSERT INTO ${SERVICE_SCHEMA}.settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, [name, make()]);
  const { rows } = await db.query<{ value: string }>(`SELECT value FROM ${SERVICE_SCHEMA}.settings WHERE name = $1`, [name]);
  return rows[0]!.value;
}

/**
 * The secret that signs pagination tokens and tool-log pointers: `OQL_TOKEN_SECRET` when set,
 * otherwise 32 random bytes generated on the first start and kept in the database, so tokens stay
 * valid across restarts and across servers sharing the database.
 */
export async function tokenSecret(db: ServiceTx, configured?: string): Promise<string> {
  if (configured !== undefined && configured !== '') return configured;
  return settingOrCreate(db, 'token_secret', () => randomBytes(32).toString('base64url'));
}
