import { issueApiKey, listApiKeys, revokeApiKey, type ApiKeyInfo, type ApiKeyVerifier, type ListApiKeysOptions, type NewApiKey } from './store/api-keys.js';
import { checkOrganizationForNewKey } from './store/organizations.js';
import { createWorkspace, listWorkspaces, type Workspace } from './store/workspaces.js';
import type { ServiceDb } from './types.js';

export type { ApiKeyInfo, NewApiKey } from './store/api-keys.js';
export type { Workspace } from './store/workspaces.js';

/**
 * What the machine's operator does to the service's tables, outside any organization: `oql keys`
 * and `oql workspaces` on a database they open, and the admin host of a server holding an
 * embedded directory, which does the same work for them. One owner for each rule: a key for an
 * organization nothing belongs to is refused unless `newOrg` says it is meant, and a revocation
 * through a running server clears that server's key cache at once.
 */
export class Operator {
  constructor(
    private readonly db: ServiceDb,
    /** The key verifier of the server this runs in, whose cache a revocation clears; none in a CLI process. */
    private readonly keys?: ApiKeyVerifier,
    /** The catalog's tenant column, where a new key's organization is looked for in the data. */
    private readonly tenantColumn?: string,
  ) {}

  async issueKey({ newOrg, ...k }: NewApiKey & { readonly newOrg?: boolean | undefined }): Promise<{ readonly id: string; readonly key: string }> {
    if (newOrg !== true) await checkOrganizationForNewKey(this.db, k.orgId, this.db.label, this.tenantColumn);
    return issueApiKey(this.db, k);
  }

  listKeys(q: ListApiKeysOptions = {}): Promise<ApiKeyInfo[]> {
    return listApiKeys(this.db, q);
  }

  /** The key's organization, or null when no live key has that id. */
  revokeKey(id: string): Promise<string | null> {
    return this.keys ? this.keys.revoke(id) : revokeApiKey(this.db, id);
  }

  createWorkspace(w: Workspace): Promise<{ created: boolean }> {
    return createWorkspace(this.db, w);
  }

  listWorkspaces(): Promise<Workspace[]> {
    return listWorkspaces(this.db);
  }
}
