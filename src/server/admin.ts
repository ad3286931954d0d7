import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { OqlError } from '../diagnostics/diagnostic.js';
import { parseBearer } from '../rules.js';
import { adminSecretMatches, newAdminSecret, writeAdminAddress } from '../service/admin-address.js';
import type { Operator } from '../service/operator.js';
import { ROLES } from '../service/types.js';
import { installEnvelope, sendError } from './plugins/envelope.js';

/**
 * The admin host of a server that holds an embedded data directory: `oql keys` and `oql
 * workspaces` send their work here instead of opening the directory (see
 * ../service/admin-address.ts for why, and for the file that says where it is).
 *
 *   POST /keys                 {org_id, role, user_id?, new_org?} → {id, key}
 *                              (an organization nothing belongs to needs new_org: true)
 *   GET  /keys?org_id=&revoked=true                      → {keys}
 *   POST /keys/revoke          {id}                       → {org_id} (null: no live key has that id)
 *   POST /workspaces           {subdomain, org_id}        → {created}
 *   GET  /workspaces                                      → {workspaces}
 *
 * It listens on 127.0.0.1 only, whatever --host the service has. Every request presents the
 * secret of the address file as its bearer token; a request from a web page (it has an Origin)
 * or addressed to another host name (DNS rebinding) is refused before the secret is looked at.
 * A revocation clears this server's cache of verified keys at once, so the key fails on the next
 * request; nothing is cached about a new key, so it works on the first.
 */
export interface AdminHostOptions {
  /** The operator's actions on this server's database, with its key cache (src/service/operator.ts). */
  readonly operator: Operator;
  /** The embedded data directory this process holds; the address file is written into it. */
  readonly dataDir: string;
}

export interface AdminHost {
  readonly url: string;
  /** Stops answering (requests in flight finish) and removes the address file. */
  close(): Promise<void>;
}

const NAME = { type: 'string', minLength: 1, maxLength: 128 } as const;

export async function startAdminHost(options: AdminHostOptions): Promise<AdminHost> {
  const secret = newAdminSecret();
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024, forceCloseConnections: 'idle' });
  installEnvelope(app, { notFoundHint: () => 'the admin host serves /keys and /workspaces to oql keys and oql workspaces' });
  app.addHook('onRequest', async (request, reply) => refusal(request, reply, secret));
  await app.register(adminRoutes, options);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  const url = `http://127.0.0.1:${port}`;
  let remove: () => void;
  try {
    remove = writeAdminAddress(options.dataDir, { url, secret });
  } catch (e) {
    await app.close();
    throw OqlError.plain('DATABASE_ERROR', `cannot write the admin address into '${options.dataDir}': ${(e as Error).message}`, 'check that the data directory can be written');
  }
  let closed: Promise<void> | undefined;
  return {
    url,
    close() {
      closed ??= (async () => {
        remove();
        await app.close();
      })();
      return closed;
    },
  };
}

/** Sends the refusal of a request that is not the CLI's, or returns nothing to let it through. */
async function refusal(request: FastifyRequest, reply: FastifyReply, secret: string): Promise<FastifyReply | undefined> {
  const port = (request.server.server.address() as { port: number } | null)?.port;
  const host = request.headers.host ?? '';
  if (request.headers.origin !== undefined || (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`)) {
    return sendError(reply, OqlError.plain('PERMISSION_DENIED', 'the admin host answers the oql command on this machine only'));
  }
  const presented = parseBearer(request.headers.authorization);
  if (presented === undefined || !adminSecretMatches(secret, presented)) {
    return sendError(reply, OqlError.plain('UNAUTHENTICATED', 'the admin host needs the secret written in the data directory\'s oql-admin.json'));
  }
  return undefined;
}

async function adminRoutes(app: FastifyInstance, { operator }: AdminHostOptions): Promise<void> {
  app.post<{ Body: { org_id: string; role: (typeof ROLES)[number]; user_id?: string; name?: string; new_org?: boolean } }>('/keys', {
    schema: {
      body: {
        type: 'object', additionalProperties: false, required: ['org_id', 'role'],
        // The name's own rule (1 to 100 characters, no control characters) is the store's.
        properties: { org_id: NAME, role: { type: 'string', enum: [...ROLES] }, user_id: NAME, name: { type: 'string' }, new_org: { type: 'boolean' } },
      },
    },
  }, async (request, reply) => {
    const { org_id: orgId, role, user_id: userId, name, new_org: newOrg } = request.body;
    const issued = await operator.issueKey({ orgId, role, userId, name, newOrg });
    return reply.code(201).send({ success: true, data: issued });
  });

  app.get<{ Querystring: { org_id?: string; revoked?: string } }>('/keys', {
    schema: { querystring: { type: 'object', additionalProperties: false, properties: { org_id: NAME, revoked: { type: 'string', enum: ['true', 'false'] } } } },
  }, async (request) => ({
    success: true,
    data: { keys: await operator.listKeys({ orgId: request.query.org_id, revoked: request.query.revoked === 'true' }) },
  }));

  app.post<{ Body: { id: string } }>('/keys/revoke', {
    schema: { body: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 200 } } } },
  }, async (request) => {
    // In force before the answer leaves: the next request with that key is looked up, and refused.
    const orgId = await operator.revokeKey(request.body.id);
    return { success: true, data: { org_id: orgId } };
  });

  app.post<{ Body: { subdomain: string; org_id: string } }>('/workspaces', {
    schema: {
      body: { type: 'object', additionalProperties: false, required: ['subdomain', 'org_id'], properties: { subdomain: NAME, org_id: NAME } },
    },
  }, async (request) => ({
    success: true,
    data: await operator.createWorkspace({ subdomain: request.body.subdomain, orgId: request.body.org_id }),
  }));

  app.get('/workspaces', async () => ({ success: true, data: { workspaces: await operator.listWorkspaces() } }));
}
