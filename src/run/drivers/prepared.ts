import { createRequire } from 'node:module';

/**
 * Named (prepared) statements for the reads of a node-postgres pool, and of the embedded database's
 * process (its one connection: pglite/process-client.ts): a text read again on the same
 * connection is bound to the statement parsed the first time, and after five runs PostgreSQL may
 * keep a generic plan for it instead of planning each run. The compiled reads repeat a handful of
 * texts with new parameters, so most reads skip the parse and the plan (docs/performance.md).
 * On by default (DEFAULT_PREPARED_STATEMENTS, 100 a connection); OQL_PREPARED_STATEMENTS=0 turns
 * them off.
 *
 * A statement is named per organization: PostgreSQL chooses between a generic plan and planning
 * each run from the runs of that one name, so the plan one organization's reads get is never
 * chosen from another's (a large tenant's costs cannot put a small one on a plan made for them).
 * The name is a digest of the organization and the text: the same in every process, and never
 * standing for two texts, so a connection shared below the pool can only lack a name or have it
 * already, never hold another text under it. Each connection keeps at most
 * `perConnection` of them, the least recently read dropped first (DEALLOCATE on the server, and
 * the driver forgets it). A pooler that hands one client's transactions to different server
 * connections (PgBouncer in transaction mode before 1.21, or without max_prepared_statements)
 * makes names go missing or already exist: the first read that meets that (`lost`) turns the
 * statements off for the pool, and is read again without a name.
 */

/** node:crypto, loaded at the first named read: importing it starts OpenSSL, which a compile-only program never needs. */
let crypto: typeof import('node:crypto') | undefined;
function nodeCrypto(): typeof import('node:crypto') {
  return (crypto ??= createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto'));
}

/** Names of the texts read lately, so that a repeated text is not digested again. */
const NAMES_KEPT = 1_000;

/** What the pool needs of a node-postgres client here: the names its connection has parsed. */
export interface PreparingClient {
  readonly connection?: { parsedStatements?: Record<string, unknown> };
}

/** A statement's name on one connection, and the names to let go of before it is sent. */
export interface Named {
  readonly name: string;
  readonly deallocate: readonly string[];
}

/** SQLSTATEs of a name missing on the server (26000) or already there (42P05). */
const LOST = new Set(['26000', '42P05']);

export class PreparedStatements {
  private on: boolean;
  /** The names of the reads made lately, by organization and text. */
  private readonly digests = new Map<string, string>();
  /** Per connection: the names it holds, by organization and text, in the order they were last read. */
  private readonly names = new WeakMap<object, Map<string, string>>();

  constructor(private readonly perConnection: number) {
    this.on = perConnection > 0;
  }

  /** The name to read `text` under for `tenant` on this client, or null when statements are not prepared. */
  name(client: PreparingClient, text: string, tenant: string | undefined): Named | null {
    if (!this.on) return null;
    let known = this.names.get(client);
    if (known === undefined) this.names.set(client, (known = new Map()));
    const key = `${tenant ?? ''}\u0000${text}`;
    const seen = known.get(key);
    if (seen !== undefined) {
      known.delete(key);
      known.set(key, seen);
      return { name: seen, deallocate: [] };
    }
    const deallocate: string[] = [];
    for (const [oldKey, oldName] of known) {
      if (known.size < this.perConnection) break;
      known.delete(oldKey);
      // Only what the server parsed is there to let go of (a read that failed first parsed nothing).
      const parsed = client.connection?.parsedStatements;
      if (parsed?.[oldName] === undefined) continue;
      delete parsed[oldName];
      deallocate.push(oldName);
    }
    const name = this.nameOf(key);
    known.set(key, name);
    return { name, deallocate };
  }

  /** `oql_` and 128 bits of the SHA-256 of the organization and the text, in base 64 URL: 26 characters, within PostgreSQL's 63. */
  private nameOf(key: string): string {
    let name = this.digests.get(key);
    if (name === undefined) {
      if (this.digests.size >= NAMES_KEPT) this.digests.clear();
      name = `oql_${nodeCrypto().createHash('sha256').update(key).digest().subarray(0, 16).toString('base64url')}`;
      this.digests.set(key, name);
    }
    return name;
  }

  /**
   * Whether a read failed because a name went missing or was taken: connections are shared below
   * the pool. Statements are then off for good, and the caller reads again without a name.
   */
  lost(error: unknown): boolean {
    const code = (error as { code?: unknown } | null)?.code;
    if (!this.on || typeof code !== 'string' || !LOST.has(code)) return false;
    this.on = false;
    return true;
  }
}

/** `DEALLOCATE` of these names, as statements to run before the read; the names are ours (base 64 URL), so safe to quote as they are. */
export function deallocateText(names: readonly string[]): string {
  return names.map((n) => `DEALLOCATE "${n}"`).join('; ');
}
