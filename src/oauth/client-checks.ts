import type { ClientMetadata } from './store.js';

/**
 * What a client's metadata must say, checked alike when a client registers (./register.ts) and
 * when its Client ID Metadata Document is fetched (./client-metadata.ts): both import it from
 * here, so neither depends on the other.
 */

export class MetadataError extends Error {
  constructor(readonly error: 'invalid_client_metadata' | 'invalid_redirect_uri', message: string) {
    super(message);
  }
}

const MAX_REDIRECT_URIS = 10;
const MAX_URL_LENGTH = 2000;
const MAX_NAME_LENGTH = 200;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

export type ApplicationType = 'web' | 'native';

/** A private-use URI scheme of a native app (RFC 8252 section 7.1): reverse domain name, so it has a dot. */
const PRIVATE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/;

/**
 * A redirect URI a code may be sent to. No fragment (RFC 6749 section 3.1.2), no user information
 * (it would let `https://good@evil` read as the good host). Which schemes and hosts, by the
 * client's application type (OpenID Connect Dynamic Client Registration, `application_type`):
 *
 *   web      https on a host that is not loopback
 *   native   http on a loopback address (a local listener, RFC 8252 section 7.3), or a private-use
 *            scheme such as com.example.app:/callback (section 7.1)
 *   omitted  (clients written before application_type) https, or http on a loopback address
 */
export function checkRedirectUri(uri: unknown, type?: ApplicationType): string {
  if (typeof uri !== 'string' || uri.length === 0) throw new MetadataError('invalid_redirect_uri', 'every redirect URI must be a non-empty string');
  if (uri.length > MAX_URL_LENGTH) throw new MetadataError('invalid_redirect_uri', `a redirect URI is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new MetadataError('invalid_redirect_uri', `redirect URI '${uri}' is not an absolute URL`);
  }
  if (url.hash !== '' || uri.includes('#')) throw new MetadataError('invalid_redirect_uri', `redirect URI '${uri}' must not have a fragment`);
  if (url.username !== '' || url.password !== '') throw new MetadataError('invalid_redirect_uri', `redirect URI '${uri}' must not carry user information`);
  const loopbackHttp = url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
  if (type === 'web') {
    if (url.protocol === 'https:' && !LOOPBACK_HOSTS.has(url.hostname)) return uri;
    throw new MetadataError('invalid_redirect_uri',
      `redirect URI '${uri}' does not suit application_type web: use https on a public host, or register the client as application_type native`);
  }
  if (type === 'native') {
    if (loopbackHttp || PRIVATE_SCHEME.test(url.protocol)) return uri;
    throw new MetadataError('invalid_redirect_uri',
      `redirect URI '${uri}' does not suit application_type native: use http on a loopback address (http://127.0.0.1:PORT/callback) or a private-use scheme (com.example.app:/callback)`);
  }
  if (url.protocol === 'https:' || loopbackHttp) return uri;
  throw new MetadataError('invalid_redirect_uri', `redirect URI '${uri}' must use https, or http on a loopback address (127.0.0.1, [::1], localhost)`);
}

function applicationType(value: unknown): ApplicationType | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === 'web' || value === 'native') return value;
  throw new MetadataError('invalid_client_metadata', `application_type must be 'web' or 'native', not ${JSON.stringify(value).slice(0, 60)}`);
}

/** An optional array of strings (RFC 7591 section 2): the default when absent. */
function stringArray(body: Record<string, unknown>, name: string, fallback: readonly string[]): string[] {
  const value = body[name];
  if (value === undefined || value === null) return [...fallback];
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string')) {
    throw new MetadataError('invalid_client_metadata', `${name} must be a non-empty array of strings (or left out: ${JSON.stringify(fallback)})`);
  }
  return [...new Set(value as string[])];
}

/** Checks a registration request against the registration rules (docs/oauth.md#registration) and returns what is stored. */
export function checkClientMetadata(body: unknown): ClientMetadata {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new MetadataError('invalid_client_metadata', 'the request body must be a JSON object of client metadata');
  }
  const b = body as Record<string, unknown>;
  const name = b.client_name;
  if (typeof name !== 'string' || name.trim().length === 0) throw new MetadataError('invalid_client_metadata', 'client_name is required: a non-empty string');
  if (name.length > MAX_NAME_LENGTH) throw new MetadataError('invalid_client_metadata', `client_name is longer than ${MAX_NAME_LENGTH} characters`);

  if (!Array.isArray(b.redirect_uris) || b.redirect_uris.length === 0) {
    throw new MetadataError('invalid_redirect_uri', 'redirect_uris is required: a non-empty array of URLs');
  }
  if (b.redirect_uris.length > MAX_REDIRECT_URIS) throw new MetadataError('invalid_redirect_uri', `at most ${MAX_REDIRECT_URIS} redirect URIs`);
  const type = applicationType(b.application_type);
  const redirectUris = [...new Set(b.redirect_uris.map((uri) => checkRedirectUri(uri, type)))];

  // RFC 7591 section 2: both optional, defaulting to the authorization code flow.
  const grantTypes = stringArray(b, 'grant_types', ['authorization_code']);
  const unknownGrant = grantTypes.find((g) => g !== 'authorization_code' && g !== 'refresh_token');
  if (unknownGrant !== undefined) throw new MetadataError('invalid_client_metadata', `grant type '${unknownGrant}' is not supported: authorization_code and refresh_token are`);
  if (!grantTypes.includes('authorization_code')) throw new MetadataError('invalid_client_metadata', 'grant_types must include authorization_code');

  const responseTypes = stringArray(b, 'response_types', ['code']);
  if (responseTypes.length !== 1 || responseTypes[0] !== 'code') throw new MetadataError('invalid_client_metadata', "response_types must be ['code']");

  const method = b.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none') {
    throw new MetadataError('invalid_client_metadata', `token_endpoint_auth_method '${String(method)}' is not supported: only public clients ('none') register`);
  }

  let clientUri: string | undefined;
  if (b.client_uri !== undefined && b.client_uri !== null) {
    if (typeof b.client_uri !== 'string' || b.client_uri.length > MAX_URL_LENGTH) throw new MetadataError('invalid_client_metadata', 'client_uri must be a URL string');
    let url: URL | undefined;
    try {
      url = new URL(b.client_uri);
    } catch {
      url = undefined;
    }
    // Shown as a link on the consent page: only web URLs, never javascript: or data:.
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new MetadataError('invalid_client_metadata', 'client_uri must be an http or https URL');
    clientUri = b.client_uri;
  }
  return {
    client_name: name,
    redirect_uris: redirectUris,
    grant_types: grantTypes,
    response_types: responseTypes,
    token_endpoint_auth_method: 'none',
    ...(clientUri !== undefined ? { client_uri: clientUri } : {}),
    ...(type !== undefined ? { application_type: type } : {}),
  };
}
