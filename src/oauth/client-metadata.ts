import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { checkClientMetadata, MetadataError } from './client-checks.js';
import { findClient, type ClientMetadata, type RegisteredClient } from './store.js';
import { checkOutboundHost, describeVerdict, OutboundAddressError, outboundLookup, systemResolver, type Resolver } from '../service/outbound.js';
import type { ServiceTx } from '../service/types.js';

/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, as the MCP
 * authorization revision of 2026-07-28 asks of authorization servers): a `client_id` that is an
 * https URL names a JSON document of the client's metadata, which this server fetches, checks and
 * caches instead of keeping a registration.
 *
 * The fetch is the server calling a URL an anonymous caller chose, so it is guarded against
 * server-side request forgery by the service's one outbound address check (../service/outbound.ts):
 * the host must resolve only to public addresses, judged when the connection is made, so a second
 * DNS answer cannot swap in 127.0.0.1; a few seconds at most; a few kilobytes at most; redirects
 * only within the same origin; JSON only.
 */

export class ClientMetadataError extends Error {}

export interface ClientMetadataOptions {
  /**
   * Also accept `http://` client IDs on loopback addresses, and loopback addresses at all (tests
   * serve their document on 127.0.0.1). Never for a server others can reach: any local process
   * could then name itself a client.
   */
  readonly allowLoopbackHttp?: boolean | undefined;
  /** Whole fetch, connection to last byte. Default 5000 ms. */
  readonly timeoutMs?: number | undefined;
  /** Largest document read. Default 5 KiB, the draft's own example. */
  readonly maxBytes?: number | undefined;
  /** Documents kept in memory at most (least recently used go first). Default 1000. */
  readonly cacheEntries?: number | undefined;
  /** Where host names are resolved; tests pass their own. Default: the system's resolver. */
  readonly resolver?: Resolver | undefined;
}

const MAX_CLIENT_ID_LENGTH = 1000;
const MAX_REDIRECTS = 2;
/** Without cache headers a document is kept this long; with them, at most a day. */
const DEFAULT_TTL_MS = 5 * 60 * 1000;
const MAX_TTL_MS = 24 * 3600 * 1000;

/** Whether a client_id is URL-formatted (it names a metadata document rather than a registration). */
export function isMetadataDocumentId(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}

/** The URL of a client_id, checked as the draft's section 3 requires. */
function documentUrl(clientId: string, allowLoopbackHttp: boolean): URL {
  if (clientId.length > MAX_CLIENT_ID_LENGTH) throw new ClientMetadataError(`a client_id URL is at most ${MAX_CLIENT_ID_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new ClientMetadataError('client_id looks like a URL but is not a valid absolute URL');
  }
  const loopbackHost = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowLoopbackHttp && loopbackHost)) {
    throw new ClientMetadataError('a client_id URL (Client ID Metadata Document) must use https');
  }
  if (url.username !== '' || url.password !== '') throw new ClientMetadataError('a client_id URL must not carry user information');
  if (clientId.includes('#')) throw new ClientMetadataError('a client_id URL must not have a fragment');
  if (url.pathname === '/' || url.pathname === '') throw new ClientMetadataError('a client_id URL must have a path, such as https://example.com/client.json');
  // Checked on the text as sent: URL parsing would already have resolved the dots away.
  const rawPath = clientId.replace(/^https?:\/\/[^/?#]*/i, '').replace(/[?#].*$/, '');
  if (rawPath.split('/').some((s) => /^(\.|%2e){1,2}$/i.test(s))) throw new ClientMetadataError('a client_id URL must not contain . or .. path segments');
  return url;
}

interface Fetched {
  readonly body: unknown;
  readonly ttlMs: number;
}

/** How long the response may be kept, from Cache-Control (no-store and no-cache: not at all). */
function ttlOf(res: IncomingMessage): number {
  const header = String(res.headers['cache-control'] ?? '').toLowerCase();
  if (/(^|,)\s*(no-store|no-cache)\s*(,|$)/.test(header)) return 0;
  const maxAge = /(^|,)\s*max-age\s*=\s*"?(\d{1,10})"?\s*(,|$)/.exec(header);
  if (maxAge) return Math.min(Number(maxAge[2]) * 1000, MAX_TTL_MS);
  return DEFAULT_TTL_MS;
}

function isJson(contentType: string | undefined): boolean {
  const type = String(contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/** One GET, to the checked address only; resolves with the response or a redirect target. */
async function getOnce(url: URL, opts: Required<ClientMetadataOptions>, deadline: number): Promise<{ redirect: URL } | Fetched> {
  const allow = { loopback: opts.allowLoopbackHttp };
  const notPublic = (e: OutboundAddressError) => new ClientMetadataError(`the host of the client_id URL, ${url.host}, is not a public internet address: ${describeVerdict(e.verdict)}`);
  try {
    checkOutboundHost(url.hostname, allow);
  } catch (e) {
    if (e instanceof OutboundAddressError) throw notPublic(e);
    throw e;
  }
  const remaining = deadline - Date.now();
  if (remaining <= 0) throw new ClientMetadataError('fetching the client metadata document timed out');

  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, {
      method: 'GET',
      // Every address is judged as the connection is made: the address checked is the one connected to.
      lookup: outboundLookup(allow, opts.resolver),
      headers: { accept: 'application/json', 'user-agent': 'oql-authorization-server' },
      agent: false,
    }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume();
        try {
          resolve({ redirect: new URL(res.headers.location, url) });
        } catch {
          reject(new ClientMetadataError('the client metadata document redirects to an invalid URL'));
        }
        return;
      }
      if (status !== 200) {
        res.resume();
        reject(new ClientMetadataError(`the client metadata document answered HTTP ${status}, not 200`));
        return;
      }
      if (!isJson(res.headers['content-type'])) {
        res.resume();
        reject(new ClientMetadataError(`the client metadata document is served as ${String(res.headers['content-type'] ?? 'no type').slice(0, 80)}, not application/json`));
        return;
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > opts.maxBytes) {
        req.destroy();
        reject(new ClientMetadataError(`the client metadata document is larger than ${opts.maxBytes} bytes`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > opts.maxBytes) {
          req.destroy();
          reject(new ClientMetadataError(`the client metadata document is larger than ${opts.maxBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => {
        try {
          resolve({ body: JSON.parse(Buffer.concat(chunks).toString('utf8')), ttlMs: ttlOf(res) });
        } catch {
          reject(new ClientMetadataError('the client metadata document is not valid JSON'));
        }
      });
      res.on('error', () => reject(new ClientMetadataError('the client metadata document could not be read')));
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new ClientMetadataError(`fetching the client metadata document took longer than ${opts.timeoutMs} ms`));
    }, remaining);
    req.on('close', () => clearTimeout(timer));
    req.on('error', (e: NodeJS.ErrnoException) => reject(
      e instanceof OutboundAddressError ? notPublic(e)
        : e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN' || e.code === 'ENODATA' ? new ClientMetadataError(`the host of the client_id URL, ${url.host}, does not resolve`)
        : new ClientMetadataError(`the client metadata document at ${url.host} could not be fetched`),
    ));
    req.end();
  });
}

