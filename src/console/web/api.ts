/**
 * Calls to the service from the console: the public API and the session endpoints. The session
 * cookie goes along by itself (same origin, HttpOnly: this code never sees it); every change
 * carries the session's CSRF token in a header. Errors arrive in the service's envelope.
 */

export interface Session {
  readonly org_id: string;
  readonly user_id: string;
  readonly role: 'member' | 'admin' | 'superadmin';
  readonly key_id: string | null;
  readonly expires_at: number;
  readonly ends_at: number;
  readonly csrf_token: string;
  readonly assignable_roles: readonly string[];
  readonly base_url: string;
  /** mcp_url is null when this server does not know the MCP host's public URL (it runs the API alone). */
  readonly workspaces: readonly { readonly subdomain: string; readonly mcp_url: string | null }[];
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint: string | undefined,
  ) {
    super(message);
  }
}

let csrfToken = '';
let onSignedOut: (reason: string) => void = () => {};

/** The token every change sends; set at sign-in and whenever the session is read. */
export function useCsrfToken(token: string): void {
  csrfToken = token;
}

/** Called when the service says the session is gone (401): the console goes back to sign-in. */
export function whenSignedOut(handler: (reason: string) => void): void {
  onSignedOut = handler;
}

interface Envelope<T> {
  readonly success: boolean;
  readonly data: T;
}

interface ErrorData {
  readonly message?: string;
  readonly status_code?: number;
  readonly error_code?: string;
  readonly hint?: string;
  readonly validation_errors?: readonly { readonly field: string; readonly message: string }[] | null;
}

export async function api<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET' && method !== 'HEAD') headers['x-csrf-token'] = csrfToken;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method, headers, credentials: 'same-origin', cache: 'no-store', ...(signal ? { signal } : {}),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(0, 'NETWORK', 'The service did not answer. Check your connection and try again.', undefined);
  }
  let parsed: Envelope<T | ErrorData> | undefined;
  try {
    parsed = (await response.json()) as Envelope<T | ErrorData>;
  } catch {
    parsed = undefined;
  }
  if (response.ok && parsed?.success === true) return parsed.data as T;
  const data = (parsed?.data ?? {}) as ErrorData;
  const detail = data.validation_errors?.map((v) => `${v.field}: ${v.message}`).join('; ');
  const error = new ApiError(response.status, data.error_code ?? 'HTTP_ERROR', detail || data.message || `The service answered ${response.status}.`, data.hint);
  if (response.status === 401 && path !== '/console/session') onSignedOut(error.message);
  return Promise.reject(error);
}