/** The document's metadata, checked: client_id exactly the URL, a public client, our rules for the rest. */
export function checkDocument(clientId: string, body: unknown): ClientMetadata {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ClientMetadataError('the client metadata document must be a JSON object');
  const doc = body as Record<string, unknown>;
  if (doc.client_id !== clientId) throw new ClientMetadataError('the client metadata document names another client_id: it must be exactly its own URL');
  if (doc.client_secret !== undefined || doc.client_secret_expires_at !== undefined) {
    throw new ClientMetadataError('the client metadata document must not contain a client_secret');
  }
  try {
    return checkClientMetadata(doc);
  } catch (e) {
    if (e instanceof MetadataError) throw new ClientMetadataError(`the client metadata document is not valid: ${e.message}`);
    throw e;
  }
}

interface Cached {
  readonly meta: ClientMetadata;
  readonly expires: number;
}

/** Fetches, checks and caches client metadata documents; one per authorization server. */
export class ClientMetadataDocuments {
  private readonly opts: Required<ClientMetadataOptions>;
  private readonly cache = new Map<string, Cached>();
  private readonly pending = new Map<string, Promise<ClientMetadata>>();

  constructor(options: ClientMetadataOptions = {}, private readonly now: () => number = Date.now) {
    this.opts = {
      allowLoopbackHttp: options.allowLoopbackHttp ?? false,
      timeoutMs: options.timeoutMs ?? 5000,
      maxBytes: options.maxBytes ?? 5 * 1024,
      cacheEntries: options.cacheEntries ?? 1000,
      resolver: options.resolver ?? systemResolver,
    };
  }

  /** The metadata a URL-formatted client_id names; throws ClientMetadataError with what is wrong. */
  async get(clientId: string): Promise<ClientMetadata> {
    const hit = this.cache.get(clientId);
    if (hit && hit.expires > this.now()) {
      this.cache.delete(clientId);
      this.cache.set(clientId, hit);
      return hit.meta;
    }
    this.cache.delete(clientId);
    // Concurrent requests for one document share one fetch.
    let fetching = this.pending.get(clientId);
    if (!fetching) {
      fetching = this.fetchAndCheck(clientId).finally(() => this.pending.delete(clientId));
      this.pending.set(clientId, fetching);
    }
    return fetching;
  }

  private async fetchAndCheck(clientId: string): Promise<ClientMetadata> {
    const origin = documentUrl(clientId, this.opts.allowLoopbackHttp);
    const deadline = Date.now() + this.opts.timeoutMs;
    let url = origin;
    for (let hop = 0; ; hop++) {
      const got = await getOnce(url, this.opts, deadline);
      if ('redirect' in got) {
        if (got.redirect.origin !== origin.origin) throw new ClientMetadataError('the client metadata document redirects to another host');
        if (hop >= MAX_REDIRECTS) throw new ClientMetadataError('the client metadata document redirects too often');
        url = got.redirect;
        continue;
      }
      const meta = checkDocument(clientId, got.body);
      if (got.ttlMs > 0) {
        this.cache.set(clientId, { meta, expires: this.now() + got.ttlMs });
        while (this.cache.size > this.opts.cacheEntries) this.cache.delete(this.cache.keys().next().value!);
      }
      return meta;
    }
  }
}

export type ClientLookup =
  | { readonly client: RegisteredClient; readonly problem?: undefined }
  | { readonly client: null; readonly problem: string };

/**
 * The client a client_id names in a workspace: its metadata document when the id is a URL (the
 * same document serves every workspace), else its registration in this workspace.
 */
export async function resolveClient(db: ServiceTx, documents: ClientMetadataDocuments, workspace: string, clientId: string): Promise<ClientLookup> {
  if (!isMetadataDocumentId(clientId)) {
    const client = await findClient(db, workspace, clientId);
    return client ? { client } : { client: null, problem: 'unknown client_id for this workspace: register the client first, or use a Client ID Metadata Document URL' };
  }
  try {
    const meta = await documents.get(clientId);
    return { client: { ...meta, client_id: clientId, workspace, created_at: 0 } };
  } catch (e) {
    if (e instanceof ClientMetadataError) return { client: null, problem: e.message };
    throw e;
  }
}
